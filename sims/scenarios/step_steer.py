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

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.surfaces import surface_id
from sims.drivers import StepSteer
from sims.run.fleet import fleet_rollout, fleet_start
from sims.scenarios._config import check_config, check_window
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
    t50 = t_step + 0.5 * ramp
    after = t >= t50
    resp = np.full(r.shape[0], np.nan)
    peak_t = np.full(r.shape[0], np.nan)
    over = np.full(r.shape[0], np.nan)
    for i in range(r.shape[0]):  # post-processing of a few recorded curves on the host
        ri = r[i] * np.sign(r_ss[i])
        rs = abs(r_ss[i])
        hit = np.nonzero(after & (ri >= 0.9 * rs))[0]
        if hit.size:
            resp[i] = t[hit[0]] - t50
        k = int(np.argmax(np.where(after, ri, -np.inf)))
        peak_t[i] = t[k] - t50
        over[i] = (ri[k] - rs) / rs if rs > 0 else np.nan
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
