"""Steady-state skidpad: lateral-acceleration limit and understeer gradient on a constant-radius circle.

Fleet method: one vehicle per target lateral acceleration ``a_i`` on a grid, each driving the circle of
radius ``R`` (default 40 m, counter-clockwise) at the constant speed ``sqrt(a_i R)`` with
:class:`sims.drivers.CircleFollower`.  After ``settle`` seconds, the reducer (:class:`SkidpadReducer`)
averages over the remaining time: the lateral acceleration ``a_y = V r`` (``V`` the ground speed,
``r`` the yaw rate), the road-wheel steer angle, the radial path error and its spread, and the largest
body slip angle.  A vehicle *holds* the circle when its mean radial error is within ``tolerance``
(default 2 %) of ``R``, the error's RMS within 2 ``tolerance`` and the body slip angle below 20 deg.

* Lateral-acceleration limit [m/s^2] (and [g]): the largest mean ``a_y`` of the vehicles that hold.
* Understeer gradient ``K`` [rad/(m/s^2)], reported in deg/g (:func:`understeer_fit`): the slope of the
  least-squares line ``delta - L / R = delta_0 + K a_y`` *with an intercept* (``R = V / r`` the
  radius actually driven) ``delta_0`` (a residual
  steer from the tires' ply steer / conicity or the driver) through the holding vehicles with
  ``0 < a_y <= a_lin`` (SAE J266 / ISO 4138 constant-radius method; ``K > 0`` understeer, ``K < 0``
  oversteer).  The linear range ``a_lin`` defaults to :data:`LINEAR_RANGE_G` ``= 0.3 g`` and is cut at half
  the limit; the fit reports the range used, the number of points and the RMS residual, so a curved
  steer line (the local slope grows with ``a_y`` as the tires' load sensitivity meets the lateral load
  transfer) shows up in the residual instead of silently biasing ``K``.  Fitting through the origin over
  up to 0.35 g, as this module did before, reported +0.80 deg/g for the hatchback where the small-``a_y``
  slope is 0.67 deg/g.
* Linear theory (:func:`understeer_theory`): ``K = m / L (b / C_f - a / C_r)`` with the axle cornering
  stiffnesses ``C = 2 K_y(F_z)`` of the axle's tire (its per-vehicle scale, the surface of its wheels)
  at the static wheel load ``F_z`` (:func:`jaxtire.tire.linear_stiffness`), so the tire's load
  sensitivity at the static loads is in it; camber is 0 (the vehicle models have no camber) and the
  lateral load transfer, whose effect on ``K`` is of second order in ``a_y``, is not.

In steady state the yaw rate equals ``V / R`` (kinematics); ``tests/sims`` checks it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import lookup, mean
from jaxtire.tire import linear_stiffness, scale_tire
from sims.drivers import CircleFollower, pytree_dataclass, radial_error
from sims.run.fleet import FleetRun, broadcast, fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.scenarios.config import check_config, check_window
from sims.vehicles.core import axle_loads
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
    model = run_kw.pop("model", "double_track")
    su = circle_setup(params, jnp.asarray(speeds), radius=radius, settle=settle, duration=duration, dt=dt, model=model)
    run = FleetRun(
        su.params,
        su.state0,
        su.driver,
        dt=dt,
        model=model,
        reducer=su.reducer,
        reducer_axes=0,
        chunk_steps=chunk_steps,
        **run_kw,
    )
    _, _, acc, _ = run.run(max(chunk_steps, int(math.ceil(duration / dt))))
    return SkidpadPoint(*(np.asarray(a) for a in steady_point(acc, radius, tolerance)))


def circle_setup(params: VehicleParams, speeds, *, radius: float, settle: float, duration: float, dt: float, model):
    """The :class:`~sims.scenarios.base.Setup` of the fleet ``params`` driving the circle of ``radius`` [m]
    (centre ``(0, R)``, turning left from the origin) at ``speeds`` [m/s] (one per vehicle), each started on
    the circle at its speed and yaw rate ``V / R`` with :class:`~sims.drivers.CircleFollower` holding it, and
    :class:`SkidpadReducer` averaging after ``settle`` [s] over ``duration`` [s] of steps ``dt`` [s]: the one
    circle drive of :class:`Skidpad` and :func:`circle_run`."""
    m, state0, drv = fleet_start(
        params,
        model,
        CircleFollower(radius=radius, center_x=0.0, center_y=radius),
        speed=speeds,
        yaw_rate=speeds / radius,
        target_speed=speeds,
    )
    dtype = jnp.asarray(params.chassis.mass).dtype
    red = per_vehicle(SkidpadReducer(settle, radius, 0.0, radius), speeds.shape[0], dtype)
    return Setup(params, state0, drv, red, m, dt, int(math.ceil(duration / dt)))


def steady_point(acc: SkidpadAcc, radius, tolerance) -> SkidpadPoint:
    """The means of a :class:`SkidpadAcc` over its window and the *holds* criterion (module docstring:
    ``|mean err| < tolerance R``, RMS ``< 2 tolerance R``, body slip ``< 20 deg``, finite); JAX arrays."""
    c = jnp.maximum(acc.count, 1.0)
    err = acc.err / c
    rms = jnp.sqrt(jnp.maximum(acc.err2 / c, 0.0))
    holds = (jnp.abs(err) < tolerance * radius) & (rms < 2 * tolerance * radius) & (acc.max_beta < np.radians(20.0))
    holds &= jnp.isfinite(acc.ay)
    # _make: the fields hold JAX arrays here (numpy in circle_run's result)
    return SkidpadPoint._make(
        (acc.ay / c, acc.steer / c, err, rms, acc.yaw_rate / c, acc.speed / c, acc.max_beta, holds)
    )


@dataclasses.dataclass(frozen=True)
class Skidpad(ScenarioBase):
    """ISO 4138 constant-radius skidpad as a catalogue scenario: each vehicle drives the circle of ``radius``
    [m] (static) at the speed ``sqrt(ay_target R)`` of its setting ``ay_target`` [m/s^2] with
    :class:`~sims.drivers.CircleFollower`; :class:`SkidpadReducer` averages after ``settle`` [s] (static, as
    ``duration`` and ``dt``).  Metrics: the steady means of :func:`steady_point` and the secant understeer
    ``(steer - L r / V) / a_y`` [rad/(m/s^2)] (the least-squares gradient over several ``a_y`` is
    :func:`understeer_fit`, across vehicles).  Passed: the vehicle holds the circle (``tolerance``)."""

    name: str = "skidpad"
    radius: float = RADIUS
    settle: float = 10.0
    duration: float = 20.0
    dt: float = 0.005
    tolerance: float = 0.02
    model: Any = "double_track"
    settings: Any = dataclasses.field(compare=False, default_factory=lambda: {"ay_target": 4.0})
    ranges: Any = dataclasses.field(compare=False, default_factory=lambda: {"ay_target": (0.0, 100.0)})
    metrics: Any = (
        Metric("ay", "m/s^2", "value", True, "mean lateral acceleration V r after settle"),
        Metric("steer", "rad", "value", True, "mean road-wheel steer angle after settle"),
        Metric("understeer", "rad/(m/s^2)", "value", True, "secant understeer (steer - L r / V) / a_y"),
        Metric("err", "m", "value", True, "mean radial path error"),
        Metric("err_rms", "m", "value", True, "RMS radial path error"),
        Metric("max_beta", "rad", "value", True, "largest body slip angle after settle"),
        Metric("yaw_rate", "rad/s", "value", True, "mean yaw rate after settle"),
        Metric("speed", "m/s", "value", True, "mean ground speed after settle"),
        PASSED._replace(doc="1 when the vehicle holds the circle (tolerance on the radial error, slip < 20 deg)"),
    )

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, radius=self.radius, duration=self.duration, settle=self.settle, dt=self.dt)
        check_window(self.name, "duration", self.duration, self.settle)
        speed = jnp.sqrt(settings["ay_target"] * self.radius)
        kw = dict(radius=self.radius, settle=self.settle, duration=self.duration, dt=self.dt, model=self.model)
        return circle_setup(params, speed, **kw)

    def evaluate(self, acc: SkidpadAcc, setup: Setup, settings) -> dict:
        pt = steady_point(acc, self.radius, self.tolerance)
        ch = setup.params.chassis
        kin = (ch.cg_to_front + ch.cg_to_rear) * pt.yaw_rate / jnp.maximum(pt.speed, 0.1)
        dtype = pt.ay.dtype
        return dict(
            ay=pt.ay,
            steer=pt.steer,
            understeer=(pt.steer - kin) / jnp.where(jnp.abs(pt.ay) > 1e-3, pt.ay, 1e-3),
            err=pt.err,
            err_rms=pt.err_rms,
            max_beta=pt.max_beta,
            yaw_rate=pt.yaw_rate,
            speed=pt.speed,
            passed=pt.holds.astype(dtype),
        )


#: Default upper end of the linear range of the understeer fit [g].
LINEAR_RANGE_G = 0.3


class UndersteerFit(NamedTuple):
    """Least-squares line ``delta - L / R = intercept + gradient a_y`` (module docstring): ``gradient``
    [rad/(m/s^2)], ``intercept`` [rad], the ``a_y`` range ``(ay_lo, ay_hi)`` [m/s^2] of the points used,
    ``n`` the number of points and ``residual`` [rad] their RMS residual (``nan`` with fewer than 3 points)."""

    gradient: float
    intercept: float
    ay_lo: float
    ay_hi: float
    n: int
    residual: float

    @property
    def deg_per_g(self) -> float:
        """The gradient in deg/g."""
        return float(np.degrees(self.gradient) * GRAVITY)


def understeer_fit(points: SkidpadPoint, wheelbase: float, radius: float, ay_range=None) -> UndersteerFit:
    """Fit ``delta - L / R = delta_0 + K a_y`` over the holding points with ``0 < a_y <= ay_range`` [m/s^2]
    (default :data:`LINEAR_RANGE_G` g; module docstring); where fewer than three points lie in that range,
    over the three lowest holding points (the range used is in the result)."""
    hi = LINEAR_RANGE_G * GRAVITY if ay_range is None else float(ay_range)
    ay_all, holds = np.asarray(points.ay), np.asarray(points.holds)
    use = holds & (ay_all > 0.0) & (ay_all <= hi)
    if use.sum() < 3:  # a coarse grid (e.g. a car with downforce): the three lowest holding points instead
        cand = np.flatnonzero(holds & (ay_all > 0.0))
        if cand.size >= 3:
            use = np.zeros_like(use)
            use[cand[np.argsort(ay_all[cand])[:3]]] = True
    n = int(use.sum())
    if n < 3:
        return UndersteerFit(float("nan"), float("nan"), float("nan"), float("nan"), n, float("nan"))
    x = np.asarray(points.ay[use], np.float64)
    v = np.asarray(points.speed[use], np.float64)
    # kinematic steer L / R_actual with the circle actually driven, R_actual = V / r (the path error of
    # the driver, growing with a_y, would otherwise leak into the slope); L / radius where not measured
    curv = np.where(v > 0.0, np.asarray(points.yaw_rate[use], np.float64) / np.where(v > 0.0, v, 1.0), 1.0 / radius)
    y = np.asarray(points.steer[use], np.float64) - wheelbase * curv
    k, d0 = np.polyfit(x, y, 1)
    res = float(np.sqrt(np.mean((y - (d0 + k * x)) ** 2)))
    return UndersteerFit(float(k), float(d0), float(x.min()), float(x.max()), n, res)


def understeer_theory(params: VehicleParams) -> float:
    """Linear-theory understeer gradient ``K = m / L (b / C_f - a / C_r)`` [rad/(m/s^2)] of one vehicle
    (module docstring): ``C_f``, ``C_r`` = 2 ``K_y`` of the axle's scaled tire at half the static axle load
    (:func:`sims.vehicles.core.axle_loads` at rest) on the mean surface of the axle's wheels, camber 0."""
    ch = params.chassis
    zero = jnp.zeros((), jnp.asarray(ch.mass).dtype)
    loads = axle_loads(ch, params.contact, zero, zero)
    ids = jnp.asarray(params.contact.surface_ids)
    stiff = []
    for k, (tire, scale, load) in enumerate(
        ((params.tire_front, ch.tire_scale_front, loads[0]), (params.tire_rear, ch.tire_scale_rear, loads[1]))
    ):
        surf = mean(lookup(params.surfaces, ids[..., 2 * k]), lookup(params.surfaces, ids[..., 2 * k + 1]))
        stiff.append(2.0 * float(linear_stiffness(scale_tire(tire, *scale), 0.5 * load, surf)[1]))
    a, b, m = float(ch.cg_to_front), float(ch.cg_to_rear), float(ch.mass)
    return m / (a + b) * (b / stiff[0] - a / stiff[1])


class SkidpadResult(NamedTuple):
    """``ay_limit`` [m/s^2], ``understeer_gradient`` [rad/(m/s^2)] (nan if too few points), ``points``,
    ``fit`` the :class:`UndersteerFit` behind the gradient (intercept, range, residual)."""

    ay_limit: float
    understeer_gradient: float
    points: SkidpadPoint
    fit: UndersteerFit | None = None

    @property
    def understeer_deg_per_g(self) -> float:
        return float(np.degrees(self.understeer_gradient) * GRAVITY)


def analyse(points: SkidpadPoint, wheelbase: float, radius: float, ay_range=None) -> SkidpadResult:
    """Limit and understeer gradient from the steady points (module docstring); the fit's range is
    ``ay_range`` [m/s^2] (default :data:`LINEAR_RANGE_G` g), cut at half the limit when some vehicle lost
    the circle (when all hold, the limit was not reached and ``ay_limit`` is only the largest ``a_y`` run)."""
    ok = points.holds
    if not ok.any():
        return SkidpadResult(float("nan"), float("nan"), points)
    limit = float(np.max(points.ay[ok]))
    hi = LINEAR_RANGE_G * GRAVITY if ay_range is None else float(ay_range)
    fit = understeer_fit(points, wheelbase, radius, hi if ok.all() else min(hi, 0.5 * limit))
    return SkidpadResult(limit, fit.gradient, points, fit)


def ay_targets(params: VehicleParams, *, radius: float = RADIUS, n_points: int = 24, ay_max=None, ay_min=None):
    """The target lateral accelerations [m/s^2] of a skidpad sweep of one vehicle (:func:`skidpad`):
    ``n_points`` from ``ay_min`` (default ``0.05 ay_max``) to ``ay_max`` (default: 1.4 times ``mu g``, ``mu``
    the surface grip times the tire's lateral friction scale, raised by the downforce at the speed of that
    ``a_y`` on the circle of ``radius`` [m]), a float64 numpy array."""
    check_config("skidpad", radius=radius, n_points=n_points, ay_max=ay_max)
    ch = params.chassis
    if ay_max is None:
        grip = float(jnp.mean(lookup(params.surfaces, jnp.asarray(params.contact.surface_ids)).grip))
        mu_g = GRAVITY * grip * float(max(ch.tire_scale_front.mu_y, ch.tire_scale_rear.mu_y))
        c = 0.5 * float(ch.air_density * ch.lift_area) * radius / (float(ch.mass) * GRAVITY)  # downforce per ay
        ay_max = 1.4 * mu_g / (1.0 - min(max(mu_g * c, 0.0), 0.5))
    return np.linspace(0.05 * ay_max if ay_min is None else ay_min, ay_max, n_points)


def points_of(metrics) -> SkidpadPoint:
    """The :class:`SkidpadPoint` of the :class:`Skidpad` scenario's metrics (a mapping name -> ``(n,)``: a
    study's columns), ``passed`` as ``holds``; numpy."""
    fields = {f: np.asarray(metrics[f]) for f in SkidpadPoint._fields if f != "holds"}
    return SkidpadPoint(**fields, holds=np.asarray(metrics["passed"], bool))


def skidpad(
    params: VehicleParams,
    *,
    radius: float = RADIUS,
    n_points: int = 24,
    ay_max=None,
    ay_min=None,
    ay_range=None,
    **kw,
) -> SkidpadResult:
    """Skidpad of one vehicle: a fleet of ``n_points`` copies on a grid of target lateral accelerations up to
    ``ay_max`` [m/s^2] from ``ay_min`` (default ``0.05 ay_max``) (``ay_max`` default: 1.4 times ``mu g``, ``mu`` the surface grip times the tire's lateral friction
    scale, raised by the downforce at the speed of that ``a_y``); the understeer fit's linear range is
    ``ay_range`` [m/s^2] (:func:`analyse`)."""
    ch = params.chassis
    ays = ay_targets(params, radius=radius, n_points=n_points, ay_max=ay_max, ay_min=ay_min)
    fleet = params._replace(chassis=broadcast(ch, n_points))
    pts = circle_run(fleet, np.sqrt(ays * radius), radius=radius, **kw)
    return analyse(pts, float(ch.cg_to_front + ch.cg_to_rear), radius, ay_range)


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
    turns left, so the contact's ``bank = -bank``, constant in the body frame as on a circular banked track).  At
    the speed ``sqrt(g R tan(bank))`` gravity alone holds the car on the circle (no tire side force)."""
    c = params.contact
    return skidpad(
        params._replace(contact=c._replace(bank=jnp.asarray(-bank, jnp.asarray(c.bank).dtype))),
        radius=radius,
        **kw,
    )
