"""Drivers: the inputs a rollout applies at each step, open loop or closed loop.

A driver is an immutable pytree (its numeric fields may carry a leading vehicle axis in a fleet) with

* ``init(params, state) -> dstate``: its internal state (``()`` for a stateless driver);
* ``__call__(t, state, params, dstate, dt) -> (Controls, dstate)``: the controls for the step from
  ``t`` to ``t + dt`` [s] given the vehicle ``state``, and the next internal state.

Everything is smooth or piecewise linear (``clip``), so gradients flow through closed loops.

* :class:`OpenLoop` plays a recorded :class:`~sims.vehicles.params.Controls` sequence.
* :class:`Constant` holds fixed inputs.
* :class:`StepSteer` (ISO 7401 step steer) and :class:`SineSteer`, both with a speed hold.
* :class:`CircleFollower` drives a constant-radius circle (skidpad) at a target speed.
* :class:`StraightBraking` brakes in a straight line with locked wheels or with an ABS slip controller.
* :class:`LaneChangeDriver` follows a single lane change (:func:`lane_reference`).
* :class:`PathFollower` follows any :class:`sims.roads.path.Path` (open or closed, e.g. a circuit) with a
  curvature feed-forward, look-ahead feedback and a speed hold (or a speed profile along the path).
* :class:`SineWithDwell` steers the FMVSS 126 / UN R140 sine with dwell (:func:`sine_with_dwell`).

Heading errors are wrapped with :func:`jaxtire.constants.wrap_angle` (to ``[-pi, pi)``).

Every driver is validated when built: each field against :data:`DRIVER_RANGES` (the same field name has
the same range in every driver), a :class:`~jaxtire.validation.ValidationError` naming the driver, field,
value and allowed range otherwise (:func:`validate_driver`).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire import fields
from jaxtire.constants import wrap_angle
from jaxtire.fields import Field
from jaxtire.tire import scale_tire
from jaxtire.validation import ValidationError, check_finite, check_range, is_concrete
from sims.roads.path import heading_error, project, sample
from sims.vehicles.core import axle_loads, drive_torque, gravity, rolling_radii
from sims.vehicles.grip import peak_braking
from sims.vehicles.params import Controls, per_wheel_array, wheel_layout, wheel_radii
from sims.vehicles.road import on_road

_INF = math.inf
_STEER = (-1.6, 1.6, True, True)  # [rad], beyond any road-wheel angle (Chassis.max_steer <= 1.2)
_UNIT = (0.0, 1.0, True, True)
_TIME = (0.0, _INF, True, False)
_POSITIVE = (0.0, _INF, False, False)
_ANY = (-_INF, _INF, True, True)
_SPEED = (0.0, 200.0, True, True)
_GAIN = (0.0, 100.0, True, True)
#: The one table of the driver fields, by name (the same name means the same quantity in every driver):
#: field -> :class:`jaxtire.fields.Field` (SI unit and range; a driver's defaults are its dataclass defaults);
#: every value must also be finite in float32.  ``radius`` (:class:`CircleFollower`) must in addition be nonzero
#: (its sign is the direction).
#: :data:`DRIVER_RANGES` (validation) and :data:`DRIVER_UNITS` (the study table's units) are read from it.
DRIVER_FIELDS: dict[str, Field] = {
    "steer": Field(None, "rad", *_STEER),
    "throttle": Field(None, "-", *_UNIT),
    "brake": Field(None, "-", *_UNIT),
    "amplitude": Field(None, "rad", *_STEER),
    "t_step": Field(None, "s", *_TIME),
    "t_start": Field(None, "s", *_ANY),
    "t_brake": Field(None, "s", *_TIME),
    "ramp": Field(None, "s", 0.0, 100.0, True, True),
    "frequency": Field(None, "Hz", 0.0, 100.0, True, True),
    "target_speed": Field(None, "m/s", *_SPEED),
    "speed_gain": Field(None, "1/(m/s)", *_GAIN),
    "accel_gain": Field(None, "1/s", *_GAIN),
    "dt": Field(None, "s", *_POSITIVE),
    "radius": Field(None, "m", -1e5, 1e5, True, True),
    "center_x": Field(None, "m", *_ANY),
    "center_y": Field(None, "m", *_ANY),
    "bandwidth": Field(None, "rad/s", 0.0, 1e3, False, True),
    "zeta": Field(None, "-", 0.0, 10.0, False, True),
    "t_integral": Field(None, "s", 0.0, 1e4, False, True),
    "throttle_ff": Field(None, "-", -1.0, 1.0, True, True),
    "abs_on": Field(None, "-", *_UNIT),
    "target_slip": Field(None, "-", 0.0, 1.0, False, True),
    "min_slip": Field(None, "-", 0.0, 1.0, False, True),
    "select_low_rear": Field(None, "-", *_UNIT),
    "yaw_rate_ref": Field(None, "rad/s", 0.0, 100.0, False, True),
    "slip_offset": Field(None, "m/s", 0.0, 10.0, True, True),
    "abs_off_speed": Field(None, "m/s", 0.0, 100.0, False, True),
    "k_y": Field(None, "rad/m", *_ANY),
    "k_psi": Field(None, "-", *_ANY),
    "k_r": Field(None, "s", *_ANY),
    "t_preview": Field(None, "s", 0.0, 10.0, True, True),
    "x0": Field(None, "m", *_ANY),
    "length": Field(None, "m", 0.0, 1e5, False, True),
    "width": Field(None, "m", -100.0, 100.0, True, True),
    "x_preview": Field(None, "m", 0.0, 1000.0, True, True),
    "t_ff": Field(None, "s", 0.0, 5.0, True, True),
    "understeer": Field(None, "rad/(m/s^2)", -1.0, 1.0, True, True),
    "brake_gain": Field(None, "1/(m/s)", *_GAIN),
    "profile": Field(None, "-", *_UNIT),
    "course": Field(None, "-", *_UNIT),
    "dwell": Field(None, "s", 0.0, 10.0, True, True),
    "rate": Field(None, "rad/s", *_ANY),
    "t_speed": Field(None, "s", 0.0, 5.0, True, True),
    "slip_limit": Field(None, "-", 0.0, 1.0, False, True),
}
#: Allowed range of each driver field (from :data:`DRIVER_FIELDS`).
DRIVER_RANGES: dict[str, tuple[float, float, bool, bool]] = fields.ranges(DRIVER_FIELDS)
#: SI unit of each driver field (from :data:`DRIVER_FIELDS`).
DRIVER_UNITS: dict[str, str] = fields.units(DRIVER_FIELDS)


def validate_driver(drv) -> None:
    """Check every field of a driver against :data:`DRIVER_RANGES` (scalars or per-vehicle arrays).

    Raises :class:`~jaxtire.validation.ValidationError` naming the driver, the field, the value and the
    allowed range.  Traced values (a driver built inside ``jit`` / ``vmap`` / ``grad``) are not checked;
    :class:`OpenLoop`'s ``controls_seq`` is checked leaf by leaf (the :class:`Controls` fields with the
    ranges of ``steer``, ``throttle``, ``brake``, other leaves finite).
    """
    src = type(drv).__name__
    for f in dataclasses.fields(drv):
        value = getattr(drv, f.name)
        if not is_concrete(value):
            continue
        if f.name == "controls_seq":
            for path, leaf in jax.tree_util.tree_leaves_with_path(value):
                key = getattr(path[-1], "name", None) if path else None
                name = f"controls_seq.{key}" if key else f"controls_seq{jax.tree_util.keystr(path)}"
                if key in DRIVER_RANGES:
                    check_range(name, leaf, *DRIVER_RANGES[key], source=src)
                else:
                    check_finite(name, leaf, source=src)
            continue
        if isinstance(value, tuple):  # a pytree field (a path): every leaf finite
            for path, leaf in jax.tree_util.tree_leaves_with_path(value):
                check_finite(f"{f.name}{jax.tree_util.keystr(path)}", leaf, source=src)
            continue
        rng = DRIVER_RANGES.get(f.name, _ANY)
        arr = check_range(f.name, value, *rng, source=src)
        if f.name == "radius" and (arr == 0).any():
            raise ValidationError(f"{src}: radius = 0.0 is not allowed (nonzero, |radius| <= 1e5; sign = direction)")


def top_speed(ch):
    """Power-limited top speed [m/s] on a level road, ``(2 P / (rho Cd A))^(1/3)`` (aerodynamic drag alone
    absorbs ``max_power``; rolling resistance left out, so a little high); ``inf`` without drag."""
    drag = 0.5 * jnp.asarray(ch.air_density) * jnp.asarray(ch.drag_area)
    return jnp.where(drag > 0.0, (jnp.asarray(ch.max_power) / jnp.where(drag > 0.0, drag, 1.0)) ** (1.0 / 3.0), jnp.inf)


#: A driver's ``target_speed`` may exceed the vehicle's :func:`top_speed` by this factor.
TOP_SPEED_MARGIN = 1.2


def check_target_speed(driver, params, source: str | None = None) -> None:
    """Refuse a concrete ``target_speed`` [m/s] of ``driver`` above :data:`TOP_SPEED_MARGIN` times the vehicle's
    :func:`top_speed` (per vehicle in a fleet): most likely km/h given as m/s (``target_speed=80`` on a
    hatchback whose top speed is 62 m/s).  Raises :class:`~jaxtire.validation.ValidationError` with the hint."""
    ts = getattr(driver, "target_speed", None)
    ch = getattr(params, "chassis", None)
    if ts is None or ch is None or not is_concrete((ts, ch)):  # top_speed reads several chassis fields
        return
    v = np.asarray(ts, float)
    vmax = np.asarray(top_speed(ch), float)
    bad = np.broadcast_to(v > TOP_SPEED_MARGIN * vmax, np.broadcast_shapes(v.shape, vmax.shape))
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), bad.shape)
        vi = float(np.broadcast_to(v, bad.shape)[i])
        mi = float(np.broadcast_to(vmax, bad.shape)[i])
        raise ValidationError(
            f"{source or type(driver).__name__}: target_speed = {vi:g} m/s ({vi * 3.6:.0f} km/h) is above the "
            f"vehicle's top speed {mi:.1f} m/s ({mi * 3.6:.0f} km/h, from max_power and drag_area); speeds are in "
            f"m/s: {vi:g} km/h is {vi / 3.6:.4g} m/s (pass target_speed={vi:g} / 3.6)"
        )


@typing.dataclass_transform(frozen_default=True)
def pytree_dataclass(cls):
    """Class decorator: a frozen dataclass registered as a pytree whose fields are all data leaves (every
    driver here, and the in-scan reducers of :mod:`sims.scenarios` and :mod:`sims.studies`).

    Building one (``Cls(...)``, ``dataclasses.replace``) runs its ``__post_init__`` (drivers: validation,
    :func:`validate_driver`); JAX rebuilding it from leaves (``jit``, ``vmap``, ``grad``, ``tree.map``:
    tracers, gradients, axis specs) does not call the constructor, so any leaves are allowed there.
    """
    cls = dataclasses.dataclass(frozen=True)(cls)
    names = tuple(f.name for f in dataclasses.fields(cls))
    keys = tuple(jax.tree_util.GetAttrKey(n) for n in names)

    def flatten_with_keys(d):
        return tuple(zip(keys, (getattr(d, n) for n in names), strict=True)), None

    def flatten(d):
        return tuple(getattr(d, n) for n in names), None

    def unflatten(_, leaves):
        obj = object.__new__(cls)
        for n, v in zip(names, leaves, strict=True):
            object.__setattr__(obj, n, v)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls


@typing.dataclass_transform(frozen_default=True)
def driver(cls):
    """The decorator of the drivers: :func:`pytree_dataclass` (its former name, kept)."""
    return pytree_dataclass(cls)


class Driver:
    """Base class: stateless by default (override :meth:`controls`, or ``init`` and ``__call__``).

    A dataclass driver is validated when built (:func:`validate_driver`)."""

    def __post_init__(self):
        validate_driver(self)

    def init(self, params, state):
        return ()

    def controls(self, t, state, params) -> Controls:  # pragma: no cover - interface
        raise NotImplementedError

    def __call__(self, t, state, params, dstate, dt):
        return self.controls(t, state, params), dstate


def speed_hold(target, speed, gain, feed_forward=0.0):
    """Throttle of a proportional speed controller with a feed-forward,
    ``clip(gain (target - speed) + feed_forward, 0, 1)`` (no braking)."""
    return jnp.clip(gain * (target - speed) + feed_forward, 0.0, 1.0)


def radial_error(state, center_x, center_y, radius):
    """Distance [m] of the vehicle's centre of gravity outside the circle of centre ``(center_x, center_y)``
    [m] and radius ``|radius|`` [m]: ``|p - c| - |radius|`` (negative inside); a zero-safe norm."""
    dx, dy = state.x - center_x, state.y - center_y
    return jnp.sqrt(dx * dx + dy * dy + 1e-12) - jnp.abs(radius)


@pytree_dataclass
class OpenLoop(Driver):
    """Replays ``controls`` (a :class:`Controls` whose leaves have a leading time axis), one entry per step
    of length ``dt`` [s] from ``t_start``; before/after the sequence its first/last entry holds."""

    controls_seq: Any
    dt: Any
    t_start: Any = 0.0

    def controls(self, t, state, params):
        n = jax.tree.leaves(self.controls_seq)[0].shape[0]
        k = jnp.clip(jnp.round((t - self.t_start) / self.dt).astype(jnp.int32), 0, n - 1)
        return jax.tree.map(lambda a: a[k], self.controls_seq)


@pytree_dataclass
class Constant(Driver):
    """Fixed ``steer`` [rad], ``throttle`` [-], ``brake`` [-]."""

    steer: Any = 0.0
    throttle: Any = 0.0
    brake: Any = 0.0

    def controls(self, t, state, params):
        return Controls(jnp.asarray(self.steer), jnp.asarray(self.throttle), jnp.asarray(self.brake))


def _ramp(t, t0, duration):
    return jnp.clip((t - t0) / jnp.maximum(duration, 1e-6), 0.0, 1.0)


@pytree_dataclass
class SteerWithSpeedHold(Driver):
    """Base of the open-loop steer inputs: steer ``steer(t, state)`` [rad] of peak ``amplitude`` [rad]
    (subclass), throttle from :func:`speed_hold` at ``target_speed`` [m/s] with ``speed_gain`` [1/(m/s)],
    no brake."""

    amplitude: Any = 0.02
    target_speed: Any = 22.2
    speed_gain: Any = 0.5

    def steer(self, t, state):  # pragma: no cover - interface
        raise NotImplementedError

    def controls(self, t, state, params):
        steer = self.steer(t, state)
        return Controls(steer, speed_hold(self.target_speed, state.vx, self.speed_gain), jnp.zeros_like(steer))


@pytree_dataclass
class StepSteer(SteerWithSpeedHold):
    """Step steer (ISO 7401): steer ramps linearly from 0 to ``amplitude`` [rad] over ``ramp`` [s]
    (ISO: at most 0.15 s) starting at ``t_step`` [s]; a proportional speed hold keeps ``target_speed``
    [m/s] with throttle only (``speed_gain`` [1/(m/s)])."""

    t_step: Any = 0.5
    ramp: Any = 0.1

    def steer(self, t, state):
        return self.amplitude * _ramp(t, self.t_step, self.ramp)


@pytree_dataclass
class SineSteer(SteerWithSpeedHold):
    """Sinusoidal steer ``amplitude sin(2 pi frequency (t - t_start))`` [rad] after ``t_start`` [s], with the
    speed hold of :class:`StepSteer`."""

    frequency: Any = 0.5
    t_start: Any = 0.5

    def steer(self, t, state):
        on = (t >= self.t_start).astype(jnp.result_type(state.vx))
        return on * self.amplitude * jnp.sin(2.0 * np.pi * self.frequency * (t - self.t_start))


@pytree_dataclass
class SlowlyIncreasingSteer(SteerWithSpeedHold):
    """The slowly increasing steer of FMVSS 126 S7.6 / UN R140: steer ``rate (t - t_start)`` [rad] after
    ``t_start`` [s] (``rate`` [rad/s] road-wheel: the regulation's 13.5 deg/s at the handwheel over the
    steering ratio), the speed held at ``target_speed`` [m/s] by the throttle (the regulation's 80 +- 2 km/h);
    ``amplitude`` is unused."""

    rate: Any = 0.015
    t_start: Any = 0.5

    def steer(self, t, state):
        return self.rate * jnp.maximum(t - self.t_start, 0.0) + jnp.zeros_like(state.vx)


@pytree_dataclass
class CircleFollower(Driver):
    """Constant-radius circle follower (skidpad driver).

    The circle has centre ``(center_x, center_y)`` [m] and radius ``|radius|`` [m]; ``radius > 0`` drives it
    counter-clockwise (turning left).  With the radial error ``e = |p - c| - |R|`` (positive outside), the
    heading error ``e_psi = wrap(psi - psi_tangent)`` and ``sigma = sign(R)``::

        steer = sigma L / |R| + sigma (k_e e + k_i int e dt) - k_psi e_psi,
        k_e = L w^2 / V^2,  k_psi = 2 zeta w L / V,  k_i = k_e / t_i     (V = max(vx, 2 m/s))

    i.e. a kinematic feed-forward plus a speed-scheduled PI on the path error with natural frequency
    ``bandwidth`` ``w`` [rad/s] and damping ``zeta``; the integral (the driver's state, limited to
    +-``0.3 / k_i`` rad worth of steer) removes the understeer offset, so the car settles on the circle.
    Speed: throttle ``clip(speed_gain (target_speed - V), 0, 1)`` plus ``throttle_ff``.
    """

    radius: Any = 40.0
    target_speed: Any = 10.0
    center_x: Any = 0.0
    center_y: Any = 40.0
    bandwidth: Any = 1.0
    zeta: Any = 0.9
    t_integral: Any = 2.0
    speed_gain: Any = 0.5
    throttle_ff: Any = 0.0

    def __call__(self, t, state, params, dstate, dt):
        ch = params.chassis
        L = ch.cg_to_front + ch.cg_to_rear
        sigma = jnp.sign(self.radius)
        rad = jnp.abs(self.radius)
        e = radial_error(state, self.center_x, self.center_y, self.radius)
        theta = jnp.arctan2(state.y - self.center_y, state.x - self.center_x)
        e_psi = wrap_angle(state.yaw - (theta + sigma * 0.5 * np.pi))
        v = jnp.maximum(state.vx, 2.0)
        k_e = L * self.bandwidth**2 / (v * v)
        k_psi = 2.0 * self.zeta * self.bandwidth * L / v
        k_i = k_e / self.t_integral
        limit = 0.3 / k_i
        integ = jnp.clip(dstate + e * dt, -limit, limit)
        steer = sigma * L / rad + sigma * (k_e * e + k_i * integ) - k_psi * e_psi
        speed = jnp.sqrt(state.vx**2 + state.vy**2)
        throttle = speed_hold(self.target_speed, speed, self.speed_gain, self.throttle_ff)
        return Controls(steer, throttle, jnp.zeros_like(steer)), integ

    def init(self, params, state):
        """The integral of the radial error starts at zero."""
        return jnp.zeros_like(state.vx)


def brake_shares(ch, n: int):
    """Per wheel state (last axis ``n`` = 4 FL, FR, RL, RR or 2 front, rear): brake share of
    ``max_brake_torque`` [-], spin inertia [kg m^2] (both wheels of an axle for ``n = 2``) and lateral
    position ``y`` [m] of the contact from the CG (:func:`sims.vehicles.params.wheel_layout`)."""
    lay = wheel_layout(ch, n)
    return per_wheel_array(lay.brake), per_wheel_array(lay.inertia), per_wheel_array(lay.y)


def per_wheel(front, rear, n: int):
    """Per axle values ``front``, ``rear`` as per wheel state (last axis ``n``: 4 FL, FR, RL, RR or 2 front, rear)."""
    return jnp.stack([front] * (n // 2) + [rear] * (n // 2), axis=-1)


def load_ratio(ch, contact, state, n: int):
    """Per wheel state: axle load now over the static axle load [-] (:func:`sims.vehicles.core.axle_loads`
    at the state's speed and filtered ``ax`` on the road ``contact``: the longitudinal load transfer and the
    downforce)."""
    zero = jnp.zeros_like(state.vx)
    (ff, fr), (ff0, fr0) = axle_loads(ch, contact, state.vx, state.ax), axle_loads(ch, contact, zero, zero)
    return per_wheel(ff / jnp.maximum(ff0, 1.0), fr / jnp.maximum(fr0, 1.0), n)


def peak_tables(params, n: int):
    """``(kappa_peak, force_peak)``: peak braking slip [-] and peak braking force [N] of each wheel state's
    scaled tire (:func:`sims.vehicles.grip.peak_braking`) at its static load on every surface of
    ``params.surfaces``, both of shape ``(..., n, n_surfaces)`` (``n = 2``: both tires of the axle)."""
    ch = params.chassis
    zero = jnp.zeros_like(ch.mass)
    ff, fr = axle_loads(ch, params.contact, zero, zero)
    k_rows, f_rows = [], []
    for tire, scale, load in ((params.tire_front, ch.tire_scale_front, ff), (params.tire_rear, ch.tire_scale_rear, fr)):
        fz = jnp.maximum(0.5 * load, 1.0)[..., None]  # one tire; the surface table on the last axis
        k, mu = peak_braking(scale_tire(tire, *scale), fz, params.surfaces)
        k_rows += [k] * (n // 2)
        f_rows += [mu * fz * (4 // n)] * (n // 2)
    return jnp.stack(k_rows, axis=-2), jnp.stack(f_rows, axis=-2)


@pytree_dataclass
class StraightBraking(Driver):
    """Straight-line braking from ``t_brake`` [s]: full pedal ``brake`` with locked wheels when
    ``abs_on = 0``, or a per-wheel ABS slip controller when ``abs_on = 1`` (a float, so a fleet can mix).

    ABS: a feed-forward plus a PI controller on each wheel's slip velocity, aiming just below the peak of
    its tire's braking curve on the surface under it (driver state: the integral part ``b_I`` of each
    wheel's brake command, initially 0, and the peak tables)::

        u_i     = vx - r y_i                               the wheel's own ground speed [m/s]
        sigma_i = u_i - omega_i Re_i                       slip velocity [m/s]
        k*_i    = max((1 - target_slip) kappa_peak,i, min_slip)
        e_i     = sigma_i - (k*_i |u_i| + slip_offset)
        b_i     = clip(F_peak,i R_i / T_i + b_I,i - k_p,i e_i, 0, brake),  db_I,i/dt = -k_i,i e_i  (|b_I| <= brake)
        k_p,i   = 2 zeta w I_i / (R_i T_i),  k_i,i = w^2 I_i / (R_i T_i)
        (Re_i the tire's effective rolling radius at the static load, :func:`sims.vehicles.core.rolling_radii`,
        as the model's slip uses it; R_i the wheel radius, the brake's torque arm)
        F_peak,i = F_peak,i(static load) Fz_axle(vx, a_x) / Fz_axle(0, 0)     (load_ratio)

    ``kappa_peak,i`` and ``F_peak,i`` are the slip at which the wheel's tire (with the vehicle's tire
    scale) brakes hardest and that force, at its static load on the surface its contact is on now
    (:func:`peak_tables`, computed once by ``init`` for every surface of the table; the surface from
    :func:`sims.vehicles.road.on_road`, so a surface change along the road is followed at once).  The
    feed-forward is the brake command that balances the peak force, scaled with the axle's load now (the
    state's filtered ``a_x``: the load transfer of the stop moves ~50 % of a front wheel's load on dry
    asphalt; the PI alone corrects that only slowly, because before the peak the tire's slip stiffness,
    ``C_kappa R^2 / (I |u|)``, not the wheel inertia, sets the wheel's response, so its integral action
    is slower than ``w`` by that ratio); the PI trims the rest (load sensitivity, wheel inertia), so the
    wheels neither lock at the start nor after a change to a slippery surface.  ``slip_offset`` [m/s] is
    a small slip-velocity margin; it is a slip of ``slip_offset / |u|``, so it must stay small next to
    the ice peak (0.05 m/s put the ice wheels at 1.5-3 times their peak slip below 4 m/s).
    The peak moves with the surface (~0.15 dry, ~0.045 snow, ~0.018 ice for the bundled tire), so one
    fixed target cannot fit every surface: on ice a target of a few per cent is already far past the peak.  This is an idealised ABS that knows its tire and the
    surface (a production ABS estimates them from the wheel decelerations); ``target_slip`` is how far
    below the peak slip it aims (a fraction; the force curve is flat there), ``min_slip`` a floor.  ``T_i``
    is the wheel's brake torque at full pedal, ``I_i`` its inertia and ``w`` [rad/s] the loop bandwidth,
    so the loop ``I domega/dt = -b T + ...`` has the same dynamics on every wheel of every car.  Below
    ``abs_off_speed`` [m/s] the ABS fades out to the full pedal (as production ABS does near standstill).
    ``select_low_rear`` (1: on, 0: off, a float) gives both rear wheels of the double track the lower of
    their two commands, as production ABS does: on split-mu the rear keeps its side grip and the yaw
    moment comes from the front axle only.  Yaw stability: braking at the peak slip leaves a tire little
    side force, so a rear axle braked that hard lets the car spin (the rear-braked kart does from
    100 km/h); the rear target slip is divided by ``1 + |r - vx delta / L| / yaw_rate_ref`` (``r`` the yaw
    rate, ``vx delta / L`` the kinematic yaw rate of the held steer, ``yaw_rate_ref`` [rad/s]), so the rear
    gives up braking for side grip as soon as the car starts to yaw.  The steering is held at ``steer``.
    """

    abs_on: Any = 0.0
    brake: Any = 1.0
    t_brake: Any = 0.0
    steer: Any = 0.0
    target_slip: Any = 0.08
    min_slip: Any = 0.005
    slip_offset: Any = 0.01
    bandwidth: Any = 30.0
    zeta: Any = 0.7
    abs_off_speed: Any = 1.0
    select_low_rear: Any = 1.0
    yaw_rate_ref: Any = 0.05

    def init(self, params, state):
        return (jnp.zeros_like(state.omega),) + peak_tables(params, state.omega.shape[-1])

    def rear_scale(self, state, ch, n: int):
        """Per wheel state: 1 on the front axle, ``1 / (1 + |r - vx delta / L| / yaw_rate_ref)`` on the rear."""
        r_ref = state.vx * jnp.asarray(self.steer) / (ch.cg_to_front + ch.cg_to_rear)
        rear = 1.0 / (1.0 + jnp.abs(state.yaw_rate - r_ref) / self.yaw_rate_ref)
        return per_wheel(jnp.ones_like(rear), rear, n)

    def __call__(self, t, state, params, dstate, dt):
        ch = params.chassis
        b_prev, k_table, f_table = dstate
        n = state.omega.shape[-1]
        r = wheel_radii(ch, n)
        share, inertia, y = brake_shares(ch, n)
        contact = on_road(params, state).contact
        ids = contact.surface_ids
        ids = ids if n == 4 else ids[..., ::2]  # the single track: the left wheel's surface per axle
        k_peak, f_peak = (jnp.take_along_axis(tb, ids[..., None], axis=-1)[..., 0] for tb in (k_table, f_table))
        f_peak = f_peak * load_ratio(ch, contact, state, n)
        torque = jnp.maximum(ch.max_brake_torque * share, 1.0)
        gain = inertia / (r * torque)
        kp = 2.0 * self.zeta * self.bandwidth * gain
        ki = self.bandwidth**2 * gain
        u = state.vx[..., None] - state.yaw_rate[..., None] * y
        k_star = jnp.maximum((1.0 - self.target_slip) * k_peak * self.rear_scale(state, ch, n), self.min_slip)
        re = rolling_radii(params, n, state.omega)  # the slip's radius (a calibrated ECU constant), not the arm r
        err = (u - state.omega * re) - (k_star * jnp.abs(u) + self.slip_offset)
        b_int = jnp.clip(b_prev - ki * err * dt, -self.brake, self.brake)
        b_abs = jnp.clip(f_peak * r / torque + b_int - kp * err, 0.0, self.brake)
        if n == 4:  # select-low on the rear axle: both rear wheels get the lower command
            low = jnp.minimum(b_abs[..., 2], b_abs[..., 3])[..., None]
            sl = self.select_low_rear
            b_abs = jnp.concatenate([b_abs[..., :2], sl * low + (1.0 - sl) * b_abs[..., 2:]], axis=-1)
        fade = jnp.clip(u / self.abs_off_speed, 0.0, 1.0)
        b_abs = fade * b_abs + (1.0 - fade) * self.brake
        on = (t >= self.t_brake).astype(b_abs.dtype)
        b = on * (self.abs_on * b_abs + (1.0 - self.abs_on) * self.brake)
        steer = jnp.asarray(self.steer, b.dtype) + jnp.zeros_like(state.vx)
        return Controls(steer, jnp.zeros_like(state.vx), b), (jnp.where(on > 0, b_int, b_prev), k_table, f_table)


@pytree_dataclass
class LaneHoldBraking(StraightBraking):
    """:class:`StraightBraking` with a driver who steers to hold the start line (ground ``Y = 0``, heading 0),
    as a split-mu braking test allows (ISO 14512): the look-ahead law of :class:`PathFollower` on a
    straight path::

        steer = -k_y (Y + x_la psi),   x_la = x_preview + t_preview max(vx, 1 m/s)

    ``k_y`` [rad/m], ``x_preview`` [m], ``t_preview`` [s]; the brakes as :class:`StraightBraking`."""

    k_y: Any = 0.1
    x_preview: Any = 5.0
    t_preview: Any = 0.5

    def __call__(self, t, state, params, dstate, dt):
        c, d = super().__call__(t, state, params, dstate, dt)
        x_la = self.x_preview + self.t_preview * jnp.maximum(state.vx, 1.0)
        steer = -self.k_y * (state.y + x_la * wrap_angle(state.yaw))
        return c._replace(steer=steer), d


def lane_reference(x, x0, length, width):
    """``(y_ref, dy/dx, d2y/dx2)`` of the cosine lane change from ``y = 0`` to ``width`` over ``x0 .. x0 + length``."""
    s = jnp.clip((x - x0) / length, 0.0, 1.0)
    inside = ((x > x0) & (x < x0 + length)).astype(jnp.result_type(x))
    y = 0.5 * width * (1.0 - jnp.cos(np.pi * s))
    dy = inside * 0.5 * width * np.pi / length * jnp.sin(np.pi * s)
    d2y = inside * 0.5 * width * (np.pi / length) ** 2 * jnp.cos(np.pi * s)
    return y, dy, d2y


@pytree_dataclass
class LaneChangeDriver(Driver):
    """Single-lane-change path follower (tuned by :func:`sims.studies.tuning.tune_lateral`).

    Follows :func:`lane_reference` with a curvature feed-forward and feedback on the lateral error
    ``e_y`` [m] at a preview ``t_preview v``, the heading error ``e_psi = wrap(psi - atan(dy/dx))`` and the
    yaw-rate error::

        steer = L kappa - k_y (e_y + t_preview v e_psi) - k_psi e_psi - k_r (r - v kappa)

    Gains ``k_y`` [rad/m], ``k_psi`` [-],
    ``t_preview`` [s], ``k_r`` [s]; path ``x0`` [m] start, ``length`` [m], ``width`` [m] (positive: to the
    left); speed hold at ``target_speed`` [m/s] with ``speed_gain`` [1/(m/s)]."""

    k_y: Any = 0.1
    k_psi: Any = 0.5
    t_preview: Any = 0.3
    k_r: Any = 0.0
    x0: Any = 10.0
    length: Any = 40.0
    width: Any = 3.5
    target_speed: Any = 20.0
    speed_gain: Any = 0.5

    def controls(self, t, state, params):
        ch = params.chassis
        L = ch.cg_to_front + ch.cg_to_rear
        y, dy, d2y = lane_reference(state.x, self.x0, self.length, self.width)
        kappa = d2y / (1.0 + dy * dy) ** 1.5
        e_y = state.y - y
        e_psi = wrap_angle(state.yaw - jnp.arctan(dy))
        v = jnp.maximum(state.vx, 1.0)
        steer = (
            L * kappa
            - self.k_y * (e_y + self.t_preview * v * e_psi)
            - self.k_psi * e_psi
            - self.k_r * (state.yaw_rate - v * kappa)
        )
        throttle = speed_hold(self.target_speed, state.vx, self.speed_gain)
        return Controls(steer, throttle, jnp.zeros_like(steer))


@pytree_dataclass
class PathFollower(Driver):
    """Follows a :class:`sims.roads.path.Path` (open or closed, of any length) at a target speed.

    Each step the vehicle's CG is projected onto the path (:func:`sims.roads.path.project`, searching a
    window around the last station, the driver's state ``s`` [m]): lateral error ``e_y`` [m] (positive left
    of the path), heading error ``e_psi = wrap(psi + course atan(vy / V) - heading(s))``: ``course = 0`` the
    body's heading (the default: the yaw damping a driver needs near the limit, e.g. in a double lane
    change), ``course = 1`` the velocity's direction, which is zero in steady cornering on the path whatever
    the body slip angle, so the look-ahead term leaves no steady offset on long curves (circuits).  Steering (road-wheel angle) is a
    curvature feed-forward plus a look-ahead feedback (Kapania and Gerdes, *Vehicle System Dynamics* 53,
    2015: the lateral error projected ``x_la`` ahead)::

        kappa_ff = kappa(s + t_ff V)                      the path's curvature slightly ahead
        steer    = atan(L kappa_ff) + understeer V^2 kappa_ff - k_y (e_y + x_la e_psi) - k_psi e_psi
        x_la     = x_preview + t_preview V,   V = max(vx, 1 m/s)

    ``L`` the wheelbase [m]; ``understeer`` [rad/(m/s^2)] the understeer gradient to add to the kinematic
    steer (0: the feedback takes it up); ``k_y`` [rad/m], ``k_psi`` [-], ``x_preview`` [m], ``t_preview`` [s],
    ``t_ff`` [s].  Speed: the target ``v_t = (1 - profile) target_speed + profile speed(s)`` (``speed(s)`` the
    path's profile) held with ``throttle = clip(speed_gain (v_t - V), 0, 1)`` and ``brake =
    clip(brake_gain (V - v_t), 0, 1)`` (``brake_gain = 0``: no braking).  In a fleet the path is one per
    vehicle (every leaf with the vehicle axis; :func:`sims.run.fleet.fleet_start` copies it)."""

    path: Any
    target_speed: Any = 20.0
    speed_gain: Any = 0.5
    brake_gain: Any = 0.0
    profile: Any = 0.0
    k_y: Any = 0.1
    k_psi: Any = 0.0
    x_preview: Any = 5.0
    t_preview: Any = 0.5
    t_ff: Any = 0.1
    understeer: Any = 0.0
    course: Any = 0.0

    def init(self, params, state):
        """The station of the start: the nearest point over the whole path."""
        return project(self.path, state.x, state.y).s

    def __call__(self, t, state, params, dstate, dt):
        ch = params.chassis
        L = ch.cg_to_front + ch.cg_to_rear
        pr = project(self.path, state.x, state.y, dstate)
        v = jnp.maximum(state.vx, 1.0)
        e_psi = heading_error(state.yaw + self.course * jnp.arctan2(state.vy, v), pr.heading)
        k_ff = sample(self.path, pr.s + self.t_ff * v).curvature
        x_la = self.x_preview + self.t_preview * v
        steer = (
            jnp.arctan(L * k_ff)
            + self.understeer * v * v * k_ff
            - self.k_y * (pr.e_y + x_la * e_psi)
            - self.k_psi * e_psi
        )
        target = (1.0 - self.profile) * self.target_speed + self.profile * pr.speed
        speed = jnp.sqrt(state.vx**2 + state.vy**2)
        throttle = speed_hold(target, speed, self.speed_gain)
        brake = jnp.clip(self.brake_gain * (speed - target), 0.0, 1.0)
        return Controls(steer, throttle, brake), pr.s


def engine_force(ch, omega, n: int):
    """Largest drive force [N] at the driven wheels' spin ``omega`` [rad/s] (per wheel state, last axis ``n``):
    ``T P / (R sqrt(P^2 + (T w_d)^2))``, ``w_d`` the drive-share weighted spin, as the vehicle step applies the
    throttle (:func:`sims.vehicles.core.drive_torque`, the torque-power fade; ``R`` the driven wheels' radius, the
    torque's arm)."""
    lay = wheel_layout(ch, n)
    drive = per_wheel_array(lay.drive)
    w_d = jnp.sum(drive * omega, axis=-1)
    r = jnp.sum(drive * per_wheel_array(lay.radius), axis=-1)
    return drive_torque(ch, 1.0, w_d) / r


def brake_force(ch):
    """Largest brake force [N] of the pedal, ``T_b / r`` (``r`` the wheels' radius by ``brake_bias_front``)."""
    b = ch.brake_bias_front
    return ch.max_brake_torque / (b * ch.wheel_radius_front + (1.0 - b) * ch.wheel_radius_rear)


@pytree_dataclass
class LapFollower(Driver):
    """A driver at the limit on a closed line with a speed profile (the transient lap, :mod:`sims.scenarios.lap`).

    Steering: curvature feed-forward (kinematic plus understeer gradient), look-ahead feedback whose gains are
    scheduled with the speed so that the path error of a kinematic car is a second-order loop of natural
    frequency ``bandwidth`` ``w`` [rad/s] and damping ``zeta`` at every speed (as :class:`CircleFollower`), and a
    yaw-rate damping term::

        kappa_ff = kappa(s + t_ff V)
        steer    = atan(L kappa_ff) + understeer V^2 kappa_ff - k_e (e_y + x_la e_psi) - k_r (r - V kappa(s))
        k_e = L w^2 / V^2,   x_la = 2 zeta V / w       (k_e x_la = 2 zeta w L / V)

    ``e_psi`` the course error (``course = 1``: the velocity's direction, zero in steady cornering whatever the
    body slip angle).  The constant gains of :class:`PathFollower` (``k_y x_la`` ~3 rad/rad at 55 m/s) made
    a weakly damped yaw mode unstable on the straights (the race car spun at 0.6 of the profile).  The yaw-rate
    term ``k_r`` [s] is the driver's counter-steer: with the 0.05 s of the first version the race car's rear
    stepped out under trail braking into Spielberg's last corner at 0.95 of its grip and spun; 0.4 s holds it.

    Speed: the profile's acceleration as feed-forward plus a proportional feedback, turned into pedal by the
    car's own engine and brake forces (:func:`engine_force`, :func:`brake_force`)::

        v_t  = speed(s + t_speed V)                              the profile a little ahead (pedal lag)
        a_t  = (speed(s2)^2 - v_t^2) / (2 (s2 - s1)),  s1 = s + t_speed V,  s2 = s1 + t_ff V + 1 m
        F    = m (a_t + accel_gain (v_t - V)) + 1/2 rho CdA V^2 - m g_x
        throttle = clip(F / F_engine(omega), 0, 1) c(max_i kappa_i),   brake = clip(-F / F_brake, 0, 1) c(max_i -kappa_i)
        c(k) = clip((2 slip_limit - k) / slip_limit, 0, 1)

    ``c`` is the driver's feel for wheelspin and lockup (a race driver modulates the pedals at the limit; no
    traction control or ABS on the car): full pedal while every wheel's slip ratio ``kappa_i = (omega_i Re_i -
    u_i) / |u_i|`` (``Re`` :func:`sims.vehicles.core.rolling_radii`, ``u_i`` the wheel's ground speed) stays
    below ``slip_limit`` [-], none at twice it.  Without it the open differential's unloaded inner rear wheel
    spun up on the exit of a hairpin and the car spun at 0.95 of the profile.

    Fields: ``path`` (:class:`sims.roads.path.Path` with its speed profile; one per vehicle in a fleet),
    ``understeer`` [rad/(m/s^2)], ``t_ff`` [s] the feed-forward's look-ahead, ``accel_gain`` [1/s] the speed
    feedback (an acceleration per speed error; :class:`PathFollower`'s ``speed_gain`` is a pedal per m/s, so the
    two carry different names), ``bandwidth`` [rad/s], ``zeta`` [-], ``k_r`` [s], ``t_speed`` [s], ``course``
    [-] (1: the course error from the velocity's direction), ``slip_limit`` [-]."""

    path: Any
    understeer: Any = 0.0
    t_ff: Any = 0.1
    accel_gain: Any = 2.0
    bandwidth: Any = 3.0
    zeta: Any = 0.9
    k_r: Any = 0.4
    t_speed: Any = 0.1
    course: Any = 1.0
    slip_limit: Any = 0.1

    init = PathFollower.init  # the station of the start: the nearest point over the whole path

    def __call__(self, t, state, params, dstate, dt):
        ch = params.chassis
        L = ch.cg_to_front + ch.cg_to_rear
        pr = project(self.path, state.x, state.y, dstate)
        v = jnp.maximum(jnp.sqrt(state.vx**2 + state.vy**2), 1.0)
        e_psi = heading_error(state.yaw + self.course * jnp.arctan2(state.vy, jnp.maximum(state.vx, 1.0)), pr.heading)
        k_ff = sample(self.path, pr.s + self.t_ff * v).curvature
        k_e = L * self.bandwidth**2 / (v * v)
        x_la = 2.0 * self.zeta * v / self.bandwidth
        steer = (
            jnp.arctan(L * k_ff)
            + self.understeer * v * v * k_ff
            - k_e * (pr.e_y + x_la * e_psi)
            - self.k_r * (state.yaw_rate - v * pr.curvature)
        )
        s1 = pr.s + self.t_speed * v
        s2 = s1 + self.t_ff * v + 1.0
        v1, v2 = sample(self.path, s1).speed, sample(self.path, s2).speed
        a_t = (v2 * v2 - v1 * v1) / (2.0 * (s2 - s1))
        gx = gravity(params.contact)[0]
        force = ch.mass * (a_t + self.accel_gain * (v1 - v) - gx) + 0.5 * ch.air_density * ch.drag_area * v * v
        n = state.omega.shape[-1]
        y = brake_shares(ch, n)[2]
        u = state.vx[..., None] - state.yaw_rate[..., None] * y
        slip = (state.omega * rolling_radii(params, n, state.omega) - u) / jnp.maximum(jnp.abs(u), 1.0)
        s_lim = self.slip_limit
        cut = lambda k: jnp.clip((2.0 * s_lim - jnp.max(k, axis=-1)) / s_lim, 0.0, 1.0)  # noqa: E731
        throttle = jnp.clip(force / engine_force(ch, state.omega, n), 0.0, 1.0) * cut(slip)
        brake = jnp.clip(-force / brake_force(ch), 0.0, 1.0) * cut(-slip)
        return Controls(steer, throttle, brake), pr.s


def sine_with_dwell(t, amplitude, frequency=0.7, dwell=0.5, t_start=0.0):
    """Steer [rad] of the sine with dwell (FMVSS 126 S7.9, UN R140): ``amplitude sin(2 pi f tau)``, ``tau = t -
    t_start``, for ``0 <= tau < 3 / (4 f)``; held at ``-amplitude`` for ``dwell`` [s] (the second peak); then
    the last quarter of the sine back to 0 at ``tau = 1 / f + dwell``; 0 before and after."""
    tau = t - t_start
    t_peak = 0.75 / frequency
    phase = jnp.where(tau < t_peak, tau, jnp.where(tau < t_peak + dwell, t_peak, tau - dwell))
    on = (tau >= 0.0) & (tau < 1.0 / frequency + dwell)
    return jnp.where(on, amplitude * jnp.sin(2.0 * np.pi * frequency * phase), 0.0)


@pytree_dataclass
class SineWithDwell(Driver):
    """The sine-with-dwell steer of :func:`sine_with_dwell` (``amplitude`` [rad] road-wheel angle, positive
    first: a left turn; ``frequency`` [Hz], ``dwell`` [s], from ``t_start`` [s]); throttle released and no
    brake (the regulation's coast), or ``throttle`` held."""

    amplitude: Any = 0.05
    frequency: Any = 0.7
    dwell: Any = 0.5
    t_start: Any = 0.0
    throttle: Any = 0.0

    def controls(self, t, state, params):
        steer = sine_with_dwell(t, self.amplitude, self.frequency, self.dwell, self.t_start) + jnp.zeros_like(state.vx)
        return Controls(steer, jnp.asarray(self.throttle) + jnp.zeros_like(steer), jnp.zeros_like(steer))
