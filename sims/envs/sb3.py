"""A Stable-Baselines3 ``VecEnv`` over the JAX vector env (needs ``stable-baselines3``, the ``sb3`` extra,
and torch: ``pip install torch==2.13.0`` first for the CPU wheel).

:class:`JaxVecEnv` steps all ``num_envs`` environments in one jitted call on the device
(:mod:`sims.envs.vector`, same-step autoreset, which is SB3's convention) and converts only at the
boundary: observations float32 ``(num_envs, obs_dim)``, rewards float32, dones bool, and one info dict
per environment.  A finished environment's info holds ``terminal_observation`` (the last observation;
the returned one is the new episode's first), ``TimeLimit.truncated`` (SB3 bootstraps from the value of
the terminal observation on truncation) and ``episode`` ``{"r", "l", "t"}`` (return, length, seconds
since the adapter was created; what SB3's ``ep_rew_mean`` logging and ``VecMonitor`` report)::

    from stable_baselines3 import PPO
    from sims.envs.sb3 import JaxVecEnv

    venv = JaxVecEnv("jaxtire/Braking-v0", num_envs=16)
    PPO("MlpPolicy", venv, n_steps=128, batch_size=256).learn(100_000)

Seeding: ``venv.seed(s)`` then ``reset()`` uses ``jax.random.key(s)``; the key scheme is that of
:mod:`sims.envs.vector`, so the adapter replays :func:`sims.envs.base.batched` exactly.
``get_attr`` / ``env_method`` reach the one underlying :class:`~sims.envs.base.Environment` (all
environments share it); ``render_mode="rgb_array"`` gives :func:`sims.envs.render.render_frame` images.
"""

from __future__ import annotations

import time
from typing import Any

import jax
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from sims.envs.catalog import make
from sims.envs.render import render_frame
from sims.envs.vector import VectorCore


def _box(space) -> spaces.Box:
    return spaces.Box(
        np.asarray(space.low, np.float32), np.asarray(space.high, np.float32), tuple(space.shape), np.float32
    )


class JaxVecEnv(VecEnv):
    """``num_envs`` sims.envs environments as one SB3 ``VecEnv`` (module docstring).  ``env``: a registered
    name (made with ``make_kwargs``) or an :class:`~sims.envs.base.Environment`; ``params``: the env params
    (default ``env.default_params``); ``chunk``: see :func:`sims.envs.base.chunked`; ``seed``: the key of
    the first reset (default 0)."""

    def __init__(
        self,
        env="jaxtire/Braking-v0",
        num_envs: int = 16,
        params=None,
        chunk: int | None = None,
        seed: int = 0,
        render_mode: str | None = None,
        **make_kwargs,
    ):
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r} must be a positive integer")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode = {render_mode!r}; allowed: None, 'rgb_array'")
        self.env = make(env, **make_kwargs) if isinstance(env, str) else env
        self.params = self.env.default_params if params is None else params
        self._render_mode = render_mode
        self._core = VectorCore(self.env, self.params, chunk)
        self._key = jax.random.key(int(seed))
        self._state: Any = None  # the batched env state pytree, None before reset()
        self._actions: np.ndarray | None = None
        self._t0 = time.perf_counter()
        super().__init__(
            num_envs, _box(self.env.observation_space(self.params)), _box(self.env.action_space(self.params))
        )

    # -- the VecEnv protocol ------------------------------------------------------------------------
    def reset(self):
        if self._seeds[0] is not None:
            self._key = jax.random.key(int(self._seeds[0]))
        self._reset_seeds()
        self._reset_options()
        self._key, obs, self._state = self._core.reset(self._key, self.num_envs)
        return np.array(obs, np.float32)

    def step_async(self, actions) -> None:
        self._actions = np.asarray(actions, np.float32).reshape(self.num_envs, -1)

    def step_wait(self):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        self._key, obs, self._state, reward, term, trunc, info = self._core.step(self._key, self._state, self._actions)
        obs, reward, term, trunc, final, ret, length = jax.device_get(
            (obs, reward, term, trunc, info["final_observation"], info["episode_return"], info["episode_length"])
        )
        dones = np.logical_or(term, trunc)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            t = round(time.perf_counter() - self._t0, 6)
            for i in np.flatnonzero(dones):
                infos[i] = {
                    "terminal_observation": np.asarray(final[i], np.float32),
                    "TimeLimit.truncated": bool(trunc[i] and not term[i]),
                    "episode": {"r": float(ret[i]), "l": int(length[i]), "t": t},
                }
        return np.array(obs, np.float32), np.array(reward, np.float32), dones, infos

    def close(self) -> None:
        self._state = None

    def get_attr(self, attr_name: str, indices=None) -> list:
        value = self._render_mode if attr_name == "render_mode" else getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        raise AttributeError("JaxVecEnv: the environments share one immutable env; make a new adapter instead")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        method = getattr(self.env, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        if self._state is None:
            return [None] * self.num_envs
        state = jax.device_get(self._state)
        return [
            render_frame(self.env, jax.tree.map(lambda a, i=i: a[i], state), self.params) for i in range(self.num_envs)
        ]

    @property
    def state(self):
        """The current batched JAX state (a pytree)."""
        return self._state


__all__ = ["JaxVecEnv"]
