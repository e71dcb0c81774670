"""ISO 3888-1 double lane change and ISO 3888-2 obstacle avoidance: cone gates, a reference path, cone hits.

Both tracks are three lanes ("gates") of cones joined by free sections; the lane widths follow from the
vehicle width ``w`` (:attr:`~sims.vehicles.params.Chassis.body_width`) [m].  Ground axes: ``X`` along the
track from the entry of section 1, ``Y`` to the left, the centre line of lane 1 at ``Y = 0``; the lane
change goes to the left first.

ISO 3888-1:2018 (double lane change), sections [m]::

    section   1            2       3            4       5 + 6
    length    15           30      25           25      15 + 15
    width     1.1 w + 0.25  -      1.2 w + 0.25  -      1.3 w + 0.25
    lane 3 (section 3) offset: its right-hand boundary 3.5 m left of the right-hand boundary of lane 1;
    sections 5 and 6 share the right-hand boundary of lane 1.

ISO 3888-2:2011 (obstacle avoidance), sections [m]::

    section   1            2       3        4       5
    length    12           13.5    11       12.5    12
    width     1.1 w + 0.25  -      w + 1    -       1.3 w + 0.25, at least 3
    lane 3 offset: 1 m between the left-hand boundary of lane 1 and the right-hand boundary of lane 3;
    section 5 shares the right-hand boundary of lane 1.  Total length 61 m.

(Section lengths and width formulas as given in the standards' Table 1 and as implemented in Project
Chrono's ISO 3888 helper; the lateral offsets as read from the standards' figures.)

Cones (:func:`cones`): on both boundaries of each lane, at the section's ends and evenly between them
at most :data:`CONE_SPACING` apart, each a base circle of radius :data:`CONE_RADIUS` tangent to the
boundary from outside (the standards' "track limits tangential to the base circles").

Reference path (:func:`reference_path`): the centre line of each lane joined by a cosine lane change
through each free section, extended ``reach`` [m] into the lanes on either side (using the lanes' spare
width, as a test driver does), a run-up before and a run-out after: an open :class:`sims.roads.path.Path`
built in JAX from the width, so a study may vary the width.  The driver is :class:`sims.drivers.PathFollower`.

Measured in the scan (:class:`GateReducer`), per vehicle: ``cone_hits`` the number of cones the body
rectangle (:class:`~sims.vehicles.params.Chassis` body fields) touched, ``lane_departure`` [m] the
largest distance a body corner went beyond a lane boundary inside a lane section, ``entry_speed`` [m/s]
the speed when the front of the body entered section 1, ``exit_speed`` [m/s] the speed as the rear
left the last section, ``max_ay`` [m/s^2].  Passed: no cone hit, through the track without spinning.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.numerics import safe_norm
from sims.drivers import PathFollower, pytree_dataclass
from sims.roads.path import graph_path
from sims.run.fleet import fleet_start
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup
from sims.scenarios.config import check_config
from sims.vehicles.params import VehicleParams

#: Cone base radius [m] (a 500 mm traffic cone).
CONE_RADIUS = 0.15
#: Largest spacing of the cones along a lane boundary [m].
CONE_SPACING = 5.0


class Gates(NamedTuple):
    """The lanes of a track, each ``(3,)`` [m]: ``x0``, ``x1`` start and end along ``X``; ``right``, ``left``
    the ``Y`` of the boundaries (``left - right`` the lane width)."""

    x0: Any
    x1: Any
    right: Any
    left: Any


#: Section lengths [m] of the two tracks (lanes at sections 1, 3 and 5 (+ 6)).
ISO3888_1_SECTIONS = (15.0, 30.0, 25.0, 25.0, 30.0)
ISO3888_2_SECTIONS = (12.0, 13.5, 11.0, 12.5, 12.0)


def _lanes(sections, widths, rights) -> Gates:
    ends = np.cumsum(sections)
    x0 = np.array([0.0, ends[1], ends[3]])
    x1 = np.array([ends[0], ends[2], ends[4]])
    right = jnp.stack(rights)
    left = right + jnp.stack(widths)
    dtype = right.dtype
    return Gates(jnp.asarray(x0, dtype), jnp.asarray(x1, dtype), right, left)


def iso3888_1_gates(width) -> Gates:
    """The lanes of ISO 3888-1 for a vehicle ``width`` [m] (module docstring; JAX, per-vehicle arrays ok)."""
    w = jnp.asarray(width, jnp.result_type(float, width))
    wa, wb, wc = 1.1 * w + 0.25, 1.2 * w + 0.25, 1.3 * w + 0.25
    r1 = -0.5 * wa
    return _lanes(ISO3888_1_SECTIONS, (wa, wb, wc), (r1, r1 + 3.5, r1))


def iso3888_2_gates(width) -> Gates:
    """The lanes of ISO 3888-2 for a vehicle ``width`` [m] (module docstring)."""
    w = jnp.asarray(width, jnp.result_type(float, width))
    wa, wb, wc = 1.1 * w + 0.25, w + 1.0, jnp.maximum(1.3 * w + 0.25, 3.0)
    r1 = -0.5 * wa
    return _lanes(ISO3888_2_SECTIONS, (wa, wb, wc), (r1, 0.5 * wa + 1.0, r1))


def cones(gates: Gates, lane_lengths, spacing: float = CONE_SPACING, radius: float = CONE_RADIUS):
    """``(x, y)`` [m] of the cone centres (module docstring), each ``(..., n_cones)``: per lane, per boundary
    (right then left), ``ceil(length / spacing) + 1`` cones evenly from the start to the end of the lane;
    ``lane_lengths`` [m] the lanes' (static) lengths, which fix the count."""
    xs, ys = [], []
    for k, length in enumerate(lane_lengths):
        n = int(math.ceil(float(length) / spacing)) + 1
        u = jnp.linspace(0.0, 1.0, n)
        x = gates.x0[..., k, None] + u * (gates.x1[..., k, None] - gates.x0[..., k, None])
        for side, sign in ((gates.right, -1.0), (gates.left, 1.0)):
            xs.append(x)
            ys.append(jnp.broadcast_to(side[..., k, None] + sign * radius, x.shape))
    return jnp.concatenate(xs, axis=-1), jnp.concatenate(ys, axis=-1)


def body_extent(ch):
    """``(front, rear, half_width)`` [m] of the body rectangle from the CG (:class:`Chassis` body fields)."""
    return ch.cg_to_front + ch.overhang_front, ch.cg_to_rear + ch.overhang_rear, 0.5 * ch.body_width


def reference_path(
    gates: Gates, end: float, *, reach=5.0, run_up: float = 40.0, run_out: float = 40.0, ds: float = 0.5, speed=None
):
    """The open reference :class:`~sims.roads.path.Path` through ``gates`` (one vehicle's, leaves ``(3,)``):
    ``Y`` the centre of lane ``k`` inside it, a cosine ``Y = Y_k + (Y_{k+1} - Y_k) (1 - cos(pi u)) / 2`` from
    ``x1_k - reach`` to ``x0_{k+1} + reach`` between lanes; ``X`` from ``-run_up`` to the track's ``end`` +
    ``run_out`` every ``ds`` [m] (all static).  ``speed``: the path's target-speed profile (scalar or ``(N,)``)."""
    x = jnp.asarray(np.arange(-run_up, end + run_out + 0.5 * ds, ds), gates.x0.dtype)
    yc = 0.5 * (gates.left + gates.right)
    y = jnp.zeros_like(x) + yc[0]
    dy = jnp.zeros_like(x)
    d2y = jnp.zeros_like(x)
    for k in range(2):
        a = gates.x1[k] - reach
        b = gates.x0[k + 1] + reach
        h = yc[k + 1] - yc[k]
        length = b - a
        u = jnp.clip((x - a) / length, 0.0, 1.0)
        inside = ((x > a) & (x < b)).astype(x.dtype)
        y = y + 0.5 * h * (1.0 - jnp.cos(np.pi * u))
        dy = dy + inside * 0.5 * h * np.pi / length * jnp.sin(np.pi * u)
        d2y = d2y + inside * 0.5 * h * (np.pi / length) ** 2 * jnp.cos(np.pi * u)
    return graph_path(x, y, dy, d2y, speed)


class GateAcc(NamedTuple):
    """Running values of :class:`GateReducer` (one vehicle): ``hit`` per cone, ``departure`` [m],
    ``entry_speed`` / ``exit_speed`` [m/s] (``nan`` until reached), ``entered``, ``finished``, ``max_ay``
    [m/s^2], ``max_yaw`` [rad] the largest heading magnitude."""

    hit: Any
    departure: Any
    entry_speed: Any
    exit_speed: Any
    entered: Any
    finished: Any
    max_ay: Any
    max_yaw: Any


@pytree_dataclass
class GateReducer:
    """In-scan measurement of a run through cone gates (module docstring): the lanes (``x0``, ``x1``,
    ``right``, ``left``, each ``(3,)`` [m]) and the cones (``cone_x``, ``cone_y`` [m], ``cone_r`` [m])."""

    x0: Any
    x1: Any
    right: Any
    left: Any
    cone_x: Any
    cone_y: Any
    cone_r: Any = CONE_RADIUS

    def init(self, params, state) -> GateAcc:
        z = jnp.zeros_like(state.vx)
        nan = z + jnp.nan
        no = jnp.zeros(jnp.shape(z), bool)
        return GateAcc(jnp.zeros(jnp.shape(self.cone_x), bool), z, nan, nan, no, no, z, z)

    def update(self, acc: GateAcc, t, state, controls, tel, new, params, dt) -> GateAcc:
        front, rear, half = body_extent(params.chassis)
        c, s = jnp.cos(new.yaw), jnp.sin(new.yaw)
        # cones in the body frame; distance to the body rectangle [-rear, front] x [-half, half]
        dx, dy = self.cone_x - new.x, self.cone_y - new.y
        xb, yb = c * dx + s * dy, -s * dx + c * dy
        ox = jnp.maximum(jnp.maximum(xb - front, -rear - xb), 0.0)
        oy = jnp.maximum(jnp.abs(yb) - half, 0.0)
        hit = acc.hit | (ox * ox + oy * oy < self.cone_r**2)
        # corners against the lane boundaries of the lane each lies in
        dep = acc.departure
        for cx, cy in ((front, half), (front, -half), (-rear, half), (-rear, -half)):
            px, py = new.x + c * cx - s * cy, new.y + s * cx + c * cy
            inside = (px >= self.x0) & (px <= self.x1)
            over = jnp.maximum(py - self.left, self.right - py)
            dep = jnp.maximum(dep, jnp.max(jnp.where(inside, over, 0.0)))
        v = safe_norm(new.vx, new.vy)
        x_front = new.x + front * c
        now_in = ~acc.entered & (x_front >= self.x0[0])
        x_rear = new.x - rear * c
        now_out = ~acc.finished & (x_rear >= self.x1[-1])
        return GateAcc(
            hit,
            dep,
            jnp.where(now_in, v, acc.entry_speed),
            jnp.where(now_out, v, acc.exit_speed),
            acc.entered | now_in,
            acc.finished | now_out,
            jnp.maximum(acc.max_ay, jnp.abs(v * new.yaw_rate)),
            jnp.maximum(acc.max_yaw, jnp.abs(new.yaw)),
        )


GATE_METRICS = (
    Metric("cone_hits", "-", "value", False, "number of cones the body touched"),
    Metric("cone_hit", "-", "flag", False, "1 when the body touched at least one cone"),
    Metric("lane_departure", "m", "value", True, "largest distance a body corner went beyond a lane boundary"),
    Metric("entry_speed", "m/s", "value", True, "speed as the front of the body entered section 1"),
    Metric("exit_speed", "m/s", "value", True, "speed as the rear of the body left the last lane"),
    Metric("max_ay", "m/s^2", "value", True, "largest lateral acceleration V r"),
    Metric("finished", "-", "flag", False, "1 when the body left the last lane within the horizon"),
    PASSED._replace(doc="1 with no cone hit, through the track, heading never beyond spin_angle"),
)


@dataclasses.dataclass(frozen=True)
class ConeTrack(ScenarioBase):
    """A run through cone gates with :class:`~sims.drivers.PathFollower` (module docstring).

    Settings: ``speed`` [m/s] the entry speed (the vehicle starts at it ``run_up`` before section 1),
    ``reach_time`` [s]: the reference lane change extends ``reach = reach_time speed`` [m] into the lanes
    (a driver at speed starts turning earlier, to make up for the car's lag).  Static options: ``standard``
    (``"3888-1"`` or ``"3888-2"``), ``dt`` [s], ``model``, ``run_up`` / ``run_out`` [m], ``spin_angle``
    [rad], ``throttle_off`` (release the throttle at the entry: ISO 3888-2; else the speed is held), the
    driver (``driver``: its gains; the path and target speed are set per vehicle)."""

    name: str = "iso3888_1"
    standard: str = "3888-1"
    dt: float = 0.005
    model: Any = "double_track"
    run_up: float = 40.0
    run_out: float = 30.0
    spin_angle: float = math.pi / 4
    throttle_off: bool = False
    driver: Any = None
    settings: Any = dataclasses.field(compare=False, default_factory=lambda: {"speed": 80.0 / 3.6, "reach_time": 0.225})
    metrics: Any = GATE_METRICS
    ranges: Any = dataclasses.field(compare=False, default_factory=lambda: {"reach_time": (-0.5, 1.0)})

    @property
    def sections(self) -> tuple[float, ...]:
        """The section lengths [m] of the track (lanes at the even indices)."""
        return ISO3888_1_SECTIONS if self.standard == "3888-1" else ISO3888_2_SECTIONS

    @property
    def length(self) -> float:
        """The track's length [m] (the end of its last lane)."""
        return float(sum(self.sections))

    def gates(self, width) -> Gates:
        """The lanes for a vehicle ``width`` [m] (a scalar: leaves ``(3,)``; ``(n,)`` per vehicle: ``(n, 3)``)."""
        fn = iso3888_1_gates if self.standard == "3888-1" else iso3888_2_gates
        return jax.vmap(fn)(width) if jnp.ndim(width) else fn(width)

    def setup(self, params: VehicleParams, settings) -> Setup:
        if self.standard not in ("3888-1", "3888-2"):
            raise ValueError(f"{self.name}: standard = {self.standard!r} is not one of '3888-1', '3888-2'")
        check_config(self.name, dt=self.dt)
        ch = params.chassis
        n = ch.mass.shape[0]
        dtype = jnp.asarray(ch.mass).dtype
        speed = settings["speed"]
        g = self.gates(jnp.asarray(ch.body_width, dtype))
        g = Gates(*(jnp.asarray(a, dtype) for a in g))

        def one_path(gk, v, reach):
            prof = v if not self.throttle_off else None
            p = reference_path(gk, self.length, reach=reach, run_up=self.run_up, run_out=self.run_out, speed=prof)
            if self.throttle_off:
                p = p._replace(speed=jnp.where(p.x < gk.x0[0], v, 0.0))
            return p

        paths = jax.vmap(one_path)(g, speed, settings["reach_time"] * speed)
        base = self.driver if self.driver is not None else PathFollower(paths)
        drv_one = dataclasses.replace(base, path=jax.tree.map(lambda a: a[0], paths))
        m, state0, drv = fleet_start(params, self.model, drv_one, speed=speed, target_speed=speed, profile=1.0)
        drv = dataclasses.replace(drv, path=paths)
        state0 = state0._replace(x=state0.x - self.run_up)
        cx, cy = cones(g, self.sections[0::2])
        red = GateReducer(g.x0, g.x1, g.right, g.left, cx, cy, jnp.full((n,), CONE_RADIUS, dtype))
        horizon = (self.run_up + self.length + self.run_out) / 8.0  # at >= 8 m/s
        return Setup(params, state0, drv, red, m, self.dt, int(math.ceil(horizon / self.dt)))

    def evaluate(self, acc: GateAcc, setup: Setup, settings) -> dict:
        dtype = acc.departure.dtype
        hits = jnp.sum(acc.hit, axis=-1).astype(dtype)
        ok = (hits == 0) & acc.finished & (acc.max_yaw < self.spin_angle)
        return dict(
            cone_hits=hits,
            cone_hit=(hits > 0).astype(dtype),
            lane_departure=acc.departure,
            entry_speed=acc.entry_speed,
            exit_speed=acc.exit_speed,
            max_ay=acc.max_ay,
            finished=acc.finished.astype(dtype),
            passed=ok.astype(dtype),
        )

    def done(self, acc: GateAcc):
        return acc.finished | (acc.max_yaw > self.spin_angle)

    #: The track's own channels for study-file metrics (:mod:`sims.studies.channels`).
    CHANNELS = ("lane.deviation", "lane.inside")

    def channels(self, setup: Setup):
        """``(lanes, {name: fn})``: ``lane.deviation`` [m] the CG's ``Y`` minus the centre line of the lane
        its ``X`` is in (0 outside the lanes), ``lane.inside`` 1 inside a lane section, both at the start of
        the step (the channels a replay records); the lanes per vehicle from the set-up's reducer."""
        r = setup.reducer
        return Gates(r.x0, r.x1, r.right, r.left), {"lane.deviation": lane_deviation, "lane.inside": lane_inside}


def _in_lane(g: Gates, state):
    return (state.x >= g.x0) & (state.x <= g.x1)


def lane_deviation(g: Gates, t, state, controls, tel):
    """The CG's lateral offset [m] from the centre line ``(right + left) / 2`` of the lane it is in (one
    vehicle: lanes ``(3,)``), 0 outside the lanes."""
    return jnp.sum(jnp.where(_in_lane(g, state), state.y - 0.5 * (g.right + g.left), 0.0))


def lane_inside(g: Gates, t, state, controls, tel):
    """1 while the CG is inside a lane section, else 0."""
    return jnp.any(_in_lane(g, state)).astype(jnp.result_type(state.x))


def iso3888_1(**kw) -> ConeTrack:
    """The ISO 3888-1 double lane change scenario (default entry speed 80 km/h, speed held)."""
    return ConeTrack(**kw)


def iso3888_2(**kw) -> ConeTrack:
    """The ISO 3888-2 obstacle avoidance scenario (default entry speed 60 km/h, throttle released at the
    entry of section 1)."""
    base = dict(
        name="iso3888_2",
        standard="3888-2",
        throttle_off=True,
        settings={"speed": 60.0 / 3.6, "reach_time": 0.16},
    )
    return ConeTrack(**{**base, **kw})
