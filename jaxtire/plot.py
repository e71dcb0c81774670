"""Matplotlib sheets of tire curves: see the tire, not just read it.

Every plotting function returns the :class:`matplotlib.figure.Figure` it drew
on.  Functions that draw a single panel take ``ax=None`` (a new figure) or an
existing ``Axes`` to draw into, so :func:`tire_sheet` composes them.  Curves
are ``Line2D`` objects (one per load / camber / surface / slice); peak and
knot markers are scatter collections, so ``len(ax.lines)`` counts curves.

Tire models: the family plots (:func:`fy_alpha`, :func:`fx_kappa`,
:func:`mz_alpha`, :func:`trail_alpha`, :func:`friction_ellipse`,
:func:`surface_comparison`, :func:`tire_sheet`) take either
:class:`jaxtire.params.MFParams` (evaluated with
:func:`jaxtire.mf61.mf_forces`, pure slip unless the plot is about combined
slip) or :class:`jaxtire.simple.SimpleParams` (:func:`jaxtire.simple.simple_forces`).
:func:`spline_plot` draws :func:`jaxtire.spline.spline_curve`,
:func:`load_table_slices` draws :func:`jaxtire.load_table.load_table_force`
and :func:`explorer` is the live B, C, D, E curve explorer of the notebooks.

Signs are the library's (TYDEX / ISO-W): positive ``alpha`` gives negative
``Fy`` and, with a positive trail, positive ``Mz``; angles are shown in
degrees, slips as ratios, forces in N, moments in N m.  The trail shown is the
total trail ``t = -Mz / Fy`` (pneumatic trail plus the residual-torque
share), masked where ``|Fy|`` is below ``min_fy_fraction`` of its peak.

Command line::

    python -m jaxtire.plot [TIR_FILE] --out DIR

writes the standard sheet (``sheet.png``) and its single panels to ``DIR``,
with peak values, cornering stiffness and peak slips in the titles.

``import jaxtire`` never imports matplotlib; ``import jaxtire.plot`` does
(``pyplot`` only when a figure is made).  The command forces the headless
``Agg`` backend; elsewhere matplotlib picks its own (``Agg`` without a display,
``inline`` in Jupyter).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np

from jaxtire import surfaces as _surfaces
from jaxtire import tire as _tire
from jaxtire.forces import TireForces
from jaxtire.load_table import load_table_force
from jaxtire.simple import make_simple_params
from jaxtire.spline import spline_curve
from jaxtire.tir import data_path, load_tir

DEG = np.pi / 180.0

#: Surfaces drawn by :func:`surface_comparison` unless told otherwise.
DEFAULT_SURFACES = ("asphalt_dry", "asphalt_wet", "gravel", "snow", "ice")

#: Panel files written by ``python -m jaxtire.plot`` besides ``sheet.png``.
PANELS = ("fx_kappa", "fy_alpha", "mz_alpha", "trail", "camber", "friction_ellipse", "surfaces")


# --------------------------------------------------------------------------- helpers


def _plt():
    import matplotlib.pyplot as plt

    return plt


def _new_axes(ax, figsize=(6.4, 4.4)):
    if ax is not None:
        return ax.figure, ax
    fig, ax = _plt().subplots(figsize=figsize, layout="constrained")
    return fig, ax


#: Points per compiled evaluation: every curve is evaluated in chunks of this size (padded), so a
#: whole sheet compiles the tire model once per (model, combined) pair instead of once per shape.
CHUNK = 8192


def _flat_forces(params, kappa, alpha, gamma, fz, surface, combined):
    out = _tire.tire_forces(params, kappa, alpha, gamma, fz, surface=surface, combined=combined)
    return tuple(jnp.broadcast_to(v, kappa.shape) for v in out)


_flat_forces_jit = jax.jit(_flat_forces, static_argnames=("combined",))
_stiffness_jit = jax.jit(_tire.linear_stiffness)


def _surface_arrays(surface):
    srf = _surfaces.REFERENCE if surface is None else surface
    return _surfaces.Surface(*(jnp.asarray(v, dtype=jnp.result_type(float)) for v in srf))


def _forces(params, kappa, alpha, gamma, fz, surface=None, combined=False):
    """Forces of an MF or simple-model tire as numpy arrays (pure slip for MF unless ``combined``).

    Inputs broadcast; the evaluation runs jitted on flat chunks of :data:`CHUNK` points.
    """
    _tire.model_of(params)  # TypeError for anything that is not a tire, before any work
    arrs = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (kappa, alpha, gamma, fz)))
    shape = arrs[0].shape
    if np.nanmin(arrs[3], initial=0.0) < 0:
        raise ValueError("fz must be >= 0 N")
    flat = [a.ravel() for a in arrs]
    m = flat[0].size
    srf = _surface_arrays(surface)
    outs = []
    for i in range(0, max(m, 1), CHUNK):
        chunk = [np.zeros(CHUNK) for _ in flat]
        for c, f in zip(chunk, flat, strict=True):
            c[: len(f[i : i + CHUNK])] = f[i : i + CHUNK]
        chunk[3][len(flat[3][i : i + CHUNK]) :] = 1.0  # padding: a harmless load
        dt = jnp.result_type(float)
        res = _flat_forces_jit(params, *(jnp.asarray(c, dt) for c in chunk), srf, combined=bool(combined))
        outs.append([np.asarray(r)[: min(CHUNK, m - i)] for r in res])
    fields = [np.concatenate([o[j] for o in outs]).reshape(shape) for j in range(len(TireForces._fields))]
    # host-side numpy arrays in the TireForces record (its fields are annotated jax.Array)
    return TireForces(*cast(list[Any], fields))


def evaluate(params, kappa, alpha, gamma=0.0, fz=None, surface=None, *, combined: bool = True):
    """:class:`~jaxtire.forces.TireForces` of numpy arrays for broadcast inputs, compiled once per model.

    ``params``: :class:`~jaxtire.params.MFParams` (``combined`` picks combined or pure slip) or
    :class:`~jaxtire.simple.SimpleParams`; ``kappa`` [-], ``alpha`` [rad], ``gamma`` [rad], ``fz``
    [N] (default: the nominal load) of any shapes that broadcast; ``surface`` a
    :class:`~jaxtire.surfaces.Surface`.  The tire model runs jitted on flat chunks of :data:`CHUNK`
    points, so curves and maps of any size reuse one compiled program: the fast way to evaluate a
    tire interactively (eager calls compile each operation anew for every new shape).
    """
    fz = nominal_load(params) if fz is None else fz
    return _forces(params, kappa, alpha, gamma, fz, surface, combined)


def nominal_load(params) -> float:
    """The tire's nominal load [N] as a float (:func:`jaxtire.tire.nominal_load`: MF ``FNOMIN``, simple ``fz0``)."""
    return float(np.asarray(_tire.nominal_load(params)))


def default_loads(params) -> tuple[float, ...]:
    """Loads drawn by default: 0.5, 1, 1.5 and 2 times the nominal load [N]."""
    fz0 = nominal_load(params)
    return tuple(f * fz0 for f in (0.5, 1.0, 1.5, 2.0))


def _np(x):
    return np.asarray(x, dtype=np.float64)


def _grid(fz, gamma):
    """Column vectors (n_curves, 1) of load and camber for every (load, camber) pair."""
    pairs = [(float(f), float(g)) for f in fz for g in gamma]
    f = np.array([p[0] for p in pairs])[:, None]
    g = np.array([p[1] for p in pairs])[:, None]
    return pairs, f, g


def _label(fz, gamma_deg, loads, cambers):
    parts = []
    if len(loads) > 1 or len(cambers) == 1:
        parts.append(f"Fz {fz:.0f} N")
    if len(cambers) > 1:
        parts.append(f"γ {gamma_deg:+.1f}°")
    return ", ".join(parts)


def _peak_index(y):
    """Index of the largest ``|y|``; a tie (a symmetric curve) goes to the last one, the positive slip."""
    y = np.abs(np.where(np.isfinite(y), y, 0.0))
    return int(y.size - 1 - np.argmax(y[::-1]))


def tire_summary(params, fz=None, gamma=0.0, surface=None) -> dict[str, float]:
    """Pure-slip key numbers of a tire at one load ``fz`` [N] and camber ``gamma`` [rad].

    Returns a dict: ``fz``; ``fx_peak`` [N] and ``kappa_peak`` [-] (largest ``|Fx0|`` and its slip
    ratio); ``kxk`` [N] slip stiffness; ``fy_peak`` [N] and ``alpha_peak`` [rad] (largest ``|Fy0|``
    and its slip angle, signed values); ``kya`` [N/rad] cornering stiffness (negative with ISO-W
    signs); ``mz_peak`` [N m] and ``alpha_mz_peak`` [rad] (largest ``|Mz0|``); ``trail0`` [m] the
    trail ``-Mz/Fy`` at 1 degree.  Peaks are searched on a 0.01-degree / 1e-4 grid; stiffnesses
    come from :func:`jaxtire.tire.linear_stiffness` (analytic ``Kxk``, ``Kya`` for MF, the
    forward-mode slope at zero slip for the simple model).
    """
    fz = nominal_load(params) if fz is None else float(fz)
    kappa = np.linspace(-0.6, 0.6, 12001)
    alpha = np.linspace(-30.0, 30.0, 6001) * DEG
    nk, na = kappa.size, alpha.size
    kk = np.concatenate([kappa, np.zeros(na), [0.0, 0.0]])
    aa = np.concatenate([np.zeros(nk), alpha, [-DEG, DEG]])
    o = _forces(params, kk, aa, gamma, fz, surface)
    fx, fy, mz = _np(o.fx[:nk]), _np(o.fy[nk : nk + na]), _np(o.mz[nk : nk + na])
    i, j, k = _peak_index(fx), _peak_index(fy), _peak_index(mz)
    tail_fy, tail_mz = (_np(v[nk + na :]) for v in (o.fy, o.mz))
    trail0 = float(np.mean(-tail_mz / tail_fy))
    dt = jnp.result_type(float)
    kx, ky = _stiffness_jit(params, jnp.asarray(fz, dt), _surface_arrays(surface), jnp.asarray(gamma, dt))
    kxk, kya = float(kx), -float(ky)  # ISO-W: dFy/dalpha = -Ky
    return {
        "fz": fz,
        "fx_peak": float(fx[i]),
        "kappa_peak": float(kappa[i]),
        "kxk": kxk,
        "fy_peak": float(fy[j]),
        "alpha_peak": float(alpha[j]),
        "kya": kya,
        "mz_peak": float(mz[k]),
        "alpha_mz_peak": float(alpha[k]),
        "trail0": trail0,
    }


def _finish(ax, xlabel, ylabel, title, legend=True):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    if legend and ax.lines:
        ax.legend(fontsize=7, loc="best")


class PanelOptions(TypedDict, total=False):
    """Keyword options of the pure-slip family panels (:func:`fx_kappa`, :func:`fy_alpha`, :func:`mz_alpha`,
    :func:`trail_alpha`), each optional.

    Attributes:
      n: points per curve (default 301).
      surface: the road (:class:`~jaxtire.surfaces.Surface`, default the reference surface).
      ax: an ``Axes`` to draw into (default: a new figure).
    """

    n: int
    surface: _surfaces.Surface | None
    ax: Any


#: Pure-slip family panels: channel -> (x label, y label).  ``"fx"`` is drawn over ``kappa``, the others
#: over ``alpha`` in degrees; ``"trail"`` is ``-Mz / Fy`` in mm (:func:`trail_values`).
_FAMILY_AXES = {
    "fx": ("slip ratio κ [-]", "Fx [N]"),
    "fy": ("slip angle α [deg]", "Fy [N]"),
    "mz": ("slip angle α [deg]", "Mz [N m]"),
    "trail": ("slip angle α [deg]", "trail −Mz/Fy [mm]"),
}
#: Their titles, formatted with the :func:`tire_summary` entries and the derived ``*_abs``, ``*_deg``, ``*_mm``.
_FAMILY_TITLES = {
    "fx": "Fx(κ) at Fz {fz:.0f} N: peak {fx_abs:.0f} N at κ {kappa_peak:+.3f}, Kxκ {kxk:.0f} N",
    "fy": "Fy(α) at Fz {fz:.0f} N: peak {fy_abs:.0f} N at α {alpha_peak_deg:+.2f}°, Kα {kya_deg:.0f} N/deg",
    "mz": "Mz(α) at Fz {fz:.0f} N: peak {mz_abs:.1f} N m at α {alpha_mz_peak_deg:+.2f}°",
    "trail": "trail at Fz {fz:.0f} N: {trail0_mm:.1f} mm at |α| = 1°, zero near α {alpha_peak_deg:+.1f}° (Fy peak)",
}


def _family(params, which, loads, cambers, slip_max, panel: PanelOptions, min_fy_fraction=0.1):
    """The one pure-slip family panel: channel ``which`` (:data:`_FAMILY_AXES`) over ``±slip_max`` (``kappa``
    [-] for ``"fx"``, else ``alpha`` [deg]), one line per (load, camber), peaks marked except on the trail;
    titled with :func:`tire_summary` at the nominal load and the first camber.  Returns the figure."""
    unknown = set(panel) - set(PanelOptions.__annotations__)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}")
    n, surface = panel.get("n", 301), panel.get("surface")
    loads = default_loads(params) if loads is None else tuple(loads)
    cambers = tuple(cambers)
    fig, ax = _new_axes(panel.get("ax"))
    pairs, f, g = _grid(loads, cambers)
    if which == "fx":
        x = np.linspace(-slip_max, slip_max, n)
        out = _forces(params, x[None, :], 0.0, g, f, surface)
    else:
        alpha = np.linspace(-slip_max, slip_max, n) * DEG
        out = _forces(params, 0.0, alpha[None, :], g, f, surface)
        x = alpha / DEG
    ones = np.ones((len(pairs), n))
    if which == "trail":
        ys = 1e3 * trail_values(_np(out.fy) * ones, _np(out.mz) * ones, min_fy_fraction)
    else:
        ys = _np(getattr(out, which)) * ones
    pk = []
    for (fz, gam), y in zip(pairs, ys, strict=True):
        ax.plot(x, y, label=_label(fz, gam / DEG, loads, cambers))
        i = _peak_index(y)
        pk.append((x[i], y[i]))
    if which != "trail":
        ax.scatter(*zip(*pk, strict=True), s=14, c="k", zorder=3)
    s = tire_summary(params, None, cambers[0], surface)
    derived = {k + "_abs": abs(s[k + "_peak"]) for k in ("fx", "fy", "mz")}
    derived.update(alpha_peak_deg=s["alpha_peak"] / DEG, alpha_mz_peak_deg=s["alpha_mz_peak"] / DEG)
    derived.update(kya_deg=s["kya"] * DEG, trail0_mm=1e3 * s["trail0"])
    _finish(ax, *_FAMILY_AXES[which], _FAMILY_TITLES[which].format(**s, **derived))
    return fig


# --------------------------------------------------------------------------- pure-slip families


def fy_alpha(params, loads=None, cambers=(0.0,), *, alpha_max_deg: float = 15.0, **panel: Unpack[PanelOptions]):
    """Lateral force ``Fy(alpha)`` [N], one curve per load [N] in ``loads`` (default :func:`default_loads`)
    and camber [rad] in ``cambers``; peaks marked; ``alpha`` over ``±alpha_max_deg``; ``panel``:
    :class:`PanelOptions`.

    The title gives, at the nominal load and the first camber, the peak ``|Fy|``, its slip angle
    and the cornering stiffness ``Kya`` [N/deg].  ``len(loads) * len(cambers)`` lines.
    """
    return _family(params, "fy", loads, cambers, alpha_max_deg, panel)


def fx_kappa(params, loads=None, cambers=(0.0,), *, kappa_max: float = 0.3, **panel: Unpack[PanelOptions]):
    """Longitudinal force ``Fx(kappa)`` [N], one curve per load [N] in ``loads`` (default
    :func:`default_loads`) and camber [rad] in ``cambers``; peaks marked; ``kappa`` over ``±kappa_max``;
    ``panel``: :class:`PanelOptions`.

    The title gives, at the nominal load, the peak ``|Fx|``, its slip ratio and the slip
    stiffness ``Kxk`` [N per unit slip].  ``len(loads) * len(cambers)`` lines.
    """
    return _family(params, "fx", loads, cambers, kappa_max, panel)


def mz_alpha(params, loads=None, cambers=(0.0,), *, alpha_max_deg: float = 15.0, **panel: Unpack[PanelOptions]):
    """Aligning torque ``Mz(alpha)`` [N m], one curve per load [N] in ``loads`` (default
    :func:`default_loads`) and camber [rad] in ``cambers``; peaks marked; ``alpha`` over
    ``±alpha_max_deg``; ``panel``: :class:`PanelOptions`.

    The title gives, at the nominal load, the peak ``|Mz|`` and its slip angle.
    ``len(loads) * len(cambers)`` lines.
    """
    return _family(params, "mz", loads, cambers, alpha_max_deg, panel)


def trail_values(fy, mz, min_fy_fraction: float = 0.1):
    """Trail ``-Mz / Fy`` [m] along the last axis, NaN where ``|Fy| < min_fy_fraction * max|Fy|``."""
    fy, mz = _np(fy), _np(mz)
    peak = np.max(np.abs(fy), axis=-1, keepdims=True)
    ok = np.abs(fy) >= min_fy_fraction * np.maximum(peak, 1e-12)
    return np.where(ok, -mz / np.where(ok, fy, 1.0), np.nan)


def trail_alpha(
    params, loads=None, cambers=(0.0,), *, alpha_max_deg=15.0, min_fy_fraction=0.1, **panel: Unpack[PanelOptions]
):
    """Trail ``t = -Mz / Fy`` [mm] over slip angle (``±alpha_max_deg``), one curve per load [N] in ``loads``
    (default :func:`default_loads`) and camber [rad] in ``cambers``; ``panel``: :class:`PanelOptions`.

    Masked (gaps) where ``|Fy|`` is below ``min_fy_fraction`` of its peak, i.e. around the zero
    crossing of ``Fy``.  The title gives the trail at 1 degree at the nominal load.
    ``len(loads) * len(cambers)`` lines.
    """
    return _family(params, "trail", loads, cambers, alpha_max_deg, panel, min_fy_fraction)


# --------------------------------------------------------------------------- combined slip


def friction_ellipse(
    params,
    fz: float | None = None,
    *,
    alphas_deg: Sequence[float] = (-10, -5, -2, 2, 5, 10),
    kappas: Sequence[float] = (-0.2, -0.05, 0.05, 0.2),
    gamma: float = 0.0,
    kappa_max: float = 1.0,
    alpha_max_deg: float = 30.0,
    n: int = 201,
    ellipse: bool = True,
    operating_point: tuple[float, float] | None = None,
    surface=None,
    ax=None,
):
    """Combined-slip envelope: ``Fx`` against ``Fy`` [N] at one load ``fz`` [N] (default nominal).

    One curve per constant slip angle in ``alphas_deg`` (``kappa`` swept over ``±kappa_max``), one
    per constant slip ratio in ``kappas`` (``alpha`` swept over ``±alpha_max_deg``), the pure-slip
    friction ellipse ``(Fx / Fx_pk)^2 + (Fy / Fy_pk)^2 = 1`` when ``ellipse``, and a marker line for
    ``operating_point = (kappa, alpha [rad])`` (its grip utilisation in the legend).  Lines:
    ``len(alphas_deg) + len(kappas) + ellipse + (operating_point is not None)``.
    """
    fz = nominal_load(params) if fz is None else float(fz)
    fig, ax = _new_axes(ax, (5.6, 5.2))
    k = np.linspace(-kappa_max, kappa_max, n)
    a = np.linspace(-alpha_max_deg, alpha_max_deg, n) * DEG
    cmap = matplotlib.colormaps["viridis"]
    if len(alphas_deg):
        al = np.asarray(alphas_deg, dtype=float)[:, None] * DEG
        o = _forces(params, k[None, :], al, gamma, fz, surface, combined=True)
        fx, fy = _np(o.fx) * np.ones((len(al), n)), _np(o.fy) * np.ones((len(al), n))
        for i, (x, y) in enumerate(zip(fx, fy, strict=True)):
            ax.plot(y, x, color=cmap(i / max(len(al) - 1, 1)), label=f"α {alphas_deg[i]:+g}°, κ swept")
    if len(kappas):
        kp = np.asarray(kappas, dtype=float)[:, None]
        o = _forces(params, kp, a[None, :], gamma, fz, surface, combined=True)
        fx, fy = _np(o.fx) * np.ones((len(kp), n)), _np(o.fy) * np.ones((len(kp), n))
        for i, (x, y) in enumerate(zip(fx, fy, strict=True)):
            ax.plot(
                y,
                x,
                ls="--",
                color=matplotlib.colormaps["cool"](i / max(len(kp) - 1, 1)),
                label=f"κ {kappas[i]:+g}, α swept",
            )
    s = tire_summary(params, fz, gamma, surface)
    fxp, fyp = abs(s["fx_peak"]), abs(s["fy_peak"])
    if ellipse:
        th = np.linspace(0.0, 2.0 * np.pi, 361)
        ax.plot(fyp * np.cos(th), fxp * np.sin(th), color="k", lw=1.0, ls=":", label="pure-slip peak ellipse")
    if operating_point is not None:
        ko, ao = operating_point
        o = _forces(params, ko, ao, gamma, fz, surface, combined=True)
        util = float(np.asarray(o.grip_utilisation))
        ax.plot(
            [float(o.fy)],
            [float(o.fx)],
            marker="*",
            ms=14,
            ls="none",
            color="crimson",
            label=f"κ {ko:+.2f}, α {ao / DEG:+.1f}°: utilisation {util:.2f}",
        )
    ax.set_aspect("equal", adjustable="datalim")
    _finish(
        ax,
        "Fy [N]",
        "Fx [N]",
        f"combined slip at Fz {fz:.0f} N: Fx pk {fxp:.0f} N, Fy pk {fyp:.0f} N (μx {fxp / fz:.2f}, μy {fyp / fz:.2f})",
    )
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig


# --------------------------------------------------------------------------- surfaces


def surface_comparison(
    params,
    names: Sequence[str] = DEFAULT_SURFACES,
    fz: float | None = None,
    *,
    kappa_max: float = 0.3,
    alpha_max_deg: float = 15.0,
    n: int = 301,
    axes=None,
):
    """``Fx(kappa)`` and ``Fy(alpha)`` at one load on several surface presets (:mod:`jaxtire.surfaces`).

    Two panels (``axes``: a pair of Axes to draw into, or None), ``len(names)`` lines each; the
    legend gives each surface's grip and peak forces.
    """
    fz = nominal_load(params) if fz is None else float(fz)
    if axes is None:
        fig, axes = _plt().subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    else:
        fig = axes[0].figure
    k = np.linspace(-kappa_max, kappa_max, n)
    a = np.linspace(-alpha_max_deg, alpha_max_deg, n) * DEG
    for name in names:
        srf = _surfaces.preset(name)
        fx = _np(_forces(params, k, 0.0, 0.0, fz, srf).fx)
        fy = _np(_forces(params, 0.0, a, 0.0, fz, srf).fy)
        axes[0].plot(k, fx, label=f"{name} (grip {srf.grip:g}): {np.max(np.abs(fx)):.0f} N")
        axes[1].plot(a / DEG, fy, label=f"{name}: {np.max(np.abs(fy)):.0f} N")
    _finish(axes[0], "slip ratio κ [-]", "Fx [N]", f"Fx(κ) on surfaces, Fz {fz:.0f} N")
    _finish(axes[1], "slip angle α [deg]", "Fy [N]", f"Fy(α) on surfaces, Fz {fz:.0f} N")
    return fig


# --------------------------------------------------------------------------- the standard sheet


def tire_sheet(
    params,
    loads: Sequence[float] | None = None,
    cambers_deg: Sequence[float] = (-4.0, 0.0, 4.0),
    *,
    surface=None,
    title: str | None = None,
    n: int = 241,
):
    """The standard sheet: Fx(κ), Fy(α), Mz(α) and trail over loads, Fy(α) over camber, combined slip.

    A 2 x 3 grid of the single-panel plots (their titles carry the peak values, the stiffnesses and
    the peak slips at the nominal load).  Lines: ``4 len(loads) + len(cambers_deg) + 11``.
    """
    loads = default_loads(params) if loads is None else tuple(loads)
    fig, axes = _plt().subplots(2, 3, figsize=(18, 10), layout="constrained")
    fx_kappa(params, loads, surface=surface, n=n, ax=axes[0, 0])
    fy_alpha(params, loads, surface=surface, n=n, ax=axes[0, 1])
    mz_alpha(params, loads, surface=surface, n=n, ax=axes[0, 2])
    trail_alpha(params, loads, surface=surface, n=n, ax=axes[1, 0])
    fy_alpha(params, [nominal_load(params)], [c * DEG for c in cambers_deg], surface=surface, n=n, ax=axes[1, 1])
    axes[1, 1].set_title(axes[1, 1].get_title().replace("Fy(α)", "Fy(α) over camber"), fontsize=9)
    friction_ellipse(params, surface=surface, n=n, ax=axes[1, 2])
    if title is None:
        title = f"{_tire.model_label(params)}, nominal load {nominal_load(params):.0f} N"
    fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------- spline and load table


def spline_plot(params, slip_max: float | None = None, *, n: int = 401, labels: Sequence[str] | None = None, ax=None):
    """The two-piece spline friction curve :func:`jaxtire.spline.spline_curve` over ``±slip_max``.

    ``params``: one :class:`jaxtire.spline.SplineParams` or a sequence of them (one line each);
    the extremum and asymptote knots are marked.  ``slip_max`` defaults to 1.5 times the largest
    asymptote slip.
    """

    many = isinstance(params, (list, tuple)) and not hasattr(params, "_fields")
    plist = list(params) if many else [params]
    labs: list[str | None] = list(labels) if labels is not None else [None] * len(plist)
    if slip_max is None:
        slip_max = 1.5 * max(float(np.max(np.asarray(p.asymptote_slip))) for p in plist)
    fig, ax = _new_axes(ax)
    s = np.linspace(-slip_max, slip_max, n)
    knots = []
    for p, lab in zip(plist, labs, strict=True):
        xe, ye, xa, ya, k = (float(np.asarray(v)) for v in p)
        lab = lab or f"extremum ({xe:g}, {ye:g}), asymptote ({xa:g}, {ya:g}), stiffness {k:g}"
        ax.plot(s, _np(spline_curve(p, s)), label=lab)
        knots += [(xe, k * ye), (xa, k * ya), (-xe, -k * ye), (-xa, -k * ya)]
    ax.scatter(*zip(*knots, strict=True), s=16, c="k", zorder=3)
    p0 = plist[0]
    xe, ye, _, _, k = (float(np.asarray(v)) for v in p0)
    _finish(ax, "slip", "force", f"two-piece spline: peak {k * ye:g} at slip {xe:g}, slope at 0 {k * ye / xe:g}")
    return fig


def load_table_slices(
    table, x_max: float = 0.3, loads: Sequence[float] | None = None, *, n: int = 301, xlabel: str = "slip", ax=None
):
    """Slices of a :class:`jaxtire.load_table.LoadTable` and curves interpolated between them.

    One solid line per table slice (at its own load) and one dashed line per load in ``loads``
    (default: the midpoints between neighbouring slices), all from
    :func:`jaxtire.load_table.load_table_force` over ``±x_max``.  Lines: ``n_slices + len(loads)``.
    """

    fzs = _np(table.fz)
    if loads is None:
        loads = tuple(0.5 * (fzs[1:] + fzs[:-1]))
    fig, ax = _new_axes(ax)
    x = np.linspace(-x_max, x_max, n)
    cmap = matplotlib.colormaps["viridis"]
    every = np.concatenate([fzs, np.asarray(loads, dtype=np.float64).ravel()])
    lo, span = every.min(), max(every.max() - every.min(), 1e-9)
    for fz in fzs:
        y = _np(load_table_force(table, x, float(fz)))
        ax.plot(x, y, color=cmap((fz - lo) / span), label=f"slice Fz {fz:.0f} N: peak {np.max(np.abs(y)):.0f}")
    for fz in loads:
        y = _np(load_table_force(table, x, float(fz)))
        ax.plot(x, y, ls="--", color=cmap((fz - lo) / span), label=f"interpolated Fz {fz:.0f} N")
    _finish(ax, xlabel, "force [N]", f"load table: {len(fzs)} slices, {fzs.min():.0f} to {fzs.max():.0f} N")
    return fig


# --------------------------------------------------------------------------- the curve explorer


def explorer(
    B: float = 11.3,
    C: float = 1.34,
    D: float = 0.88,
    E: float = -0.82,
    fz: float = 4000.0,
    camber_deg: float = 0.0,
    *,
    trail: float = 0.028,
    k_load: float = 0.0,
    c_gamma: float = -0.9,
    fz0: float = 4000.0,
    alpha_max_deg: float = 20.0,
    n: int = 401,
    reference=None,
    fig=None,
):
    """Live Pacejka curve explorer: ``Fy(alpha)``, ``Mz(alpha)`` and the trail of a B, C, D, E curve.

    The lateral curve of the simple model (:func:`jaxtire.simple.simple_forces` with
    ``By, Cy, Dy, Ey = B, C, D, E``, ``D`` the peak friction coefficient, so the peak is ``D Fz``
    at ``k_load = 0``; camber thrust ``c_gamma gamma Fz``; trail ``trail cos(phase)``) at load ``fz``
    [N] and camber ``camber_deg``.  The title gives the cornering stiffness ``B C D Fz`` [N/deg],
    the peak slip angle and the peak force.  ``reference``: MF or simple params drawn dashed at
    the same load and camber for comparison.  Three panels, one line each (two with ``reference``).
    """

    p = make_simple_params(By=B, Cy=C, Dy=D, Ey=E, trail=trail, k_load=k_load, c_gamma=c_gamma, fz0=fz0)
    if fig is None:
        fig, axes = _plt().subplots(1, 3, figsize=(14, 4.2), layout="constrained")
    else:
        fig.clear()
        axes = fig.subplots(1, 3)
    a = np.linspace(-alpha_max_deg, alpha_max_deg, n) * DEG
    gam = camber_deg * DEG
    curves = [("B C D E", p, "-")]
    if reference is not None:
        curves.append(("reference", reference, "--"))
    for name, prm, ls in curves:
        o = _forces(prm, 0.0, a, gam, fz)
        fy, mz = _np(o.fy) * np.ones(n), _np(o.mz) * np.ones(n)
        axes[0].plot(a / DEG, fy, ls=ls, label=name)
        axes[1].plot(a / DEG, mz, ls=ls, label=name)
        axes[2].plot(a / DEG, 1e3 * trail_values(fy, mz), ls=ls, label=name)
    s = tire_summary(p, fz, gam)
    axes[0].scatter([s["alpha_peak"] / DEG], [s["fy_peak"]], s=20, c="k", zorder=3)
    _finish(
        axes[0],
        "slip angle α [deg]",
        "Fy [N]",
        f"Fy: Kα {abs(s['kya']) * DEG:.0f} N/deg, peak {abs(s['fy_peak']):.0f} N at α {s['alpha_peak'] / DEG:+.2f}°",
    )
    _finish(
        axes[1],
        "slip angle α [deg]",
        "Mz [N m]",
        f"Mz: peak {abs(s['mz_peak']):.1f} N m at α {s['alpha_mz_peak'] / DEG:+.2f}°",
    )
    _finish(axes[2], "slip angle α [deg]", "trail −Mz/Fy [mm]", f"trail: {1e3 * s['trail0']:.1f} mm at 1°")
    fig.suptitle(f"B {B:.2f}  C {C:.2f}  D {D:.2f}  E {E:.2f}   Fz {fz:.0f} N   γ {camber_deg:+.1f}°")
    return fig


# --------------------------------------------------------------------------- helpers for tests and the CLI


def count_lines(fig) -> int:
    """Number of ``Line2D`` curves over every Axes of ``fig``."""
    return sum(len(ax.lines) for ax in fig.axes)


def save(fig, path, dpi: int = 110, close: bool = True) -> Path:
    """Render ``fig`` to ``path`` (format from the suffix); closes it unless ``close=False``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    if close:
        _plt().close(fig)
    return path


def write_sheet(
    params, out_dir, *, loads: Sequence[float] | None = None, fmt: str = "png", dpi: int = 110, panels: bool = True
) -> list[Path]:
    """Write ``sheet.<fmt>`` (and with ``panels`` the single panels of :data:`PANELS`) into ``out_dir``."""
    out = Path(out_dir)
    written = [save(tire_sheet(params, loads), out / f"sheet.{fmt}", dpi)]
    if panels:
        nom = [nominal_load(params)]
        figs = {
            "fx_kappa": lambda: fx_kappa(params, loads),
            "fy_alpha": lambda: fy_alpha(params, loads),
            "mz_alpha": lambda: mz_alpha(params, loads),
            "trail": lambda: trail_alpha(params, loads),
            "camber": lambda: fy_alpha(params, nom, [c * DEG for c in (-4.0, -2.0, 0.0, 2.0, 4.0)]),
            "friction_ellipse": lambda: friction_ellipse(params),
            "surfaces": lambda: surface_comparison(params),
        }
        for name in PANELS:
            written.append(save(figs[name](), out / f"{name}.{fmt}", dpi))
    return written


def main(argv=None) -> int:
    """``python -m jaxtire.plot [TIR_FILE] --out DIR``: the standard sheet of curves of a .tir file."""

    ap = argparse.ArgumentParser(
        prog="python -m jaxtire.plot", description="Draw the standard sheet of tire curves of a .tir file."
    )
    ap.add_argument("tir", nargs="?", default=str(data_path()), help="a .tir file (default: the bundled TNO 205/60R15)")
    ap.add_argument("--out", default="tire_plots", help="output folder (created; default: ./tire_plots)")
    ap.add_argument("--loads", type=float, nargs="+", help="loads [N] (default: 0.5, 1, 1.5, 2 x FNOMIN)")
    ap.add_argument("--format", default="png", choices=("png", "pdf", "svg"), help="image format (default png)")
    ap.add_argument("--dpi", type=int, default=110)
    ap.add_argument("--no-panels", action="store_true", help="write only the sheet, not the single panels")
    args = ap.parse_args(argv)
    matplotlib.use("Agg")
    params = load_tir(args.tir)
    loads = tuple(args.loads) if args.loads else default_loads(params)
    print(f"{args.tir}  (FITTYP {params.fittyp}, FNOMIN {nominal_load(params):.0f} N)")
    print(
        f"{'Fz [N]':>8} {'Fx pk [N]':>10} {'kappa@pk':>9} {'Kxk [N]':>9} {'Fy pk [N]':>10} {'alpha@pk':>9} "
        f"{'Kya [N/deg]':>12} {'Mz pk [Nm]':>11} {'trail [mm]':>11}"
    )
    for fz in loads:
        s = tire_summary(params, fz)
        print(
            f"{fz:8.0f} {abs(s['fx_peak']):10.1f} {s['kappa_peak']:9.3f} {s['kxk']:9.0f} {abs(s['fy_peak']):10.1f} "
            f"{s['alpha_peak'] / DEG:8.2f}° {s['kya'] * DEG:12.1f} {abs(s['mz_peak']):11.1f} {1e3 * s['trail0']:11.1f}"
        )
    for path in write_sheet(params, args.out, loads=loads, fmt=args.format, dpi=args.dpi, panels=not args.no_panels):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
