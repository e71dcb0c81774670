"""Full-throttle acceleration from rest (0-100 km/h, quarter mile) and the split-mu launch.

:class:`Acceleration`: every vehicle starts at rest and holds ``throttle`` (default full) with the steering
straight (:class:`sims.drivers.Constant`); :class:`AccelerationReducer` measures, per vehicle:

* ``time_to_speed`` [s]: when the speed first reaches ``target_speed`` (default 100 km/h), linearly
  interpolated inside the step (so it is a smooth function of the parameters), and ``distance_to_speed``
  [m] the path length travelled by then;
* ``quarter_time`` [s] and ``quarter_speed`` [m/s]: when the path length reaches ``distance`` (default a
  quarter mile, 402.336 m) and the speed there (the trap speed);
* passed: both reached within ``max_time``.

:class:`SplitMuLaunch`: the same start with the left wheels on the ``low`` surface (default ice) and the
right ones on the ``high`` surface (dry asphalt), steering held straight, for ``duration`` [s]; metrics
``speed`` [m/s] at the end, the mean ``acceleration`` [m/s^2], ``max_yaw`` [rad] the largest heading change;
passed: the heading stayed within ``yaw_limit`` (the car did not turn away on the split).

Both work with and without a :class:`~sims.vehicles.driveline.Driveline` (without: the chassis' one-number
drive), so a Monte Carlo over a fleet (``run_scenario(..., fleet)``) compares them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp

from jaxtire.numerics import safe_norm
from jaxtire.surfaces import surface_id
from sims.drivers import Constant, pytree_dataclass
from sims.roads.contact import broadcast_contact
from sims.run.fleet import fleet_size, fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.scenarios.config import check_config
from sims.vehicles.params import VehicleParams

#: A quarter mile [m].
QUARTER_MILE = 402.336


class AccelerationAcc(NamedTuple):
    """Running accumulators of :class:`AccelerationReducer` (one value per vehicle)."""

    distance: Any
    time_to_speed: Any
    distance_to_speed: Any
    quarter_time: Any
    quarter_speed: Any
    max_yaw: Any
    yaw0: Any
    speed: Any


def _crossing(t, dt, a0, a1, level):
    """``(crossed, time)``: whether ``a`` went from below ``level`` to at least it over the step, and when
    (linear interpolation between ``a0`` at ``t`` and ``a1`` at ``t + dt``)."""
    crossed = (a0 < level) & (a1 >= level)
    frac = (level - a0) / jnp.where(crossed, a1 - a0, 1.0)
    return crossed, t + jnp.clip(frac, 0.0, 1.0) * dt


@pytree_dataclass
class AccelerationReducer:
    """In-scan measurement of an acceleration run (module docstring): ``target_speed`` [m/s], ``distance`` [m]."""

    target_speed: Any = 100.0 / 3.6
    distance: Any = QUARTER_MILE

    def init(self, params, state) -> AccelerationAcc:
        z = jnp.zeros_like(state.vx)
        inf = z + jnp.inf
        return AccelerationAcc(z, inf, inf, inf, z, z, state.yaw, z)

    def update(self, acc: AccelerationAcc, t, state, controls, tel, new, params, dt) -> AccelerationAcc:
        v0 = safe_norm(state.vx, state.vy)
        v1 = safe_norm(new.vx, new.vy)
        s1 = acc.distance + 0.5 * (v0 + v1) * dt
        hit_v, t_v = _crossing(t, dt, v0, v1, self.target_speed)
        hit_v = hit_v & ~jnp.isfinite(acc.time_to_speed)
        hit_s, t_s = _crossing(t, dt, acc.distance, s1, self.distance)
        hit_s = hit_s & ~jnp.isfinite(acc.quarter_time)
        frac_v = (t_v - t) / dt
        return AccelerationAcc(
            s1,
            jnp.where(hit_v, t_v, acc.time_to_speed),
            jnp.where(hit_v, acc.distance + frac_v * (s1 - acc.distance), acc.distance_to_speed),
            jnp.where(hit_s, t_s, acc.quarter_time),
            jnp.where(hit_s, v0 + (t_s - t) / dt * (v1 - v0), acc.quarter_speed),
            jnp.maximum(acc.max_yaw, jnp.abs(new.yaw - acc.yaw0)),
            acc.yaw0,
            v1,
        )


ACCELERATION_METRICS = (
    Metric("time_to_speed", "s", "value", True, "time from rest to target_speed (inf: not reached)"),
    Metric("distance_to_speed", "m", "value", True, "path length from rest to target_speed"),
    Metric("quarter_time", "s", "value", True, "time to cover distance (a quarter mile by default)"),
    Metric("quarter_speed", "m/s", "value", True, "speed at the end of distance (trap speed)"),
    PASSED._replace(doc="1 when target_speed and distance were both reached within max_time"),
)


@dataclasses.dataclass(frozen=True)
class Acceleration(ScenarioBase):
    """Full-throttle acceleration from rest (module docstring).  Settings: ``target_speed`` [m/s],
    ``distance`` [m], ``throttle`` [-].  Static: ``dt`` [s], ``max_time`` [s], ``model``."""

    name: str = "acceleration"
    dt: float = 0.005
    max_time: float = 40.0
    model: Any = "double_track"
    settings: Any = dataclasses.field(
        default_factory=lambda: {"target_speed": 100.0 / 3.6, "distance": QUARTER_MILE, "throttle": 1.0}
    )
    metrics: Any = ACCELERATION_METRICS
    ranges: Any = dataclasses.field(default_factory=lambda: {"distance": (1.0, 1e5), "throttle": (0.0, 1.0)})

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, dt=self.dt, max_time=self.max_time)
        m, state0, drv = fleet_start(params, self.model, Constant(), throttle=settings["throttle"])
        n = fleet_size(params)
        dtype = jnp.asarray(params.chassis.mass).dtype
        red = per_vehicle(
            AccelerationReducer(), n, dtype, target_speed=settings["target_speed"], distance=settings["distance"]
        )
        return Setup(params, state0, drv, red, m, self.dt, max(1, int(math.ceil(self.max_time / self.dt))))

    def evaluate(self, acc: AccelerationAcc, setup: Setup, settings) -> dict:
        passed = jnp.isfinite(acc.time_to_speed) & jnp.isfinite(acc.quarter_time)
        return dict(
            time_to_speed=acc.time_to_speed,
            distance_to_speed=acc.distance_to_speed,
            quarter_time=acc.quarter_time,
            quarter_speed=acc.quarter_speed,
            passed=passed.astype(acc.distance.dtype),
        )

    def done(self, acc: AccelerationAcc):
        return jnp.isfinite(acc.time_to_speed) & jnp.isfinite(acc.quarter_time)


SPLIT_MU_METRICS = (
    Metric("speed", "m/s", "value", True, "speed at the end of the launch"),
    Metric("acceleration", "m/s^2", "value", True, "mean acceleration over the launch (speed / duration)"),
    Metric("distance", "m", "value", True, "path length over the launch"),
    Metric("max_yaw", "rad", "value", True, "largest heading change from the start"),
    PASSED._replace(doc="1 when the heading stayed within yaw_limit"),
)


def split_mu(params: VehicleParams, low, high) -> VehicleParams:
    """The fleet with its left wheels (FL, RL) on surface ``low`` and its right ones on ``high`` (names or ids)."""
    ids = [surface_id(s) if isinstance(s, str) else int(s) for s in (low, high)]
    n = fleet_size(params)
    row = jnp.asarray([ids[0], ids[1], ids[0], ids[1]], jnp.int32)
    return params._replace(contact=broadcast_contact(params.contact, n, surface_ids=row))


@dataclasses.dataclass(frozen=True)
class SplitMuLaunch(ScenarioBase):
    """Launch from rest on split-mu (module docstring).  Settings: ``throttle`` [-], ``yaw_limit`` [rad].
    Static: ``low`` and ``high`` surfaces (left, right), ``duration`` [s], ``dt`` [s], ``model``."""

    name: str = "split_mu_launch"
    low: Any = "ice"
    high: Any = "asphalt_dry"
    duration: float = 3.0
    dt: float = 0.005
    model: Any = "double_track"
    settings: Any = dataclasses.field(default_factory=lambda: {"throttle": 1.0, "yaw_limit": math.radians(10.0)})
    metrics: Any = SPLIT_MU_METRICS
    ranges: Any = dataclasses.field(default_factory=lambda: {"throttle": (0.0, 1.0), "yaw_limit": (0.0, math.pi)})

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, dt=self.dt, duration=self.duration)
        params = split_mu(params, self.low, self.high)
        m, state0, drv = fleet_start(params, self.model, Constant(), throttle=settings["throttle"])
        dtype = jnp.asarray(params.chassis.mass).dtype
        red = per_vehicle(AccelerationReducer(), fleet_size(params), dtype)
        return Setup(params, state0, drv, red, m, self.dt, max(1, int(math.ceil(self.duration / self.dt))))

    def evaluate(self, acc: AccelerationAcc, setup: Setup, settings) -> dict:
        t_end = setup.n_steps * setup.dt
        return dict(
            speed=acc.speed,
            acceleration=acc.speed / t_end,
            distance=acc.distance,
            max_yaw=acc.max_yaw,
            passed=(acc.max_yaw <= settings["yaw_limit"]).astype(acc.distance.dtype),
        )
