"""Step steer (ISO 7401): yaw-rate response time and overshoot.

Each vehicle drives straight at ``speed`` (default 80 km/h, ISO 7401) with a speed hold; at ``t_step``
the steer ramps within ``ramp`` (0.1 s) to the amplitude that gives a steady lateral acceleration of
``ay_target`` (default 4 m/s^2): a first run at the neutral-steer amplitude ``L a_y / V^2`` measures
the achieved ``a_y`` and a second run scales the amplitude linearly to the target.  From the recorded
yaw rate ``r(t)`` (one value per step, few vehicles):

* ``r_ss`` steady yaw rate: mean over the last second;
* ``response_time`` [s]: from 50 % of the steer input to 90 % of ``r_ss`` (ISO 7401 yaw-rate response time);
* ``peak_time`` [s]: from 50 % steer to the yaw-rate peak;
* ``overshoot`` [-]: ``(max r - r_ss) / r_ss``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sims.drivers import StepSteer, pytree_dataclass
from sims.run.fleet import fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, jitted_setup, per_vehicle, resolve_settings
from sims.scenarios.config import check_config, check_window
from sims.vehicles.params import VehicleParams


class StepSteerResult(NamedTuple):
    """Per vehicle (numpy): ``amplitude`` [rad], ``ay_ss`` [m/s^2], ``r_ss`` [rad/s], ``response_time`` [s],
    ``peak_time`` [s], ``overshoot`` [-]; ``t`` [s] and ``yaw_rate`` [rad/s] the recorded responses."""

    amplitude: np.ndarray
    ay_ss: np.ndarray
    r_ss: np.ndarray
    response_time: np.ndarray
    peak_time: np.ndarray
    overshoot: np.ndarray
    t: np.ndarray
    yaw_rate: np.ndarray


def response_metrics(t, r, r_ss, t50):
    """ISO 7401 response times of yaw-rate traces ``r`` ``(..., K)`` [rad/s] sampled at ``t`` ``(K,)`` [s], with
    steady values ``r_ss`` ``(...)`` and the time ``t50`` [s] of 50 % steer input: ``(response_time,
    peak_time, overshoot)``, each ``(...)``: the first time after ``t50`` that ``r`` reaches 90 % of ``r_ss``
    (``nan`` if never), the time of the largest ``r`` after ``t50`` (both from ``t50``), and ``(max r - r_ss)
    / r_ss`` (``nan`` for ``r_ss = 0``); the sign of ``r_ss`` is the positive direction.  Vectorised JAX."""
    sign = jnp.where(r_ss < 0.0, -1.0, 1.0)[..., None]
    ri = r * sign
    rs = jnp.abs(r_ss)
    after = t >= t50
    hit = after & (ri >= 0.9 * rs[..., None])
    first = jnp.argmax(hit, axis=-1)
    resp = jnp.where(jnp.any(hit, axis=-1), t[first] - t50, jnp.nan)
    k = jnp.argmax(jnp.where(after, ri, -jnp.inf), axis=-1)
    peak = jnp.take_along_axis(ri, k[..., None], axis=-1)[..., 0]
    over = jnp.where(rs > 0.0, (peak - rs) / jnp.where(rs > 0.0, rs, 1.0), jnp.nan)
    return resp, t[k] - t50, over


def step_steer(
    params: VehicleParams,
    *,
    speed: float = 80 / 3.6,
    ay_target: float = 4.0,
    t_step: float | None = None,
    ramp: float | None = None,
    duration: float = 5.0,
    dt: float = 0.002,
    model="double_track",
    **run_kw,
) -> StepSteerResult:
    """Step-steer test of a fleet ``params`` (chassis batched); see the module docstring: the catalogue's
    :class:`StepSteerScenario` with ``calibrate`` (the amplitude scaled by a first run to reach ``ay_target``)
    and the yaw rate kept every step.  ``t_step`` [s] and ``ramp`` [s] default to those of
    :class:`~sims.drivers.StepSteer`.  ``run_kw``: the other keywords of :func:`~sims.run.fleet.fleet_rollout`
    for the measured run (``integrator``, ``substeps``, ``compiler_options``, ...; the calibration run uses the
    scenario's step).  ``duration`` [s] must exceed ``t_step + ramp + 1`` (the steady state is the mean over
    the last second)."""
    default = StepSteer()  # the ISO 7401 timing lives in the driver: step at t_step [s], ramp [s]
    t_step = float(default.t_step if t_step is None else t_step)
    ramp = float(default.ramp if ramp is None else ramp)
    check_config("step_steer", speed=speed, ay_target=ay_target, t_step=t_step, ramp=ramp, duration=duration, dt=dt)
    check_window("step_steer", "duration", duration, t_step + ramp + 1.0)
    sc = StepSteerScenario(t_step=t_step, ramp=ramp, duration=duration, dt=dt, spacing=dt, model=model, calibrate=True)
    settings = resolve_settings(sc, params, {"speed": speed, "ay_target": ay_target})
    s = jitted_setup(sc, params, settings)
    acc = s.rollout(**run_kw).reduced
    out = {k: np.asarray(v) for k, v in sc.evaluate(acc, s, settings).items()}
    r = np.asarray(acc.r)
    t = np.arange(r.shape[-1]) * dt
    return StepSteerResult(
        out["amplitude"], out["ay_ss"], out["r_ss"], out["response_time"], out["peak_time"], out["overshoot"], t, r
    )


def format_table(rows: list[dict]) -> str:
    lines = [
        "| preset | surface | steer [deg] | a_y [m/s^2] | response time [s] | peak time [s] | overshoot [%] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['preset']} | {r['surface']} | {r['amplitude_deg']:.2f} | {r['ay_ss']:.2f} | "
            f"{r['response_time']:.3f} | {r['peak_time']:.3f} | {100 * r['overshoot']:.1f} |"
        )
    return "\n".join(lines)


class TraceAcc(NamedTuple):
    """Yaw rate ``r`` [rad/s] and ground speed ``v`` [m/s] at the sample times (one vehicle: ``(K,)`` each)."""

    r: Any
    v: Any


@pytree_dataclass
class TraceReducer:
    """Records the yaw rate and speed every ``spacing`` [s] into ``K`` slots (``slots``: a ``(K,)`` template
    array fixing the length): slot ``k`` holds the state at the start of the last step with
    ``floor((t + dt/2) / spacing) = k``, so a fleet keeps a short decimated trace per vehicle instead of a
    recorded trajectory."""

    spacing: Any
    slots: Any

    def init(self, params, state) -> TraceAcc:
        z = jnp.zeros_like(self.slots) + jnp.zeros_like(state.vx)
        return TraceAcc(z, z)

    def update(self, acc: TraceAcc, t, state, controls, tel, new, params, dt) -> TraceAcc:
        k = jnp.clip(jnp.floor((t + 0.5 * dt) / self.spacing).astype(jnp.int32), 0, self.slots.shape[-1] - 1)
        v = jnp.sqrt(state.vx**2 + state.vy**2)
        return TraceAcc(acc.r.at[k].set(state.yaw_rate), acc.v.at[k].set(v))


@dataclasses.dataclass(frozen=True)
class StepSteerScenario(ScenarioBase):
    """ISO 7401 step steer as a catalogue scenario (module docstring): the steer amplitude is the neutral-steer
    one ``L a_y / V^2`` of the settings ``speed`` [m/s] and ``ay_target`` [m/s^2] (the achieved ``ay_ss`` is a
    metric), or with the static option ``calibrate`` that one scaled by a first run (inside the set-up, at the
    scenario's model and step) to reach ``ay_target`` (:func:`step_steer`).  The yaw rate is kept every
    ``spacing`` [s] (:class:`TraceReducer`) and :func:`response_metrics` reads it.  Passed: the yaw rate settles
    (reaches 90 % of its steady value) without spinning (``|r_ss| > 0``)."""

    name: str = "step_steer"
    t_step: float = 0.5
    ramp: float = 0.1
    duration: float = 4.0
    dt: float = 0.002
    spacing: float = 0.01
    model: Any = "double_track"
    calibrate: bool = False
    settings: Any = dataclasses.field(compare=False, default_factory=lambda: {"speed": 80.0 / 3.6, "ay_target": 4.0})
    ranges: Any = dataclasses.field(compare=False, default_factory=lambda: {"ay_target": (0.0, 100.0)})
    metrics: Any = (
        Metric("amplitude", "rad", "value", True, "road-wheel steer amplitude (L a_y / V^2, or calibrated)"),
        Metric("ay_ss", "m/s^2", "value", True, "steady lateral acceleration (mean over the last second)"),
        Metric("r_ss", "rad/s", "value", True, "steady yaw rate (mean over the last second)"),
        Metric("response_time", "s", "value", False, "from 50 % steer to 90 % of the steady yaw rate"),
        Metric("peak_time", "s", "value", False, "from 50 % steer to the yaw-rate peak"),
        Metric("overshoot", "-", "value", True, "(peak yaw rate - r_ss) / r_ss"),
        PASSED._replace(doc="1 when the yaw rate reached 90 % of its steady value"),
    )

    def _start(self, params: VehicleParams, settings, amplitude) -> Setup:
        v = settings["speed"]
        driver = StepSteer(t_step=self.t_step, ramp=self.ramp)
        m, state0, drv = fleet_start(params, self.model, driver, speed=v, target_speed=v, amplitude=amplitude)
        dtype = jnp.asarray(params.chassis.mass).dtype
        k = int(math.ceil(self.duration / self.spacing))
        red = per_vehicle(TraceReducer(self.spacing, jnp.zeros(k, dtype)), v.shape[0], dtype)
        return Setup(params, state0, drv, red, m, self.dt, int(math.ceil(self.duration / self.dt)))

    def steady(self, acc: TraceAcc):
        """``(r_ss, ay_ss)``: the yaw rate [rad/s] and ``V r`` [m/s^2] averaged over the trace's last second."""
        last = max(1, int(round(1.0 / self.spacing)))
        return jnp.mean(acc.r[..., -last:], axis=-1), jnp.mean(acc.r[..., -last:] * acc.v[..., -last:], axis=-1)

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, t_step=self.t_step, ramp=self.ramp, duration=self.duration, dt=self.dt)
        check_window(self.name, "duration", self.duration, self.t_step + self.ramp + 1.0)
        ch = params.chassis
        v, target = settings["speed"], settings["ay_target"]
        amp = (ch.cg_to_front + ch.cg_to_rear) * target / (v * v)
        s = self._start(params, settings, amp)
        if self.calibrate:  # a first run at the neutral-steer amplitude; its a_y scales the amplitude linearly
            ay = self.steady(s.rollout().reduced)[1]
            s = self._start(params, settings, amp * target / jnp.where(jnp.abs(ay) > 1e-3, ay, target))
        return s

    def evaluate(self, acc: TraceAcc, setup: Setup, settings) -> dict:
        k = acc.r.shape[-1]
        t = jnp.arange(k, dtype=acc.r.dtype) * self.spacing
        r_ss, ay_ss = self.steady(acc)
        resp, peak, over = response_metrics(t, acc.r, r_ss, self.t_step + 0.5 * self.ramp)
        return dict(
            amplitude=setup.driver.amplitude,
            ay_ss=ay_ss,
            r_ss=r_ss,
            response_time=resp,
            peak_time=peak,
            overshoot=over,
            passed=jnp.isfinite(resp).astype(acc.r.dtype),
        )
