"""Chassis controls on the vehicle side: traction control and electronic stability control, and the one
place where they and the driver's brake (with its ABS, :class:`sims.drivers.StraightBraking`) arbitrate per
wheel (:func:`arbitrate`).  They run inside the step of a car with a
:class:`~sims.vehicles.driveline.Driveline` (its ``controls`` field), from the start-of-step state, like an
ECU sampling at the step rate.  Each has an ``on`` value (1 on, 0 off, a float: half a fleet can have it).

Traction control (:class:`TractionControl`), per driven wheel ``i`` with the slip velocity
``v_s,i = w_i Re_i - u_i`` (``Re_i`` the tire's effective rolling radius, ``u_i`` the contact speed) and
its target ``v*_i = kappa*_i max(|u_i|, min_speed)`` (``kappa*_i = target_slip kappa_peak,i``, the peak
driving slip of the wheel's tire on the surface under it, :func:`target_slip`), error ``e_i = v_s,i - v*_i``::

    engine:  sum_i T_i <= T_ff clip(u_I - k_p e_eng, 0, 2),   du_I/dt = -k_i e_eng  (u_I in [0, 2], starts at 1)
             T_ff = sum over driven axles of 2 max(T*_L, T*_R),   T*_i = mu_peak,i Fz_i R_i (1 + c_i)
             and never more than sum over driven axles of 2 (min(T*_L, T*_R) + 0.9 T_max,low), what the brake
             of the axle's weaker wheel (full brake torque T_max,low) can hold against an open differential
             e_eng = max over driven axles of min_(L, R) (e_i + b_i / k_bp) / v*_i   (relative, clipped to +-1)
    brakes:  T_b,i = clip(b_i + k_bp e_i, 0, T_max,i),   b_i = max(T_i - T*_i, 0)
             dc_i/dt = -k_bi clip(e_i / v*_i, -1, 1)   (c_i in [-0.5, 0.5], starts at 0)

(``mu_peak,i`` the peak driving friction of the wheel's tire on its surface, ``Fz_i`` its load now, ``R_i``
its radius, ``T_i`` its drive torque over the last two steps (mean), ``c_i`` a slow trim that moves the wheel's capacity estimate
until its slip sits on the target: a torque-based TC that knows its tire, whose engine limit acts on the
engine torque, :mod:`sims.vehicles.driveline`), so the brakes catch a spinning wheel at once and the engine
loop, which sees the brake both wheels of an axle hold, backs the torque off; on split-mu only the spinning wheel is braked, which lets an open differential pass
torque to the other one (a brake "limited slip").

Stability control (:class:`StabilityControl`): the reference yaw rate of the linear bicycle model,
limited by the friction::

    r_ref = clip(v delta / (L + K_us v^2), -mu g / v, mu g / v)

(``K_us`` [rad s^2/m] the understeer gradient, ``mu`` the friction the ECU assumes), the error ``e = r -
r_ref`` and the corrective yaw moment ``M = -gain dz(e)`` (``dz`` a dead band of ``deadband``): it brakes
one wheel, the outer front when the car oversteers (``e r > 0``), the inner rear when it understeers,
with the brake force ``|M| / (t / 2)`` (torque ``|M| R / (t / 2)``; ``t`` the track).

:func:`arbitrate`: the throttle is ``min(driver, traction control)``, each wheel's brake the largest of
the driver's (ABS), the traction control's and the stability control's requests, as a fraction of the
wheel's full brake torque.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp

from jaxtire.constants import GRAVITY
from jaxtire.tire import scale_tire
from jaxtire.validation import ValidationError, check_range, is_concrete
from sims.vehicles.grip import peak_braking

_INF = math.inf
#: The traction control's wheel-torque limit when it is off [N m] (finite, so gradients stay finite).
NO_LIMIT = 1e12


class TractionControl(NamedTuple):
    """``on`` [-] (1/0), ``target_slip`` [-] the target as a fraction of the tire's peak driving slip on the
    surface under the wheel, ``min_speed`` [m/s] floor of the speed the slip is taken of, engine loop gains
    ``k_p`` [1/(m/s)], ``k_i`` [1/m], brake loop gains ``k_bp`` [N m s/m], ``k_bi`` [N m/m]."""

    on: Any = 0.0
    target_slip: Any = 0.9
    min_speed: Any = 0.5
    k_p: Any = 0.2
    k_i: Any = 2.0
    k_bp: Any = 300.0
    k_bi: Any = 1.0


class StabilityControl(NamedTuple):
    """``on`` [-] (1/0), ``gain`` [N m s/rad] yaw moment per yaw-rate error, ``deadband`` [rad/s],
    ``understeer_gradient`` ``K_us`` [rad s^2/m], ``mu`` [-] the friction the reference is limited by."""

    on: Any = 0.0
    gain: Any = 4e4
    deadband: Any = 0.02
    understeer_gradient: Any = 0.003
    mu: Any = 1.0


class ChassisControls(NamedTuple):
    """The vehicle-side controllers: ``tc`` :class:`TractionControl`, ``esc`` :class:`StabilityControl`."""

    tc: TractionControl = TractionControl()
    esc: StabilityControl = StabilityControl()


class ControlsState(NamedTuple):
    """``throttle`` [-] the traction control's engine integrator (a factor on its torque feed-forward),
    ``brake`` (n,) [-] its capacity trims ``c_i``, ``torque`` (n,) [N m] each wheel's drive torque, the mean of
    the last two steps,
    ``peak_slip`` and ``peak_mu`` (n, n_surfaces) [-] each wheel's peak driving slip and friction on every
    surface of the table (constant, :func:`init_state`)."""

    throttle: Any
    brake: Any
    torque: Any
    peak_slip: Any
    peak_mu: Any


RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "tc.on": (0.0, 1.0, True, True),
    "tc.target_slip": (0.0, 1.0, False, True),
    "tc.min_speed": (0.0, 100.0, False, True),
    "tc.k_p": (0.0, 1e3, True, True),
    "tc.k_i": (0.0, 1e4, True, True),
    "tc.k_bp": (0.0, 1e6, False, True),
    "tc.k_bi": (0.0, 1e3, True, True),
    "esc.on": (0.0, 1.0, True, True),
    "esc.gain": (0.0, 1e8, True, True),
    "esc.deadband": (0.0, 10.0, True, True),
    "esc.understeer_gradient": (-0.1, 0.1, True, True),
    "esc.mu": (0.0, 5.0, False, True),
}


def validate_controls(c: ChassisControls, source: str = "ChassisControls") -> None:
    """Check a concrete :class:`ChassisControls` against :data:`RANGES` (field, value, allowed range)."""
    if not isinstance(c, ChassisControls):
        raise ValidationError(f"{source}: controls must be a ChassisControls, got {type(c).__name__}")
    if not is_concrete(c):
        return
    for part in ("tc", "esc"):
        obj = getattr(c, part)
        for f in obj._fields:
            check_range(f"controls.{part}.{f}", getattr(obj, f), *RANGES[f"{part}.{f}"], source=source)


def init_state(params, omega, loads: list) -> ControlsState:
    """Integrators at rest (the engine trim 1, the capacity trims 0) and the peak driving slip and friction of each wheel's
    scaled tire at its static load ``loads`` [N] (one per wheel state, per tire) on every surface
    (:func:`sims.vehicles.grip.peak_braking` with ``driving=True``): the traction control, like the ABS of
    :class:`sims.drivers.StraightBraking`, knows its tire and the surface under each wheel."""
    ch = params.chassis
    n = len(loads)
    tires = [scale_tire(params.tire_front, *ch.tire_scale_front)] * (n // 2)
    tires += [scale_tire(params.tire_rear, *ch.tire_scale_rear)] * (n // 2)
    peaks = [
        peak_braking(t, jnp.maximum(fz, 1.0)[..., None], params.surfaces, driving=True)
        for t, fz in zip(tires, loads, strict=True)
    ]
    z = jnp.zeros_like(omega[..., 0])
    table = [jnp.stack([p[j] for p in peaks], axis=-2) for j in (0, 1)]
    return ControlsState(z + 1.0, jnp.zeros_like(omega), jnp.zeros_like(omega), *table)


def _axle_min(e: list) -> list:
    """Per wheel: the smaller error of its axle (the wheel itself on a single track)."""
    if len(e) == 2:
        return e
    lo_f, lo_r = jnp.minimum(e[0], e[1]), jnp.minimum(e[2], e[3])
    return [lo_f, lo_f, lo_r, lo_r]


def target_slip(tc: TractionControl, cs: ControlsState, surface_ids, n: int) -> list:
    """Per wheel: the traction control's target slip [-], ``target_slip`` x the peak driving slip of the
    wheel's tire on the surface under it (``surface_ids`` (4,), the single track reads the left wheels)."""
    ids = surface_ids if n == 4 else surface_ids[..., ::2]
    peak = jnp.take_along_axis(cs.peak_slip, ids[..., None], axis=-1)[..., 0]
    return [tc.target_slip * peak[..., i] for i in range(n)]


def traction(tc: TractionControl, cs: ControlsState, surface_ids, rows, drive_share: list, max_brake, h):
    """Traction control (module docstring): ``(wheel torque limit [N m], brake torques [N m] list, new state)``."""
    n = len(rows.omega)
    target = target_slip(tc, cs, surface_ids, n)
    ids = surface_ids if n == 4 else surface_ids[..., ::2]
    mu = jnp.take_along_axis(cs.peak_mu, ids[..., None], axis=-1)[..., 0]
    ref = [k * jnp.maximum(jnp.abs(u), tc.min_speed) for u, k in zip(rows.u, target, strict=True)]  # v*_i
    err = [w * re - u - v for w, re, u, v in zip(rows.omega, rows.re, rows.u, ref, strict=True)]
    rel = [jnp.clip(e / jnp.maximum(v, 1e-6), -1.0, 1.0) for e, v in zip(err, ref, strict=True)]
    driven = [jnp.asarray(d) > 0.0 for d in drive_share]
    trims, cap, torques, held = [], [], [], []
    for i in range(n):
        c = jnp.where(driven[i], jnp.clip(cs.brake[..., i] - h * tc.k_bi * rel[i], -0.5, 0.5), 0.0)
        trims.append(c)
        cap.append(mu[..., i] * rows.fz[i] * rows.radius[i] * (1.0 + c))  # T*_i
        b = jnp.maximum(cs.torque[..., i] - cap[i], 0.0)
        held.append(jnp.where(driven[i], b, 0.0))
        torques.append(jnp.where(driven[i], jnp.clip(b + tc.k_bp * err[i], 0.0, max_brake[i]), 0.0))
    # the engine loop sees the axle's less spinning wheel, plus the brake both its wheels hold (in slip units)
    lo = _axle_min([(e + b / tc.k_bp) / jnp.maximum(v, 1e-6) for e, b, v in zip(err, held, ref, strict=True)])
    e_eng = jnp.max(
        jnp.stack(jnp.broadcast_arrays(*[jnp.where(d, m, -jnp.inf) for d, m in zip(driven, lo, strict=True)])), 0
    )
    e_eng = jnp.clip(jnp.where(jnp.isfinite(e_eng), e_eng, 0.0), -1.0, 1.0)
    u_int = jnp.clip(cs.throttle - h * tc.k_i * e_eng, 0.0, 2.0)
    # feed-forward: each driven axle may take twice its better wheel's capacity (the brake holds the other),
    # but no more than the other wheel's brake can hold: 2 (T*_low + 0.9 T_max,low)
    pairs = [(0, 1), (2, 3)] if n == 4 else [(0,), (1,)]
    ff: Any = 0.0
    held_max: Any = 0.0
    for a in pairs:
        b_lo = jnp.where(cap[a[0]] <= cap[a[-1]], max_brake[a[0]], max_brake[a[-1]])
        ff = ff + jnp.where(driven[a[0]], len(a) * jnp.maximum(cap[a[0]], cap[a[-1]]), 0.0)
        held_max = held_max + jnp.where(driven[a[0]], len(a) * (jnp.minimum(cap[a[0]], cap[a[-1]]) + 0.9 * b_lo), 0.0)
    limit = jnp.minimum(ff * jnp.clip(u_int - tc.k_p * e_eng, 0.0, 2.0), held_max)
    return limit, torques, cs._replace(throttle=u_int, brake=jnp.stack(jnp.broadcast_arrays(*trims), -1))


def reference_yaw_rate(esc: StabilityControl, ch, vx, steer):
    """``r_ref`` [rad/s] of the linear bicycle limited by ``mu g / v`` (module docstring)."""
    v = jnp.maximum(jnp.abs(vx), 1.0)
    r_lin = vx * steer / (ch.cg_to_front + ch.cg_to_rear + esc.understeer_gradient * vx * vx)
    lim = esc.mu * GRAVITY / v
    return jnp.clip(r_lin, -lim, lim)


def stability(esc: StabilityControl, ch, state, steer, radius: list):
    """Stability control (module docstring): brake torque requests [N m] per wheel (four wheels; a single
    track gets none: it has no left and right)."""
    n = len(radius)
    if n != 4:
        return [jnp.zeros_like(state.vx)] * n
    r = state.yaw_rate
    e = r - reference_yaw_rate(esc, ch, state.vx, steer)
    mag = esc.gain * jnp.maximum(jnp.abs(e) - esc.deadband, 0.0)
    over = e * r > 0.0
    left = e < 0.0  # M > 0 (counter-clockwise) comes from braking a left wheel
    out = []
    for i, (is_front, is_left) in enumerate(((True, True), (True, False), (False, True), (False, False))):
        track = ch.track_front if is_front else ch.track_rear
        pick = (over == is_front) & (left == is_left)
        out.append(jnp.where(pick, mag * radius[i] / (0.5 * track), 0.0))
    return out


def arbitrate(c: ChassisControls, cs: ControlsState, ch, state, steer, rows, drive_share, h):
    """The one place where driver (ABS), traction control and stability control meet, per wheel.

    Returns ``(wheel torque limit [N m], brake commands list [-] in [0, 1], new ControlsState)``: the limit
    on the driven wheels' total drive torque the engine must respect (:data:`NO_LIMIT` without traction control),
    each wheel's brake the largest of the requests."""
    n = len(rows.omega)
    max_brake = [jnp.maximum(ch.max_brake_torque * b, 1e-6) for b in rows.brake_share]
    limit, tc_t, new = traction(c.tc, cs, ch.surface_ids, rows, drive_share, max_brake, h)
    esc_t = stability(c.esc, ch, state, steer, rows.radius)
    brakes = []
    for i in range(n):
        req = jnp.maximum(c.tc.on * tc_t[i], c.esc.on * esc_t[i]) / max_brake[i]
        brakes.append(jnp.maximum(jnp.clip(rows.brake[i], 0.0, 1.0), jnp.clip(req, 0.0, 1.0)))
    # off: a finite "no limit" (an inf would put inf x 0 = NaN into the gradient of the engine's cap)
    return jnp.where(c.tc.on > 0.5, limit, NO_LIMIT), brakes, new


__all__ = [
    "ChassisControls",
    "ControlsState",
    "StabilityControl",
    "TractionControl",
    "arbitrate",
    "init_state",
]
