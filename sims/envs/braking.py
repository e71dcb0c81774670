"""Threshold braking on random surfaces: stop a car from speed in the shortest distance.

Each episode draws an initial speed ``v0`` from ``params.speed`` (default 15-25 m/s) and one surface
for all four wheels from ``params.surface_ids`` (default dry asphalt, concrete, wet asphalt, cobbles,
gravel, dirt, grass, snow; ice, id 9, is left out because it takes 20 s to stop), plus the mass and
friction scales of :class:`~sims.envs.base.Physics`.  The car (the front-wheel-drive ``hatchback`` of
:mod:`sims.vehicles.presets`, 6 kN m of brake torque, no ABS) rolls straight, throttle closed, no steering.

* **Action** (2,) in [-1, 1]: front and rear brake pedal, each mapped to ``(a + 1) / 2`` in [0, 1]
  (per wheel: FL, FR get the front value, RL, RR the rear one; the chassis' brake bias still applies).
* **Observation** (13,): ``vx / 30``, ``vx / v0`` (the fraction of the initial speed left), ``ax / g``
  (the filtered deceleration), wheel speeds ``omega Re / 30`` (``Re``: :func:`sims.vehicles.core.rolling_radii`) (4, FL FR RL RR), slip ratios ``kappa``
  (4), the previous action (2); with ``privileged=True`` also the surface grip, the friction scale and
  the mass scale (16,).
* **Reward** per step ``((v^2 - v'^2) / (2 mu g) - dx) / d_ideal``: the distance lost in the step
  against an ideal stop at a constant deceleration ``mu g`` (``dx`` [m] the distance travelled, ``v``,
  ``v'`` the speeds before and after, ``mu`` the surface grip times the friction scale, ``d_ideal = v0^2
  / (2 g mu)``).  It is zero for braking at exactly ``mu g`` and negative for less, so the return of a
  stopped episode is ``1 - d_stop / d_ideal`` (minus the stopping distance's excess over the ideal one;
  the ``(v^2 - v'^2)`` term is a potential-based shaping of the plain ``-dx / d_ideal`` that gives each
  step credit for its own deceleration).  From 20 m/s on dry asphalt: about -0.1 for the ideal brake
  distribution of :func:`ideal_brake`, -0.3 with all four wheels locked, -0.35 for uniformly random
  pedals, and a truncated episode also loses the remaining ``(v / v0)^2``.
* **Termination**: stopped (``vx < params.v_stop``, 0.5 m/s), spin (``|yaw| > params.spin_yaw``, with a
  reward of ``-params.spin_penalty``) or a non-finite state; truncation after ``params.max_steps`` (400
  steps, 20 s).
* **Metrics** in ``info``: ``speed`` [m/s], ``distance`` [m] travelled in the episode, ``stopped``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.constants import GRAVITY as G
from jaxtire.surfaces import surface_id
from sims.envs.base import Environment, Physics, Transition, as_params_array, dtype_of, make_env_vehicle, uniform
from sims.vehicles.params import Controls, VehicleParams, VehicleState

DEFAULT_SURFACES = ("asphalt_dry", "concrete", "asphalt_wet", "cobbles", "gravel", "dirt", "grass", "snow")


class BrakingParams(NamedTuple):
    """Physics and task settings (every leaf an array; vmap over it for per-env physics)."""

    vehicle: VehicleParams
    dt: Any  # env step [s]
    max_steps: Any  # int32 time limit [steps]
    mass_scale: Any  # (2,) range of the mass / yaw-inertia scale
    mu_scale: Any  # (2,) range of the tire friction scale
    speed: Any  # (2,) range of the initial speed [m/s]
    surface_ids: Any  # (k,) int32 candidate surface ids (one drawn per episode)
    v_stop: Any  # speed below which the car counts as stopped [m/s]
    spin_yaw: Any  # |yaw| beyond which the episode ends as a spin [rad]
    spin_penalty: Any  # reward on a spin


class BrakingState(NamedTuple):
    vehicle: VehicleState
    phys: Physics
    kappa: Any  # (4,) slip ratios of the last substep
    v0: Any  # initial speed [m/s]
    d_ideal: Any  # ideal stopping distance [m]
    x0: Any  # start position [m]
    last_action: Any  # (2,)
    t: Any
    ret: Any


class Braking(Environment):
    """Threshold braking (module docstring)."""

    name = "braking"
    num_actions = 2
    action_names = ("brake_front", "brake_rear")
    obs_names = (
        "vx",
        "speed_fraction",
        "ax",
        *Environment.per_wheel("wheel_speed", "kappa"),
        "last_brake_front",
        "last_brake_rear",
    )
    obs_bounds = {"last_": (-1.0, 1.0)}

    def init_params(self, dtype) -> BrakingParams:
        f = lambda v: as_params_array(v, dtype)  # noqa: E731
        return BrakingParams(
            vehicle=make_env_vehicle("hatchback", dtype=dtype),
            dt=f(0.05),
            max_steps=jnp.asarray(400, jnp.int32),
            mass_scale=f([1.0, 1.0]),
            mu_scale=f([1.0, 1.0]),
            speed=f([15.0, 25.0]),
            surface_ids=jnp.asarray([surface_id(n) for n in DEFAULT_SURFACES], jnp.int32),
            v_stop=f(0.5),
            spin_yaw=f(0.5),
            spin_penalty=f(1.0),
        )

    def reset_state(self, key, params: BrakingParams) -> BrakingState:
        dtype = dtype_of(params)
        k_phys, k_surf, k_v = jax.random.split(key, 3)
        sid = jax.random.choice(k_surf, jnp.asarray(params.surface_ids, jnp.int32))
        phys = self.sample_physics(k_phys, params, jnp.full((4,), sid, jnp.int32))
        v0 = uniform(k_v, params.speed, dtype)
        vs = self.init_vehicle(params.vehicle, v0)
        mu = jnp.asarray(params.vehicle.surfaces.grip)[sid].astype(dtype) * phys.mu_scale
        d_ideal = v0 * v0 / (2.0 * G * jnp.maximum(mu, 1e-3))
        zero = jnp.zeros((), dtype)
        return BrakingState(
            vs,
            phys,
            jnp.zeros((4,), dtype),
            v0,
            d_ideal,
            vs.x,
            jnp.full((2,), -1.0, dtype),
            jnp.zeros((), jnp.int32),
            zero,
        )

    def controls(self, action, params: BrakingParams) -> Controls:
        """Pedals ``(a + 1) / 2`` per axle (FL, FR front; RL, RR rear), no steering or throttle."""
        b = 0.5 * (action + 1.0)
        return Controls(steer=0.0, throttle=0.0, brake=jnp.stack([b[0], b[0], b[1], b[1]]))

    def transition(self, key, state: BrakingState, action, params: BrakingParams) -> Transition:
        controls = self.controls(action, params)
        vs, tel = self.simulate(params, state, controls)
        dist = jnp.hypot(vs.x - state.vehicle.x, vs.y - state.vehicle.y)
        stopped = vs.vx < params.v_stop
        spin = jnp.abs(vs.yaw) > params.spin_yaw
        # distance lost against an ideal stop at mu g: -(dx - (v^2 - v'^2) / (2 mu g)) / d_ideal
        v2_old = state.vehicle.vx**2 + state.vehicle.vy**2
        v2_new = vs.vx**2 + vs.vy**2
        reward = (v2_old - v2_new) / (state.v0 * state.v0) - dist / state.d_ideal
        reward = reward - jnp.where(spin, params.spin_penalty, 0.0)
        st = state._replace(vehicle=vs, kappa=tel.kappa.astype(reward.dtype), last_action=action)
        metrics = {"speed": vs.vx, "distance": vs.x - state.x0, "stopped": stopped.astype(reward.dtype)}
        return Transition(st, reward, stopped | spin, metrics)

    def get_obs(self, state: BrakingState, params: BrakingParams):
        vs = state.vehicle
        return self.finish_obs(
            [
                vs.vx / 30.0,
                vs.vx / state.v0,
                vs.ax / G,
                self.wheel_speeds(params.vehicle, vs) / 30.0,
                state.kappa,
                state.last_action,
            ],
            state,
            params,
        )


def ideal_brake(params: BrakingParams, mu=1.0, margin: float = 0.9):
    """The (2,) action of a constant brake that decelerates at ``margin mu g`` with each axle's brake
    torque matched to its load (quasi-static load transfer ``m a h / L`` onto the front axle), so neither
    axle locks: ``T_axle = margin mu F_axle r`` and the pedal ``T_axle / (T_max share)``, for a car at the
    default mass on a surface of grip ``mu`` (the privileged knowledge an ideal brake-force distribution
    has).  A scripted reference policy: on dry asphalt it stops within about ``1 / margin`` ideal distances.
    """
    ch = params.vehicle.chassis
    a = margin * mu * G
    L = ch.cg_to_front + ch.cg_to_rear
    ff = ch.mass * (G * ch.cg_to_rear + a * ch.cg_height) / L
    fr = ch.mass * (G * ch.cg_to_front - a * ch.cg_height) / L
    tf = margin * mu * ff * ch.wheel_radius_front
    tr = margin * mu * jnp.maximum(fr, 0.0) * ch.wheel_radius_rear
    bf = tf / (ch.max_brake_torque * ch.brake_bias_front)
    br = tr / (ch.max_brake_torque * jnp.maximum(1.0 - ch.brake_bias_front, 1e-6))
    return jnp.clip(jnp.stack([bf, br]) * 2.0 - 1.0, -1.0, 1.0)
