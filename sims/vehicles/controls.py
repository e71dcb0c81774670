"""Chassis controls on the vehicle side: traction control and electronic stability control, and the one
place where they and the driver's brake (with its ABS, :class:`sims.drivers.StraightBraking`) arbitrate per
wheel (:func:`arbitrate`).  They run inside the step of a car with a
:class:`~sims.vehicles.driveline.Driveline` (its ``controls`` field), from the start-of-step state, like an
ECU sampling at the step rate.  Each has an ``on`` value (1 on, 0 off, a float: half a fleet can have it).

Traction control (:class:`TractionControl`), per driven wheel ``i`` with the slip velocity
``v_s,i = w_i Re_i - u_i`` (``Re_i`` the tire's effective rolling radius, ``u_i`` the contact speed) and
its target ``v*_i = target_slip max(|u_i|, min_speed)``, error ``e_i = v_s,i - v*_i``::

    engine:  throttle <= clip(u_I - k_p e_eng, 0, 1),   du_I/dt = -k_i e_eng  (u_I in [0, 1], starts at 1)
             e_eng = max over driven axles of min(e_L, e_R)  (the axle's less spinning wheel)
    brakes:  T_b,i = clip(b_I,i + k_bp x_i, 0, T_max,i),  db_I,i/dt = k_bi x_i  (b_I,i in [0, T_max,i]),
             x_i = e_i - min(e_L, e_R)  (what one wheel spins more than the other of its axle)

so on a uniform surface the engine holds the slip at its target, and on split-mu the brake of the
spinning wheel lets an open differential pass torque to the other one (a brake "limited slip").

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
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.validation import ValidationError, check_range, is_concrete

_INF = math.inf


class TractionControl(NamedTuple):
    """``on`` [-] (1/0), ``target_slip`` [-], ``min_speed`` [m/s] floor of the speed the target slip is taken
    of, engine loop gains ``k_p`` [1/(m/s)], ``k_i`` [1/m], brake loop gains ``k_bp`` [N m s/m],
    ``k_bi`` [N m/m]."""

    on: Any = 0.0
    target_slip: Any = 0.1
    min_speed: Any = 1.0
    k_p: Any = 0.5
    k_i: Any = 5.0
    k_bp: Any = 300.0
    k_bi: Any = 3000.0


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
    """``throttle`` [-] the traction control's engine integrator, ``brake`` (n,) [N m] its brake integrators."""

    throttle: Any
    brake: Any


RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "tc.on": (0.0, 1.0, True, True),
    "tc.target_slip": (0.0, 1.0, False, True),
    "tc.min_speed": (0.0, 100.0, False, True),
    "tc.k_p": (0.0, 1e3, True, True),
    "tc.k_i": (0.0, 1e4, True, True),
    "tc.k_bp": (0.0, 1e6, True, True),
    "tc.k_bi": (0.0, 1e7, True, True),
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


def init_state(c: ChassisControls, omega) -> ControlsState:
    """Integrators at rest: the engine limit open (1), no brake."""
    z = jnp.zeros_like(omega[..., 0])
    return ControlsState(z + 1.0, jnp.zeros_like(omega))


def _axle_min(e: list) -> list:
    """Per wheel: the smaller error of its axle (the wheel itself on a single track)."""
    if len(e) == 2:
        return e
    lo_f, lo_r = jnp.minimum(e[0], e[1]), jnp.minimum(e[2], e[3])
    return [lo_f, lo_f, lo_r, lo_r]


def traction(tc: TractionControl, cs: ControlsState, rows, drive_share: list, max_brake, h):
    """Traction control (module docstring): ``(throttle limit, brake torques [N m] list, new state)``."""
    n = len(rows.omega)
    err = [
        w * re - u - tc.target_slip * jnp.maximum(jnp.abs(u), tc.min_speed)
        for w, re, u in zip(rows.omega, rows.re, rows.u, strict=True)
    ]
    driven = [jnp.asarray(d) > 0.0 for d in drive_share]
    lo = _axle_min(err)
    e_eng = jnp.max(jnp.stack(jnp.broadcast_arrays(*[jnp.where(d, m, -jnp.inf) for d, m in zip(driven, lo, strict=True)])), 0)
    e_eng = jnp.where(jnp.isfinite(e_eng), e_eng, 0.0)
    u_int = jnp.clip(cs.throttle - h * tc.k_i * e_eng, 0.0, 1.0)
    limit = jnp.clip(u_int - tc.k_p * e_eng, 0.0, 1.0)
    torques, ints = [], []
    for i in range(n):
        x = jnp.where(driven[i], err[i] - lo[i], 0.0)
        b_int = jnp.clip(cs.brake[..., i] + h * tc.k_bi * x, 0.0, max_brake[i])
        ints.append(jnp.where(driven[i], b_int, 0.0))
        torques.append(jnp.clip(b_int + tc.k_bp * x, 0.0, max_brake[i]))
    return limit, torques, ControlsState(u_int, jnp.stack(jnp.broadcast_arrays(*ints), -1))


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


def arbitrate(c: ChassisControls, cs: ControlsState, ch, state, steer, throttle, rows, drive_share, h):
    """The one place where driver (ABS), traction control and stability control meet, per wheel.

    Returns ``(throttle, brake commands list [-] in [0, 1], new ControlsState)``: the throttle ``min``
    of the driver's and the traction control's limit (when on), each wheel's brake the largest request."""
    n = len(rows.omega)
    max_brake = [jnp.maximum(ch.max_brake_torque * b, 1e-6) for b in rows.brake_share]
    limit, tc_t, new = traction(c.tc, cs, rows, drive_share, max_brake, h)
    esc_t = stability(c.esc, ch, state, steer, rows.radius)
    thr = jnp.where(c.tc.on > 0.5, jnp.minimum(throttle, limit), throttle)
    brakes = []
    for i in range(n):
        req = jnp.maximum(c.tc.on * tc_t[i], c.esc.on * esc_t[i]) / max_brake[i]
        brakes.append(jnp.maximum(jnp.clip(rows.brake[i], 0.0, 1.0), jnp.clip(req, 0.0, 1.0)))
    return thr, brakes, new


__all__ = [
    "ChassisControls",
    "ControlsState",
    "StabilityControl",
    "TractionControl",
    "arbitrate",
    "init_state",
    "np",
]
