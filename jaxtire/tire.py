"""The one tire interface of :mod:`jaxtire` and its only dispatch.

Every full tire model (forces from slip, camber, load, speed and surface) is
described by one :class:`TireModel` record in :data:`MODELS`, keyed by its
parameter pytree type:

* :class:`jaxtire.params.MFParams` -> MF 6.1 / 6.2 and MF 5.2 / PAC2002 (:mod:`jaxtire.mf61`);
* :class:`jaxtire.simple.SimpleParams` -> the simple B, C, D, E model (:mod:`jaxtire.simple`).

The public functions below take any such pytree and look its record up with a
Python ``isinstance`` on the pytree *type* (:func:`model_of`).  The type of a
pytree does not change under ``jit``, ``vmap`` or ``grad`` (its leaves become
tracers, the container stays), so the dispatch is resolved once at trace time
and costs nothing in the compiled program.  No other module of the project
tests a tire-parameter type; code that needs a model-specific fact asks for it
here (:func:`nominal_load`, :func:`unloaded_radius`, :func:`with_nominal`, :func:`coefficient_names`, ...).

Both models share axes, units and signs (TYDEX / ISO-W, SI, radians; see
:mod:`jaxtire.forces`).  A new model adds one record to :data:`MODELS`.

Options.  :func:`tire_forces` passes model-specific keyword inputs (for MF:
``combined`` and whatever further keyword inputs :func:`jaxtire.mf61.mf_forces`
takes, e.g. turn slip ``phi``) to the model; a model whose force function has no
such keyword raises :class:`UnsupportedOption` naming it, e.g. ``SimpleParams
tire has no turn slip (phi)``.  An option given as ``None`` means "not given"
and is accepted (and dropped) by every model.  ``combined=False`` (pure-slip
curves ``Fx0(kappa)``, ``Fy0(alpha)``, ``Mz0``) is understood by every model:
MF evaluates its pure-slip equations; the simple model has one set of equations
whose pure-slip rows are its pure-slip curves, so it evaluates those.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire._math import materialise
from jaxtire._xp import namespace
from jaxtire.forces import TireForces
from jaxtire.limits import LimitFlags, range_code
from jaxtire.mf61 import clamped_stiffness, mf_forces
from jaxtire.mf61 import out_of_range as mf_out_of_range
from jaxtire.params import MFParams
from jaxtire.simple import FIELDS as _SIMPLE_FIELDS
from jaxtire.simple import SimpleParams, simple_forces
from jaxtire.validation import check_range
from jaxtire.vertical import deflection as _mf_deflection
from jaxtire.vertical import effective_rolling_radius
from jaxtire.vertical import free_radius as _mf_free_radius
from jaxtire.vertical import vertical_force as _mf_vertical_force

__all__ = [
    "MODELS",
    "TireModel",
    "UnsupportedOption",
    "coefficient_names",
    "get_coefficient",
    "is_tire",
    "linear_stiffness",
    "low_speed",
    "model_label",
    "model_name",
    "model_of",
    "model_options",
    "nominal_load",
    "out_of_range",
    "out_of_range_code",
    "replace_coefficients",
    "rolling_radius",
    "scale_tire",
    "tire_deflection",
    "tire_forces",
    "tire_free_radius",
    "unloaded_radius",
    "vertical_force",
    "with_nominal",
]


class UnsupportedOption(ValueError, NotImplementedError):
    """A tire model was given a keyword input it does not model (e.g. turn slip for the simple tire)."""


#: Human-readable names of the model-specific keyword inputs, for error messages.
OPTION_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "phi": "turn slip",
        "side": "tire side",
        "pressure": "inflation pressure input",
        "omega": "wheel spin speed input",
        "limits": "operating-range limits",
        "convention": "sign convention choice",
    }
)


class TireModel(NamedTuple):
    """What one tire model provides to the interface (every field a plain function of its params).

    ``forces(tire, kappa, alpha, gamma, fz, vx, surface, **options) -> TireForces``;
    ``pure_forces`` the same for the pure-slip curves (``combined=False``);
    ``scale(tire, mu_x, mu_y, k_x, k_y)``: friction and small-slip stiffness scaled (jit-safe);
    ``linear_stiffness(tire, fz, gamma, surface) -> (Kx, Ky)`` analytic, or ``None`` for the
    forward-mode derivative at zero slip; ``unloaded_radius(tire)`` [m]; ``nominal_load(tire)`` [N];
    ``coefficient_names(tire)``; ``get(tire, name)``; ``replace(tire, changes)`` (jit-safe,
    unknown names raise); ``label(tire)`` a short description for plots and reports;
    ``nominal_fields``: the coefficient names of the nominal load and the unloaded radius (what
    :func:`with_nominal` replaces); ``rolling_radius(tire, fz, omega, default)`` the effective rolling
    radius [m], or ``None``: the model has no vertical model (:func:`rolling_radius` returns ``default``);
    ``limit_flags(tire, kappa, alpha, gamma, fz, side=, pressure=) -> LimitFlags`` the per-point flags of the
    file's validity ranges, or ``None``: the model states no ranges (:func:`out_of_range` gives all False).
    ``vertical`` ``(force(tire, rho, omega), deflection(tire, fz, omega), free_radius(tire, omega), has(tire))``
    the vertical model (load from deflection, its inverse, the free radius, whether the file has one), or
    ``None`` (:func:`vertical_force` uses the linear spring it is given).  ``low_speed(tire)`` [m/s] the speed
    below which the model's low-speed terms act (:func:`low_speed`).
    """

    name: str
    forces: Callable[..., TireForces]
    pure_forces: Callable[..., TireForces]
    scale: Callable[..., Any]
    linear_stiffness: Callable[..., tuple] | None
    unloaded_radius: Callable[[Any], Any]
    nominal_load: Callable[[Any], Any]
    coefficient_names: Callable[[Any], tuple]
    get: Callable[[Any, str], Any]
    replace: Callable[[Any, Mapping[str, Any]], Any]
    label: Callable[[Any], str]
    nominal_fields: tuple[str, str] = ("", "")
    rolling_radius: Callable[..., Any] | None = None
    limit_flags: Callable[..., LimitFlags] | None = None
    vertical: tuple[Callable[..., Any], ...] | None = None
    low_speed: Callable[[Any], Any] | None = None

    @property
    def options(self) -> frozenset:
        """Keyword inputs the force function takes beyond the seven common ones, plus ``combined``."""
        return _extra_inputs(self.forces) | {"combined"}


#: The common inputs of every force function, in order.
COMMON_INPUTS = ("tire", "kappa", "alpha", "gamma", "fz", "vx", "surface")


@functools.cache
def _extra_inputs(fn) -> frozenset:
    """Names of ``fn``'s parameters after the seven common inputs (read from its signature, so a
    keyword input added to a model's force function becomes an option of the interface at once)."""
    params = list(inspect.signature(fn).parameters.values())[len(COMMON_INPUTS) :]
    return frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


# ------------------------------------------------------------------------------------- MF 6.1 / 6.2


def _mf_scale(tire: MFParams, mu_x, mu_y, k_x, k_y) -> MFParams:
    return tire.replace(LMUX=tire.LMUX * mu_x, LMUY=tire.LMUY * mu_y, LKX=tire.LKX * k_x, LKY=tire.LKY * k_y)


def _mf_rolling_radius(tire: MFParams, fz, omega, default):
    # the vertical model counts as fitted where the free radius ratio Q_RE0 > 0 and DREFF or FREFF is given
    # (MFTyreLibrary files leave Q_RE0 = 0, files without the e.r.r. fields read DREFF = FREFF = 0)
    fitted = (tire.Q_RE0 > 0.0) & ((tire.DREFF != 0.0) | (tire.FREFF != 0.0))
    re = effective_rolling_radius(tire, fz, omega)
    return jnp.where(fitted, re, jnp.asarray(default, jnp.result_type(re)))


def _mf_stiffness(tire: MFParams, fz, gamma, surface):
    return clamped_stiffness(tire, fz, gamma, surface)


_MF = TireModel(
    name="mf",
    forces=mf_forces,
    pure_forces=functools.partial(mf_forces, combined=False),
    scale=_mf_scale,
    linear_stiffness=_mf_stiffness,
    unloaded_radius=lambda t: t.UNLOADED_RADIUS,
    nominal_load=lambda t: t.FNOMIN,
    coefficient_names=lambda t: tuple(t.coef),
    get=lambda t, name: t.coef[name],
    replace=lambda t, changes: t.replace(**changes),
    label=lambda t: f"MF FITTYP {t.fittyp}",
    nominal_fields=("FNOMIN", "UNLOADED_RADIUS"),
    rolling_radius=_mf_rolling_radius,
    limit_flags=mf_out_of_range,
    vertical=(
        lambda t, rho, om: _mf_vertical_force(t, rho, om),
        lambda t, fz, om: _mf_deflection(t, fz, om, iterations=0),  # exact at zero camber and Fx, Fy
        _mf_free_radius,
        lambda t: (t.VERTICAL_STIFFNESS > 0.0) & (t.Q_RE0 > 0.0),
    ),
    low_speed=lambda t: t.VXLOW,
)


# ------------------------------------------------------------------------------------- simple model


def _simple_scale(tire: SimpleParams, mu_x, mu_y, k_x, k_y) -> SimpleParams:
    # peak force D Fz, small-slip stiffness B C D Fz: D *= mu and B *= k / mu scale them independently
    return dataclasses.replace(
        tire, Dx=tire.Dx * mu_x, Dy=tire.Dy * mu_y, Bx=tire.Bx * k_x / mu_x, By=tire.By * k_y / mu_y
    )


_SIMPLE = TireModel(
    name="simple",
    forces=simple_forces,
    pure_forces=simple_forces,
    scale=_simple_scale,
    linear_stiffness=None,
    unloaded_radius=lambda t: t.radius,
    nominal_load=lambda t: t.fz0,
    coefficient_names=lambda t: _SIMPLE_FIELDS,
    get=lambda t, name: getattr(t, name),
    replace=lambda t, changes: t.replace(**changes),
    label=lambda t: "simple model",
    nominal_fields=("fz0", "radius"),
    low_speed=lambda t: t.v_low,
)

#: Params type -> its :class:`TireModel` (read-only: the one table of tire models).
MODELS: Mapping[type, TireModel] = MappingProxyType({MFParams: _MF, SimpleParams: _SIMPLE})


# ------------------------------------------------------------------------------------- the interface


def is_tire(x) -> bool:
    """Whether ``x`` is a parameter pytree of a tire model in :data:`MODELS`."""
    return any(isinstance(x, cls) for cls in MODELS)


def model_of(tire) -> TireModel:
    """The :class:`TireModel` of ``tire`` (static: resolved on the pytree type).  ``TypeError`` if none."""
    for cls, model in MODELS.items():
        if isinstance(tire, cls):
            return model
    known = ", ".join(c.__name__ for c in MODELS)
    raise TypeError(f"jaxtire.tire: no tire model for parameters of type {type(tire).__name__}; known: {known}")


def model_name(tire) -> str:
    """Short name of the tire's model: ``"mf"`` or ``"simple"``."""
    return model_of(tire).name


def model_label(tire) -> str:
    """A one-line description for plots and reports (``"MF FITTYP 61"``, ``"simple model"``)."""
    return model_of(tire).label(tire)


def model_options(tire) -> frozenset:
    """Names of the keyword options :func:`tire_forces` accepts for this tire (always ``combined``)."""
    return model_of(tire).options


def tire_forces(tire, kappa, alpha, gamma=0.0, fz=None, vx=None, surface=None, **options) -> TireForces:
    """Forces and moments of whichever tire model ``tire`` describes, TYDEX / ISO-W axes.

    Args (as :func:`jaxtire.mf61.mf_forces`): ``kappa`` [-] (positive drives, gives ``fx > 0``),
    ``alpha`` [rad] (positive gives ``fy < 0``), ``gamma`` [rad], ``fz`` [N] >= 0 (default: the
    model's :func:`nominal_load`), ``vx`` [m/s] or ``None`` (nominal speed), ``surface`` a
    :class:`jaxtire.surfaces.Surface` or ``None`` (the reference surface); inputs broadcast with
    each other and with the parameter leaves.  ``options``: model-specific keyword inputs
    (module docstring); ``combined=False`` gives the pure-slip curves.

    Raises ``TypeError`` for an unknown params type, :class:`UnsupportedOption` for an option
    the model does not have (``None``-valued options are dropped first) and
    :class:`~jaxtire.validation.ValidationError` for a concrete ``surface`` outside
    :data:`jaxtire.surfaces.RANGES` (grip in [0, 5], NaN refused; not checked under ``jit``): every model's
    force function applies :func:`jaxtire.surfaces.check_surface` itself, so a direct call is checked too.
    """
    model = model_of(tire)
    combined = options.pop("combined", True)
    have = model.options
    for key in list(options):
        if options[key] is None and key not in have:
            del options[key]
        elif key not in have:
            what = OPTION_NAMES.get(key, "option")
            raise UnsupportedOption(f"{type(tire).__name__} tire has no {what} ({key}); its options are {sorted(have)}")
    fn = model.forces if combined else model.pure_forces
    out = fn(tire, kappa, alpha, gamma, fz, vx, surface, **options)
    # Fy computed once and stored: a vehicle reads it in two loops (the body-frame x and y forces), and
    # XLA:CPU recomputed the whole Fy tree (~330 operations per wheel) in each (benchmarks/PERF_NOTES.md,
    # "Fleet step op diet"); bit for bit the same value
    return out._replace(fy=materialise(out.fy))


def out_of_range(tire, kappa, alpha, gamma=0.0, fz=None, *, side=None, pressure=None) -> LimitFlags:
    """Per-point flags of the inputs outside the tire's validity ranges (:class:`jaxtire.limits.LimitFlags`).

    MF: ``FZMIN/FZMAX``, ``KPUMIN/KPUMAX``, ``ALPMIN/ALPMAX``, ``CAMMIN/CAMMAX``, ``PRESMIN/PRESMAX`` of the
    file (:func:`jaxtire.mf61.out_of_range`; ``side`` mirrors ``alpha`` and ``gamma`` into the tyre frame,
    ``pressure`` [Pa] defaults to ``INFLPRES``); models without ranges (simple): all ``False``.  Booleans
    shaped like the broadcast inputs; pure and cheap, for use next to :func:`tire_forces` inside ``jit``
    (an eager :func:`tire_forces` call outside the ranges warns instead, :mod:`jaxtire.limits`).
    """
    model = model_of(tire)
    fz = model.nominal_load(tire) if fz is None else fz
    shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in (kappa, alpha, gamma, fz, side, pressure) if x is not None))
    if model.limit_flags is None:
        no = jnp.zeros(shape, bool)
        return LimitFlags(no, no, no, no, no, no)
    flags = model.limit_flags(tire, kappa, alpha, gamma, fz, side=side, pressure=pressure)
    return LimitFlags(*(jnp.broadcast_to(f, jnp.broadcast_shapes(shape, jnp.shape(f))) for f in flags))


def out_of_range_code(tire, kappa, alpha, gamma=0.0, fz=None, *, side=None, pressure=None):
    """:func:`out_of_range` packed into one ``int8`` per point (:func:`jaxtire.limits.range_code`: bit 1 load,
    2 slip ratio, 4 slip angle, 8 camber, 16 pressure; 0 inside every range)."""
    return range_code(out_of_range(tire, kappa, alpha, gamma, fz, side=side, pressure=pressure))


def scale_tire(tire, mu_x=1.0, mu_y=1.0, k_x=1.0, k_y=1.0):
    """``tire`` with its peak friction scaled by ``mu_x``, ``mu_y`` and its small-slip stiffness by ``k_x``, ``k_y``.

    MF: ``LMUX *= mu_x``, ``LMUY *= mu_y``, ``LKX *= k_x``, ``LKY *= k_y``.  Simple model (peak force
    ``D Fz``, small-slip stiffness ``B C D Fz``): ``D *= mu``, ``B *= k / mu``, so friction and
    stiffness scale independently as with MF.  Factors may be traced or batched (only the scaled
    leaves become batched); no validation (this runs inside ``jit``).
    """
    return model_of(tire).scale(tire, mu_x, mu_y, k_x, k_y)


def linear_stiffness(tire, fz=None, surface=None, gamma=0.0):
    """``(Kx, Ky)`` at zero slip: ``Kx = |dFx/dkappa|`` [N], ``Ky = |dFy/dalpha|`` [N/rad], both >= 0.

    MF: the analytic :func:`jaxtire.mf61.slip_stiffness` (``Bx Cx Dx``, camber-free) and
    :func:`jaxtire.mf61.cornering_stiffness` (``Kya`` at camber ``gamma``), at the load, camber and pressure
    that :func:`tire_forces` evaluates under the file's limits (``Fz`` saturated at ``FZMAX``:
    :func:`jaxtire.mf61.clamped_stiffness`), so XLA computes them once with the forces; other models: a
    forward-mode derivative of their force function at ``kappa = alpha = 0`` and camber ``gamma``
    [rad].  ``fz`` [N] defaults to the nominal load.  With ISO-W signs ``dFy/dalpha = -Ky`` for
    every usual tire.
    """
    model = model_of(tire)
    xp = namespace(tire, fz, surface, gamma)  # NumPy for host params and inputs (MF: analytic, no compile)
    fz = model.nominal_load(tire) if fz is None else xp.asarray(fz)
    if model.linear_stiffness is not None:
        kx, ky = model.linear_stiffness(tire, fz, gamma, surface)
    else:
        zero, one = jnp.zeros_like(fz), jnp.ones_like(fz)
        _, kx = jax.jvp(lambda k: model.forces(tire, k, zero, gamma, fz, None, surface).fx, (zero,), (one,))
        _, ky = jax.jvp(lambda a: model.forces(tire, zero, a, gamma, fz, None, surface).fy, (zero,), (one,))
    return xp.abs(kx), xp.abs(ky)


def unloaded_radius(tire):
    """The tire's unloaded radius [m] (MF ``UNLOADED_RADIUS``, simple ``radius``)."""
    return model_of(tire).unloaded_radius(tire)


def rolling_radius(tire, fz, omega, default):
    """Effective rolling radius ``Re`` [m] of the tire at load ``fz`` [N] and spin ``omega`` [rad/s]: the radius
    of the slip definition (TYDEX, MF-Tyre), ``V_sx = V_x - omega Re``, ``kappa = -V_sx / |V_x|``.

    MF 6.1 / 6.2 and MF 5.2 / PAC2002 (Pacejka 2012 eq. A3.9, Besselink et al. 2010;
    :func:`jaxtire.vertical.effective_rolling_radius`)::

        Re = R_omega - (Fz0 / Cz) (DREFF atan(BREFF Fz / Fz0) + FREFF Fz / Fz0),
        R_omega = R0 (Q_RE0 + Q_V1 (omega R0 / V0)^2)

    (the bundled TNO 205/60 R15, ``R0`` = 0.3135 m: 0.3054 / 0.3041 / 0.3032 m at 2 / 4 / 6 kN standing,
    0.3061 / 0.3048 / 0.3039 m rolling at 100 km/h).
    A file whose vertical model was not fitted (``Q_RE0 = 0``, or ``DREFF = FREFF = 0``) and the models
    without a vertical model (simple) return ``default`` [m] (e.g. the vehicle's wheel radius).  Elementwise,
    arrays broadcast; jit- and grad-safe (a ``where`` on the static fields, both branches finite).
    """
    model = model_of(tire)
    if model.rolling_radius is None:
        return jnp.broadcast_to(
            jnp.asarray(default), jnp.broadcast_shapes(jnp.shape(fz), jnp.shape(omega), jnp.shape(default))
        )
    return model.rolling_radius(tire, fz, omega, default)


def vertical_force(tire, deflection, omega, stiffness):
    """Normal load ``Fz`` [N] of the tire at radial deflection ``deflection = R_free - Rl`` [m] (road to
    wheel centre ``Rl``, free radius :func:`tire_free_radius`) and spin ``omega`` [rad/s].

    MF files with a vertical model (``VERTICAL_STIFFNESS > 0`` and ``Q_RE0 > 0``):
    :func:`jaxtire.vertical.vertical_force` (quadratic load-deflection with the speed and pressure terms
    and bottoming on the rim; the in-plane force corrections ``Q_FCX``, ``Q_FCY`` are not applied); other
    tires: the linear spring ``Fz = stiffness max(deflection, 0)`` with ``stiffness`` [N/m].  Exactly 0 for
    ``deflection <= 0`` (a wheel off the ground never pulls).  Elementwise; jit- and grad-safe."""
    model = model_of(tire)
    rho = jnp.asarray(deflection)
    lin = jnp.where(rho > 0.0, stiffness * rho, 0.0)
    if model.vertical is None:
        return lin
    force, _, _, has = model.vertical
    return jnp.where(has(tire), force(tire, rho, omega), lin)


def tire_deflection(tire, fz, omega, stiffness):
    """The deflection [m] at which :func:`vertical_force` carries ``fz`` [N] (its inverse; 0 for ``fz <= 0``)."""
    model = model_of(tire)
    fz = jnp.maximum(jnp.asarray(fz), 0.0)
    lin = fz / stiffness
    if model.vertical is None:
        return lin
    _, defl, _, has = model.vertical
    return jnp.where(has(tire), defl(tire, fz, omega), lin)


def tire_free_radius(tire, omega=0.0):
    """Free (unloaded) radius [m] at spin ``omega`` [rad/s]: MF ``R0 (Q_RE0 + Q_V1 (omega R0 / V0)^2)``
    (:func:`jaxtire.vertical.free_radius`) where the file has a vertical model, else :func:`unloaded_radius`."""
    model = model_of(tire)
    r0 = jnp.asarray(model.unloaded_radius(tire))
    if model.vertical is None:
        return jnp.broadcast_to(r0, jnp.broadcast_shapes(jnp.shape(r0), jnp.shape(omega)))
    _, _, free, has = model.vertical
    return jnp.where(has(tire), free(tire, omega), r0)


def low_speed(tire):
    """The tire's low-speed threshold [m/s] (MF ``VXLOW``, simple ``v_low``), as stored: below it the vehicle
    fades the rolling-resistance moment and damps the slips (:mod:`sims.vehicles.core`).  ``TypeError`` for a
    model that states none."""
    model = model_of(tire)
    if model.low_speed is None:
        raise TypeError(f"jaxtire.tire: the {model.name} tire model states no low-speed threshold")
    return model.low_speed(tire)


def nominal_load(tire):
    """The tire's nominal load [N] (MF ``FNOMIN``, simple ``fz0``), as stored (an array leaf)."""
    return model_of(tire).nominal_load(tire)


def with_nominal(tire, *, load=None, radius=None):
    """``tire`` moved to the nominal load ``load`` [N] and the unloaded radius ``radius`` [m] (each ``None``:
    kept): MF ``FNOMIN``, ``UNLOADED_RADIUS``; simple model ``fz0``, ``radius``.  The inverse of
    :func:`nominal_load` and :func:`unloaded_radius` (``nominal_load(with_nominal(t, load=x)) == x``).

    Only the two coefficients change: every load dependence of the model is written in
    ``Fz / Fz0``, so the tire's curves stretch to the new load.  Concrete values are checked through
    :func:`jaxtire.validation.check_range` (finite and > 0, else
    :class:`~jaxtire.validation.ValidationError` naming ``load`` or ``radius``); traced values pass
    unchecked (jit-safe) and may be batched.  Each value takes the dtype of the leaf it replaces.
    """
    model = model_of(tire)
    changes = {}
    for arg, value, field in zip(("load", "radius"), (load, radius), model.nominal_fields, strict=True):
        if value is None:
            continue
        check_range(f"{arg} ({field})", value, 0.0, math.inf, False, False, source="with_nominal")
        old = model.get(tire, field)
        changes[field] = jnp.asarray(value, jnp.result_type(old))
    return model.replace(tire, changes) if changes else tire


def coefficient_names(tire) -> tuple[str, ...]:
    """Names of the tire's numeric coefficients (its array leaves), in storage order."""
    return tuple(model_of(tire).coefficient_names(tire))


def get_coefficient(tire, name: str):
    """The value of coefficient ``name`` (``KeyError``/``AttributeError`` if the model has none)."""
    return model_of(tire).get(tire, name)


def replace_coefficients(tire, changes: Mapping[str, Any]):
    """A copy with some coefficients replaced through the params type's own ``replace``: works with
    tracers under ``jit`` and ``vmap`` (no validation there); an unknown name raises ``ValueError``."""
    return model_of(tire).replace(tire, dict(changes))
