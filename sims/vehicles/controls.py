"""Chassis controls on the vehicle side: traction control and electronic stability control, and the one
place where they and the driver's brake (with its ABS, :class:`sims.drivers.StraightBraking`) arbitrate per
wheel (:func:`arbitrate`).  They run inside the step of a car with a
:class:`~sims.vehicles.driveline.Driveline` (its ``controls`` field), from the start-of-step state, like an
ECU sampling at the step rate.  Each has an ``on`` value (1 on, 0 off, a float: half a fleet can have it).

Traction control (:class:`TractionControl`), per driven wheel ``i``: its target spin ``w*_i = (|u'_i| + v*_i) /
Re_i`` (``u'_i = 2 u_i - u_i,prev`` the contact speed at the end of the step, extrapolated from the last
two (the ECU's vehicle-speed estimate; without it a wheel held at its target falls behind an accelerating
car by ``h du/dt``, more than the whole slip on ice), ``Re_i`` the tire's effective rolling radius, ``v*_i =
kappa*_i max(|u'_i|, min_speed)``, ``kappa*_i = target_slip kappa_peak,i`` with ``kappa_peak,i`` the peak driving slip of the
wheel's tire on the surface under it, :func:`target_slip`).  Both loops read the wheel's implicit row
``D_i (w_i' - w_i) = h (T_i + tau_i - T_b,i)`` (``D_i`` its implicit inertia, ``tau_i`` the tire torque,
``T_i`` the drive torque, :mod:`sims.vehicles.core`): the spin the wheel would reach without a brake is
``w^_i = max(|w_i + h (T_i + tau_i) / D_i| - h T_rr,i / D_i, 0)`` (``T_rr,i`` the rolling resistance, a
Coulomb friction like the brake; an ideal observer: a production TC estimates ``tau_i`` from the
wheel's acceleration, drive torque and brake pressure)::

    brake (EDL):  T_b,i = clip(D_i (w^_i - w_d,i) / h, 0, T_max,i),   w_d,i = w*_i + max(|w_i| - w*_i, 0) t_b / (t_b + h)
    engine:       sum_i T_i <= min(T_ff clip(u_I - k_p e_eng, 0, 2), T_hold),   du_I/dt = -k_i e_eng
                  (u_I in [0, 2], starts at 1), e_eng = max over driven axles of min_(L, R) (s_i + B_i / T*_i)
                  (clipped to +-1), s_i = clip((w_i Re_i - |u_i| - v*_i) / v*_i, -1, 1) the relative slip error
                  the wheel has now, B_i the traction control's brake torque on it (mean of the last two steps)
    feed-forward: T_ff = sum over driven axles of 2 max(T*_L, T*_R),   T*_i = mu_peak,i Fz_i R_i (1 + c_i)
                  T_hold = sum over driven axles of (2 (min(T*_L, T*_R) + 0.9 T_max,low) + T_pre) / (1 - k)
    trims:        dc_i/dt = -k_trim s_i   (c_i in [-0.5, 0.5], starts at 0)

The brake is computed after the driveline has found this step's drive torques ``T_i``, so it takes out
exactly the torque that would spin the wheel beyond its target: the wheel's slip error decays with the
brake's time constant ``t_b`` (the pressure build-up of the hydraulics; 0: in one step).  On split-mu only
the spinning wheel is braked: the brake torque it holds lets an open differential pass the same torque to
the high-mu wheel (the brake-based "electronic differential lock").  The engine loop therefore works on the
axle's *less* spinning wheel (the high-mu one): the torque limit opens until that wheel reaches its own
target slip, starting from the feed-forward of twice the better wheel's capacity (``mu_peak,i`` the peak
driving friction of the wheel's tire on its surface, ``Fz_i`` its load now, ``R_i`` its radius, ``c_i`` a
slow trim of that estimate), and never beyond what the brake of the axle's weaker wheel (full torque
``T_max,low``) can hold against its differential (``T_hold``: preload ``T_pre`` and locking coefficient
``k`` on power, which give the weaker wheel at least ``((1 - k) T_in - T_pre) / 2``; no limit when locked); on ice under both wheels both errors
are positive and the engine torque comes down to what the tires take.  The engine limit acts on the
engine's torque (:mod:`sims.vehicles.driveline`).

Stability control (:class:`StabilityControl`): the reference yaw rate of the linear bicycle model,
limited by the friction::

    r_ref = clip(v delta / (L + K_us v^2), -mu g / v, mu g / v)

(``K_us`` [rad s^2/m] the understeer gradient, ``mu`` the friction the ECU assumes), the error ``e = r -
r_ref`` and the corrective yaw moment ``M = -gain dz(e)`` (``dz`` a dead band of ``deadband``): it brakes
one wheel, the outer front when the car oversteers (``e r > 0``), the inner rear when it understeers,
with the brake force ``|M| / (t / 2)`` (torque ``|M| R / (t / 2)``; ``t`` the track).

The engine takes the smaller of the driver's torque and the traction control's limit (:func:`engine_limit`);
:func:`arbitrate` gives each wheel the largest of the driver's (ABS), the traction control's and the
stability control's brake requests, as a fraction of the wheel's full brake torque.
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
    ``k_p`` [-] and ``k_i`` [1/s] on the relative slip error, ``brake_time`` ``t_b`` [s] the time constant of
    a spinning wheel's slip error under the brake, ``k_trim`` [1/s] the rate of the capacity trims."""

    on: Any = 0.0
    target_slip: Any = 0.9
    min_speed: Any = 0.7
    k_p: Any = 0.2
    k_i: Any = 2.0
    brake_time: Any = 0.02
    k_trim: Any = 1.0


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
    surface of the table (constant, :func:`init_state`), ``speed`` (n,) [m/s] each wheel's contact speed
    last step (the speed it will have after this step is extrapolated from it: ``u' = 2 u - u_prev``), ``held``
    (n,) [N m] the traction control's brake torque on each wheel, the mean of the last two steps."""

    throttle: Any
    brake: Any
    torque: Any
    peak_slip: Any
    peak_mu: Any
    speed: Any = None
    held: Any = None


RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "tc.on": (0.0, 1.0, True, True),
    "tc.target_slip": (0.0, 1.0, False, True),
    "tc.min_speed": (0.0, 100.0, False, True),
    "tc.k_p": (0.0, 1e3, True, True),
    "tc.k_i": (0.0, 1e4, True, True),
    "tc.brake_time": (0.0, 1.0, True, True),
    "tc.k_trim": (0.0, 1e3, True, True),
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
    radius = [ch.wheel_radius_front] * (n // 2) + [ch.wheel_radius_rear] * (n // 2)
    speed = omega * jnp.stack(jnp.broadcast_arrays(*radius), -1)  # rolling: no acceleration at the start
    zeros = jnp.zeros_like(omega)
    return ControlsState(z + 1.0, zeros, zeros, table[0], table[1], speed, zeros)


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


def _speeds(cs: ControlsState, rows) -> list:
    """Per wheel: ``|u'_i|`` [m/s], the contact speed after the step, ``u' = 2 u - u_prev``."""
    if cs.speed is None:
        return [jnp.abs(u) for u in rows.u]
    return [jnp.abs(2.0 * u - cs.speed[..., i]) for i, u in enumerate(rows.u)]


def _targets(tc: TractionControl, cs: ControlsState, surface_ids, speeds: list) -> list:
    """Per wheel: the target slip velocity ``v*_i`` [m/s] at the contact speeds ``speeds`` (module docstring)."""
    kappa = target_slip(tc, cs, surface_ids, len(speeds))
    return [k * jnp.maximum(u, tc.min_speed) for u, k in zip(speeds, kappa, strict=True)]


def _spin_free(rows, torques: list, h) -> list:
    """Per wheel: ``w^_i = max(|w_i + h (T_i + tau_i) / D_i| - h T_rr,i / D_i, 0)`` [rad/s], the spin after the
    step without a brake (``T_rr,i`` the rolling resistance, a Coulomb friction like the brake)."""
    t_rr = rows.t_rr if rows.t_rr is not None else [0.0] * len(rows.omega)
    return [
        jnp.maximum(jnp.abs(w + h * (t + tau) / d) - h * rr / d, 0.0)
        for w, t, tau, d, rr in zip(rows.omega, torques, rows.torque, rows.inertia, t_rr, strict=True)
    ]


def traction_limit(
    tc: TractionControl, cs: ControlsState, surface_ids, rows, drive_share: list, max_brake, diffs: tuple, h
):
    """The traction control's engine loop (module docstring): ``(limit on the driven wheels' total drive
    torque [N m], new state)``, from the start-of-step state and the drive torques of the last steps.
    ``diffs``: the front and rear axle differentials (:class:`sims.vehicles.driveline.Differential`: their
    bias sets how much the weaker wheel's brake must hold)."""
    n = len(rows.omega)
    ids = surface_ids if n == 4 else surface_ids[..., ::2]
    mu = jnp.take_along_axis(cs.peak_mu, ids[..., None], axis=-1)[..., 0]
    speeds = [jnp.abs(u) for u in rows.u]
    ref = _targets(tc, cs, surface_ids, speeds)
    driven = [jnp.asarray(d) > 0.0 for d in drive_share]
    # the slip error each wheel has now (with the brake it got)
    now = [
        jnp.clip((w * re - u - v) / jnp.maximum(v, 1e-6), -1.0, 1.0)
        for w, re, u, v in zip(rows.omega, rows.re, speeds, ref, strict=True)
    ]
    trims = [
        jnp.where(driven[i], jnp.clip(cs.brake[..., i] - h * tc.k_trim * now[i], -0.5, 0.5), 0.0) for i in range(n)
    ]
    cap = [mu[..., i] * rows.fz[i] * rows.radius[i] * (1.0 + trims[i]) for i in range(n)]  # T*_i
    # the engine loop works on each driven axle's less spinning wheel (its slip error plus the brake torque
    # the traction control holds on it, relative to its capacity); the worst driven axle sets it
    held = [jnp.zeros_like(c) for c in cap] if cs.held is None else [cs.held[..., i] for i in range(n)]
    lo = _axle_min([e + b / jnp.maximum(c, 1.0) for e, b, c in zip(now, held, cap, strict=True)])
    e_eng = jnp.max(
        jnp.stack(jnp.broadcast_arrays(*[jnp.where(d, m, -jnp.inf) for d, m in zip(driven, lo, strict=True)])), 0
    )
    e_eng = jnp.clip(jnp.where(jnp.isfinite(e_eng), e_eng, 0.0), -1.0, 1.0)
    u_int = jnp.clip(cs.throttle - h * tc.k_i * e_eng, 0.0, 2.0)
    # feed-forward: each driven axle may take twice its better wheel's capacity (the brake holds the other),
    # but no more than the other wheel's brake can hold through the differential, whose coupling gives the
    # weaker wheel at least (T_in (1 - k) - T_pre) / 2: T_in <= (2 (T*_low + 0.9 T_max,low) + T_pre) / (1 - k)
    pairs = [(0, 1), (2, 3)] if n == 4 else [(0,), (1,)]
    ff: Any = 0.0
    held_max: Any = 0.0
    for a, d in zip(pairs, diffs, strict=True):
        b_lo = jnp.where(cap[a[0]] <= cap[a[-1]], max_brake[a[0]], max_brake[a[-1]])
        ff = ff + jnp.where(driven[a[0]], len(a) * jnp.maximum(cap[a[0]], cap[a[-1]]), 0.0)
        hold = len(a) * (jnp.minimum(cap[a[0]], cap[a[-1]]) + 0.9 * b_lo)
        if len(a) == 2:  # an axle differential; a locked one needs no brake to pass its torque
            hold = jnp.where(d.locked > 0.5, NO_LIMIT, (hold + d.preload) / (1.0 - d.locking_power))
        held_max = held_max + jnp.where(driven[a[0]], hold, 0.0)
    limit = jnp.minimum(ff * jnp.clip(u_int - tc.k_p * e_eng, 0.0, 2.0), held_max)
    new = cs._replace(throttle=u_int, brake=jnp.stack(jnp.broadcast_arrays(*trims), -1))
    if cs.speed is not None:
        new = new._replace(speed=jnp.stack(jnp.broadcast_arrays(*rows.u), -1))
    return limit, new


def traction_brakes(tc: TractionControl, cs: ControlsState, surface_ids, rows, torques: list, drive_share: list, h):
    """The traction control's brake (module docstring): per wheel the brake torque [N m] (before the clip to the
    wheel's full brake torque) that brings a driven wheel spinning beyond its target back with the time
    constant ``brake_time``, from this step's drive torques ``torques`` [N m]."""
    speeds = _speeds(cs, rows)
    ref = _targets(tc, cs, surface_ids, speeds)
    spin = _spin_free(rows, torques, h)
    out = []
    for i, (w, d, re, u, v) in enumerate(zip(rows.omega, rows.inertia, rows.re, speeds, ref, strict=True)):
        target = (u + v) / re
        want = target + jnp.maximum(jnp.abs(w) - target, 0.0) * tc.brake_time / (tc.brake_time + h)
        out.append(jnp.where(jnp.asarray(drive_share[i]) > 0.0, jnp.maximum(d * (spin[i] - want) / h, 0.0), 0.0))
    return out


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


def engine_limit(c: ChassisControls, cs: ControlsState, ch, surface_ids, rows, drive_share: list, diffs: tuple, h):
    """The traction control's request on the engine: ``(limit on the driven wheels' total drive torque [N m],
    new ControlsState)``; :data:`NO_LIMIT` without traction control.  The engine takes the smaller of the
    driver's torque and this (:func:`sims.vehicles.driveline.drive_torques`).  ``surface_ids`` (4,): the
    surface under each wheel; ``diffs``: the front and rear axle differentials."""
    max_brake = _max_brake(ch, rows)
    limit, new = traction_limit(c.tc, cs, surface_ids, rows, drive_share, max_brake, diffs, h)
    # off: a finite "no limit" (an inf would put inf x 0 = NaN into the gradient of the engine's cap)
    return jnp.where(c.tc.on > 0.5, limit, NO_LIMIT), new


def _max_brake(ch, rows) -> list:
    return [jnp.maximum(ch.max_brake_torque * b, 1e-6) for b in rows.brake_share]


def arbitrate(
    c: ChassisControls, cs: ControlsState, ch, surface_ids, state, steer, rows, torques: list, drive_share: list, h
):
    """The one place where driver (ABS), traction control and stability control meet, per wheel.

    Returns the brake commands (list, [-] in [0, 1] of each wheel's full brake torque) and the traction
    control's brake torques [N m] (list, for its engine loop next step): each wheel's command the largest of the driver's (with its ABS), the traction control's (from this step's drive torques
    ``torques`` [N m], :func:`traction_brakes`, on the surfaces ``surface_ids`` (4,) under the wheels) and the
    stability control's requests."""
    n = len(rows.omega)
    max_brake = _max_brake(ch, rows)
    tc_t = traction_brakes(c.tc, cs, surface_ids, rows, torques, drive_share, h)
    esc_t = stability(c.esc, ch, state, steer, rows.radius)
    brakes = []
    for i in range(n):
        req = jnp.maximum(c.tc.on * tc_t[i], c.esc.on * esc_t[i]) / max_brake[i]
        brakes.append(jnp.maximum(jnp.clip(rows.brake[i], 0.0, 1.0), jnp.clip(req, 0.0, 1.0)))
    return brakes, [c.tc.on * t for t in tc_t]


__all__ = [
    "ChassisControls",
    "ControlsState",
    "StabilityControl",
    "TractionControl",
    "arbitrate",
    "engine_limit",
    "init_state",
    "traction_brakes",
    "traction_limit",
]
