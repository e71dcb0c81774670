"""Simple-model tire: two Magic Formula curves, load sensitivity, camber thrust, friction ellipse.

The model for games and quick studies: one Magic Formula curve per axis
(:func:`jaxtire.magic_formula.magic_formula`, ``D`` the peak friction
coefficient so the peak force is ``D Fz``), coupled through a friction
ellipse with a progressive breakaway past the limit.  Same signature, axes
and signs as :func:`jaxtire.mf61.mf_forces` (TYDEX / ISO-W: x forward, y left,
z up): positive ``kappa`` [-] gives positive ``fx``, positive ``alpha`` [rad]
gives negative ``fy``.  The curves take ``alpha`` itself (not ``tan alpha``).

Equations (``fz`` [N] clamped to ``>= 0``; ``g = max(surface.grip, 1e-3)``)::

    lam(Fz)  = max(1 - k_load (Fz - fz0) / fz0, 0.05)             load sensitivity [-]
    mux_pk   = Dx lam g,   muy_pk = Dy lam g                        peak friction [-]
    Bx'      = Bx / g,     By'    = By / g                          stiffness kept
    phx      = Cx atan(Bx' k - Ex (Bx' k - atan(Bx' k)))            k = kappa
    phy      = Cy atan(By' a - Ey (By' a - atan(By' a)))            a = alpha
    mux0     = mux_pk sin(phx)                                     = magic_formula(k, Bx', Cx, mux_pk, Ex)
    muy0     = -muy_pk sin(phy) + c_gamma gamma w                   camber thrust Fy_gamma = c_gamma gamma Fz
    nx, ny   = mux0 / mux_pk, muy0 / muy_pk                         normalised demand [-]
    d        = sqrt(nx^2 + ny^2)                                    ellipse demand (grip utilisation asked for)
    s        = 1 / max(1, d)                                        friction ellipse, semi-axes mux_pk, muy_pk
    b        = r + (1 - r) exp(-beta max(d - 1, 0)^2)               progressive breakaway, r = slide_ratio
    Fx       = Fz mux0 s b,   Fy = Fz muy0 s b                      [N]

so past the limit (``d > 1``) the resultant sits on the ellipse scaled by
``mu_eff / mu_peak = b``, i.e. ``mu_eff = mu_slide + (mu_peak - mu_slide)
exp(-beta (d - 1)^2)`` with ``mu_slide = r mu_peak``; ``b`` and its slope are
continuous at ``d = 1``.  In pure slip without camber ``d = |sin(ph)| <= 1``, so
the ellipse and the breakaway leave pure-slip curves unchanged; there the
fall-off past the peak is the curve's own (asymptote ``D sin(C pi / 2)``).
With the static flag ``ellipse=False`` the two curves act independently
(``s = b = 1``; the resultant can exceed the ellipse, as in the Dyad
``PacejkaWheelJoint`` with ``friction_ellipse = false``).

Surface grip ``g`` multiplies the peak friction ``D`` (and with it the sliding
friction ``r D``) but divides ``B``, so the slip stiffness ``B C D lam Fz``
[N per unit slip, N/rad] does not depend on the surface: the pure-slip curve on
a surface of grip ``g`` is the reference curve scaled by ``g`` in *both* slip
and force, ``F_g(x) = g F_1(x / g)``; on ice (``g = 0.12``) the peak is 0.12
times the dry one and is reached at 0.12 times the slip.  Load sensitivity
scales ``D`` at fixed ``B``, so the stiffness is degressive in load, as on a
real tire.  ``lam`` is floored at 0.05 (documented clamp for absurd loads).

Low speed (``vx`` given): the camber thrust is faded with ``w = (1 - cos(pi
min(|vx| / v_low, 1))) / 2`` (as MF fades its camber shifts), so a wheel at
standstill with zero slip produces no force.  ``vx = None``: ``w = 1``.

Moments::

    Mz = -t Fy_slip,   t = trail max(cos(clip(phy, -pi/2, pi/2)), 0)   [N m]
    My = -c_rr radius Fz surface.rolling_resistance clip(vx / v_low, -1, 1)
    Mx = 0

``Fy_slip = Fz (-muy_pk sin(phy)) s b`` is the slip part of ``Fy`` (camber
thrust acts at the contact centre), so ``Mz > 0`` for ``alpha > 0`` exactly as
:func:`jaxtire.mf61.mf_forces` gives with the bundled tire; the trail vanishes
at the lateral peak and stays zero beyond (the steering goes light at the
limit).  ``My`` opposes rolling (negative forward) and fades linearly to zero
below ``v_low``, so a parked car does not creep (inside ``jit`` the inputs saturate, so every finite input
gives finite outputs: ``|kappa|, |alpha| <= SLIP_SAT = 1e6``, ``Fz <= 20 fz0``, ``|gamma| <= pi/2``);
``vx = None`` evaluates
forward rolling.

Outputs: ``mux, muy`` = ``mux_pk, muy_pk``; ``grip_utilisation`` =
``sqrt((fx / (mux fz))^2 + (fy / (muy fz))^2)`` = ``d s b`` (computed without
dividing by ``fz``, so it is defined at ``fz = 0``); ``is_sliding`` when
``|phx| > pi/2`` or ``|phy| > pi/2`` (past a curve's peak) or ``d > 1`` (past
the ellipse).

Default parameters (:data:`DEFAULTS`) are a passenger-car tire: the curves are
least-squares fits of the odd part of the bundled TNO 205/60 R15 MF-Tyre
file's pure-slip ``Fx0``, ``Fy0`` at ``FNOMIN`` = 4000 N, rounded (within 0.5 %
of ``Fz`` there; the MF load dependence of ``B, C, E`` is not modelled);
``k_load`` from its ``-PDX2 / PDX1`` and ``-PDY2 / PDY1`` (0.079, 0.073);
``c_gamma`` its camber stiffness ``PKY6`` = -0.90 / rad; ``trail`` its ``Mz /
(-Fy)`` at small slip angle; ``c_rr`` its ``QSY1``; ``radius`` its
``UNLOADED_RADIUS``; ``v_low`` its ``VXLOW``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._math import safe_norm
from jaxtire._pytree import ValidatedReplace
from jaxtire.forces import TireForces
from jaxtire.magic_formula import magic_formula, peak_phase
from jaxtire.surfaces import check_surface
from jaxtire.validation import ValidationError, check_fields

#: Lower bound of the load-sensitivity factor ``lam`` [-].
LAM_MIN = 0.05
#: Lower bound of the surface grip used by the simple model [-] (``B / g`` stays finite).
GRIP_MIN = 1e-3
#: Documented input saturation inside ``jit`` (finite outputs for every finite input): slips beyond
#: +-SLIP_SAT (the curve is at its sliding asymptote long before), loads above FZ_SAT_FACTOR * fz0,
#: camber beyond +-pi/2 rad.
SLIP_SAT = 1e6
FZ_SAT_FACTOR = 20.0

#: Documented defaults (see the module docstring for their source).
DEFAULTS: dict[str, float] = {
    "Bx": 13.2,
    "Cx": 1.58,
    "Dx": 1.04,
    "Ex": 0.11,
    "By": 11.3,
    "Cy": 1.34,
    "Dy": 0.88,
    "Ey": -0.82,
    "fz0": 4000.0,  # nominal load [N]
    "k_load": 0.075,  # load sensitivity [-]
    "c_gamma": -0.90,  # camber thrust coefficient [1/rad] (ISO-W: gamma > 0 gives fy < 0)
    "slide_ratio": 0.8,  # sliding / peak friction past the ellipse [-]
    "beta": 8.0,  # breakaway sharpness [-]
    "trail": 0.028,  # pneumatic trail at zero slip [m]
    "c_rr": 0.007,  # rolling-resistance coefficient [-]
    "radius": 0.3135,  # rolling radius used by My [m]
    "v_low": 1.0,  # low-speed floor [m/s]
}

#: Allowed ranges: name -> (low, high, low inclusive, high inclusive).
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "Bx": (0.0, math.inf, False, False),
    "By": (0.0, math.inf, False, False),
    "Cx": (0.0, 2.0, False, True),
    "Cy": (0.0, 2.0, False, True),
    "Dx": (0.0, 10.0, False, True),
    "Dy": (0.0, 10.0, False, True),
    "Ex": (-10.0, 1.0, True, True),
    "Ey": (-10.0, 1.0, True, True),
    "fz0": (0.0, math.inf, False, False),
    "k_load": (0.0, 1.0, True, False),
    "c_gamma": (-5.0, 5.0, True, True),
    "slide_ratio": (0.0, 1.0, False, True),
    "beta": (0.0, math.inf, True, False),
    "trail": (0.0, 1.0, True, True),
    "c_rr": (0.0, 1.0, True, True),
    "radius": (0.0, math.inf, False, False),
    "v_low": (0.0, math.inf, False, False),
}

FIELDS: tuple[str, ...] = tuple(DEFAULTS)


@dataclasses.dataclass(frozen=True)
class SimpleParams(ValidatedReplace):
    """Immutable simple-model parameter pytree (build it with :func:`make_simple_params`).

    ``replace(**changes)``: the shared semantics of :mod:`jaxtire._pytree` (validated when
    concrete, works with tracers under ``jit``).

    Every numeric field is an array leaf (a leading axis batches many tires);
    ``ellipse`` is static metadata.  Units: ``fz0`` [N], ``c_gamma`` [1/rad],
    ``trail`` and ``radius`` [m], ``v_low`` [m/s], the rest dimensionless.
    """

    Bx: Any
    Cx: Any
    Dx: Any
    Ex: Any
    By: Any
    Cy: Any
    Dy: Any
    Ey: Any
    fz0: Any
    k_load: Any
    c_gamma: Any
    slide_ratio: Any
    beta: Any
    trail: Any
    c_rr: Any
    radius: Any
    v_low: Any
    ellipse: bool = True

    _STATIC = ("ellipse",)

    def _make(self, values: dict, dtype) -> SimpleParams:
        return make_simple_params(**values, dtype=dtype)

    def astype(self, dtype) -> SimpleParams:
        """All numeric leaves cast to ``dtype``."""
        changes: dict[str, Any] = {f: jnp.asarray(getattr(self, f), dtype) for f in FIELDS}
        return dataclasses.replace(self, **changes)


jax.tree_util.register_dataclass(SimpleParams, data_fields=list(FIELDS), meta_fields=["ellipse"])


def make_simple_params(*, ellipse: bool = True, dtype=None, **values) -> SimpleParams:
    """Validated :class:`SimpleParams`; unspecified fields take :data:`DEFAULTS`.

    Values may be scalars or arrays (a leading axis batches tires; shapes must
    broadcast).  Raises :class:`~jaxtire.validation.ValidationError` (a ``ValueError``)
    naming the field and its allowed range (:data:`RANGES`), e.g. ``Dx > 0``, ``fz0 > 0``,
    ``0 <= k_load < 1``, ``0 < slide_ratio <= 1``, a value that overflows or underflows ``dtype``, a
    non-floating ``dtype`` or batch shapes that do not broadcast (:func:`~jaxtire.validation.check_fields`),
    before building anything.
    """
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValidationError(f"SimpleParams: unknown field(s) {sorted(unknown)}; allowed {FIELDS}")
    if not isinstance(ellipse, bool):
        raise ValidationError(f"SimpleParams: ellipse = {ellipse!r} must be a Python bool (a static flag)")
    full = {f: values.get(f, DEFAULTS[f]) for f in FIELDS}
    dtype = check_fields(full, RANGES, source="SimpleParams", dtype=dtype)
    return SimpleParams(**{f: jnp.asarray(v, dtype) for f, v in full.items()}, ellipse=ellipse)


def default_simple_params(dtype=None) -> SimpleParams:
    """The passenger-car defaults of :data:`DEFAULTS`."""
    return make_simple_params(dtype=dtype)


def _check_load(fz):
    if not isinstance(fz, jax.core.Tracer):
        arr = np.asarray(fz)
        if arr.size and np.nanmin(arr) < 0:
            raise ValueError(f"fz must be >= 0 N (vertical load); got min {np.nanmin(arr)}")


def simple_forces(params: SimpleParams, kappa, alpha, gamma=0.0, fz=None, vx=None, surface=None) -> TireForces:
    """Simple-model forces and moments at the contact, TYDEX / ISO-W axes (equations: module docstring).

    Args:
      params: :class:`SimpleParams` (leaves of any shape that broadcasts with the inputs).
      kappa: longitudinal slip ratio [-], positive when driving (gives ``fx > 0``).
      alpha: slip angle [rad], positive when the contact slides left (gives ``fy < 0``).
      gamma: inclination (camber) angle [rad]; camber thrust ``c_gamma gamma fz``.
      fz: vertical load [N] >= 0; defaults to ``fz0``.  Negative loads raise ``ValueError``
        when concrete and are treated as 0 (wheel lifted) inside ``jit``.
      vx: forward speed of the wheel centre [m/s]; fades camber thrust and ``My`` below ``v_low``.
        ``None``: rolling forward above ``v_low``.
      surface: a :class:`jaxtire.surfaces.Surface`; ``grip`` scales peak and sliding friction (not the
        slip stiffness), ``rolling_resistance`` scales ``My``.

    Returns:
      :class:`~jaxtire.forces.TireForces` (``fx, fy`` [N], ``mz, mx, my`` [N m], ``mux, muy``,
      ``grip_utilisation``, ``is_sliding``).
    """
    p = params
    if fz is None:
        fz = p.fz0
    _check_load(fz)
    check_surface(surface, source="simple_forces: surface")  # concrete values only; skipped under jit
    kappa, alpha, gamma, fz = (jnp.asarray(x) for x in (kappa, alpha, gamma, fz))
    fz = jnp.where(fz >= 0, fz, 0.0)  # lifted wheel; gradient 1 at fz = 0 (the right derivative)
    # saturation (module constants): finite outputs for every finite input, also in float32
    fz = jnp.minimum(fz, FZ_SAT_FACTOR * p.fz0)
    kappa, alpha = jnp.clip(kappa, -SLIP_SAT, SLIP_SAT), jnp.clip(alpha, -SLIP_SAT, SLIP_SAT)
    gamma = jnp.clip(gamma, -np.pi / 2, np.pi / 2)
    grip, rr_scale = (1.0, 1.0) if surface is None else (surface.grip, surface.rolling_resistance)
    g = jnp.maximum(grip, GRIP_MIN)

    lam = jnp.maximum(1.0 - p.k_load * (fz - p.fz0) / p.fz0, LAM_MIN)
    mux_pk = p.Dx * lam * g
    muy_pk = p.Dy * lam * g
    bx, by = p.Bx / g, p.By / g
    phx = peak_phase(kappa, bx, p.Cx, p.Ex)
    phy = peak_phase(alpha, by, p.Cy, p.Ey)
    # sin(phase) = magic_formula(x, B', C, 1, E): the curve normalised by its peak.
    nx = magic_formula(kappa, bx, p.Cx, 1.0, p.Ex)
    ny_slip = -magic_formula(alpha, by, p.Cy, 1.0, p.Ey)

    w_low: jax.Array | float
    direction: jax.Array | float
    if vx is None:
        w_low = 1.0
        direction = 1.0
    else:
        vx = jnp.asarray(vx)
        vx = jnp.clip(vx, -1e3 * p.v_low, 1e3 * p.v_low)  # only |vx| / v_low up to 1 matters; avoids inf / inf
        w_low = 0.5 * (1.0 - jnp.cos(np.pi * jnp.minimum(jnp.abs(vx) / p.v_low, 1.0)))
        direction = jnp.clip(vx / p.v_low, -1.0, 1.0)
    ny = ny_slip + p.c_gamma * gamma * w_low / muy_pk

    demand = safe_norm(nx, ny)
    if p.ellipse:
        over = jnp.maximum(demand - 1.0, 0.0)
        factor = (p.slide_ratio + (1.0 - p.slide_ratio) * jnp.exp(-p.beta * over * over)) / jnp.maximum(demand, 1.0)
    else:
        factor = jnp.ones_like(demand)

    fx = fz * mux_pk * nx * factor
    fy = fz * muy_pk * ny * factor
    fy_slip = fz * muy_pk * ny_slip * factor
    trail = p.trail * jnp.maximum(jnp.cos(jnp.clip(phy, -np.pi / 2, np.pi / 2)), 0.0)  # exactly 0 past the peak
    mz = -trail * fy_slip
    my = -p.c_rr * p.radius * fz * rr_scale * direction
    shape = jnp.broadcast_shapes(jnp.shape(fx), jnp.shape(fy), jnp.shape(my))
    fx, fy, mz, my = (jnp.broadcast_to(v, shape) for v in (fx, fy, mz, my))
    util = jnp.broadcast_to(demand * factor, shape)
    sliding = (jnp.abs(phx) > np.pi / 2) | (jnp.abs(phy) > np.pi / 2) | (demand > 1.0)
    return TireForces(
        fx,
        fy,
        mz,
        jnp.zeros_like(fx),
        my,
        jnp.broadcast_to(mux_pk, shape),
        jnp.broadcast_to(muy_pk, shape),
        util,
        jnp.broadcast_to(sliding, shape),
    )
