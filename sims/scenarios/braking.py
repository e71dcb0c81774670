"""Straight-line braking from 100 km/h: stopping distance with locked wheels and with ABS.

Each vehicle starts rolling straight at ``speed`` (default 100 km/h) with a small yaw-rate disturbance
``yaw_rate0`` (default 0.01 rad/s, a gust or a road crown; a directionally stable car damps it, a car
whose rear wheels lock turns it into a spin) and brakes at full pedal from ``t = 0`` with
:class:`sims.drivers.StraightBraking`, locked (``abs_on = 0``) or with the ABS (``abs_on = 1``).

Measured inside the scan (:class:`BrakingReducer`), per vehicle: ``distance`` [m] the path length
travelled until the speed first drops below ``stop_speed`` (0.1 m/s), ``stop_time`` [s] (``inf``
if not stopped), ``spun`` when the heading ever turned more than ``spin_angle`` (90 deg) from the
start, ``max_yaw`` [rad].

Reference (:func:`reference_distance`): a locked-wheel car decelerates at ``(mu_slide + drag) g``, with
``mu_slide = -Fx(kappa = -1) / Fz`` the sliding friction of its tire on that surface (from jaxtire at
the static wheel load) and ``drag`` the surface's ploughing drag [N/N], so it stops in ``v^2 / (2
(mu_slide + drag) g)`` (without aerodynamic drag, which shortens the real stop).

:func:`sims.studies.braking.braking_table` runs every preset on every surface, locked and with ABS (a study
per preset), and :func:`format_table` prints it; a spun vehicle's cell reads ``spins``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.limits import any_wheel
from jaxtire.numerics import safe_norm
from jaxtire.surfaces import lookup, surface_id
from jaxtire.tire import scale_tire, tire_forces
from sims.drivers import LaneHoldBraking, StraightBraking, pytree_dataclass
from sims.roads.contact import broadcast_contact
from sims.roads.road import surface_change
from sims.run.fleet import FleetRun, fleet_size, fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.scenarios.config import check_config
from sims.vehicles.core import axle_loads
from sims.vehicles.grip import peak_braking
from sims.vehicles.params import VehicleParams

#: Surfaces of the validation table.
SURFACES = ("asphalt_dry", "asphalt_wet", "gravel", "snow", "ice")
#: 100 km/h [m/s].
V0 = 100.0 / 3.6
#: Default yaw-rate disturbance at the start [rad/s].
YAW_RATE0 = 0.01


class BrakingAcc(NamedTuple):
    """Running accumulators of :class:`BrakingReducer` (one value per vehicle)."""

    distance: Any
    stop_time: Any
    stopped: Any
    max_yaw: Any
    yaw0: Any
    out_of_range: Any = None  # int8 per vehicle: OR over wheels and steps of Telemetry.out_of_range


@pytree_dataclass
class BrakingReducer:
    """In-scan reduction of a braking run: path length to the stop, time to stop, spin flag (module docstring)."""

    stop_speed: Any = 0.1
    spin_angle: Any = math.pi / 2

    def init(self, params, state) -> BrakingAcc:
        z = jnp.zeros_like(state.vx)
        return BrakingAcc(
            z, z + jnp.inf, jnp.zeros(jnp.shape(z), bool), z, state.yaw, jnp.zeros(jnp.shape(z), jnp.int8)
        )

    def update(self, acc: BrakingAcc, t, state, controls, tel, new, params, dt) -> BrakingAcc:
        # safe_norm: a zero (not NaN) gradient once a vehicle stands still, so grad flows through the reducer.
        v0 = safe_norm(state.vx, state.vy)
        v1 = safe_norm(new.vx, new.vy)
        moving = ~acc.stopped
        dist = acc.distance + jnp.where(moving, 0.5 * (v0 + v1) * dt, 0.0)
        now = moving & (v1 < self.stop_speed)
        return BrakingAcc(
            dist,
            jnp.where(now, t + dt, acc.stop_time),
            acc.stopped | now,
            jnp.maximum(acc.max_yaw, jnp.abs(new.yaw - acc.yaw0)),
            acc.yaw0,
            acc.out_of_range
            if getattr(tel, "out_of_range", None) is None
            else acc.out_of_range | any_wheel(tel.out_of_range),
        )


class BrakingResult(NamedTuple):
    """Per vehicle: ``distance`` [m], ``stop_time`` [s] (inf: not stopped), ``stopped``, ``spun``,
    ``max_yaw`` [rad]; numpy arrays."""

    distance: np.ndarray
    stop_time: np.ndarray
    stopped: np.ndarray
    spun: np.ndarray
    max_yaw: np.ndarray
    out_of_range: np.ndarray | None = None  # int8 bits of the tire ranges any wheel left (jaxtire.limits)


def braking_run(
    params: VehicleParams,
    abs_on,
    *,
    speed=V0,
    yaw_rate0=YAW_RATE0,
    dt: float = 0.005,
    model="double_track",
    reducer: BrakingReducer | None = None,
    **run_kw,
) -> FleetRun:
    """The :class:`~sims.run.fleet.FleetRun` of a braking test of the fleet ``params`` (chassis batched) from
    ``speed`` [m/s] with ``abs_on`` per vehicle (0 or 1); ``speed`` and ``yaw_rate0`` scalars or per vehicle.
    ``run_kw``: the other keywords of :class:`~sims.run.fleet.FleetRun` (``integrator``, ``substeps``,
    ``chunk_steps``, ``compiler_options``, ...); ``reducer`` defaults to :class:`BrakingReducer`.
    Arguments outside :data:`sims.scenarios.config.SCENARIO_RANGES` raise ``ValidationError``."""
    check_config(
        "braking_run",
        speed=speed,
        yaw_rate0=yaw_rate0,
        dt=dt,
        substeps=run_kw.get("substeps"),
        chunk_steps=run_kw.get("chunk_steps"),
    )
    reducer = BrakingReducer() if reducer is None else reducer
    if isinstance(reducer, BrakingReducer):
        check_config("BrakingReducer", stop_speed=reducer.stop_speed, spin_angle=reducer.spin_angle)
    m, state0, drv = fleet_start(params, model, StraightBraking(), speed=speed, yaw_rate=yaw_rate0, abs_on=abs_on)
    return FleetRun(params, state0, drv, dt=dt, reducer=reducer, model=m, **run_kw)


def run_to_stop(run: FleetRun, n_steps: int, *, progress=None):
    """Run a :func:`braking_run` until every vehicle has stopped or ``n_steps`` steps have passed (finished
    vehicles are dropped from the batch as it goes); returns ``(BrakingResult, RunStats)``."""
    done = lambda acc: bool(jnp.all(acc.stopped))  # noqa: E731
    _, _, acc, stats = run.run(n_steps, progress=progress, done=done, active=lambda acc: ~acc.stopped)
    acc = jax.tree.map(np.asarray, acc)
    res = BrakingResult(
        acc.distance,
        acc.stop_time,
        acc.stopped,
        acc.max_yaw > float(run.reducer.spin_angle),
        acc.max_yaw,
        acc.out_of_range,
    )
    return res, stats


def brake_test(
    params: VehicleParams,
    abs_on,
    *,
    max_time: float = 60.0,
    progress=None,
    compile_only: bool = False,
    **run_kw,
):
    """Brake a fleet ``params`` (chassis batched) from ``speed`` [m/s]; ``abs_on`` per vehicle (0 or 1).

    :func:`braking_run` (``run_kw``: its keywords ``speed``, ``yaw_rate0``, ``dt``, ``model``,
    ``integrator``, ``substeps``, ``chunk_steps``, ``reducer``, ``compiler_options``) then
    :func:`run_to_stop` for at most ``max_time`` [s].
    Returns ``(BrakingResult, RunStats, FleetRun)`` (``(None, None, run)`` with ``compile_only``).
    """
    check_config("brake_test", max_time=max_time)
    run = braking_run(params, abs_on, **run_kw)
    if compile_only:
        run.compile()
        return None, None, run
    res, stats = run_to_stop(run, max(1, int(math.ceil(max_time / run.dt))), progress=progress)
    return res, stats, run


#: The metrics of the braking scenarios (:class:`Braking`).
BRAKING_METRICS = (
    Metric("distance", "m", "value", True, "path length travelled until the speed first drops below stop_speed"),
    Metric("stop_time", "s", "value", False, "time to the stop (inf: not stopped within max_time)"),
    Metric("stopped", "-", "flag", False, "1 when the vehicle stopped within max_time"),
    Metric("spun", "-", "flag", False, "1 when the heading turned more than spin_angle from the start"),
    Metric("max_yaw", "rad", "value", True, "largest heading change from the start"),
    PASSED._replace(doc="1 when the vehicle stopped without spinning"),
)


@dataclasses.dataclass(frozen=True)
class Braking(ScenarioBase):
    """Straight-line braking as a catalogue scenario (module docstring): full pedal from ``t = 0`` with
    :class:`~sims.drivers.StraightBraking`, measured by :class:`BrakingReducer`.

    Settings (scalars or per vehicle): ``speed`` [m/s] the entry speed (default 100 km/h), ``yaw_rate0``
    [rad/s] the initial yaw-rate disturbance, ``abs_on`` [-] 1 with the ABS, 0 locked.  Static options:
    ``dt`` [s], ``max_time`` [s] the horizon, ``model``, the reducer's ``stop_speed`` [m/s] and
    ``spin_angle`` [rad].  Passed: stopped within ``max_time`` without spinning.  Subclasses change the
    road through :meth:`road_params` (grade, split-mu, a surface change)."""

    name: str = "braking"
    dt: float = 0.005
    max_time: float = 60.0
    model: Any = "double_track"
    stop_speed: float = 0.1
    spin_angle: float = math.pi / 2
    settings: Any = dataclasses.field(
        compare=False, default_factory=lambda: {"speed": V0, "yaw_rate0": YAW_RATE0, "abs_on": 1.0}
    )
    metrics: Any = BRAKING_METRICS
    ranges: Any = dataclasses.field(
        compare=False, default_factory=lambda: {"yaw_rate0": (-10.0, 10.0), "abs_on": (0.0, 1.0)}
    )

    def road_params(self, params: VehicleParams, settings) -> VehicleParams:
        """The fleet as it meets the road (here: unchanged)."""
        return params

    def driver(self):
        """The driver (here :class:`~sims.drivers.StraightBraking`, the steering held straight)."""
        return StraightBraking()

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, dt=self.dt, max_time=self.max_time)
        check_config("BrakingReducer", stop_speed=self.stop_speed, spin_angle=self.spin_angle)
        params = self.road_params(params, settings)
        m, state0, drv = fleet_start(
            params,
            self.model,
            self.driver(),
            speed=settings["speed"],
            yaw_rate=settings["yaw_rate0"],
            abs_on=settings["abs_on"],
        )
        dtype = jnp.asarray(params.chassis.mass).dtype
        red = per_vehicle(BrakingReducer(self.stop_speed, self.spin_angle), state0.vx.shape[0], dtype)
        return Setup(params, state0, drv, red, m, self.dt, max(1, int(math.ceil(self.max_time / self.dt))))

    def evaluate(self, acc: BrakingAcc, setup: Setup, settings) -> dict:
        dtype = acc.distance.dtype
        spun = acc.max_yaw > self.spin_angle
        return dict(
            distance=acc.distance,
            stop_time=acc.stop_time,
            stopped=acc.stopped.astype(dtype),
            spun=spun.astype(dtype),
            max_yaw=acc.max_yaw,
            passed=(acc.stopped & ~spun).astype(dtype),
        )

    def done(self, acc: BrakingAcc):
        return acc.stopped


def _surface(s) -> int:
    return surface_id(s) if isinstance(s, str) else int(s)


@dataclasses.dataclass(frozen=True)
class SplitMuBraking(Braking):
    """:class:`Braking` with the left wheels (FL, RL) on surface ``left`` and the right wheels (FR, RR) on
    ``right`` (names or ids, static): the yaw moment of the unequal braking forces (as
    :func:`split_mu_brake_test`), with a driver who steers against it (``corrects``, default) or the
    steering held straight."""

    name: str = "split_mu_braking"
    left: Any = "asphalt_dry"
    right: Any = "ice"
    corrects: bool = True

    def driver(self):
        """:class:`~sims.drivers.LaneHoldBraking` (the driver steers to hold the line, ``corrects``) or
        :class:`~sims.drivers.StraightBraking` (the steering held straight)."""
        return LaneHoldBraking() if self.corrects else StraightBraking()

    def road_params(self, params: VehicleParams, settings) -> VehicleParams:
        sl, sr = _surface(self.left), _surface(self.right)
        return _with_contact(params, surface_ids=jnp.asarray([sl, sr, sl, sr], jnp.int32))


@dataclasses.dataclass(frozen=True)
class GradeBraking(Braking):
    """:class:`Braking` down a constant slope: setting ``grade`` [rad] (default ``atan(0.1)``, a 10 % grade;
    per vehicle, differentiable) sets the contact's ``grade = -grade`` (as :func:`downhill_brake_test`)."""

    name: str = "grade_braking"
    settings: Any = dataclasses.field(
        compare=False,
        default_factory=lambda: {"speed": V0, "yaw_rate0": YAW_RATE0, "abs_on": 1.0, "grade": math.atan(0.1)},
    )
    ranges: Any = dataclasses.field(
        compare=False, default_factory=lambda: {"yaw_rate0": (-10.0, 10.0), "abs_on": (0.0, 1.0), "grade": (-0.8, 0.8)}
    )

    def road_params(self, params: VehicleParams, settings) -> VehicleParams:
        return _with_contact(params, grade=-settings["grade"])


@dataclasses.dataclass(frozen=True)
class MuJumpBraking(Braking):
    """:class:`Braking` over a surface change (a mu-jump): the road's surface changes from ``before`` to
    ``after`` (names or ids, static) at ``station`` [m] along ``X`` (:func:`sims.roads.road.surface_change`;
    the start is at ``X = 0``), so the ABS meets the new surface mid-stop."""

    name: str = "mu_jump_braking"
    before: Any = "asphalt_dry"
    after: Any = "asphalt_wet"
    station: float = 15.0

    def road_params(self, params: VehicleParams, settings) -> VehicleParams:
        dtype = jnp.asarray(params.chassis.mass).dtype
        return params._replace(road=surface_change(self.station, self.before, self.after, dtype=dtype))


def sliding_friction(params: VehicleParams, surface: str | int, speed=V0) -> float:
    """Load-weighted sliding friction ``-Fx(kappa = -1) / Fz`` of the vehicle's tires on ``surface`` at the
    static wheel loads (front and rear tire, each with its per-vehicle scale), from jaxtire."""
    sid = surface_id(surface) if isinstance(surface, str) else int(surface)
    surf = lookup(params.surfaces, jnp.asarray(sid))
    ch = params.chassis
    ff, fr = axle_loads(ch, params.contact, jnp.zeros(()), jnp.zeros(()))
    total: jax.Array | float = 0.0
    for tire, scale, load in ((params.tire_front, ch.tire_scale_front, ff), (params.tire_rear, ch.tire_scale_rear, fr)):
        fz = 0.5 * load
        out = tire_forces(scale_tire(tire, *scale), jnp.asarray(-1.0), 0.0, 0.0, fz, jnp.asarray(speed), surf)
        total = total + (-out.fx) * 2.0
    return float(total / (ch.mass * GRAVITY))


def reference_distance(params: VehicleParams, surface: str | int, speed=V0) -> float:
    """Locked-wheel stopping distance ``v^2 / (2 (mu_slide + drag) g)`` [m] (module docstring)."""
    sid = surface_id(surface) if isinstance(surface, str) else int(surface)
    drag = float(lookup(params.surfaces, jnp.asarray(sid)).drag)
    return float(speed) ** 2 / (2.0 * (sliding_friction(params, sid, speed) + drag) * GRAVITY)


@jax.jit
def _peak_mu(tire, fz, surface, speed):
    return peak_braking(tire, fz, surface, speed)[1]


def friction_bound(params: VehicleParams, surface: str | int, speed=V0, n_iter: int = 30) -> tuple[float, float]:
    """``(distance [m], mu_peak [-])``: the stop ``v^2 / (2 (mu_peak + drag) g)`` of a car whose every braked
    wheel works at the peak of its tire's braking curve (:func:`sims.vehicles.grip.peak_braking`) on
    ``surface`` (``drag`` its ploughing drag [N/N], on every wheel), ``mu_peak g`` the deceleration the
    tires give, with the longitudinal load transfer at the total deceleration
    (:func:`sims.vehicles.core.axle_loads`, ``a_x = -(mu_peak + drag) g``; fixed-point iteration)::

        m mu_peak g = sum over braked axles of 2 mu_axle(F_axle / 2) F_axle / 2

    An axle with no brake share (the kart's front) contributes no tire force.  Aerodynamic drag and
    rolling resistance are left out (they shorten a real stop a little)."""
    sid = surface_id(surface) if isinstance(surface, str) else int(surface)
    surf = lookup(params.surfaces, jnp.asarray(sid))
    ch = params.chassis
    shares = (float(ch.brake_bias_front), 1.0 - float(ch.brake_bias_front))
    tires = ((params.tire_front, ch.tire_scale_front), (params.tire_rear, ch.tire_scale_rear))
    drag = float(surf.drag) * GRAVITY
    a = drag
    for _ in range(n_iter):
        loads = axle_loads(ch, params.contact, jnp.zeros(()), jnp.asarray(-a, jnp.asarray(ch.mass).dtype))
        force = 0.0
        for (tire, scale), load, share in zip(tires, loads, shares, strict=True):
            if share > 0.0:
                fz = jnp.maximum(0.5 * load, 1.0)
                force += 2.0 * float(_peak_mu(scale_tire(tire, *scale), fz, surf, jnp.asarray(speed, fz.dtype)) * fz)
        a_new = force / float(ch.mass) + drag
        done = abs(a_new - a) <= 1e-7 * a_new
        a = a_new
        if done:
            break
    return float(speed) ** 2 / (2.0 * a), (a - drag) / GRAVITY


def format_table(rows: list[dict]) -> str:
    """A markdown table: presets x surfaces, each cell ``locked / ABS`` distance [m] or ``spins``."""
    surfaces = list(dict.fromkeys(r["surface"] for r in rows))
    names = list(dict.fromkeys(r["preset"] for r in rows))
    cell = {(r["preset"], r["surface"], r["mode"]): r for r in rows}

    def fmt(r):
        if r is None:
            return "-"
        if r["spun"]:
            return "spins"
        return f"{r['distance']:.1f}" if r["stopped"] else f">{r['distance']:.0f}"

    head = "| preset | " + " | ".join(f"{s} locked / ABS [m]" for s in surfaces) + " |"
    sep = "|---" * (len(surfaces) + 1) + "|"
    lines = [head, sep]
    for n in names:
        cells = [f"{fmt(cell.get((n, s, 'locked')))} / {fmt(cell.get((n, s, 'abs')))}" for s in surfaces]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _with_contact(params: VehicleParams, **fields) -> VehicleParams:
    """``params`` (a fleet) with the contact's ``fields`` set, one value per vehicle
    (:func:`sims.roads.contact.broadcast_contact`)."""
    return params._replace(contact=broadcast_contact(params.contact, fleet_size(params), **fields))


def downhill_brake_test(params: VehicleParams, abs_on, grade=math.atan(0.1), **kw):
    """:func:`brake_test` of the fleet ``params`` going *down* a constant slope of ``grade`` [rad] (default
    10 %): the contact's ``grade = -grade``.  A locked car then decelerates at about ``g (mu cos(grade) - sin(grade))``
    instead of ``mu g``."""
    return brake_test(_with_contact(params, grade=-jnp.asarray(grade)), abs_on, **kw)


def split_mu_brake_test(params: VehicleParams, abs_on, left="asphalt_dry", right="ice", **kw):
    """:func:`brake_test` with the left wheels (FL, RL) on surface ``left`` and the right wheels (FR, RR)
    on ``right`` (names or ids): the braking forces differ side to side, so the car yaws towards the
    high-grip side unless the driver (here: none, steering held straight) or ABS limits it."""
    sl, sr = _surface(left), _surface(right)
    return brake_test(_with_contact(params, surface_ids=jnp.asarray([sl, sr, sl, sr], jnp.int32)), abs_on, **kw)
