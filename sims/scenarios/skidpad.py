"""Steady-state skidpad: lateral-acceleration limit and understeer gradient on a constant-radius circle.

Fleet method: one vehicle per target lateral acceleration ``a_i`` on a grid, each driving the circle of
radius ``R`` (default 40 m, counter-clockwise) at the constant speed ``sqrt(a_i R)`` with
:class:`sims.drivers.CircleFollower`.  After ``settle`` seconds, the reducer (:class:`SkidpadReducer`)
averages over the remaining time: the lateral acceleration ``a_y = V r`` (``V`` the ground speed,
``r`` the yaw rate), the road-wheel steer angle, the radial path error and its spread, and the largest
body slip angle.  A vehicle *holds* the circle when its mean radial error is within ``tolerance``
(default 2 %) of ``R``, the error's RMS within 2 ``tolerance`` and the body slip angle below 20 deg.

* Lateral-acceleration limit [m/s^2] (and [g]): the largest mean ``a_y`` of the vehicles that hold.
* Understeer gradient ``K`` [rad/(m/s^2)], reported in deg/g: the slope of the least-squares line
  ``delta = L / R + K a_y`` through the holding vehicles with ``a_y`` below half the limit (SAE J266 /
  ISO 4138 constant-radius method; ``K > 0`` understeer, ``K < 0`` oversteer).

In steady state the yaw rate equals ``V / R`` (kinematics); ``tests/sims`` checks it.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import lookup, surface_id
from sims.drivers import CircleFollower, pytree_dataclass, radial_error
from sims.run.fleet import FleetRun, broadcast, fleet_start
from sims.scenarios._config import check_config, check_window
from sims.vehicles import presets
from sims.vehicles.params import VehicleParams

#: Default circle radius of every skidpad function here [m].
RADIUS = 40.0


class SkidpadAcc(NamedTuple):
    """Sums over the measurement window (one value per vehicle)."""

    count: Any
    ay: Any
    steer: Any
    err: Any
    err2: Any
    yaw_rate: Any
    speed: Any
    max_beta: Any


@pytree_dataclass
class SkidpadReducer:
    """Averages after ``settle`` [s] on the circle of centre ``(center_x, center_y)`` and radius ``radius``."""

    settle: Any = 10.0
    radius: Any = RADIUS
    center_x: Any = 0.0
    center_y: Any = RADIUS

    def init(self, params, state) -> SkidpadAcc:
        z = jnp.zeros_like(state.vx)
        return SkidpadAcc(z, z, z, z, z, z, z, z)

    def update(self, acc: SkidpadAcc, t, state, controls, tel, new, params, dt) -> SkidpadAcc:
        w = (t >= self.settle).astype(state.vx.dtype)
        v = jnp.sqrt(state.vx**2 + state.vy**2)
        e = radial_error(state, self.center_x, self.center_y, self.radius)
        beta = jnp.abs(jnp.arctan2(state.vy, jnp.maximum(jnp.abs(state.vx), 0.1)))
        steer = jnp.mean(tel.steer[..., : tel.steer.shape[-1] // 2], axis=-1)
        return SkidpadAcc(
            acc.count + w,
            acc.ay + w * v * state.yaw_rate,
            acc.steer + w * steer,
            acc.err + w * e,
            acc.err2 + w * e * e,
            acc.yaw_rate + w * state.yaw_rate,
            acc.speed + w * v,
            jnp.maximum(acc.max_beta, w * beta),
        )


class SkidpadPoint(NamedTuple):
    """Per vehicle (numpy): mean ``ay`` [m/s^2], ``steer`` [rad], radial ``err`` [m], ``err_rms`` [m],
    ``yaw_rate`` [rad/s], ``speed`` [m/s], ``max_beta`` [rad], ``holds`` (bool)."""

    ay: np.ndarray
    steer: np.ndarray
    err: np.ndarray
    err_rms: np.ndarray
    yaw_rate: np.ndarray
    speed: np.ndarray
    max_beta: np.ndarray
    holds: np.ndarray


def circle_run(
    params: VehicleParams,
    speeds,
    *,
    radius: float = RADIUS,
    duration: float = 20.0,
    settle: float = 10.0,
    dt: float = 0.005,
    tolerance: float = 0.02,
    chunk_steps: int = 500,
    **run_kw,
) -> SkidpadPoint:
    """Drive a fleet ``params`` around the circle at ``speeds`` [m/s] (one per vehicle); mean steady values.
    ``run_kw``: the other keywords of :class:`~sims.run.fleet.FleetRun` (``model``, ``integrator``,
    ``substeps``, ``compiler_options``, ...).  ``duration`` must exceed ``settle``."""
    check_config(
        "circle_run",
        speeds=speeds,
        radius=radius,
        duration=duration,
        settle=settle,
        dt=dt,
        tolerance=tolerance,
        chunk_steps=chunk_steps,
    )
    check_window("circle_run", "duration", duration, settle)
    speeds = jnp.asarray(speeds)
    follower = CircleFollower(radius=radius, center_x=0.0, center_y=radius)
    _, state0, drv = fleet_start(
        params,
        run_kw.get("model", "double_track"),
        follower,
        speed=speeds,
        yaw_rate=speeds / radius,
        target_speed=speeds,
    )
    red = SkidpadReducer(settle=settle, radius=radius, center_x=0.0, center_y=radius)
    run = FleetRun(
        params,
        state0,
        drv,
        dt=dt,
        reducer=red,
        chunk_steps=chunk_steps,
        **run_kw,
    )
    _, _, acc, _ = run.run(max(chunk_steps, int(math.ceil(duration / dt))))
    acc = jax.tree.map(np.asarray, acc)
    c = np.maximum(acc.count, 1.0)
    err = acc.err / c
    rms = np.sqrt(np.maximum(acc.err2 / c, 0.0))
    holds = (np.abs(err) < tolerance * radius) & (rms < 2 * tolerance * radius) & (acc.max_beta < np.radians(20.0))
    holds &= np.isfinite(acc.ay)
    return SkidpadPoint(acc.ay / c, acc.steer / c, err, rms, acc.yaw_rate / c, acc.speed / c, acc.max_beta, holds)


class SkidpadResult(NamedTuple):
    """``ay_limit`` [m/s^2], ``understeer_gradient`` [rad/(m/s^2)] (nan if too few points), ``points``."""

    ay_limit: float
    understeer_gradient: float
    points: SkidpadPoint

    @property
    def understeer_deg_per_g(self) -> float:
        return float(np.degrees(self.understeer_gradient) * GRAVITY)


def analyse(points: SkidpadPoint, wheelbase: float, radius: float) -> SkidpadResult:
    """Limit and understeer gradient from the steady points (module docstring)."""
    ok = points.holds
    if not ok.any():
        return SkidpadResult(float("nan"), float("nan"), points)
    limit = float(np.max(points.ay[ok]))
    lin = ok & (points.ay < 0.5 * limit) & (points.ay > 0.0)
    k = float("nan")
    if lin.sum() >= 3:
        y = points.steer[lin] - wheelbase / radius
        x = points.ay[lin]
        k = float(np.sum(x * y) / np.sum(x * x))
    return SkidpadResult(limit, k, points)


def skidpad(params: VehicleParams, *, radius: float = RADIUS, n_points: int = 24, ay_max=None, **kw) -> SkidpadResult:
    """Skidpad of one vehicle: a fleet of ``n_points`` copies on a grid of target lateral accelerations up to
    ``ay_max`` [m/s^2] (default: 1.4 times ``mu g``, ``mu`` the surface grip times the tire's lateral friction
    scale, raised by the downforce at the speed of that ``a_y``)."""
    check_config("skidpad", radius=radius, n_points=n_points, ay_max=ay_max)
    ch = params.chassis
    if ay_max is None:
        grip = float(jnp.mean(lookup(params.surfaces, jnp.asarray(ch.surface_ids)).grip))
        mu_g = GRAVITY * grip * float(max(ch.tire_scale_front.mu_y, ch.tire_scale_rear.mu_y))
        c = 0.5 * float(ch.air_density * ch.lift_area) * radius / (float(ch.mass) * GRAVITY)  # downforce per ay
        ay_max = 1.4 * mu_g / (1.0 - min(max(mu_g * c, 0.0), 0.5))
    ays = np.linspace(0.05, 1.0, n_points) * ay_max
    fleet = params._replace(chassis=broadcast(ch, n_points))
    pts = circle_run(fleet, np.sqrt(ays * radius), radius=radius, **kw)
    return analyse(pts, float(ch.cg_to_front + ch.cg_to_rear), radius)


def skidpad_table(
    preset_names=presets.PRESET_NAMES,
    surfaces=("asphalt_dry", "asphalt_wet", "snow"),
    *,
    tire=None,
    radius: float = RADIUS,
    **kw,
) -> list[dict]:
    """Rows ``preset, surface, ay_limit [m/s^2], ay_limit_g, understeer [deg/g]``."""
    rows = []
    for name in preset_names:
        for s in surfaces:
            p = presets.get(name, tire=tire, surface_ids=surface_id(s))
            r = skidpad(p, radius=radius, **kw)
            rows.append(
                dict(
                    preset=name,
                    surface=s,
                    ay_limit=r.ay_limit,
                    ay_limit_g=r.ay_limit / GRAVITY,
                    understeer_deg_per_g=r.understeer_deg_per_g,
                )
            )
    return rows


def format_table(rows: list[dict]) -> str:
    lines = ["| preset | surface | a_y limit [m/s^2] | [g] | understeer gradient [deg/g] |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['preset']} | {r['surface']} | {r['ay_limit']:.2f} | {r['ay_limit_g']:.2f} | "
            f"{r['understeer_deg_per_g']:+.2f} |"
        )
    return "\n".join(lines)


def banked_skidpad(params: VehicleParams, bank: float, *, radius: float = RADIUS, **kw) -> SkidpadResult:
    """:func:`skidpad` on a circle banked by ``bank`` [rad] towards its centre (the outside higher; the car
    turns left, so ``road_bank = -bank``, constant in the body frame as on a circular banked track).  At
    the speed ``sqrt(g R tan(bank))`` gravity alone holds the car on the circle (no tire side force)."""
    ch = params.chassis
    return skidpad(
        params._replace(chassis=ch._replace(road_bank=jnp.asarray(-bank, jnp.asarray(ch.mass).dtype))),
        radius=radius,
        **kw,
    )
