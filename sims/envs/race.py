"""Track-following race on a closed track: drive as far along the centreline as possible.

The track (:mod:`sims.roads.circuits`; ``make("jaxtire/RaceOval-v0")``, ``make("jaxtire/RaceTwisty-v0")``, a
shipped circuit ``make("jaxtire/RaceMonza-v0")`` or ``Race(track=my_track)``) is part of ``params`` (``params.track``),
so a track with the same number of
points can be swapped without recompiling.  Each episode starts at a random arc length (or at the line
with ``params.random_start = False``), with a small random lateral offset and heading error, at a
speed drawn from ``params.speed`` (5-15 m/s); the vehicle is the front-wheel-drive ``hatchback`` of
:mod:`sims.vehicles.presets` unless ``vehicle=`` names another preset.

* **Action** (2,) in [-1, 1]: ``steer`` (times ``max_steer``, positive left) and ``pedal`` (positive:
  throttle ``a``; negative: brake ``-a`` on all four wheels).
* **Observation** (26,): ``vx / 20``, ``vy / 5``, ``yaw_rate / 2``, wheel speeds ``omega Re / 20`` (``Re``: :func:`sims.vehicles.core.rolling_radii`)
  (4), slip ratios ``kappa`` (4), slip angles ``5 alpha`` (4), track-relative pose (lateral offset /
  half width, ``sin`` and ``cos`` of the heading error), the centreline curvature ``20 kappa_c`` at
  ``params.lookahead`` (6 distances, 5-75 m ahead of the car's projection), the previous action (2);
  ``privileged=True`` appends the surface grip, friction and mass scales (29,).
* **Reward** ``params.progress_scale`` (0.1) per metre of progress along the centreline (negative when
  going backwards), ``-params.crash_penalty`` (5) on a crash.
* **Termination**: off track (``lateral`` beyond the left or right width at ``s``), spin (``|heading error| >
  params.spin_heading``, 1.5 rad), a non-finite state; truncation after ``params.max_steps`` (1000 steps,
  50 s).
* **Metrics**: ``speed`` [m/s], ``progress`` [m] in the episode, ``lateral`` [m], ``laps``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

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

LOOKAHEAD = (5.0, 10.0, 20.0, 35.0, 50.0, 75.0)


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
    lookahead: Any  # (6,) curvature preview distances [m]


class RaceState(NamedTuple):
    vehicle: VehicleState
    phys: Physics
    kappa: Any
    alpha: Any
    pose: TrackPose
    progress: Any  # arc length driven in the episode [m]
    last_action: Any
    t: Any
    ret: Any


def pedal_controls(action, max_steer, brake_wheels: int = 4) -> Controls:
    """``(steer, pedal)`` in [-1, 1] -> :class:`Controls` (pedal > 0 throttle, < 0 brake)."""
    pedal = action[1]
    return Controls(steer=action[0] * max_steer, throttle=jnp.maximum(pedal, 0.0), brake=jnp.maximum(-pedal, 0.0))


class SteerPedal(Environment):
    """Base of the environments driven by ``(steer, pedal)`` in [-1, 1] (:func:`pedal_controls`): race, drift."""

    num_actions = 2
    action_names = ("steer", "pedal")

    def controls(self, action, params) -> Controls:
        """``(steer, pedal)`` -> :class:`~sims.vehicles.params.Controls` (:func:`pedal_controls`)."""
        return pedal_controls(action, params.vehicle.chassis.max_steer)


class Race(SteerPedal):
    """Track-following race (module docstring).  ``window`` (static): segments searched either side of the
    previous nearest one each step (10 m at the default 1 m spacing; a car covers at most ~4 m a step)."""

    obs_names = (
        (
            "vx",
            "vy",
            "yaw_rate",
            *Environment.per_wheel("wheel_speed", "kappa", "alpha"),
            "lateral",
            "sin_heading_error",
            "cos_heading_error",
        )
        + tuple(f"curvature_{int(d)}m" for d in LOOKAHEAD)
        + ("last_steer", "last_pedal")
    )

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
            progress_scale=f(0.1),
            crash_penalty=f(5.0),
            spin_heading=f(1.5),
            lookahead=f(LOOKAHEAD),
        )

    def reset_state(self, key, params: RaceParams) -> RaceState:
        dtype = dtype_of(params)
        tr = params.track
        k_phys, k_s, k_lat, k_head, k_v = jax.random.split(key, 5)
        phys = self.sample_physics(k_phys, params, jnp.zeros((4,), jnp.int32))
        s0 = jnp.where(params.random_start, jax.random.uniform(k_s, (), dtype) * tr.length, jnp.zeros((), dtype))
        s0 = jnp.mod(s0, tr.length)
        lat = params.lateral_noise * jax.random.uniform(k_lat, (), dtype, -1.0, 1.0)
        he = params.heading_noise * jax.random.uniform(k_head, (), dtype, -1.0, 1.0)
        x, y, heading = point_at(tr, s0)
        x = x - jnp.sin(heading) * lat
        y = y + jnp.cos(heading) * lat
        v = uniform(k_v, params.speed, dtype)
        vs = self.init_vehicle(params.vehicle, v, x=x, y=y, yaw=heading + he)
        idx = jnp.mod(jnp.floor(s0 / tr.ds).astype(jnp.int32), tr.xy.shape[0])
        pose = TrackPose(s0, lat, he, idx)
        zero = jnp.zeros((), dtype)
        z4 = jnp.zeros((4,), dtype)
        return RaceState(vs, phys, z4, z4, pose, zero, jnp.zeros((2,), dtype), jnp.zeros((), jnp.int32), zero)

    def transition(self, key, state: RaceState, action, params: RaceParams) -> Transition:
        controls = self.controls(action, params)
        vs, tel = self.simulate(params, state, controls)
        tr = params.track
        pose = track_pose(tr, vs.x, vs.y, vs.yaw, hint=state.pose.index, window=self.window)
        ds = progress_delta(tr, pose.s, state.pose.s)
        wl, wr = widths_at(tr, pose.s)
        off = (pose.lateral > wl) | (-pose.lateral > wr)
        spin = jnp.abs(pose.heading_error) > params.spin_heading
        crash = off | spin
        reward = params.progress_scale * ds - jnp.where(crash, params.crash_penalty, 0.0)
        progress = state.progress + ds
        dtype = reward.dtype
        st = state._replace(
            vehicle=vs,
            kappa=tel.kappa.astype(dtype),
            alpha=tel.alpha.astype(dtype),
            pose=pose,
            progress=progress,
            last_action=action,
        )
        metrics = {
            "speed": vs.vx,
            "progress": progress,
            "lateral": pose.lateral,
            "laps": jnp.floor(progress / tr.length),
        }
        return Transition(st, reward, crash, metrics)

    def get_obs(self, state: RaceState, params: RaceParams):
        vs = state.vehicle
        tr = params.track
        he = state.pose.heading_error
        preview = curvature_at(tr, state.pose.s + params.lookahead)
        return self.finish_obs(
            [
                vs.vx / 20.0,
                vs.vy / 5.0,
                vs.yaw_rate / 2.0,
                self.wheel_speeds(params.vehicle, vs) / 20.0,
                state.kappa,
                5.0 * state.alpha,
                state.pose.lateral / tr.half_width,
                jnp.sin(he),
                jnp.cos(he),
                20.0 * preview,
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
):
    """A simple line-following driver on the race observation: curvature feedforward ``L kappa_c`` (10 m
    ahead) plus feedback on the lateral offset and heading error; P control of the speed.  (2,) action."""
    vx = obs[..., 0] * 20.0
    lat = obs[..., 15]
    sin_he = obs[..., 16]
    kc = obs[..., 19] / 20.0
    steer = wheelbase * kc - k_lat * lat - k_head * sin_he
    pedal = 0.5 * (target_speed - vx)
    return jnp.clip(jnp.stack([steer / max_steer, pedal], axis=-1), -1.0, 1.0)
