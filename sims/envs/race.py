"""Race on a closed track: lap it as fast as possible without leaving it.

The track (:mod:`sims.roads.circuits`; ``make("jaxtire/RaceOval-v0")``, ``make("jaxtire/RaceTwisty-v0")``, a
shipped circuit ``make("jaxtire/RaceMonza-v0")`` or ``Race(track=my_track)``) is part of ``params``
(``params.track``), so a track with the same number of points can be swapped without recompiling.  Each episode
starts at a random arc length (or at the line with ``params.random_start = False``, as :mod:`sims.envs.evaluate`
does), with a small random lateral offset and heading error, at a speed drawn from ``params.speed`` (5-15 m/s), or
for a share ``params.fast_start`` (1/2) of the random starts at speed: uniform in 0.5-1 times the speed the preview
allows there (``v_allow`` below, at most ``params.top_speed``, 50 m/s), the heading error scaled down by the speed;
the vehicle is the front-wheel-drive ``hatchback`` of :mod:`sims.vehicles.presets` unless ``vehicle=`` names
another preset.

* **Action** (2,) in [-1, 1]: ``steer`` (positive left) times ``max_steer`` times the speed-sensitive share
  ``1 / (1 + (vx / params.steer_speed)^2)`` (:func:`steer_gain`: 1 at standstill, 1/2 at 15 m/s, 1/10 at 45 m/s, as
  a racing game's steering assist), and ``pedal`` (positive: throttle ``a``; negative: brake ``-a`` on all four
  wheels).
* **Observation** (35,), each component scaled to order one (:attr:`Race.obs_names`, bounds in
  :meth:`Race.observation_space`): ``vx / 20``, ``vy / 5``, ``yaw_rate / 2`` (15 with the wheels: speeds
  ``omega Re / 20``, slip ratios ``kappa``, slip angles ``5 alpha``); the pose on the track: ``lateral`` (-1 on the
  right edge, +1 on the left edge), ``half_width / 5`` [m], ``sin`` and ``cos`` of the heading error; the signed
  centreline curvature ``20 kappa_c`` at :data:`NEAR` (0-45 m ahead: where to steer); the **corner demand**
  ``vx^2 max|kappa_c| / g`` in each distance bin of :data:`BINS` (0-250 m ahead: the lateral acceleration [g] the car
  would need in the sharpest point of the bin if it kept its speed; above the grip (about 1) the car must brake
  before the bin); the **speed ratio** ``vx / v_allow`` (the speed over the largest one from which the car can still
  brake to every corner speed of the preview with nominal grip, ``params.preview_grip`` 1 g in the corner,
  ``params.preview_decel`` 0.8 g braking: above 1, brake now; :meth:`Race.preview`); the previous action (2).  ``privileged=True`` appends the surface grip, friction and mass scales.
* **Reward** ``params.progress_scale`` (0.01) per metre of progress along the centreline (negative backwards):
  a lap of Monza is worth 58; the return rate is proportional to the speed along the track, so the lap time is
  the objective.  A crash costs ``params.crash_penalty`` (1, i.e. 100 m of progress) *and* ends the episode, so it
  also forfeits the discounted future progress (at ``gamma = 0.995`` and 30 m/s about 300 m more): a fast crash
  gains the few metres flat out covers before the corner and loses ~400 m.  A larger penalty (5) made the agent
  learn to stand still before it learned to steer.  Discounting: the tuned PPO uses ``gamma = 0.995`` (a 10 s
  horizon at 0.05 s steps, longer than the ~5 s of a full stop from top speed; :data:`sims.envs.ppo.TASK_DEFAULTS`).
* **Termination** (a crash): off track (the car's centre beyond the left or right width at ``s``), spin (``|heading
  error| > params.spin_heading``, 1.5 rad), reversing (``vx < params.min_speed``, 0 m/s; 2 m/s also ends a stalled
  car: PPO then learned the oval in fewer steps but drove Monza slower, 1.5 instead of 1.16 QSS laps at 40-60 M
  steps), a non-finite state; truncation after ``params.max_steps`` (1000 steps, 50 s).
* **Metrics** (``info``): ``speed`` [m/s], ``progress`` [m] in the episode, ``lateral`` [m], ``laps`` (completed
  since the start), ``lap_time`` [s] (of the last completed lap, the crossing interpolated within the step; 0
  before the first), ``time`` [s] in the episode, ``crashed`` (this step ended in a crash).

What changed (v0 before the redesign): the curvature preview ended 75 m ahead, short of the ~160 m a hatchback
needs to brake from its top speed on Monza's straight, so corners appeared too late (now 250 m, as the corner
demand of each bin, a number the policy compares with the grip); progress paid 0.1 per metre and a crash 5, i.e.
50 m of progress, so a fast crash cost almost nothing at the PPO's old ``gamma = 0.99`` (a 5 s horizon); full steer
was ``max_steer`` (0.55 rad) at every speed, so at 27 m/s the exploration noise of a policy's steer already took
the hatchback off Monza's straight, and the trained policy held every straight at ~26 m/s (half the QSS lap's
speed) instead of learning to steer faster (now speed-sensitive, ``steer_speed``; ``inf`` gives the old mapping).
Docs: ``docs/getting-started/rl.md``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from sims.envs.base import Environment, Physics, Transition, as_params_array, dtype_of, make_env_vehicle, uniform
from sims.roads.circuits import (
    Track,
    TrackPose,
    astype,
    curvature_at,
    get_track,
    point_at,
    progress_delta,
    track_pose,
    widths_at,
)
from sims.vehicles.params import Controls, VehicleParams, VehicleState

#: distances [m] ahead of the car's projection at which the signed curvature is observed (steering preview)
NEAR = (0.0, 10.0, 20.0, 30.0, 45.0)
#: distance bins [m] of the corner demand (braking preview): ``[BINS[i], BINS[i + 1])``
BINS = (0.0, 25.0, 50.0, 75.0, 100.0, 130.0, 165.0, 200.0, 250.0)
#: spacing [m] of the curvature samples inside the demand bins
BIN_STEP = 5.0
#: default ``RaceParams.steer_speed`` [m/s]: full steer is ``max_steer`` at standstill, half of it at 15 m/s, a
#: tenth at 45 m/s (:func:`steer_gain`)
STEER_SPEED = 15.0


class RaceParams(NamedTuple):
    vehicle: VehicleParams
    track: Track
    dt: Any
    max_steps: Any
    mass_scale: Any
    mu_scale: Any
    speed: Any  # (2,) initial speed range [m/s]
    random_start: Any  # bool: start anywhere on the track (else at s = 0)
    lateral_noise: Any  # initial lateral offset uniform in +- this [m]
    heading_noise: Any  # initial heading error uniform in +- this [rad]
    progress_scale: Any  # reward per metre of progress
    crash_penalty: Any  # reward subtracted on off-track / spin
    spin_heading: Any  # |heading error| of a spin [rad]
    min_speed: Any  # below this forward speed [m/s] the car has stalled (or reverses): a crash
    preview_grip: Any  # lateral acceleration [g] of the speed-limit preview's corners
    preview_decel: Any  # deceleration [g] of the speed-limit preview's braking
    steer_speed: Any  # speed [m/s] at which full steer is half of max_steer (speed-sensitive steering; inf: off)
    fast_start: Any  # share [-] of random starts at speed: U(0.5, 1) x the preview's allowed speed, capped
    top_speed: Any  # cap [m/s] of a fast start's speed


class LapTimer(NamedTuple):
    """Lap bookkeeping of an episode: completed ``laps`` (int32), the episode ``time`` [s], the time the current lap
    began ``start`` [s] and the time of the last completed lap ``last`` [s] (0 before the first)."""

    laps: Any
    time: Any
    start: Any
    last: Any


class RaceState(NamedTuple):
    vehicle: VehicleState
    phys: Physics
    kappa: Any
    alpha: Any
    pose: TrackPose
    progress: Any  # arc length driven in the episode [m]
    timer: LapTimer
    last_action: Any
    t: Any
    ret: Any


def steer_gain(vx, steer_speed):
    """Speed-sensitive steering: the share ``1 / (1 + (vx / steer_speed)^2)`` [-] of ``max_steer`` that full steer
    gives at the forward speed ``vx`` [m/s] (1 at standstill, 1/2 at ``steer_speed``; ``steer_speed = inf``: 1).  The
    road-wheel angle a corner of radius ``R`` needs falls as ``L / R`` while the lateral acceleration of a given angle
    grows as ``vx^2``: with a fixed scale, a steer error of 0.02 at 50 m/s is ~0.5 g."""
    x = jnp.maximum(vx, 0.0) / steer_speed
    return 1.0 / (1.0 + x * x)


def pedal_controls(action, max_steer, brake_wheels: int = 4) -> Controls:
    """``(steer, pedal)`` in [-1, 1] -> :class:`Controls` (pedal > 0 throttle, < 0 brake)."""
    pedal = action[1]
    return Controls(steer=action[0] * max_steer, throttle=jnp.maximum(pedal, 0.0), brake=jnp.maximum(-pedal, 0.0))


def lap_timer(timer: LapTimer, progress_old, progress_new, length, dt) -> LapTimer:
    """The timer after a step of ``dt`` [s] from ``progress_old`` to ``progress_new`` [m] (episode progress) on a
    track of ``length`` [m]: a lap completes when the progress first reaches ``(laps + 1) length``; its crossing
    time is interpolated linearly within the step."""
    t_new = timer.time + dt
    target = (timer.laps + 1).astype(progress_new.dtype) * length
    crossed = (progress_new >= target) & (progress_old < target)
    step = progress_new - progress_old
    frac = jnp.clip((target - progress_old) / jnp.where(crossed, step, 1.0), 0.0, 1.0)
    t_cross = timer.time + frac * dt
    return LapTimer(
        laps=timer.laps + crossed.astype(jnp.int32),
        time=t_new,
        start=jnp.where(crossed, t_cross, timer.start),
        last=jnp.where(crossed, t_cross - timer.start, timer.last),
    )


def preview_offsets(dtype) -> tuple[Any, np.ndarray]:
    """The arc-length offsets [m] of the curvature samples of the demand preview and, for each sample, its bin
    (int, shape of the offsets): ``BIN_STEP`` apart from ``BINS[0]`` to ``BINS[-1]``."""
    d = np.arange(BINS[0], BINS[-1] + 0.5 * BIN_STEP, BIN_STEP)
    b = np.minimum(np.searchsorted(np.asarray(BINS), d, side="right") - 1, len(BINS) - 2)
    return jnp.asarray(d, dtype), b


class SteerPedal(Environment):
    """Base of the environments driven by ``(steer, pedal)`` in [-1, 1] (:func:`pedal_controls`): race, drift."""

    num_actions = 2
    action_names = ("steer", "pedal")

    def controls(self, action, params) -> Controls:
        """``(steer, pedal)`` -> :class:`~sims.vehicles.params.Controls` (:func:`pedal_controls`)."""
        return pedal_controls(action, params.vehicle.chassis.max_steer)


def _bin_name(i: int) -> str:
    return f"demand_{int(BINS[i])}_{int(BINS[i + 1])}m"


class Race(SteerPedal):
    """Race on a closed track (module docstring).  ``window`` (static): segments searched either side of the
    previous nearest one each step (10 m at the default 1 m spacing; a car covers at most ~4 m a step)."""

    obs_names = (
        ("vx", "vy", "yaw_rate", *Environment.per_wheel("wheel_speed", "kappa", "alpha"))
        + ("lateral", "half_width", "sin_heading_error", "cos_heading_error")
        + tuple(f"curvature_{int(d)}m" for d in NEAR)
        + tuple(_bin_name(i) for i in range(len(BINS) - 1))
        + ("speed_ratio", "last_steer", "last_pedal")
    )
    #: bounds of each observation component (name prefix -> (low, high)); the rest are clipped to [-10, 10]
    obs_bounds = {
        "lateral": (-3.0, 3.0),
        "half_width": (0.0, 10.0),
        "sin_heading_error": (-1.0, 1.0),
        "cos_heading_error": (-1.0, 1.0),
        "demand_": (0.0, 10.0),
        "speed_ratio": (0.0, 10.0),
        "last_": (-1.0, 1.0),
        "kappa_": (-10.0, 10.0),
    }

    def __init__(
        self,
        track="twisty",
        vehicle: str = "hatchback",
        window: int = 10,
        substeps: int = 10,
        privileged: bool = False,
        model: str = "double_track",
    ):
        super().__init__(substeps, privileged, model)
        self.track = track
        self.vehicle = vehicle
        self.window = int(window)
        self.name = f"race-{track.lower()}" if isinstance(track, str) else "race"

    def init_params(self, dtype) -> RaceParams:
        f = lambda v: as_params_array(v, dtype)  # noqa: E731
        track = astype(get_track(self.track, dtype=dtype), dtype)
        return RaceParams(
            vehicle=make_env_vehicle(self.vehicle, dtype=dtype),
            track=track,
            dt=f(0.05),
            max_steps=jnp.asarray(1000, jnp.int32),
            mass_scale=f([1.0, 1.0]),
            mu_scale=f([1.0, 1.0]),
            speed=f([5.0, 15.0]),
            random_start=jnp.asarray(True),
            lateral_noise=f(1.0),
            heading_noise=f(0.1),
            progress_scale=f(0.01),
            crash_penalty=f(1.0),
            spin_heading=f(1.5),
            min_speed=f(0.0),
            preview_grip=f(1.0),
            preview_decel=f(0.8),
            steer_speed=f(STEER_SPEED),
            fast_start=f(0.5),
            top_speed=f(50.0),
        )

    def reset_state(self, key, params: RaceParams) -> RaceState:
        dtype = dtype_of(params)
        tr = params.track
        k_phys, k_s, k_lat, k_head, k_v, k_fast, k_share = jax.random.split(key, 7)
        phys = self.sample_physics(k_phys, params, jnp.zeros((4,), jnp.int32))
        s0 = jnp.where(params.random_start, jax.random.uniform(k_s, (), dtype) * tr.length, jnp.zeros((), dtype))
        s0 = jnp.mod(s0, tr.length)
        # a share of the random starts at speed: the states a fast lap passes through (braking from speed,
        # steering at speed) from the first update, not only after the policy has learned to get there
        fast = params.random_start & (jax.random.uniform(k_share, (), dtype) < params.fast_start)
        v_fast = jax.random.uniform(k_fast, (), dtype, 0.5, 1.0) * jnp.minimum(
            jnp.sqrt(self.allowed_speed2(params, s0)), params.top_speed
        )
        v = jnp.where(fast, v_fast, uniform(k_v, params.speed, dtype))
        calm = jnp.minimum(1.0, params.speed[1] / jnp.maximum(v, 1e-3))  # heading noise of a slow start's size
        lat = params.lateral_noise * jax.random.uniform(k_lat, (), dtype, -1.0, 1.0)
        he = calm * params.heading_noise * jax.random.uniform(k_head, (), dtype, -1.0, 1.0)
        x, y, heading = point_at(tr, s0)
        x = x - jnp.sin(heading) * lat
        y = y + jnp.cos(heading) * lat
        vs = self.init_vehicle(params.vehicle, v, x=x, y=y, yaw=heading + he)
        idx = jnp.mod(jnp.floor(s0 / tr.ds).astype(jnp.int32), tr.xy.shape[0])
        pose = TrackPose(s0, lat, he, idx)
        zero = jnp.zeros((), dtype)
        z4 = jnp.zeros((4,), dtype)
        timer = LapTimer(jnp.zeros((), jnp.int32), zero, zero, zero)
        return RaceState(vs, phys, z4, z4, pose, zero, timer, jnp.zeros((2,), dtype), jnp.zeros((), jnp.int32), zero)

    def transition(self, key, state: RaceState, action, params: RaceParams) -> Transition:
        controls = self.controls(action, params)
        controls = controls._replace(steer=controls.steer * steer_gain(state.vehicle.vx, params.steer_speed))
        vs, tel = self.simulate(params, state, controls)
        tr = params.track
        pose = track_pose(tr, vs.x, vs.y, vs.yaw, hint=state.pose.index, window=self.window)
        ds = progress_delta(tr, pose.s, state.pose.s)
        wl, wr = widths_at(tr, pose.s)
        off = (pose.lateral > wl) | (-pose.lateral > wr)
        spin = jnp.abs(pose.heading_error) > params.spin_heading
        stall = vs.vx < params.min_speed
        crash = off | spin | stall
        reward = params.progress_scale * ds - jnp.where(crash, params.crash_penalty, 0.0)
        progress = state.progress + ds
        timer = lap_timer(state.timer, state.progress, progress, tr.length, params.dt)
        dtype = reward.dtype
        st = state._replace(
            vehicle=vs,
            kappa=tel.kappa.astype(dtype),
            alpha=tel.alpha.astype(dtype),
            pose=pose,
            progress=progress,
            timer=timer,
            last_action=action,
        )
        metrics = {
            "speed": vs.vx,
            "progress": progress,
            "lateral": pose.lateral,
            "laps": timer.laps,
            "lap_time": timer.last,
            "time": timer.time,
            "crashed": crash,
        }
        return Transition(st, reward, crash, metrics)

    def preview(self, state: RaceState, params: RaceParams):
        """``(curvature, demand, speed_ratio)``: the signed curvature [1/m] at :data:`NEAR` ahead of the car's
        projection (5,); the corner demand ``vx^2 max|kappa| / g`` [g] in each bin of :data:`BINS` (8,); and
        ``vx / v_allow``, the speed over the largest speed from which the car can still brake at ``preview_decel``
        [g] to every sample's corner speed ``sqrt(preview_grip g / |kappa|)`` within 250 m::

            v_allow^2 = min_j ( preview_grip g / |kappa(s + d_j)| + 2 preview_decel g d_j )

        (the QSS backward pass over the preview, with nominal grip: above 1, brake now)."""
        tr = params.track
        s = state.pose.s
        dtype = dtype_of(params)
        near = curvature_at(tr, s + jnp.asarray(NEAR, dtype))
        d, b = preview_offsets(dtype)
        k = jnp.abs(curvature_at(tr, s + d))
        kmax = jax.ops.segment_max(k, jnp.asarray(b), num_segments=len(BINS) - 1, indices_are_sorted=True)
        v = state.vehicle.vx
        return near, v * v * kmax / GRAVITY, jnp.maximum(v, 0.0) / jnp.sqrt(self.allowed_speed2(params, s, k))

    def allowed_speed2(self, params: RaceParams, s, k=None):
        """``v_allow^2`` [m^2/s^2] at arc length ``s`` [m] (:meth:`preview`); ``k`` the preview's ``|kappa|``
        samples when already at hand."""
        d, _ = preview_offsets(dtype_of(params))
        k = jnp.abs(curvature_at(params.track, s + d)) if k is None else k
        v_corner2 = params.preview_grip * GRAVITY / jnp.maximum(k, 1e-4)
        return jnp.min(v_corner2 + 2.0 * params.preview_decel * GRAVITY * d)

    def get_obs(self, state: RaceState, params: RaceParams):
        vs = state.vehicle
        he = state.pose.heading_error
        wl, wr = widths_at(params.track, state.pose.s)
        half = 0.5 * (wl + wr)
        near, demand, ratio = self.preview(state, params)
        return self.finish_obs(
            [
                vs.vx / 20.0,
                vs.vy / 5.0,
                vs.yaw_rate / 2.0,
                self.wheel_speeds(params.vehicle, vs) / 20.0,
                state.kappa,
                5.0 * state.alpha,
                (state.pose.lateral - 0.5 * (wl - wr)) / half,
                half / 5.0,
                jnp.sin(he),
                jnp.cos(he),
                20.0 * near,
                demand,
                ratio,
                state.last_action,
            ],
            state,
            params,
        )


def scripted_driver(
    obs,
    target_speed: float = 12.0,
    wheelbase: float = 2.64,
    max_steer: float = 0.6,
    k_lat: float = 0.5,
    k_head: float = 1.2,
    names: tuple = Race.obs_names,
    steer_speed: float = STEER_SPEED,
):
    """A simple line-following driver on the race observation: curvature feedforward ``L kappa_c`` (10 m
    ahead) plus feedback on the lateral offset and heading error; P control of the speed.  (2,) action."""
    col = lambda name: obs[..., names.index(name)]  # noqa: E731
    vx = col("vx") * 20.0
    steer = wheelbase * col("curvature_10m") / 20.0 - k_lat * col("lateral") - k_head * col("sin_heading_error")
    pedal = 0.5 * (target_speed - vx)
    full = max_steer * steer_gain(vx, steer_speed)  # the road-wheel angle of full steer at this speed
    return jnp.clip(jnp.stack([steer / full, pedal], axis=-1), -1.0, 1.0)
