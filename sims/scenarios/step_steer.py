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

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.surfaces import surface_id
from sims.drivers import StepSteer, pytree_dataclass
from sims.run.fleet import fleet_rollout, fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.scenarios.config import check_config, check_window
from sims.vehicles import presets
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


def _run(params, amplitude, *, speed, t_step, ramp, duration, dt, model="double_track", **run_kw):
    """Recorded ``(yaw_rate, speed)`` [rad/s, m/s] of each vehicle, one value per step."""
    m, state0, drv = fleet_start(
        params, model, StepSteer(t_step=t_step, ramp=ramp), speed=speed, target_speed=speed, amplitude=amplitude
    )
    res = fleet_rollout(params, state0, drv, int(round(duration / dt)), dt=dt, model=m, record=_record, **run_kw)
    r, v = (np.asarray(a) for a in res.trajectory)
    return r, v


def _record(t, s, c, tel):
    return s.yaw_rate, jnp.sqrt(s.vx**2 + s.vy**2)


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
    **run_kw,
) -> StepSteerResult:
    """Step-steer test of a fleet ``params`` (chassis batched); see the module docstring.  ``t_step`` [s] and
    ``ramp`` [s] default to those of :class:`~sims.drivers.StepSteer`.  ``run_kw``: the
    other keywords of :func:`~sims.run.fleet.fleet_rollout` (``model``, ``integrator``,
    ``compiler_options``, ...).  ``duration`` [s] must exceed ``t_step + ramp + 1`` (the steady state is the
    mean over the last second)."""
    default = StepSteer()  # the ISO 7401 timing lives in the driver: step at t_step [s], ramp [s]
    t_step = float(default.t_step if t_step is None else t_step)
    ramp = float(default.ramp if ramp is None else ramp)
    check_config("step_steer", speed=speed, ay_target=ay_target, t_step=t_step, ramp=ramp, duration=duration, dt=dt)
    check_window("step_steer", "duration", duration, t_step + ramp + 1.0)
    ch = params.chassis
    L = np.asarray(ch.cg_to_front + ch.cg_to_rear)
    amp = L * ay_target / speed**2

    def run(amplitude):
        return _run(params, amplitude, speed=speed, t_step=t_step, ramp=ramp, duration=duration, dt=dt, **run_kw)

    n_last = int(round(1.0 / dt))
    r, v = run(amp)
    ay = np.mean(r[:, -n_last:] * v[:, -n_last:], axis=1)
    amp = amp * ay_target / np.where(np.abs(ay) > 1e-3, ay, ay_target)
    r, v = run(amp)
    t = np.arange(r.shape[1]) * dt
    r_ss = np.mean(r[:, -n_last:], axis=1)
    ay_ss = np.mean(r[:, -n_last:] * v[:, -n_last:], axis=1)
    resp, peak_t, over = (
        np.asarray(a) for a in response_metrics(jnp.asarray(t), jnp.asarray(r), r_ss, t_step + 0.5 * ramp)
    )
    return StepSteerResult(np.asarray(amp * np.ones(r.shape[0])), ay_ss, r_ss, resp, peak_t, over, t, r)


def step_steer_table(preset_names=presets.PRESET_NAMES, surfaces=("asphalt_dry",), *, tire=None, **kw) -> list[dict]:
    """Rows ``preset, surface, amplitude_deg, ay_ss, response_time, peak_time, overshoot``."""
    rows = []
    for name in preset_names:
        ps = [presets.get(name, tire=tire, surface_ids=surface_id(s)) for s in surfaces]
        fleet = jax.tree.map(lambda *x: jnp.stack(x), *[p.chassis for p in ps])
        res = step_steer(ps[0]._replace(chassis=fleet), **kw)
        for i, s in enumerate(surfaces):
            rows.append(
                dict(
                    preset=name,
                    surface=s,
                    amplitude_deg=float(np.degrees(res.amplitude[i])),
                    ay_ss=float(res.ay_ss[i]),
                    response_time=float(res.response_time[i]),
                    peak_time=float(res.peak_time[i]),
                    overshoot=float(res.overshoot[i]),
                )
            )
    return rows


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
    """ISO 7401 step steer as a catalogue scenario (module docstring), in one run: the steer amplitude is the
    neutral-steer one ``L a_y / V^2`` of the settings ``speed`` [m/s] and ``ay_target`` [m/s^2] (the achieved
    ``ay_ss`` is a metric; :func:`step_steer` calibrates the amplitude in a second run instead).  The yaw
    rate is kept every ``spacing`` [s] (:class:`TraceReducer`) and :func:`response_metrics` reads it.
    Passed: the yaw rate settles (reaches 90 % of its steady value) without spinning (``|r_ss| > 0``)."""

    name: str = "step_steer"
    t_step: float = 0.5
    ramp: float = 0.1
    duration: float = 4.0
    dt: float = 0.002
    spacing: float = 0.01
    model: Any = "double_track"
    settings: Any = dataclasses.field(compare=False, default_factory=lambda: {"speed": 80.0 / 3.6, "ay_target": 4.0})
    ranges: Any = dataclasses.field(compare=False, default_factory=lambda: {"ay_target": (0.0, 100.0)})
    metrics: Any = (
        Metric("amplitude", "rad", "value", True, "road-wheel steer amplitude L a_y / V^2"),
        Metric("ay_ss", "m/s^2", "value", True, "steady lateral acceleration (mean over the last second)"),
        Metric("r_ss", "rad/s", "value", True, "steady yaw rate (mean over the last second)"),
        Metric("response_time", "s", "value", False, "from 50 % steer to 90 % of the steady yaw rate"),
        Metric("peak_time", "s", "value", False, "from 50 % steer to the yaw-rate peak"),
        Metric("overshoot", "-", "value", True, "(peak yaw rate - r_ss) / r_ss"),
        PASSED._replace(doc="1 when the yaw rate reached 90 % of its steady value"),
    )

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, t_step=self.t_step, ramp=self.ramp, duration=self.duration, dt=self.dt)
        check_window(self.name, "duration", self.duration, self.t_step + self.ramp + 1.0)
        ch = params.chassis
        v = settings["speed"]
        amp = (ch.cg_to_front + ch.cg_to_rear) * settings["ay_target"] / (v * v)
        m, state0, drv = fleet_start(
            params, self.model, StepSteer(t_step=self.t_step, ramp=self.ramp), speed=v, target_speed=v, amplitude=amp
        )
        dtype = jnp.asarray(ch.mass).dtype
        k = int(math.ceil(self.duration / self.spacing))
        red = per_vehicle(TraceReducer(self.spacing, jnp.zeros(k, dtype)), v.shape[0], dtype)
        return Setup(params, state0, drv, red, m, self.dt, int(math.ceil(self.duration / self.dt)))

    def evaluate(self, acc: TraceAcc, setup: Setup, settings) -> dict:
        k = acc.r.shape[-1]
        t = jnp.arange(k, dtype=acc.r.dtype) * self.spacing
        last = max(1, int(round(1.0 / self.spacing)))
        r_ss = jnp.mean(acc.r[..., -last:], axis=-1)
        ay_ss = jnp.mean(acc.r[..., -last:] * acc.v[..., -last:], axis=-1)
        resp, peak, over = response_metrics(t, acc.r, r_ss, self.t_step + 0.5 * self.ramp)
        ch = setup.params.chassis
        v = settings["speed"]
        return dict(
            amplitude=(ch.cg_to_front + ch.cg_to_rear) * settings["ay_target"] / (v * v),
            ay_ss=ay_ss,
            r_ss=r_ss,
            response_time=resp,
            peak_time=peak,
            overshoot=over,
            passed=jnp.isfinite(resp).astype(acc.r.dtype),
        )
