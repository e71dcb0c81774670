"""The sine with dwell of FMVSS 126 (49 CFR 571.126 S7.9) and UN R140: the stability-control test.

Each vehicle coasts at ``speed`` (default 80 km/h, throttle released) and gets the steer of
:class:`sims.drivers.SineWithDwell` (0.7 Hz, 500 ms dwell at the second peak) with the amplitude ``scale``
x ``A``.  ``A`` is the road-wheel angle at 0.3 g in the slowly increasing steer test (S7.6), which the
scenario runs itself on every vehicle, in the same fleet computation (:func:`sis_steer`): at ``speed``
held by the throttle, the handwheel turns at 13.5 deg/s (road wheel: over the setting ``steering_ratio``)
and the line fitted to steer against lateral acceleration between 0.1 g and 0.375 g gives the steer at
0.3 g.  ``steer_03g`` [rad] > 0 sets ``A`` directly; the static option ``amplitude="bicycle"`` is the
pre-regulation rule of earlier releases (the linear bicycle's ``(L / v^2 + K_us) 0.3 g``,
:func:`bicycle_steer`: 13-23 % smaller than the SIS for the presets, a milder test).  The regulation's
amplitudes run from 1.5 A to 6.5 A; the displacement criterion applies from 5 A.

Measured (:class:`SineDwellReducer`), with BOS the beginning of steer (the handwheel first at 5 deg, i.e.
``5 deg / steering_ratio`` of road-wheel angle; ``beginning="onset"``: the start of the sine, the earlier
rule), ``T0`` the completion of steer (COS, ``1 / f + dwell`` after the start of the sine) and ``r_peak``
the first local peak of the yaw rate after the steer changes sign (S5.2.1; in the direction of the second
half-wave; ``yaw_peak="window"``: the earlier rule, the extreme between the sign change and COS, which for a
car that spins is a later, larger value)::

    yaw_ratio_100 = |r(T0 + 1.00 s)| / r_peak  <= 0.35      (S5.2.1)
    yaw_ratio_175 = |r(T0 + 1.75 s)| / r_peak  <= 0.20      (S5.2.2)
    lateral_displacement = Y(BOS + 1.07 s)   >= 1.83 m      (S5.2.3, GVWR <= 3500 kg, amplitudes >= 5 A)

(``Y`` the lateral displacement of the centre of gravity from the initial straight path, positive in the
direction of the first steer).  A car whose yaw rate never reverses (it spun in the direction of the first
steer: ``r_peak`` below :data:`MIN_PEAK_YAW_RATE`) has no ratio: both are reported ``inf`` and it fails.
Passed: all three (the third only for ``scale >= 5``).  The metric ``sis_steer`` reports each vehicle's
``A``.  A regulation test reports the vehicle with its ESC and without: the fleet CLI runs both
(``python -m sims --scenario sine_with_dwell``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp

from jaxtire.constants import GRAVITY
from jaxtire.tire import linear_stiffness, scale_tire
from sims.drivers import SineWithDwell, SlowlyIncreasingSteer, pytree_dataclass
from sims.run.fleet import fleet_rollout, fleet_size, fleet_start, make_fleet
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.scenarios.config import check_config
from sims.vehicles.core import axle_loads
from sims.vehicles.params import VehicleParams

#: FMVSS 126 S5.2: yaw-rate ratios at 1.00 s and 1.75 s after COS, lateral displacement at 1.07 s after BOS.
YAW_RATIO_100, YAW_RATIO_175, DISPLACEMENT = 0.35, 0.20, 1.83
#: The smallest first peak [rad/s] of the reversed yaw rate that defines the ratios (0.06 deg/s; a car whose yaw
#: rate never reverses, one that spun in the first direction, gets ratios of ``inf``).
MIN_PEAK_YAW_RATE = 1e-3
#: Times [s] of the criteria.
T_100, T_175, T_DISP = 1.00, 1.75, 1.07
#: Lateral acceleration [m/s^2] of the amplitude ``A`` (0.3 g).
AY_03G = 0.3 * GRAVITY
#: FMVSS 126 S7.6.1: the handwheel rate of the slowly increasing steer [deg/s]; the fit uses the lateral
#: accelerations between 0.1 g and 0.375 g [m/s^2].
SIS_RATE_DEG, SIS_AY_LOW, SIS_AY_HIGH = 13.5, 0.1 * GRAVITY, 0.375 * GRAVITY
#: The handwheel angle [deg] whose first crossing is the beginning of steer (BOS).
BOS_HANDWHEEL_DEG = 5.0
#: Default steering ratio [-] (handwheel over road-wheel angle) of the ``steering_ratio`` setting.
STEERING_RATIO = 16.0
#: Duration [s] of the slowly increasing steer run: 0.5 s straight, then the ramp; at 13.5 deg/s over 16:1 the
#: road wheels reach 4.4 deg in 5.5 s, beyond the 0.375 g steer of any car the presets span.
SIS_TIME = 6.0


def understeer_gradient(params: VehicleParams):
    """``K_us = (m / L) (b / C_f - a / C_r)`` [rad s^2/m] of the linear bicycle, ``C_f``, ``C_r`` [N/rad] the
    axles' cornering stiffnesses (two tires each, :func:`jaxtire.tire.linear_stiffness` at the static
    loads with the vehicle's tire scales, on the surface table's entry 0)."""
    ch = params.chassis
    z = jnp.zeros_like(ch.mass)
    ff, fr = axle_loads(ch, params.contact, z, z)
    cf = 2.0 * linear_stiffness(scale_tire(params.tire_front, *ch.tire_scale_front), 0.5 * ff)[1]
    cr = 2.0 * linear_stiffness(scale_tire(params.tire_rear, *ch.tire_scale_rear), 0.5 * fr)[1]
    L = ch.cg_to_front + ch.cg_to_rear
    return ch.mass / L * (ch.cg_to_rear / cf - ch.cg_to_front / cr)


def bicycle_steer(params: VehicleParams, speed, ay=AY_03G):
    """Road-wheel angle [rad] of the linear bicycle in a steady turn at ``speed`` [m/s] and lateral
    acceleration ``ay`` [m/s^2]: ``ay (L / v^2 + K_us)`` (:func:`understeer_gradient`)."""
    ch = params.chassis
    return ay * ((ch.cg_to_front + ch.cg_to_rear) / (speed * speed) + understeer_gradient(params))


class SisAcc(NamedTuple):
    """Sums of the least-squares line ``steer = c0 + c1 ay`` over the samples with 0.1 g <= ay <= 0.375 g."""

    n: Any
    a: Any
    s: Any
    aa: Any
    as_: Any


@pytree_dataclass
class SisReducer:
    """In-scan least-squares sums of the slowly increasing steer (``ay`` from the telemetry, ``steer`` the
    road-wheel angle the driver gave) over ``low <= ay <= high`` [m/s^2] once the ramp has begun."""

    low: Any = SIS_AY_LOW
    high: Any = SIS_AY_HIGH

    def init(self, params, state) -> SisAcc:
        z = jnp.zeros_like(state.vx)
        return SisAcc(z, z, z, z, z)

    def update(self, acc: SisAcc, t, state, controls, tel, new, params, dt) -> SisAcc:
        ay, st = tel.ay, controls.steer
        w = ((ay >= self.low) & (ay <= self.high) & (st > 0.0)).astype(ay.dtype)
        return SisAcc(acc.n + w, acc.a + w * ay, acc.s + w * st, acc.aa + w * ay * ay, acc.as_ + w * ay * st)


def sis_fit(acc: SisAcc, ay=AY_03G):
    """The fitted line's steer [rad] at ``ay`` [m/s^2]; NaN for a vehicle with fewer than 2 samples in the band
    (it never reached 0.1 g, or jumped the band within one step)."""
    n = acc.n
    ok = n >= 2.0
    nn = jnp.where(ok, n, 1.0)
    ma, ms = acc.a / nn, acc.s / nn
    var = acc.aa / nn - ma * ma
    cov = acc.as_ / nn - ma * ms
    var_ok = ok & (var > 0.0)
    slope = cov / jnp.where(var_ok, var, 1.0)
    return jnp.where(var_ok, ms + slope * (ay - ma), jnp.nan)


def sis_steer(
    params: VehicleParams,
    speed=80.0 / 3.6,
    steering_ratio=STEERING_RATIO,
    *,
    dt=0.005,
    model="double_track",
    compiler_options=None,
    block="auto",
):
    """``A`` [rad], ``(n,)``: each vehicle's road-wheel angle at 0.3 g in the slowly increasing steer (S7.6) of
    the fleet ``params``: straight for 0.5 s, then the handwheel at 13.5 deg/s (``steering_ratio`` [-], scalar
    or per vehicle), the speed held at ``speed`` [m/s] by the throttle, for :data:`SIS_TIME`; the least-squares
    line of steer against lateral acceleration over 0.1-0.375 g (:class:`SisReducer`) evaluated at 0.3 g.
    Traceable (one fleet rollout with a reducer, no record): :class:`SineDwell` runs it inside its setup."""
    rate = jnp.deg2rad(SIS_RATE_DEG) / jnp.asarray(steering_ratio)
    m, state0, drv = fleet_start(
        params, model, SlowlyIncreasingSteer(), speed=speed, target_speed=speed, rate=rate, t_start=0.5
    )
    dtype = jnp.asarray(params.chassis.mass).dtype
    red = per_vehicle(SisReducer(), fleet_size(params), dtype)
    res = fleet_rollout(
        params,
        state0,
        drv,
        int(math.ceil(SIS_TIME / dt)),
        dt=dt,
        model=m,
        reducer=red,
        reducer_axes=0,
        compiler_options=compiler_options,
        block=block,
    )
    return sis_fit(res.reduced)


def slowly_increasing_steer(params: VehicleParams, speed=80.0 / 3.6, steering_ratio=STEERING_RATIO, **kw) -> float:
    """:func:`sis_steer` of one vehicle (not a fleet), as a float [rad]; ``kw`` those of :func:`sis_steer`."""
    return float(sis_steer(make_fleet(params, 1), speed, steering_ratio, **kw)[0])


class SineDwellAcc(NamedTuple):
    """Running accumulators of :class:`SineDwellReducer` (one value per vehicle)."""

    r_peak: Any
    r_100: Any
    r_175: Any
    y_disp: Any
    max_yaw: Any
    y0: Any
    yaw0: Any
    peaked: Any


@pytree_dataclass
class SineDwellReducer:
    """In-scan measurement of the sine with dwell (module docstring): ``sign`` [-] +1 when the first steer is
    to the left, ``t_start`` [s] the start of the sine, ``t_bos`` [s] BOS (the displacement's time origin),
    ``frequency`` [Hz], ``dwell`` [s]; ``first_peak`` 1: ``r_peak`` is the first local peak of the yaw rate
    after the steer changes sign (S5.2.1), 0: its extreme between the sign change and COS (earlier rule);
    ``steer_03g`` [rad] the vehicle's ``A`` (carried for the ``sis_steer`` metric)."""

    sign: Any = 1.0
    t_start: Any = 0.0
    t_bos: Any = 0.0
    frequency: Any = 0.7
    dwell: Any = 0.5
    first_peak: Any = 1.0
    steer_03g: Any = 0.0

    def init(self, params, state) -> SineDwellAcc:
        z = jnp.zeros_like(state.vx)
        return SineDwellAcc(z, z, z, z, z, state.y, state.yaw, z)

    def update(self, acc: SineDwellAcc, t, state, controls, tel, new, params, dt) -> SineDwellAcc:
        t1 = t + dt
        cos = self.t_start + 1.0 / self.frequency + self.dwell
        change = self.t_start + 0.5 / self.frequency

        def at(acc_v, target, v0, v1):  # the value at time target, interpolated inside the step that crosses it
            hit = (t < target) & (t1 >= target)
            return jnp.where(hit, v0 + (target - t) / dt * (v1 - v0), acc_v)

        r0 = -self.sign * state.yaw_rate  # the second half-wave's direction positive
        r1 = -self.sign * new.yaw_rate
        first = self.first_peak > 0.5
        # first peak: from the sign change until the yaw rate first falls (or the 1.00 s criterion); window: to COS
        window = (t1 > change) & jnp.where(first, (acc.peaked < 0.5) & (t1 <= cos + T_100), t1 <= cos)
        falls = window & (t > change) & (r1 < r0) & (r0 > 0.0)
        # the lateral displacement from the initial path, positive towards the first steer
        y_rel0 = self.sign * (state.y - acc.y0)
        y_rel1 = self.sign * (new.y - acc.y0)
        return SineDwellAcc(
            jnp.where(window, jnp.maximum(acc.r_peak, r1), acc.r_peak),
            at(acc.r_100, cos + T_100, r0, r1),
            at(acc.r_175, cos + T_175, r0, r1),
            at(acc.y_disp, self.t_bos + T_DISP, y_rel0, y_rel1),
            jnp.maximum(acc.max_yaw, jnp.abs(new.yaw - acc.yaw0)),
            acc.y0,
            acc.yaw0,
            jnp.where(falls, jnp.ones_like(acc.peaked), acc.peaked),
        )


SINE_DWELL_METRICS = (
    Metric("yaw_ratio_100", "-", "value", True, "yaw rate 1.00 s after the completion of steer over its first peak"),
    Metric("yaw_ratio_175", "-", "value", True, "yaw rate 1.75 s after the completion of steer over its first peak"),
    Metric("lateral_displacement", "m", "value", True, "lateral displacement 1.07 s after the beginning of steer"),
    Metric("peak_yaw_rate", "rad/s", "value", True, "first peak of the yaw rate after the steer changes sign"),
    Metric("sis_steer", "rad", "value", True, "A: road-wheel angle at 0.3 g in the slowly increasing steer"),
    Metric("spun", "-", "flag", False, "1 when the heading turned more than 90 degrees"),
    PASSED._replace(doc="1 when the FMVSS 126 S5.2 criteria hold (displacement only from 5 A)"),
)


#: The static options of :class:`SineDwell` and their allowed values (the first: the regulation's rule).
RULES = {"amplitude": ("sis", "bicycle"), "beginning": ("handwheel", "onset"), "yaw_peak": ("first", "window")}


@dataclasses.dataclass(frozen=True)
class SineDwell(ScenarioBase):
    """The sine with dwell (module docstring).  Settings: ``speed`` [m/s], ``scale`` [-] the amplitude in
    units of ``A``, ``steer_03g`` [rad] ``A`` (0: from the rule ``amplitude``), ``direction`` [-] +1 first
    steer left, -1 right, ``steering_ratio`` [-] handwheel over road-wheel angle (the SIS handwheel rate and
    the 5 deg of BOS).  Static: ``frequency`` [Hz], ``dwell`` [s], ``t_start`` [s], ``dt`` [s], ``max_time``
    [s], ``model``; the rules (:data:`RULES`, the regulation's first): ``amplitude`` ``"sis"`` (the scenario's
    own slowly increasing steer, :func:`sis_steer`) or ``"bicycle"`` (the earlier linear-bicycle rule),
    ``beginning`` ``"handwheel"`` (BOS at 5 deg of handwheel) or ``"onset"`` (the earlier rule), ``yaw_peak``
    ``"first"`` (first local peak) or ``"window"`` (the earlier extreme up to COS)."""

    name: str = "sine_with_dwell"
    frequency: float = 0.7
    dwell: float = 0.5
    t_start: float = 0.2
    dt: float = 0.005
    max_time: float = 5.0
    model: Any = "double_track"
    amplitude: str = "sis"
    beginning: str = "handwheel"
    yaw_peak: str = "first"
    settings: Any = dataclasses.field(
        default_factory=lambda: {
            "speed": 80.0 / 3.6,
            "scale": 6.5,
            "steer_03g": 0.0,
            "direction": 1.0,
            "steering_ratio": STEERING_RATIO,
        }
    )
    metrics: Any = SINE_DWELL_METRICS
    ranges: Any = dataclasses.field(
        default_factory=lambda: {
            "scale": (0.0, 20.0),
            "steer_03g": (0.0, 0.5),
            "direction": (-1.0, 1.0),
            "steering_ratio": (5.0, 40.0),
        }
    )

    def __post_init__(self):
        for field, allowed in RULES.items():
            value = getattr(self, field)
            if value not in allowed:
                raise ValueError(f"{self.name}: {field} = {value!r}; allowed {allowed} (the first is the regulation's)")

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, dt=self.dt, max_time=self.max_time)
        speed, ratio = settings["speed"], settings["steering_ratio"]
        if self.amplitude == "sis":
            rule = sis_steer(params, speed, ratio, dt=self.dt, model=self.model)
        else:
            rule = bicycle_steer(params, speed)
        a = jnp.where(settings["steer_03g"] > 0.0, settings["steer_03g"], rule)
        sign = jnp.where(settings["direction"] >= 0.0, 1.0, -1.0)
        amp = settings["scale"] * a
        t_bos = jnp.asarray(self.t_start, amp.dtype) + 0.0 * amp
        if self.beginning == "handwheel":  # the sine reaches 5 deg of handwheel (a quarter period at the latest)
            frac = jnp.clip(jnp.deg2rad(BOS_HANDWHEEL_DEG) / ratio / jnp.maximum(amp, 1e-9), 0.0, 1.0)
            t_bos = t_bos + jnp.arcsin(frac) / (2.0 * math.pi * self.frequency)
        drv = SineWithDwell(frequency=self.frequency, dwell=self.dwell, t_start=self.t_start)
        m, state0, drv = fleet_start(params, self.model, drv, speed=speed, amplitude=sign * amp)
        dtype = jnp.asarray(params.chassis.mass).dtype
        red = per_vehicle(
            SineDwellReducer(),
            fleet_size(params),
            dtype,
            sign=sign,
            t_start=self.t_start,
            t_bos=t_bos,
            frequency=self.frequency,
            dwell=self.dwell,
            first_peak=1.0 if self.yaw_peak == "first" else 0.0,
            steer_03g=a,
        )
        n_steps = max(1, int(math.ceil(self.max_time / self.dt)))
        return Setup(params, state0, drv, red, m, self.dt, n_steps)

    def evaluate(self, acc: SineDwellAcc, setup: Setup, settings) -> dict:
        # no reversal (the car turned on in the first direction): the ratios are undefined, reported inf
        # (failed; inf sorts last in a study's percentiles) instead of |r| / 0
        reversed_ = acc.r_peak >= MIN_PEAK_YAW_RATE
        peak = jnp.where(reversed_, acc.r_peak, 1.0)
        r100 = jnp.where(reversed_, jnp.abs(acc.r_100) / peak, jnp.inf)
        r175 = jnp.where(reversed_, jnp.abs(acc.r_175) / peak, jnp.inf)
        disp_ok = (acc.y_disp >= DISPLACEMENT) | (settings["scale"] < 5.0)
        passed = (r100 <= YAW_RATIO_100) & (r175 <= YAW_RATIO_175) & disp_ok
        dtype = acc.r_peak.dtype
        return dict(
            yaw_ratio_100=r100,
            yaw_ratio_175=r175,
            lateral_displacement=acc.y_disp,
            peak_yaw_rate=acc.r_peak,
            sis_steer=setup.reducer.steer_03g,
            spun=(acc.max_yaw > 0.5 * math.pi).astype(dtype),
            passed=passed.astype(dtype),
        )
