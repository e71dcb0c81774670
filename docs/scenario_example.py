"""A new catalogue scenario, written from scratch: 0-50 km/h acceleration (docs/scenarios.md)."""

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sims.drivers import Constant, pytree_dataclass
from sims.run.fleet import fleet_start, make_fleet
from sims.scenarios import catalog
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle, run_scenario
from sims.vehicles import presets


class AccelAcc(NamedTuple):
    """What the reducer carries, one value per vehicle."""

    time: Any  # [s] when the target speed was first reached (inf until then)
    reached: Any  # bool


@pytree_dataclass
class AccelReducer:
    """Time at which the ground speed first reaches ``target`` [m/s] (a per-vehicle leaf)."""

    target: Any

    def init(self, params, state) -> AccelAcc:
        return AccelAcc(jnp.zeros_like(state.vx) + jnp.inf, jnp.zeros(jnp.shape(state.vx), bool))

    def update(self, acc, t, state, controls, tel, new, params, dt) -> AccelAcc:
        now = ~acc.reached & (jnp.hypot(new.vx, new.vy) >= self.target)
        return AccelAcc(jnp.where(now, t + dt, acc.time), acc.reached | now)


@dataclasses.dataclass(frozen=True)
class Acceleration(ScenarioBase):
    """Full throttle from ``start`` to ``target`` [m/s]; passed when reached within ``max_time`` [s]."""

    name: str = "acceleration_0_50"
    dt: float = 0.01
    max_time: float = 10.0
    model: Any = "single_track"
    settings: Any = dataclasses.field(compare=False, default_factory=lambda: {"start": 1.0, "target": 50 / 3.6})
    metrics: Any = (
        Metric("time", "s", "value", False, "time to reach the target speed (inf: not within max_time)"),
        PASSED._replace(doc="1 when the target speed was reached within max_time"),
    )

    def setup(self, params, settings) -> Setup:
        n = settings["start"].shape[0]
        dtype = settings["start"].dtype
        model, state0, driver = fleet_start(params, self.model, Constant(throttle=1.0), speed=settings["start"])
        reducer = per_vehicle(AccelReducer(0.0), n, dtype, target=settings["target"])
        return Setup(params, state0, driver, reducer, model, self.dt, math.ceil(self.max_time / self.dt))

    def evaluate(self, acc, setup, settings) -> dict:
        return dict(time=acc.time, passed=acc.reached.astype(acc.time.dtype))

    def done(self, acc):
        return acc.reached


catalog.register(Acceleration(), replace=True)

# two hatchbacks, the second 30 % heavier
fleet = make_fleet(presets.get("hatchback"), 2)
fleet = fleet._replace(chassis=fleet.chassis._replace(mass=fleet.chassis.mass * np.array([1.0, 1.3], np.float32)))
metrics, stats = run_scenario("acceleration_0_50", fleet)
print(metrics["time"], metrics["passed"], f"compile {stats.compile_s:.1f} s, run {stats.run_s:.2f} s")
