"""The transient lap: any vehicle model driven round a closed line by :class:`sims.drivers.LapFollower`.

The driver follows the race line (a :class:`sims.roads.path.Path`, closed) at a target-speed profile times a
``margin`` (on a ``circuit``, or with a ``qss_line``: each vehicle's quasi-steady lap profile at ``grip`` of its
friction, solved in the set-up by :mod:`sims.vehicles.qss`; :func:`transient_lap` builds the scenario for a
line of your own), starting on the line at ``s = 0`` at the profile's speed.  Measured in the scan
(:class:`LapReducer`), per vehicle, against the circuit's centreline and widths (a
:class:`sims.roads.circuits.Track`):

* ``lap_time`` [s]: when the distance driven along the centreline first reaches its length (linear in the
  step that crosses; ``nan`` if not within the horizon);
* ``time_off`` [s]: time with any wheel contact (``x_i``, ``y_i`` of the wheel layout, turned by the heading
  error) beyond the left or right edge;
* ``spun``: the heading error left ``spin_angle`` at some step; ``peak_alpha`` [rad]: the largest slip angle
  of any wheel; ``passed``: a lap with no time off track and no spin.

Static options: ``line`` (the Path the driver follows; default the built-in oval's centreline at the
``speed`` setting), ``track`` (the centreline Track the edges come from; default the oval), both either one
for every vehicle or one per vehicle (every leaf with a leading vehicle axis: laps of several circuits in one
compiled program, their point counts made equal by :func:`sims.roads.circuits.resample` and stacked by
:func:`sims.roads.circuits.stack`; a stack of Paths by ``jax.tree.map(jnp.stack, ...)``), ``dt`` [s],
``model``, ``max_time`` [s], ``spin_angle`` [rad], ``window`` (segments searched around the last one), the
driver (``driver``: its gains; default :class:`~sims.drivers.LapFollower` with the vehicle's linear understeer
gradient, :func:`sims.scenarios.sine_dwell.understeer_gradient`, as steering feed-forward).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.validation import ValidationError, check_range
from sims.drivers import LapFollower, pytree_dataclass
from sims.roads.circuits import Track, astype, get_track, load_circuit, progress_delta, stack, track_pose, widths_at
from sims.roads.path import Path, make_path
from sims.roads.raceline import min_curvature_line
from sims.run.fleet import fleet_size, fleet_start, vehicles
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, run_scenario
from sims.scenarios.sine_dwell import understeer_gradient
from sims.vehicles.params import VehicleParams, wheel_layout
from sims.vehicles.qss import LapResult, at_grip, fleet_laps, lap_times


class LapAcc(NamedTuple):
    """In-scan accumulator of :class:`LapReducer` (module docstring); ``s`` and ``index`` the last pose."""

    s: Any
    index: Any
    progress: Any
    lap_time: Any
    time_off: Any
    spun: Any
    peak_alpha: Any


@pytree_dataclass
class LapReducer:
    """Lap time, time off track, spin and peak slip against ``track`` (module docstring); ``window`` segments
    searched around the last one (a Python int, static)."""

    track: Any
    spin_angle: Any = 1.2

    def init(self, params, state) -> LapAcc:
        pose = track_pose(self.track, state.x, state.y, state.yaw)
        z = jnp.zeros_like(state.vx)
        return LapAcc(pose.s, pose.index, z, z + jnp.nan, z, jnp.zeros(jnp.shape(z), bool), z)

    def update(self, acc: LapAcc, t, state, controls, tel, new, params, dt) -> LapAcc:
        tr = self.track
        pose = track_pose(tr, new.x, new.y, new.yaw, hint=acc.index, window=WINDOW)
        ds = progress_delta(tr, pose.s, acc.s)
        prog = acc.progress + ds
        crossed = jnp.isnan(acc.lap_time) & (prog >= tr.length)
        frac = jnp.clip((tr.length - acc.progress) / jnp.where(ds > 1e-9, ds, 1.0), 0.0, 1.0)
        lap_time = jnp.where(crossed, t + frac * dt, acc.lap_time)
        lay = wheel_layout(params.chassis, 4)
        c, s = jnp.cos(pose.heading_error), jnp.sin(pose.heading_error)
        wl, wr = widths_at(tr, pose.s)
        off = jnp.zeros_like(ds, dtype=bool)
        for x, y in zip(lay.x, lay.y, strict=True):
            lat = pose.lateral + s * x + c * y
            off = off | (lat > wl) | (-lat > wr)
        running = jnp.isnan(acc.lap_time)
        return LapAcc(
            pose.s,
            pose.index,
            prog,
            lap_time,
            acc.time_off + jnp.where(off & running, dt, 0.0),
            acc.spun | (jnp.abs(pose.heading_error) > self.spin_angle),
            jnp.maximum(acc.peak_alpha, jnp.max(jnp.abs(tel.alpha))),
        )


#: Segments searched either side of the last one (a car moves < 1 segment of 1-2.5 m per 5 ms step).
WINDOW = 8

LAP_METRICS = (
    Metric("lap_time", "s", "value", True, "time to drive one lap (nan if not within max_time)"),
    Metric("time_off", "s", "value", False, "time with any wheel beyond an edge during the lap"),
    Metric("spun", "-", "flag", False, "1 when the heading error left spin_angle"),
    Metric("peak_alpha", "rad", "value", True, "largest slip angle of any wheel"),
    Metric("finished", "-", "flag", False, "1 when the lap was completed within max_time"),
    PASSED._replace(doc="1 for a completed lap with no time off track and no spin"),
)


def path_from_line(line: Track, speed=None, dtype=None) -> Path:
    """The closed :class:`~sims.roads.path.Path` through the points of ``line`` with a target ``speed``
    profile [m/s] (one per point; ``None``: 0)."""
    xy = np.asarray(line.xy, np.float64)
    return make_path(xy[:, 0], xy[:, 1], closed=True, speed=speed, dtype=dtype)


@dataclasses.dataclass(frozen=True)
class TransientLap(ScenarioBase):
    """A lap with :class:`~sims.drivers.LapFollower` (module docstring).  Settings: ``speed`` [m/s] (a
    constant target where the line has no profile), ``margin`` [-] (the profile's factor), ``grip`` [-] (the
    share of the tires' friction of each vehicle's QSS profile on a ``circuit``: :func:`qss_profile`).
    ``circuit``: a shipped circuit's name or a centreline file (:func:`sims.roads.circuits.load_circuit`, 2.5 m):
    the track, and its minimum-curvature line ``line_margin`` [m] from the edges (``qss_line``, the
    :class:`~sims.roads.circuits.Track` the QSS laps are solved on, :func:`qss_profile`, in the set-up;
    ``line`` its Path)."""

    name: str = "lap"
    line: Any = dataclasses.field(default=None, compare=False)
    track: Any = dataclasses.field(default=None, compare=False)
    dt: float = 0.005
    model: Any = "double_track"
    max_time: float = 200.0
    spin_angle: float = 1.2
    driver: Any = dataclasses.field(default=None, compare=False)
    circuit: str | None = None
    line_margin: float = 2.0
    qss_line: Any = dataclasses.field(default=None, compare=False)
    settings: Any = dataclasses.field(
        compare=False, default_factory=lambda: {"speed": 15.0, "margin": 1.0, "grip": 0.95}
    )
    metrics: Any = LAP_METRICS
    ranges: Any = dataclasses.field(compare=False, default_factory=lambda: {"margin": (0.1, 1.2), "grip": (0.1, 1.0)})

    def __post_init__(self):  # the default geometry, built here (concrete numpy work, never under a trace)
        if self.circuit is not None and self.qss_line is None:  # a circuit by name or file: its centreline and
            cl = load_circuit(self.circuit, ds=2.5, dtype=np.float32)  # minimum-curvature line
            line, _ = min_curvature_line(cl, margin=self.line_margin)
            object.__setattr__(self, "track", cl)
            object.__setattr__(self, "qss_line", line)
            object.__setattr__(self, "line", path_from_line(line, dtype=np.float32))
        if self.track is not None and self.line is None:
            object.__setattr__(self, "line", path_from_line(self.track, dtype=np.float32))

    def prepare(self) -> None:
        """Build the default geometry (the built-in oval and its line) if none was given: on first use, not
        when the catalogue's instance is made (importing :mod:`sims.scenarios` does no JAX work, so the CLI can
        still set XLA's device count and vector width); under a trace it runs eagerly."""
        if self.track is None:
            with jax.ensure_compile_time_eval():
                object.__setattr__(self, "track", get_track("oval", dtype=np.float32))
        if self.line is None:
            object.__setattr__(self, "line", path_from_line(self.track, dtype=np.float32))

    def geometry(self, dtype):
        """``(line Path, centreline Track)``: the options, or the built-in oval."""
        self.prepare()
        return self.line, self.track

    def setup(self, params: VehicleParams, settings) -> Setup:
        ch = params.chassis
        n = ch.mass.shape[0]
        dtype = jnp.asarray(ch.mass).dtype
        line, track = self.geometry(dtype)
        line = Path(*(jnp.asarray(a, dtype) for a in line))
        if self.qss_line is not None:  # a circuit: each vehicle's own QSS profile at `grip` of its friction
            line = line._replace(speed=qss_profile(params, self.qss_line, settings["grip"]))
        shape = (n, line.s.shape[-1])
        has_profile = jnp.max(line.speed) > 0  # else the constant speed setting
        prof = jnp.broadcast_to(line.speed, shape) * settings["margin"][:, None]
        speed = jnp.where(has_profile, prof, settings["speed"][:, None] + jnp.zeros(shape, dtype))
        geo = jnp.broadcast_to
        paths = Path(
            geo(line.s, (n,) + line.s.shape[-1:]),
            geo(line.x, (n,) + line.s.shape[-1:]),
            geo(line.y, (n,) + line.s.shape[-1:]),
            geo(line.heading, (n,) + line.s.shape[-1:]),
            geo(line.curvature, (n,) + line.s.shape[-1:]),
            speed,
            geo(line.closed, (n,)),
        )
        base = self.driver if self.driver is not None else LapFollower(paths, understeer=understeer_gradient(params)[0])
        one = dataclasses.replace(base, path=Path(*(a[0] for a in paths)))
        m, state0, drv = fleet_start(params, self.model, one, speed=speed[:, 0])
        drv = dataclasses.replace(drv, path=paths)
        state0 = state0._replace(
            x=state0.x * 0 + paths.x[:, 0], y=state0.y * 0 + paths.y[:, 0], yaw=state0.yaw * 0 + paths.heading[:, 0]
        )
        per_vehicle = jnp.ndim(track.length) == 1  # a stack of tracks (circuits.stack), one per vehicle
        lead = lambda a: jnp.shape(a)[1:] if per_vehicle else jnp.shape(a)  # noqa: E731
        trk = Track(*(None if a is None else jnp.broadcast_to(jnp.asarray(a, dtype), (n,) + lead(a)) for a in track))
        red = LapReducer(trk, jnp.full((n,), self.spin_angle, dtype))
        return Setup(params, state0, drv, red, m, self.dt, int(math.ceil(self.max_time / self.dt)))

    def evaluate(self, acc: LapAcc, setup: Setup, settings) -> dict:
        dtype = acc.progress.dtype
        done = ~jnp.isnan(acc.lap_time)
        ok = done & (acc.time_off <= 0) & ~acc.spun
        return dict(
            lap_time=acc.lap_time,
            time_off=acc.time_off,
            spun=acc.spun.astype(dtype),
            peak_alpha=acc.peak_alpha,
            finished=done.astype(dtype),
            passed=ok.astype(dtype),
        )

    def done(self, acc: LapAcc):
        return ~jnp.isnan(acc.lap_time) | acc.spun


def qss_profile(params: VehicleParams, qss_line: Track, grip):
    """Each vehicle's speed profile ``(n, N + 1)`` [m/s] on the closed path of ``qss_line`` (``N`` points; the
    path repeats its first): the quasi-steady lap (:func:`sims.vehicles.qss.solve_lap`, tire envelope) of the
    vehicle with its tires' friction times ``grip`` [-] (one or per vehicle).  Traceable; differentiable."""
    line = astype(qss_line, jnp.asarray(params.chassis.mass).dtype)
    return _closed(fleet_laps(at_grip(params, grip), line, envelope="tire").v)


def transient_lap(
    params: VehicleParams,
    line,
    centre,
    *,
    grip=0.95,
    margin=1.0,
    envelope: str = "tire",
    model="double_track",
    dt: float = 0.005,
    qss: LapResult | None = None,
    **run_kw,
):
    """The transient lap (:class:`TransientLap`) of the fleet ``params`` on ``line`` (the race line;
    ``centre`` the circuit's centreline with its widths); ``(metrics, qss)`` with the scenario's per-vehicle
    metrics from :func:`sims.scenarios.base.run_scenario` (``run_kw`` go to it) and each vehicle's QSS lap
    (:func:`sims.vehicles.qss.lap_times` with ``envelope``, or ``qss`` when given): the bound the lap is judged
    against.

    The driver's speed profile is the QSS lap of the same vehicle with its tires' friction (``TireScale.mu_x``,
    ``mu_y``) scaled by ``grip`` [-] (a driver using that share of the grip: corners and braking zones slower,
    the straights at full power), times ``margin`` [-] (a speed factor on all of it); both scalars or one per
    vehicle.  ``grip = 1`` drives the bound's own profile.

    ``line`` and ``centre`` may also be sequences, one circuit per vehicle (equal point counts:
    :func:`sims.roads.circuits.resample`), or one of them a sequence and the other one
    :class:`~sims.roads.circuits.Track` for every vehicle: vehicle ``i`` laps ``line[i]``, all in one compiled
    program; the QSS laps then come one vehicle at a time (one compile: equal shapes) and ``qss`` has their
    leaves stacked."""
    n = fleet_size(params)
    grip = jnp.broadcast_to(jnp.asarray(grip, jnp.asarray(params.chassis.mass).dtype), (n,))
    check_range("grip", grip, 0.1, 1.0, source="transient_lap")
    ch = params.chassis
    driven = at_grip(params, grip)
    same = bool(np.all(np.asarray(grip) == 1.0))
    if not (isinstance(line, Track) and isinstance(centre, Track)):  # (a Track is a tuple: test the type)
        line = [line] * n if isinstance(line, Track) else list(line)
        centre = [centre] * n if isinstance(centre, Track) else list(centre)
        if len(line) != n or len(centre) != n:
            raise ValidationError(f"transient_lap: {len(line)} lines and {len(centre)} centrelines for {n} vehicles")

        def laps(p):
            one = lambda i: vehicles(p, slice(i, i + 1))  # noqa: E731
            return jax.tree.map(
                lambda *a: jnp.concatenate(a), *[lap_times(one(i), ln, envelope=envelope) for i, ln in enumerate(line)]
            )

        paths = [path_from_line(ln, dtype=jnp.asarray(ch.mass).dtype) for ln in line]
        geom = jax.tree.map(lambda *a: jnp.stack(a), *paths)
        track = stack(list(centre))
    else:
        laps = lambda p: lap_times(p, line, envelope=envelope)  # noqa: E731
        geom = path_from_line(line, dtype=jnp.asarray(ch.mass).dtype)
        track = centre
    if qss is None:
        qss = laps(params)
    ref = qss if same else laps(driven)
    sc = TransientLap(
        line=geom._replace(speed=_closed(ref.v)),
        track=track,
        model=model,
        dt=dt,
        max_time=float(1.5 * jnp.max(ref.lap_time) / np.min(margin)),
    )
    metrics, _ = run_scenario(sc, params, {"margin": margin}, **run_kw)
    return metrics, qss


def _closed(v):
    """Speed profiles ``(n, N)`` on a closed path's ``N + 1`` points (the path repeats its first point)."""
    v = jnp.asarray(v)
    return jnp.concatenate([v, v[:, :1]], axis=1)
