"""Gymnasium wrappers of the sims.envs tasks (needs ``gymnasium``, the ``rl`` extra).

* :class:`JaxVectorEnv`, a :class:`gymnasium.vector.VectorEnv` that steps ``num_envs`` environments in
  one jitted, vmapped call (:func:`sims.envs.base.batched`) and returns numpy arrays: observations
  float32 ``(num_envs, obs_dim)``, rewards float64, terminations and truncations bool.  It resets the
  finished environments in the same step (``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``):
  ``infos["final_obs"]`` holds the last observation of each finished episode (an object array, ``None``
  elsewhere, with the mask ``infos["_final_obs"]``), as gymnasium's own vector envs do in that mode.
  For CleanRL-style training loops.
* :class:`JaxEnv`, a single :class:`gymnasium.Env` (one environment through the same batched call),
  for Stable-Baselines3 (``DummyVecEnv([lambda: JaxEnv("braking")])``) and gymnasium's env checker.
  On the terminal step it returns the episode's final observation; call ``reset`` next, as usual.

Both are registered with gymnasium on import (:data:`GYM_IDS`), so ``gymnasium.make("jaxtire/Braking-v0")``
and ``gymnasium.make_vec("jaxtire/Braking-v0", num_envs=64)`` work.

Random numbers.  ``reset(seed=s)`` sets the wrapper's key to ``jax.random.key(s)`` (without a seed,
the first reset draws one from gymnasium's seeding); every ``reset`` and ``step`` then does
``key, sub = split(key)`` and passes ``split(sub, num_envs)`` as the per-environment keys, so the
wrapper replays the JAX env exactly (``tests/sims/test_gymnasium_wrapper.py``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from sims.envs import make
from sims.envs.base import Environment, batched

try:
    from gymnasium.vector import AutoresetMode
except ImportError:  # pragma: no cover - gymnasium < 1.1
    from gymnasium.vector.vector_env import AutoresetMode

#: gymnasium id -> sims.envs name
GYM_IDS = {"jaxtire/Braking-v0": "braking", "jaxtire/Drift-v0": "drift", "jaxtire/RaceOval-v0": "race-oval",
           "jaxtire/RaceTwisty-v0": "race-twisty"}


def to_gym_box(space) -> spaces.Box:
    """A :class:`sims.envs.base.Box` as a float32 :class:`gymnasium.spaces.Box`."""
    return spaces.Box(np.asarray(space.low, np.float32), np.asarray(space.high, np.float32), tuple(space.shape),
                      np.float32)


def _as_env(env, kwargs) -> Environment:
    return make(env, **kwargs) if isinstance(env, str) else env


def _seed_key(seed, np_random) -> Any:
    if seed is None:
        seed = int(np_random.integers(0, 2**31 - 1))
    return jax.random.key(int(seed))


class JaxVectorEnv(VectorEnv):
    """``num_envs`` copies of a sims.envs task stepped in one jitted call (module docstring).

    ``env`` a registered name or an :class:`~sims.envs.base.Environment`; ``params`` the env params
    (default ``env.default_params``); ``chunk`` steps that many environments at a time inside the call
    (:func:`sims.envs.base.chunked`; ~16384 helps a CPU with 100k+ environments); keywords go to
    :func:`sims.envs.make`."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, env="braking", num_envs: int = 8, params=None, chunk: int | None = None, **make_kwargs):
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r} must be a positive integer")
        self.env = _as_env(env, make_kwargs)
        self.params = self.env.default_params if params is None else params
        self.num_envs = num_envs
        self.single_observation_space = to_gym_box(self.env.observation_space(self.params))
        self.single_action_space = to_gym_box(self.env.action_space(self.params))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._reset, self._step = batched(self.env, chunk)
        self._key = None
        self._state = None

    def _keys(self):
        self._key, sub = jax.random.split(self._key)
        return jax.random.split(sub, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or self._key is None:
            self._key = _seed_key(seed, self.np_random)
        obs, self._state = self._reset(self._keys(), self.params)
        return np.asarray(obs, np.float32), {}

    def step(self, actions):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions, np.float32).reshape(self.action_space.shape)
        obs, self._state, reward, done, info = self._step(self._keys(), self._state, actions, self.params)
        info = jax.device_get(info)
        done = np.asarray(done)
        infos = {}
        for k, v in info.items():
            if k == "final_obs":
                continue
            infos[k] = np.asarray(v)
            infos["_" + k] = np.ones(self.num_envs, bool)
        if done.any():
            final = np.full(self.num_envs, None, dtype=object)
            fo = np.asarray(info["final_obs"], np.float32)
            for i in np.flatnonzero(done):
                final[i] = fo[i]
            infos["final_obs"] = final
            infos["_final_obs"] = done.copy()
        return (np.asarray(obs, np.float32), np.asarray(reward, np.float64), np.asarray(info["terminated"], bool),
                np.asarray(info["truncated"], bool), infos)

    @property
    def state(self):
        """The current batched JAX state (a pytree), e.g. for inspection or rendering."""
        return self._state

    def __repr__(self):
        return f"JaxVectorEnv({self.env.name!r}, num_envs={self.num_envs})"


class JaxEnv(gymnasium.Env):
    """One sims.envs environment as a :class:`gymnasium.Env` (module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, env="braking", params=None, render_mode=None, **make_kwargs):
        self._vec = JaxVectorEnv(env, 1, params, **make_kwargs)
        self.env = self._vec.env
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.render_mode = render_mode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or self._vec._key is None:
            self._vec._key = _seed_key(seed, self.np_random)
        obs, self._vec._state = self._vec._reset(self._vec._keys(), self._vec.params)
        return np.asarray(obs[0], np.float32), {}

    def step(self, action):
        obs, reward, term, trunc, infos = self._vec.step(np.asarray(action, np.float32)[None])
        info = {k: v[0] for k, v in infos.items() if not k.startswith("_") and k != "final_obs"}
        if term[0] or trunc[0]:
            obs = infos["final_obs"][0][None]
        return obs[0], float(reward[0]), bool(term[0]), bool(trunc[0]), info

    @property
    def state(self):
        return self._vec.state


def register(ids: dict | None = None) -> None:
    """Register ``ids`` (gymnasium id -> sims.envs name; default :data:`GYM_IDS`) with gymnasium (idempotent)."""
    for gym_id, name in (ids or GYM_IDS).items():
        if gym_id in gymnasium.registry:
            continue
        gymnasium.register(id=gym_id, entry_point=f"{__name__}:JaxEnv", kwargs={"env": name},
                           vector_entry_point=f"{__name__}:JaxVectorEnv")


register()

__all__ = ["GYM_IDS", "JaxEnv", "JaxVectorEnv", "register", "to_gym_box"]
