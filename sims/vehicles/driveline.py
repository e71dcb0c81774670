"""Drivelines: engine or electric motor, launch clutch or torque converter, automatic gearbox, differentials.

Optional: :attr:`sims.vehicles.params.VehicleParams.driveline` ``None`` keeps the chassis' one-number
drive (``max_drive_torque`` faded by ``max_power``, open differentials); a :class:`Driveline` replaces
it inside :func:`sims.vehicles.core.rates` (:func:`drive_torques`), with its state
:class:`DriveState` in :attr:`sims.vehicles.params.VehicleState.drive`.

Torque path (engine speed ``w_e``, gearbox input ``w_g``, centre carrier ``w_c``, axle carriers
``w_f``, ``w_r``, wheels ``w_i``; SI units, rad/s, N m)::

    engine   I_e dw_e/dt = T_e(w_e, throttle) - T_cl
    clutch   T_cl in [-C, min(C, max(T_e, 0))] (Coulomb, implicit), C = C_max x^2, x = clip((w_e - w_idle) /
             (w_engage - w_idle), 0, 1) (0 while shifting): the clutch is controlled never to pass more than
             the engine's torque forwards, so a slipping engine revs up to where C = T_e (the launch) and an
             engine a little faster than its gearbox after a shift does not unload its inertia into the wheels
    (or a torque converter below its lock-up speed, :func:`torque_converter`: I_e dw_e/dt = T_e - T_pump,
             the gearbox gets the turbine torque TR(SR) T_pump; explicit at the start-of-step speeds)
    gearbox  w_g = G w_c,  G = ratio[gear] final_drive (reverse: -reverse_ratio final_drive)
             T_out = G eta T_cl when the engine drives (T_e >= 0), G T_cl / eta when it is driven (engine braking)
    centre   T_front = s T_out - T_x,  T_rear = (1 - s) T_out + T_x,  w_c = s w_f + (1 - s) w_r  (s = drive_split_front)
    axle     T_L = T_ax / 2 - T_d / 2,  T_R = T_ax / 2 + T_d / 2,  w_ax = (w_L + w_R) / 2

with ``T_e = T_drag(w_e) + throttle (T_full(w_e) - T_drag(w_e))`` from the tables (linear between the
closed-throttle drag and the full-load curve), cut to the drag above ``max_speed`` (fuel cut over the last
2 %), and the differential torques ``T_d`` (and ``T_x``) of a friction + viscous coupling on the relative
speed ``Delta = w_L - w_R``::

    |T_fric| <= T_pre + k |T_in|   (k = locking_power for T_in >= 0, locking_coast for T_in < 0;
                                     locked: unbounded, the wheels turn together),     T_visc = c Delta'

so open (``T_pre = k = c = 0``), locked, limited-slip (``TBR = (1 + k) / (1 - k)`` at zero preload) and
viscous couplings are one equation with per-vehicle numbers (a fleet can mix them).

Implicit, no chatter.  Each wheel row of :mod:`sims.vehicles.core` is linearly implicit,
``D_i (w_i' - w_i) = h (T_i + tau_i)`` (``D_i`` the wheel's implicit inertia, ``tau_i`` its tire torque);
so every shaft above responds affinely to its input torque, ``w' = w_free + h q T`` (``q = 1/D``, summed
through the differentials: ``q_ax = (1/D_L + 1/D_R) / 4``, ``q_c = s^2 q_f + (1 - s)^2 q_r``,
``q_g = eta G^2 q_c``).  Each friction element is then the soft threshold of
:func:`sims.vehicles.core.coulomb_spin_update` on its relative speed::

    T = clip(S / a, -cap, cap),   a = h (q_1 + q_2),   S the free relative speed after the step

(stick: the relative speed is exactly 0 after the step; slip: the full capacity), plus the implicit
viscous part ``c Delta' = c (S - a T_fric) / (1 + a c)``.  The differentials' capacity ``T_pre + k |T_in|``
and their free relative speed use the input torque of the previous step (:attr:`DriveState.diff_torque`)
for the shafts' response the engine and clutch see, then this step's input torque for the torques the
wheels get (so the torque bias follows the input torque without a lag; the carrier speed the clutch saw
is off by the change of the coupling torque over one step).  The wheels' brake and rolling resistance act after
this (in their own Coulomb update), so a wheel braked on a locked axle is pulled back next step.

Gear shifts are discrete events: the automatic upshifts when the gearbox input speed ``G w_c`` (the
engine speed with the clutch closed) reaches ``upshift_speed`` (``upshift_speed_part`` at zero throttle,
linear between), downshifts below ``downshift_speed``; for ``shift_time`` the clutch is open (torque
interruption) and the engine speed follows the new gear's input speed (rev-matched), then the clutch
closes again.  The gear is a float state holding an integer (read with ``round``); ``jax.grad`` sees a
shift as a step in time that does not move with the parameters: the derivative of a result with respect
to, e.g., a gear ratio is the derivative with the shift instants held fixed (the pathwise derivative
between events), finite everywhere.  Reverse is selected while the throttle is negative and the car is
nearly stopped (``|w_c| < 2 rad/s``).

Electric motor (:func:`electric_motor`): the same :class:`Engine` with a torque table from the envelope
``min(T_max, P_max / w)``, no drag, zero idle speed and a clutch that is always closed, plus regeneration:
with the brake pedal ``b`` the motor adds ``-b min(regen_torque, regen_power / |w_e|)`` (on top of the
friction brakes).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.validation import ValidationError, check_range, is_concrete
from sims.vehicles import controls as chassis_controls

_INF = math.inf
#: Relative speed band [-] of the rev limiter's fuel cut below ``max_speed``.
REV_LIMIT_BAND = 0.02
#: Carrier speed [rad/s] below which the gearbox may change between forward and reverse.
REVERSE_SPEED = 2.0
#: Capacity [N m] standing in for "unbounded" in a locked coupling (finite: gradients stay finite).
LOCKED_CAPACITY = 1e7


class Engine(NamedTuple):
    """Engine (or motor) map: ``speeds`` [rad/s] (N,) increasing, ``torque_full`` [N m] (N,) at full load,
    ``torque_drag`` [N m] (N,) at closed throttle (<= 0: engine braking), ``idle_speed`` [rad/s] (the
    speed governor's floor), ``max_speed`` [rad/s] rev limit, ``inertia`` [kg m^2] crank, flywheel and
    clutch, ``regen_torque`` [N m] and ``regen_power`` [W] the regeneration envelope (0 for an engine)."""

    speeds: Any
    torque_full: Any
    torque_drag: Any
    idle_speed: Any
    max_speed: Any
    inertia: Any
    regen_torque: Any = 0.0
    regen_power: Any = 0.0


class Gearbox(NamedTuple):
    """``ratios`` (G,) forward gear ratios [-], first gear first (a fleet pads shorter boxes by repeating
    the top gear; ``n_gears`` [-] how many are used), ``efficiency`` (G,) [-] per gear, ``final_drive`` [-],
    ``final_efficiency`` [-], ``reverse_ratio`` [-] (> 0), ``upshift_speed`` / ``upshift_speed_part``
    [rad/s] gearbox input speed of an upshift at full / zero throttle, ``downshift_speed`` [rad/s],
    ``shift_time`` [s] of torque interruption, ``automatic`` (1: the shift schedule; 0: hold the gear),
    ``clutch_capacity`` [N m] of the launch clutch, ``clutch_engage_speed`` [rad/s] engine speed at which
    it is fully closed (capacity ``C_max ((w_e - w_idle) / (w_engage - w_idle))^2``, clipped to [0, 1]);
    a torque converter instead of the launch clutch below ``lockup_speed`` [rad/s] of the gearbox input when
    ``converter_k`` ``K0`` [rad/s / sqrt(N m)] > 0 (the capacity factor at stall), with the stall torque ratio
    ``converter_ratio`` [-] and the ``coupling_point`` [-] speed ratio (:func:`torque_converter`)."""

    ratios: Any
    efficiency: Any
    final_drive: Any
    final_efficiency: Any
    reverse_ratio: Any
    n_gears: Any
    upshift_speed: Any
    upshift_speed_part: Any
    downshift_speed: Any
    shift_time: Any
    automatic: Any
    clutch_capacity: Any
    clutch_engage_speed: Any
    converter_k: Any = 0.0
    converter_ratio: Any = 2.0
    coupling_point: Any = 0.85
    lockup_speed: Any = 0.0


class Differential(NamedTuple):
    """Coupling of a differential's two outputs (module docstring): ``preload`` [N m], ``locking_power`` and
    ``locking_coast`` ``k`` [-] in [0, 1), ``viscous`` ``c`` [N m s/rad], ``locked`` (1: locked, 0: not).
    All zero: open."""

    preload: Any = 0.0
    locking_power: Any = 0.0
    locking_coast: Any = 0.0
    viscous: Any = 0.0
    locked: Any = 0.0


class Driveline(NamedTuple):
    """A vehicle's driveline: :class:`Engine`, :class:`Gearbox`, the ``front``, ``rear`` and ``centre``
    :class:`Differential` (the centre one splits ``Chassis.drive_split_front`` to the front) and the chassis
    controls (:class:`sims.vehicles.controls.ChassisControls`: traction and stability control)."""

    engine: Engine
    gearbox: Gearbox
    front: Differential = Differential()
    rear: Differential = Differential()
    centre: Differential = Differential()
    controls: Any = chassis_controls.ChassisControls()


class DriveState(NamedTuple):
    """Driveline state (:attr:`sims.vehicles.params.VehicleState.drive`): ``engine_speed`` [rad/s], ``gear``
    [-] (an integer as a float; -1 reverse), ``shift_timer`` [s] left of a shift, ``diff_torque`` (3,) [N m]
    the input torques of the front, rear and centre differentials last step, ``wheel_torque`` (n,) [N m]
    the drive torque each wheel state got last step, ``engine_torque`` [N m] the engine's torque last step,
    ``clutch_torque`` [N m] the clutch's, and ``controls`` the chassis controllers' state."""

    engine_speed: Any
    gear: Any
    shift_timer: Any
    diff_torque: Any
    wheel_torque: Any
    engine_torque: Any
    clutch_torque: Any
    controls: Any


def rpm(value):
    """Engine speed in rpm -> rad/s."""
    return np.asarray(value, dtype=float) * (2.0 * np.pi / 60.0)


# --------------------------------------------------------------------------------------------- building
_POS = (0.0, _INF, False, True)
_NONNEG = (0.0, _INF, True, True)
_EFF = (0.0, 1.0, False, True)
_K = (0.0, 1.0, True, False)
_FLAG = (0.0, 1.0, True, True)
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "engine.speeds": (0.0, 1e5, True, True),
    "engine.torque_full": (-1e6, 1e6, True, True),
    "engine.torque_drag": (-1e6, 0.0, True, True),
    "engine.idle_speed": (0.0, 1e5, True, True),
    "engine.max_speed": (0.0, 1e5, False, True),
    "engine.inertia": (0.0, 1e3, False, True),
    "engine.regen_torque": (0.0, 1e6, True, True),
    "engine.regen_power": (0.0, 1e8, True, True),
    "gearbox.ratios": (0.0, 100.0, False, True),
    "gearbox.efficiency": _EFF,
    "gearbox.final_drive": (0.0, 100.0, False, True),
    "gearbox.final_efficiency": _EFF,
    "gearbox.reverse_ratio": (0.0, 100.0, False, True),
    "gearbox.n_gears": (1.0, 20.0, True, True),
    "gearbox.upshift_speed": (0.0, 1e5, False, True),
    "gearbox.upshift_speed_part": (0.0, 1e5, False, True),
    "gearbox.downshift_speed": (0.0, 1e5, True, True),
    "gearbox.shift_time": (0.0, 5.0, True, True),
    "gearbox.automatic": _FLAG,
    "gearbox.clutch_capacity": (0.0, 1e6, False, True),
    "gearbox.clutch_engage_speed": (0.0, 1e5, True, True),
    "gearbox.converter_k": (0.0, 1e4, True, True),
    "gearbox.converter_ratio": (1.0, 5.0, True, True),
    "gearbox.coupling_point": (0.0, 1.0, False, False),
    "gearbox.lockup_speed": (0.0, 1e5, True, True),
    "preload": (0.0, 1e6, True, True),
    "locking_power": _K,
    "locking_coast": _K,
    "viscous": (0.0, 1e6, True, True),
    "locked": _FLAG,
}


def validate_driveline(dl: Driveline, source: str = "Driveline") -> None:
    """Check every field of a concrete :class:`Driveline` against :data:`RANGES` and the consistency rules
    (increasing speed table, ``idle < max_speed``, ``downshift_speed < upshift_speed_part <= upshift_speed
    <= max_speed``, no shift hunting: ``downshift_speed < upshift_speed_part r_(k+1) / r_k`` for every
    used gear pair, ``clutch_engage_speed`` above ``idle_speed`` unless both are 0, integer ``n_gears`` no
    more than the ratios given); raises :class:`~jaxtire.validation.ValidationError` naming the field."""
    if not isinstance(dl, Driveline):
        raise ValidationError(f"{source}: expected a Driveline, got {type(dl).__name__}")
    if not is_concrete(dl):
        return
    dl = jax.tree.map(np.asarray, dl)  # numpy from here: no op is staged when called inside a jit trace
    for part in ("engine", "gearbox"):
        obj = getattr(dl, part)
        for f in obj._fields:
            check_range(f"{part}.{f}", getattr(obj, f), *RANGES[f"{part}.{f}"], source=source)
    for axle in ("front", "rear", "centre"):
        d = getattr(dl, axle)
        for f in Differential._fields:
            check_range(f"{axle}.{f}", getattr(d, f), *RANGES[f], source=source)
    e, g = dl.engine, dl.gearbox
    sp = np.asarray(e.speeds, float)
    if sp.shape[-1] < 2 or np.any(np.diff(sp, axis=-1) <= 0):
        raise ValidationError(f"{source}: engine.speeds must be at least 2 strictly increasing values, got {sp}")
    for f in ("torque_full", "torque_drag"):
        if np.shape(getattr(e, f))[-1:] != sp.shape[-1:]:
            raise ValidationError(f"{source}: engine.{f} must have the length of engine.speeds ({sp.shape[-1]})")

    def less(a_name, a, b_name, b, strict=True):
        a, b = np.asarray(a, float), np.asarray(b, float)
        bad = a >= b if strict else a > b
        if np.any(bad):
            i = np.argmax(np.broadcast_to(bad, np.broadcast_shapes(a.shape, b.shape)).ravel())
            va = np.broadcast_to(a, bad.shape).ravel()[i]
            vb = np.broadcast_to(b, bad.shape).ravel()[i]
            rel = "<" if strict else "<="
            raise ValidationError(f"{source}: {a_name} = {va} must be {rel} {b_name} = {vb}")

    less("engine.idle_speed", e.idle_speed, "engine.max_speed", e.max_speed)
    less("gearbox.downshift_speed", g.downshift_speed, "gearbox.upshift_speed_part", g.upshift_speed_part)
    less("gearbox.upshift_speed_part", g.upshift_speed_part, "gearbox.upshift_speed", g.upshift_speed, strict=False)
    less("gearbox.upshift_speed", g.upshift_speed, "engine.max_speed", e.max_speed, strict=False)
    ratios = np.asarray(g.ratios, float)
    n = np.asarray(g.n_gears, float)
    if np.any(n != np.round(n)) or np.any(n > ratios.shape[-1]):
        raise ValidationError(
            f"{source}: gearbox.n_gears = {n.ravel()[0]} must be an integer in [1, {ratios.shape[-1]}] (the ratios given)"
        )
    if np.shape(g.efficiency)[-1:] != ratios.shape[-1:]:
        raise ValidationError(f"{source}: gearbox.efficiency must have one value per gear ({ratios.shape[-1]})")
    step = ratios[..., 1:] / ratios[..., :-1]
    used = np.arange(1, ratios.shape[-1]) < n[..., None]
    if np.any(used & (step >= 1.0)):
        raise ValidationError(f"{source}: gearbox.ratios must decrease from gear to gear, got {ratios}")
    worst = np.where(used, step, np.inf).min(axis=-1)
    less(
        "gearbox.downshift_speed",
        g.downshift_speed,
        "upshift_speed_part x the closest ratio step",
        g.upshift_speed_part * worst,
    )
    idle, eng = np.asarray(e.idle_speed, float), np.asarray(g.clutch_engage_speed, float)
    if np.any((eng <= idle) & ~((eng == 0) & (idle == 0))):
        raise ValidationError(
            f"{source}: gearbox.clutch_engage_speed = {eng.ravel()[0]} must exceed engine.idle_speed = "
            f"{idle.ravel()[0]} (or both 0: a motor with its clutch always closed)"
        )
    chassis_controls.validate_controls(dl.controls, source=source)


def make_driveline(engine: Engine, gearbox: Gearbox, front=None, rear=None, centre=None, controls=None, dtype=None):
    """A validated :class:`Driveline` with float leaves of ``dtype`` (default: the default float)."""
    dl = Driveline(
        engine,
        gearbox,
        Differential() if front is None else front,
        Differential() if rear is None else rear,
        Differential() if centre is None else centre,
        chassis_controls.ChassisControls() if controls is None else controls,
    )
    validate_driveline(dl)
    dtype = dtype or jnp.result_type(float)
    return jax.tree.map(lambda v: jnp.asarray(v, dtype), dl)


def electric_motor(max_torque, max_power, max_speed, inertia, regen_torque=0.0, regen_power=0.0, n=33) -> Engine:
    """An :class:`Engine` for an electric motor: full-load torque ``min(max_torque, max_power / w)`` [N m]
    tabulated at ``n`` speeds from 0 to ``max_speed`` [rad/s], no drag, idle 0, with the regeneration
    envelope ``regen_torque`` [N m], ``regen_power`` [W]."""
    w = np.linspace(0.0, float(max_speed), n)
    t = np.minimum(float(max_torque), float(max_power) / np.maximum(w, 1e-9))
    return Engine(w, t, np.zeros_like(w), 0.0, float(max_speed), inertia, regen_torque, regen_power)


def fleet(drivelines: list[Driveline]) -> Driveline:
    """Stack per-vehicle drivelines on a leading vehicle axis (every engine table of one length; gearboxes
    with fewer gears are padded by repeating their top gear, ``n_gears`` keeps them apart)."""
    k = max(int(np.shape(d.gearbox.ratios)[-1]) for d in drivelines)

    def pad(a):
        a = np.asarray(a, float)
        return np.concatenate([a, np.repeat(a[-1:], k - a.shape[-1])])

    padded = [
        d._replace(gearbox=d.gearbox._replace(ratios=pad(d.gearbox.ratios), efficiency=pad(d.gearbox.efficiency)))
        for d in drivelines
    ]
    dtype = jnp.asarray(drivelines[0].engine.inertia).dtype
    return jax.tree.map(lambda *v: jnp.stack([jnp.asarray(x, dtype) for x in v]), *padded)


def fleet_axis(dl: Driveline | None):
    """The ``vmap`` axis of a driveline in a fleet: ``None`` when it is shared by every vehicle (its engine
    inertia a scalar; also for ``dl = None``), 0 when it is batched per vehicle (:func:`fleet`,
    :func:`sims.run.fleet.broadcast`)."""
    if dl is None or jnp.ndim(dl.engine.inertia) == 0:
        return None
    return 0


# --------------------------------------------------------------------------------------------- physics
def engine_torque(e: Engine, speed, throttle):
    """``T_e`` [N m] at engine speed ``speed`` [rad/s] and ``throttle`` in [0, 1] (module docstring):
    ``T_drag + throttle (T_full - T_drag)`` from the tables (held at their ends outside), the full-load
    part faded out over the last :data:`REV_LIMIT_BAND` below ``max_speed`` (fuel cut)."""
    full = jnp.interp(speed, e.speeds, e.torque_full)
    drag = jnp.interp(speed, e.speeds, e.torque_drag)
    cut = jnp.clip((e.max_speed - speed) / (REV_LIMIT_BAND * e.max_speed), 0.0, 1.0)
    return drag + jnp.clip(throttle, 0.0, 1.0) * cut * (full - drag)


def gear_ratio(g: Gearbox, gear):
    """Overall ratio ``G`` [-] (signed: reverse negative) and efficiency ``eta`` [-] of ``gear`` (1..n, -1)."""
    k = jnp.clip(jnp.round(gear), 1, g.n_gears).astype(jnp.int32) - 1
    ratio = (
        jnp.take(g.ratios, k, axis=-1)
        if jnp.ndim(g.ratios) == 1
        else jnp.take_along_axis(g.ratios, k[..., None], -1)[..., 0]
    )
    eff = (
        jnp.take(g.efficiency, k, axis=-1)
        if jnp.ndim(g.efficiency) == 1
        else jnp.take_along_axis(g.efficiency, k[..., None], -1)[..., 0]
    )
    rev = jnp.round(gear) < 0
    ratio = jnp.where(rev, -g.reverse_ratio, ratio)
    eff = jnp.where(rev, eff, eff)
    return ratio * g.final_drive, eff * g.final_efficiency


def clutch_capacity(e: Engine, g: Gearbox, speed):
    """Launch-clutch capacity [N m] at engine speed ``speed``: ``C_max x^2``, ``x = clip((w - w_idle) /
    (w_engage - w_idle), 0, 1)``; always ``C_max`` for a motor (``w_engage = w_idle = 0``)."""
    span = g.clutch_engage_speed - e.idle_speed
    x = jnp.clip((speed - e.idle_speed) / jnp.where(span > 0, span, 1.0), 0.0, 1.0)
    return g.clutch_capacity * jnp.where(span > 0, x * x, 1.0)


def torque_converter(g: Gearbox, engine_speed, turbine_speed):
    """Torque converter (``g.converter_k > 0``): ``(pump torque [N m], turbine torque [N m], open)`` at the
    engine (pump) and gearbox-input (turbine) speeds [rad/s]; ``open`` where it acts (below ``lockup_speed``;
    above, the lock-up clutch: the launch clutch's path).  With the speed ratio ``SR = clip(w_t / w_e, 0, 1)``::

        T_p = f(SR) (w_e / K0)^2,   f = 1 for SR <= SR_c, (1 - SR) / (1 - SR_c) above (no torque at SR = 1)
        T_t = TR(SR) T_p,           TR = TR0 + (1 - TR0) min(SR / SR_c, 1)

    (``K0`` ``converter_k``, ``TR0`` ``converter_ratio``, ``SR_c`` ``coupling_point``): the capacity factor
    ``K = w_e / sqrt(T_p)`` is ``K0`` up to the coupling point and the torque ratio falls linearly from the
    stall value to 1 there (the usual shape of a converter's characteristics); at stall the engine runs
    where ``T_e(w) = (w / K0)^2`` (the stall speed) and the turbine gives ``TR0 T_e``."""
    k = jnp.where(g.converter_k > 0.0, g.converter_k, 1.0)
    w_e = jnp.maximum(engine_speed, 0.0)
    sr = jnp.clip(turbine_speed / jnp.maximum(w_e, 1e-3), 0.0, 1.0)
    f = jnp.clip((1.0 - sr) / (1.0 - g.coupling_point), 0.0, 1.0)
    t_p = f * (w_e / k) ** 2
    tr = g.converter_ratio + (1.0 - g.converter_ratio) * jnp.minimum(sr / g.coupling_point, 1.0)
    active = (g.converter_k > 0.0) & (jnp.abs(turbine_speed) < g.lockup_speed)
    return t_p, tr * t_p, active


def coupling(slip, a, cap, viscous):
    """Torque [N m] of an implicit friction + viscous coupling (module docstring): the free relative speed
    ``slip`` [rad/s] after the step, ``a`` [rad/s per N m] its response to the coupling torque, capacity
    ``cap`` [N m] >= 0, viscous coefficient [N m s/rad]: ``T_f = clip(slip / a, -cap, cap)``, ``T_v = c
    (slip - a T_f) / (1 + a c)``; returns ``T_f + T_v``."""
    t_f = jnp.clip(slip / a, -cap, cap)
    return t_f + viscous * (slip - a * t_f) / (1.0 + a * viscous)


def _cap(d: Differential, t_in):
    k = jnp.where(t_in >= 0.0, d.locking_power, d.locking_coast)
    return jnp.where(d.locked > 0.5, LOCKED_CAPACITY, d.preload + k * jnp.abs(t_in))


class Shafts(NamedTuple):
    """Affine response of a shaft to its input torque over the step: ``w' = free + h q T`` (``q`` [1/(kg m^2)])."""

    free: Any
    q: Any


def _axle(d: Differential, w1: Shafts, w2: Shafts, t_prev, h):
    """An axle differential on two wheel rows: its coupling torque ``T_d`` and the carrier's response."""
    a = 0.5 * h * (w1.q + w2.q)
    slip = w1.free - w2.free + 0.5 * h * t_prev * (w1.q - w2.q)
    td = coupling(slip, a, _cap(d, t_prev), d.viscous)
    free = 0.5 * (w1.free - 0.5 * h * td * w1.q + w2.free + 0.5 * h * td * w2.q)
    return td, Shafts(free, 0.25 * (w1.q + w2.q))


def _centre(d: Differential, f: Shafts, r: Shafts, s, t_prev, h):
    """The centre differential (front share ``s``) on the two axle carriers: ``T_x`` and its carrier."""
    a = h * (f.q + r.q)
    slip = f.free - r.free + h * t_prev * (s * f.q - (1.0 - s) * r.q)
    tx = coupling(slip, a, _cap(d, t_prev), d.viscous)
    free = s * (f.free - h * tx * f.q) + (1.0 - s) * (r.free + h * tx * r.q)
    return tx, Shafts(free, s * s * f.q + (1.0 - s) ** 2 * r.q)


class WheelRows(NamedTuple):
    """What :func:`drive_torques` needs of each wheel state (lists, one value per wheel): spin ``omega``
    [rad/s], implicit inertia ``inertia`` ``D`` [kg m^2], frictionless torque ``torque`` ``tau`` [N m] (the
    tire's), effective rolling radius ``re`` [m], contact speed ``u`` [m/s] (wheel frame), torque arm
    ``radius`` [m], brake share [-], lateral position ``y`` [m], the driver's brake command [-], the load
    ``fz`` [N] of one tire and the rolling-resistance torque ``t_rr`` [N m] the wheel's Coulomb friction adds
    to its brake."""

    omega: list
    inertia: list
    torque: list
    re: list
    u: list
    radius: list
    brake_share: list
    y: list
    brake: list
    fz: list
    t_rr: list | None = None


def init_drive_state(params, omega, loads: list, gear=None) -> DriveState:
    """The :class:`DriveState` of a car (``params`` with a driveline) whose wheels spin at ``omega`` (n,)
    [rad/s] under static ``loads`` [N] (a list, per wheel state, per tire): in the lowest gear (or ``gear``)
    whose input speed is below ``upshift_speed_part``, engine at that speed (at least idle), no shift under
    way, no torques; the controllers' state :func:`sims.vehicles.controls.init_state`."""
    dl, ch = params.driveline, params.chassis
    g = dl.gearbox
    n = jnp.shape(omega)[-1]
    wf = jnp.mean(omega[..., : n // 2], axis=-1)
    wr = jnp.mean(omega[..., n // 2 :], axis=-1)
    s = ch.drive_split_front
    wc = s * wf + (1.0 - s) * wr
    if gear is None:
        gears = jnp.arange(1, jnp.shape(g.ratios)[-1] + 1, dtype=wc.dtype)
        w_in = (
            jnp.abs(wc)[..., None] * g.ratios * g.final_drive[..., None]
            if jnp.ndim(g.final_drive)
            else jnp.abs(wc)[..., None] * g.ratios * g.final_drive
        )
        ok = (
            w_in <= g.upshift_speed_part[..., None] if jnp.ndim(g.upshift_speed_part) else w_in <= g.upshift_speed_part
        ) | (gears >= g.n_gears[..., None] if jnp.ndim(g.n_gears) else gears >= g.n_gears)
        gear = jnp.min(jnp.where(ok, gears, jnp.inf), axis=-1)
    gear = jnp.asarray(gear, wc.dtype) + jnp.zeros_like(wc)
    ratio, _ = gear_ratio(g, gear)
    speed = jnp.maximum(ratio * wc, dl.engine.idle_speed)
    z = jnp.zeros_like(wc)
    return DriveState(
        speed,
        gear,
        z,
        jnp.stack([z, z, z], -1),
        jnp.zeros_like(omega),
        z,
        z,
        chassis_controls.init_state(params, omega, loads),
    )


def drive_torques(dl: Driveline, ds: DriveState, ch, surface_ids, steer, throttle, rows: WheelRows, state, h):
    """One step of the driveline (module docstring) for one vehicle.

    Returns ``(wheel drive torques [N m] list, per-wheel brake commands list, new DriveState)``: the
    torques go into each wheel's row ``D_i (w_i' - w_i) = h (T_i + tau_i + T_friction)``, the brake commands
    (driver / ABS, traction control, stability control arbitrated per wheel,
    :func:`sims.vehicles.controls.arbitrate`, on the surfaces ``surface_ids`` (4,) under the wheels) into its
    Coulomb friction."""
    e, g = dl.engine, dl.gearbox
    n = len(rows.omega)
    q = [1.0 / d for d in rows.inertia]
    free = [w + h * t * qi for w, t, qi in zip(rows.omega, rows.torque, q, strict=True)]
    wh = [Shafts(f, qi) for f, qi in zip(free, q, strict=True)]
    td_prev = [ds.diff_torque[..., i] for i in range(3)]
    if n == 4:
        tdf, front = _axle(dl.front, wh[0], wh[1], td_prev[0], h)
        tdr, rear = _axle(dl.rear, wh[2], wh[3], td_prev[1], h)
    else:
        tdf = tdr = jnp.zeros_like(free[0])
        front, rear = wh
    s = ch.drive_split_front
    tx, centre = _centre(dl.centre, front, rear, s, td_prev[2], h)

    # chassis controls: the traction control's engine torque limit (the brakes below, on this step's torques)
    drive_share = [s * 0.5, s * 0.5, (1.0 - s) * 0.5, (1.0 - s) * 0.5] if n == 4 else [s, 1.0 - s]
    t_limit, cstate = chassis_controls.engine_limit(
        dl.controls, ds.controls, ch, surface_ids, rows, drive_share, (dl.front, dl.rear), h
    )
    thr = throttle

    # gear selection for this step: forward / reverse changes only near standstill
    gear = jnp.round(ds.gear)
    slow = jnp.abs(centre.free) < REVERSE_SPEED
    gear = jnp.where(slow & (thr < 0.0) & (gear > 0), -1.0, gear)
    gear = jnp.where(slow & (thr > 0.0) & (gear < 0), 1.0, gear)
    ratio, eta = gear_ratio(g, gear)
    shifting = ds.shift_timer > 0.0

    # engine and clutch, implicit; efficiency by the direction of the power flow
    t_e = engine_torque(e, ds.engine_speed, jnp.abs(thr))
    brake_mean = sum(rows.brake) / n
    regen = jnp.minimum(e.regen_torque, e.regen_power / jnp.maximum(jnp.abs(ds.engine_speed), 1e-3))
    t_e = t_e - jnp.clip(brake_mean, 0.0, 1.0) * regen * (jnp.abs(thr) <= 0.0)
    t_e = jnp.where(shifting, 0.0, t_e)
    # a torque converter below its lock-up speed (not while shifting): explicit at the start-of-step speeds
    t_p, t_t, conv = torque_converter(g, ds.engine_speed, ratio * centre.free)
    conv = conv & ~shifting
    mult = jnp.where(conv, t_t / jnp.maximum(t_p, 1e-9), 1.0)  # the converter's torque ratio
    # traction control: a positive engine torque is cut to the wheel torque limit (torque-based engine control)
    t_e = jnp.where(t_e > 0.0, jnp.minimum(t_e, t_limit / jnp.abs(ratio * eta * mult)), t_e)
    eff = jnp.where(t_e >= 0.0, eta, 1.0 / eta)
    q_g = eff * ratio * ratio * centre.q
    w_e_free = ds.engine_speed + h * t_e / e.inertia
    cap = jnp.where(shifting, 0.0, clutch_capacity(e, g, ds.engine_speed))
    a_cl = h * (1.0 / e.inertia + q_g)
    t_cl = jnp.clip((w_e_free - ratio * centre.free) / a_cl, -cap, jnp.minimum(cap, jnp.maximum(t_e, 0.0)))
    w_e = jnp.where(conv, w_e_free - h * t_p / e.inertia, w_e_free - h * t_cl / e.inertia)
    t_cl = jnp.where(conv, t_t, t_cl)
    t_out = eff * ratio * t_cl

    # torques down the tree; the couplings once more with this step's input torques (their capacity and
    # free slip), so a limited-slip differential's bias follows its input torque without a lag
    tx, _ = _centre(dl.centre, front, rear, s, t_out, h)
    t_front = s * t_out - tx
    t_rear = (1.0 - s) * t_out + tx
    if n == 4:
        tdf, _ = _axle(dl.front, wh[0], wh[1], t_front, h)
        tdr, _ = _axle(dl.rear, wh[2], wh[3], t_rear, h)
        torques = [0.5 * (t_front - tdf), 0.5 * (t_front + tdf), 0.5 * (t_rear - tdr), 0.5 * (t_rear + tdr)]
    else:
        torques = [t_front, t_rear]
    w_c = centre.free + h * centre.q * t_out  # the carrier after the step
    # each wheel's brake: the driver's (ABS), the traction control's on this step's torques, the ESC's
    brakes, held = chassis_controls.arbitrate(
        dl.controls, ds.controls, ch, surface_ids, state, steer, rows, torques, drive_share, h
    )

    # automatic shift schedule on the gearbox input speed (the engine speed with the clutch closed)
    w_in = ratio * w_c
    up_at = g.upshift_speed_part + jnp.clip(thr, 0.0, 1.0) * (g.upshift_speed - g.upshift_speed_part)
    auto = (g.automatic > 0.5) & ~shifting & (gear > 0)
    up = auto & (w_in >= up_at) & (gear < g.n_gears)
    down = auto & (w_in < g.downshift_speed) & (gear > 1)
    new_gear = gear + up.astype(gear.dtype) - down.astype(gear.dtype)
    timer = jnp.where(up | down, g.shift_time, jnp.maximum(ds.shift_timer - h, 0.0))
    new_ratio, _ = gear_ratio(g, new_gear)
    # while shifting the engine is rev-matched to the new gear (the converter's slip is lost there); the governor
    # holds idle; the limiter caps it
    w_e = jnp.where(shifting | up | down, new_ratio * w_c, w_e)
    w_e = jnp.clip(w_e, e.idle_speed, 1.05 * e.max_speed)
    new = DriveState(
        w_e,
        new_gear,
        timer,
        jnp.stack([t_front, t_rear, t_out], -1),
        jnp.stack(jnp.broadcast_arrays(*torques), -1),
        t_e,
        t_cl,
        # the traction control's feed-forward reads the drive torques averaged over two steps (a one-step-old
        # torque alone closed a loop that alternated from step to step)
        cstate._replace(
            torque=0.5 * (ds.controls.torque + jnp.stack(jnp.broadcast_arrays(*torques), -1)),
            held=None
            if ds.controls.held is None
            else 0.5 * (ds.controls.held + jnp.stack(jnp.broadcast_arrays(*held), -1)),
        ),
    )
    return torques, brakes, new
