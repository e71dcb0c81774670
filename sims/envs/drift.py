"""Drift on a circle: hold a target sideslip angle and yaw rate while circling a fixed centre.

The car (the rear-wheel-drive 272 kW ``sports_car`` of :mod:`sims.vehicles.presets`) circles the origin
counter-clockwise on a circle of ``params.radius`` (15 m) at ``params.target_speed`` (10 m/s), tail
out: the target body sideslip ``beta = atan2(vy, vx)`` is ``params.target_beta`` (-0.35 rad, i.e. the
velocity points 20 degrees right of the nose) and the target yaw rate ``r* = target_speed / radius``
(the rate at which a steady drift on the circle turns).  Each episode starts on the circle at a random
angle, at a speed in ``target_speed +- 1`` m/s, with a sideslip drawn between ``target_beta`` and 0 and
the matching yaw rate.  Surface: ``params.surface_id`` (dry asphalt), with the mass and friction scales
of :class:`~sims.envs.base.Physics`.

* **Action** (2,) in [-1, 1]: ``steer`` (times ``max_steer``) and ``pedal`` (throttle if positive,
  brake on all wheels if negative).
* **Observation** (24,): ``vx / 20``, ``vy / 10``, ``yaw_rate / 2``, ``beta``, ``beta - target_beta``,
  ``yaw_rate - r*``, wheel speeds ``omega Re / 20`` (4), slip ratios (4), slip angles ``5 alpha`` (4),
  radial error ``(|p| - radius) / 5``, ``sin`` / ``cos`` of the course error (velocity direction minus
  the circle's tangent), ``(speed - target_speed) / 5``, the previous action (2); ``privileged=True``
  appends grip, friction and mass scales (27,).
* **Reward** per step in [0, 1]: ``w_beta exp(-((beta - beta*) / sigma_beta)^2) + w_r exp(-((r - r*) /
  sigma_r)^2) + w_d exp(-(radial error / sigma_d)^2)`` with weights (0.6, 0.2, 0.2) and widths (0.2 rad,
  0.3 rad/s, 2 m) in ``params``: circling with grip (``beta ~ 0``) earns at most about 0.43 a step, the
  target drift 1.  (With the sideslip weighted less, PPO settles on grip driving.)
* **Termination**: spin (``|beta| > params.max_beta``, 1.2 rad), leaving the circle (``|radial error|
  > params.max_radial_error``, 8 m), stalling (speed below 2 m/s), a non-finite state; truncation after
  ``params.max_steps`` (400 steps, 20 s).
* **Metrics**: ``speed``, ``beta``, ``yaw_rate``, ``radial_error``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.constants import wrap_angle
from jaxtire.surfaces import surface_id
from sims.envs.base import Environment, Physics, Transition, as_params_array, dtype_of, make_env_vehicle, uniform
from sims.envs.race import SteerPedal
from sims.vehicles.params import VehicleParams, VehicleState


class DriftParams(NamedTuple):
    vehicle: VehicleParams
    dt: Any
    max_steps: Any
    mass_scale: Any
    mu_scale: Any
    surface_id: Any  # int32 surface under all wheels
    radius: Any  # circle radius [m]
    target_speed: Any  # [m/s]
    target_beta: Any  # target sideslip [rad] (negative: tail out in a left turn)
    weights: Any  # (3,) reward weights of beta, yaw rate, radius
    sigmas: Any  # (3,) reward widths [rad, rad/s, m]
    max_beta: Any  # |beta| of a spin [rad]
    max_radial_error: Any  # [m]
    min_speed: Any  # [m/s]


class DriftState(NamedTuple):
    vehicle: VehicleState
    phys: Physics
    kappa: Any
    alpha: Any
    last_action: Any
    t: Any
    ret: Any


def sideslip(vs: VehicleState):
    """Body sideslip angle ``atan2(vy, vx)`` [rad] (0 at standstill)."""
    return jnp.arctan2(vs.vy, jnp.maximum(jnp.abs(vs.vx), 1e-3) * jnp.sign(vs.vx + 1e-9))


class Drift(SteerPedal):
    """Circle drift (module docstring)."""

    name = "drift"
    obs_names = (
        "vx",
        "vy",
        "yaw_rate",
        "beta",
        "beta_error",
        "yaw_rate_error",
        *Environment.per_wheel("wheel_speed", "kappa", "alpha"),
        "radial_error",
        "sin_course_error",
        "cos_course_error",
        "speed_error",
        "last_steer",
        "last_pedal",
    )
    obs_bounds = {"sin_": (-1.0, 1.0), "cos_": (-1.0, 1.0), "last_": (-1.0, 1.0)}

    def __init__(
        self, vehicle: str = "sports_car", substeps: int = 10, privileged: bool = False, model: str = "double_track"
    ):
        super().__init__(substeps, privileged, model)
        self.vehicle = vehicle

    def init_params(self, dtype) -> DriftParams:
        f = lambda v: as_params_array(v, dtype)  # noqa: E731
        return DriftParams(
            vehicle=make_env_vehicle(self.vehicle, dtype=dtype),
            dt=f(0.05),
            max_steps=jnp.asarray(400, jnp.int32),
            mass_scale=f([1.0, 1.0]),
            mu_scale=f([1.0, 1.0]),
            surface_id=jnp.asarray(surface_id("asphalt_dry"), jnp.int32),
            radius=f(15.0),
            target_speed=f(10.0),
            target_beta=f(-0.35),
            weights=f([0.6, 0.2, 0.2]),
            sigmas=f([0.2, 0.3, 2.0]),
            max_beta=f(1.2),
            max_radial_error=f(8.0),
            min_speed=f(2.0),
        )

    def reset_state(self, key, params: DriftParams) -> DriftState:
        dtype = dtype_of(params)
        k_phys, k_th, k_v, k_b = jax.random.split(key, 4)
        phys = self.sample_physics(k_phys, params, jnp.full((4,), params.surface_id, jnp.int32))
        theta = jax.random.uniform(k_th, (), dtype, -jnp.pi, jnp.pi)
        v = params.target_speed + uniform(k_v, jnp.asarray([-1.0, 1.0], dtype), dtype)
        beta = params.target_beta * jax.random.uniform(k_b, (), dtype)
        R = params.radius
        yaw = theta + 0.5 * jnp.pi - beta  # velocity along the counter-clockwise tangent
        vs = self.init_vehicle(
            params.vehicle,
            v * jnp.cos(beta),
            x=R * jnp.cos(theta),
            y=R * jnp.sin(theta),
            yaw=yaw,
            vy=v * jnp.sin(beta),
            yaw_rate=v / R,
        )
        z4 = jnp.zeros((4,), dtype)
        return DriftState(vs, phys, z4, z4, jnp.zeros((2,), dtype), jnp.zeros((), jnp.int32), jnp.zeros((), dtype))

    def errors(self, vs: VehicleState, params: DriftParams):
        """``(beta, beta error, yaw-rate error, radial error, course error, speed)`` of a vehicle state."""
        beta = sideslip(vs)
        speed = jnp.hypot(vs.vx, vs.vy)
        r_target = params.target_speed / params.radius
        radial = jnp.hypot(vs.x, vs.y) - params.radius
        tangent = jnp.arctan2(vs.y, vs.x) + 0.5 * jnp.pi
        course = wrap_angle(vs.yaw + beta - tangent)
        return beta, beta - params.target_beta, vs.yaw_rate - r_target, radial, course, speed

    def transition(self, key, state: DriftState, action, params: DriftParams) -> Transition:
        controls = self.controls(action, params)
        vs, tel = self.simulate(params, state, controls)
        beta, eb, er, radial, course, speed = self.errors(vs, params)
        w, sg = params.weights, params.sigmas
        reward = (
            w[0] * jnp.exp(-jnp.square(eb / sg[0]))
            + w[1] * jnp.exp(-jnp.square(er / sg[1]))
            + w[2] * jnp.exp(-jnp.square(radial / sg[2]))
        )
        terminated = (
            (jnp.abs(beta) > params.max_beta) | (jnp.abs(radial) > params.max_radial_error) | (speed < params.min_speed)
        )
        dtype = reward.dtype
        st = state._replace(
            vehicle=vs, kappa=tel.kappa.astype(dtype), alpha=tel.alpha.astype(dtype), last_action=action
        )
        metrics = {"speed": speed, "beta": beta, "yaw_rate": vs.yaw_rate, "radial_error": radial}
        return Transition(st, reward, terminated, metrics)

    def get_obs(self, state: DriftState, params: DriftParams):
        vs = state.vehicle
        beta, eb, er, radial, course, speed = self.errors(vs, params)
        return self.finish_obs(
            [
                vs.vx / 20.0,
                vs.vy / 10.0,
                vs.yaw_rate / 2.0,
                beta,
                eb,
                er,
                self.wheel_speeds(params.vehicle, vs) / 20.0,
                state.kappa,
                5.0 * state.alpha,
                radial / 5.0,
                jnp.sin(course),
                jnp.cos(course),
                (speed - params.target_speed) / 5.0,
                state.last_action,
            ],
            state,
            params,
        )
