"""The sims.envs tasks as gymnax environments (needs ``gymnax``, the ``gymnax`` extra; gymnax 1.0.x).

:class:`GymnaxEnv` subclasses ``gymnax.environments.environment.Environment`` and keeps its API
exactly: ``reset(key, params) -> (obs, state)``, ``step(key, state, action, params) -> (obs, state,
reward, terminated, truncated, info)`` with the automatic reset and ``info["final_observation"]``,
``reset_env`` / ``step_env`` / ``is_truncated`` / ``default_params`` / ``num_actions``, and spaces
from ``gymnax.environments.spaces`` (``Box``).  So gymnax's wrappers (``LogWrapper``,
``FlattenObservationWrapper``, ...) and gymnax-based training code (PureJaxRL-style PPO) run on it
unchanged, under ``jit`` and ``vmap``::

    from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper
    import sims.envs.gymnax as sg

    env, env_params = sg.make("jaxtire/Braking-v0")                 # like gymnax.make("CartPole-v1")
    env = LogWrapper(FlattenObservationWrapper(env))
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, env_params)
    obs, state, reward, terminated, truncated, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
        keys, state, actions, env_params)
    info["returned_episode_returns"]                     # LogWrapper's episode statistics

The physics, rewards and auto-reset are those of the wrapped :class:`sims.envs.base.Environment`
(whose own API already is gymnax's; this class only adds gymnax's base class and space types), so a
step gives bit-identical results through either.  ``env_params`` is the task's params pytree
(``params.max_steps`` is the time limit, where gymnax's own envs name it ``max_steps_in_episode``).
"""

from __future__ import annotations

from functools import partial

import jax
import numpy as np
from gymnax.environments import environment as gx_environment
from gymnax.environments import spaces as gx_spaces

from sims.envs.base import Environment
from sims.envs.catalog import make as make_task
from sims.envs.names import ENV_IDS


def to_gymnax_box(space) -> gx_spaces.Box:
    """A :class:`sims.envs.base.Box` as a ``gymnax.environments.spaces.Box`` (scalar bounds where uniform)."""
    low, high = np.asarray(space.low), np.asarray(space.high)
    lo = float(low.flat[0]) if np.all(low == low.flat[0]) else low
    hi = float(high.flat[0]) if np.all(high == high.flat[0]) else high
    return gx_spaces.Box(low=lo, high=hi, shape=tuple(space.shape), dtype=space.dtype)


class GymnaxEnv(gx_environment.Environment):
    """A sims.envs task (a registered name, made with ``kwargs``, or an
    :class:`~sims.envs.base.Environment`) as a gymnax ``Environment`` (module docstring)."""

    def __init__(self, env="jaxtire/Braking-v0", **kwargs):
        self.env: Environment = make_task(env, **kwargs) if isinstance(env, str) else env

    @property
    def default_params(self):
        return self.env.default_params

    @partial(jax.jit, static_argnames=("self",))
    def step(self, key, state, action, params=None):
        """gymnax's ``step``: ``(obs, state, reward, terminated, truncated, info)``, auto-reset on done."""
        return self.env.step(key, state, action, self.default_params if params is None else params)

    @partial(jax.jit, static_argnames=("self",))
    def reset(self, key, params=None):
        return self.env.reset(key, self.default_params if params is None else params)

    def step_env(self, key, state, action, params):
        """One step without the reset: ``(obs, state, reward, terminated, info)``."""
        return self.env.step_env(key, state, action, params)

    def reset_env(self, key, params):
        return self.env.reset_env(key, params)

    def is_truncated(self, state, params):
        return self.env.is_truncated(state, params)

    def get_obs(self, state, params=None, key=None):
        return self.env.get_obs(state, self.default_params if params is None else params)

    @property
    def name(self) -> str:
        return next((i for i, short in ENV_IDS.items() if short == self.env.name), f"jaxtire/{self.env.name}")

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    def action_space(self, params=None) -> gx_spaces.Box:
        return to_gymnax_box(self.env.action_space(params))

    def observation_space(self, params=None) -> gx_spaces.Box:
        return to_gymnax_box(self.env.observation_space(params))

    def __eq__(self, other):
        return isinstance(other, GymnaxEnv) and self.env == other.env

    def __hash__(self):
        return hash(("GymnaxEnv", self.env))

    def __repr__(self):
        return f"GymnaxEnv({self.env!r})"


def make(name: str = "jaxtire/Braking-v0", **kwargs):
    """``(env, env_params)`` of a sims.envs task as gymnax's ``gymnax.make`` returns them."""
    env = GymnaxEnv(name, **kwargs)
    return env, env.default_params


__all__ = ["GymnaxEnv", "make", "to_gymnax_box"]
