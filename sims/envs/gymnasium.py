"""Gymnasium adapters of the sims.envs tasks (needs ``gymnasium``, the ``rl`` extra).

* :class:`JaxVectorEnv`, a :class:`gymnasium.vector.VectorEnv` that steps ``num_envs`` environments in
  one jitted, vmapped call (:mod:`sims.envs.vector`) and returns numpy arrays: observations float32
  ``(num_envs, obs_dim)``, rewards float64, terminations and truncations bool, ``infos`` a dict of
  ``(num_envs,)`` arrays (task metrics, ``episode_return``, ``episode_length``, ``discount``), each with
  its ``_key`` mask, as Gymnasium's vector envs do.  ``autoreset_mode`` (``metadata["autoreset_mode"]``):

  - ``"next_step"`` (default, Gymnasium's own default): the step that ends an episode returns its last
    observation; the next step ignores that environment's action and returns the first observation of
    a new episode with reward 0.  What ``RecordEpisodeStatistics``, ``NormalizeObservation`` and
    CleanRL-style loops expect.
  - ``"same_step"``: the finishing step already returns the new episode's first observation;
    ``infos["final_obs"]`` (object array, ``None`` elsewhere, mask ``infos["_final_obs"]``) holds the
    last one.

* :class:`JaxEnv`, a single :class:`gymnasium.Env` (one environment through the same batched call;
  passes ``gymnasium.utils.env_checker.check_env``).  On the terminal step it returns the episode's
  final observation; call ``reset`` next, as usual.

Both render ``render_mode="rgb_array"`` top views (:mod:`sims.envs.render`; the vector env returns one
frame per environment; after a terminal step :class:`JaxEnv` draws the episode's final state, recomputed
with the step's own key by ``step_env``, since the JAX env resets inside the step).
They are registered with gymnasium by ``import sims``
(:mod:`sims.envs.registration`): ``gymnasium.make("jaxtire/Braking-v0")``,
``gymnasium.make_vec("jaxtire/Braking-v0", num_envs=64, autoreset_mode="same_step")``.

Random numbers.  ``reset(seed=s)`` sets the adapter's key to ``jax.random.key(s)`` (without a seed, the
first reset draws one from gymnasium's seeding); every ``reset`` and ``step`` then does
``key, sub = split(key)`` and passes ``split(sub, num_envs)`` as the per-environment keys, so the
adapter replays :func:`sims.envs.base.batched` exactly (``tests/sims/test_gymnasium_wrapper.py``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sims.envs.base import Environment
from sims.envs.catalog import make
from sims.envs.registration import GYM_IDS, register
from sims.envs.render import render_frame
from sims.envs.vector import VectorCore

RENDER_MODES = ["rgb_array"]


def to_gym_box(space) -> spaces.Box:
    """A :class:`sims.envs.base.Box` as a float32 :class:`gymnasium.spaces.Box`."""
    return spaces.Box(
        np.asarray(space.low, np.float32), np.asarray(space.high, np.float32), tuple(space.shape), np.float32
    )


def as_env(env, kwargs) -> Environment:
    """A registered name (made with ``kwargs``) or an :class:`~sims.envs.base.Environment` as it is."""
    return make(env, **kwargs) if isinstance(env, str) else env


def autoreset_mode(mode) -> AutoresetMode:
    """``"next_step"`` / ``"same_step"`` (or the enum) as an :class:`AutoresetMode`; ``ValueError`` otherwise."""
    if isinstance(mode, AutoresetMode) and mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        return mode
    allowed = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
    if isinstance(mode, str) and mode.lower() in allowed:
        return allowed[mode.lower()]
    raise ValueError(f"autoreset_mode = {mode!r}; allowed: 'next_step', 'same_step'")


def seed_key(seed, np_random) -> Any:
    """``jax.random.key(seed)``, or one drawn from ``np_random`` without a seed."""
    if seed is None:
        seed = int(np_random.integers(0, 2**31 - 1))
    return jax.random.key(int(seed))


def reset_info(state) -> dict:
    """The info of a reset (numpy arrays over the batch): ``episode_return`` 0, ``episode_length`` 0 and the
    starting ``speed`` [m/s] (the vehicle's ``vx``), so loggers see the same core keys from ``reset`` and ``step``."""
    speed = np.asarray(state.vehicle.vx, np.float64)
    return {"episode_return": np.zeros_like(speed), "episode_length": np.zeros(speed.shape, np.int32), "speed": speed}


def check_render_mode(render_mode):
    """``render_mode`` unchanged if it is ``None`` or one of :data:`RENDER_MODES`, else a ``ValueError``."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode = {render_mode!r}; allowed: None, {', '.join(map(repr, RENDER_MODES))}")
    return render_mode


class JaxVectorEnv(VectorEnv):
    """``num_envs`` copies of a sims.envs task stepped in one jitted call (module docstring).

    ``env`` a registered name or an :class:`~sims.envs.base.Environment`; ``params`` the env params
    (default ``env.default_params``); ``chunk`` steps that many environments at a time inside the call
    (:func:`sims.envs.base.chunked`; ~16384 helps a CPU with 100k+ environments); ``autoreset_mode``
    ``"next_step"`` (default) or ``"same_step"``; ``render_mode`` ``None`` or ``"rgb_array"``;
    ``max_episode_steps`` the time limit (``params.max_steps``; ``gymnasium.make_vec`` passes the spec's); other
    keywords go to :func:`sims.envs.make`."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": RENDER_MODES}

    def __init__(
        self,
        env="jaxtire/Braking-v0",
        num_envs: int = 8,
        params=None,
        chunk: int | None = None,
        autoreset_mode=AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        **make_kwargs,
    ):
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r} must be a positive integer")
        self.env = as_env(env, make_kwargs)
        self.params = self.env.default_params if params is None else params
        if max_episode_steps is not None:  # gymnasium.make_vec passes the spec's time limit: the env truncates there
            if not isinstance(max_episode_steps, int) or max_episode_steps < 1:
                raise ValueError(f"max_episode_steps = {max_episode_steps!r} must be a positive integer")
            self.params = self.params._replace(max_steps=jax.numpy.asarray(max_episode_steps, "int32"))
        self.num_envs = num_envs
        self.metadata = {**type(self).metadata, "autoreset_mode": globals()["autoreset_mode"](autoreset_mode)}
        self.render_mode = check_render_mode(render_mode)
        self.single_observation_space = to_gym_box(self.env.observation_space(self.params))
        self.single_action_space = to_gym_box(self.env.action_space(self.params))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._core = VectorCore(self.env, self.params, chunk)
        self._key: jax.Array | None = None
        self._state: Any = None  # the batched env state pytree, None before reset()
        self._obs: Any = None  # (num_envs, obs_dim) array, None before reset()
        self._prev_done: np.ndarray | None = None

    @property
    def next_step(self) -> bool:
        return self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or self._key is None:
            self._key = seed_key(seed, self.np_random)
        self._key, self._obs, self._state = self._core.reset(self._key, self.num_envs)
        self._prev_done = np.zeros(self.num_envs, bool)
        infos = {}
        for k, v in reset_info(self._state).items():
            infos[k] = v
            infos["_" + k] = np.ones(self.num_envs, bool)
        return np.asarray(self._obs, np.float32), infos

    def _actions(self, actions):
        return np.asarray(actions, np.float32).reshape(self.action_space.shape)

    def step_arrays(self, actions):
        """One step on the device: ``(obs, reward, terminated, truncated, info)`` as JAX arrays (``info`` the
        env's dict, ``final_observation`` included); the adapters turn them into numpy."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        actions = self._actions(actions)
        if self.next_step:
            (self._key, obs, self._obs, self._state, reward, term, trunc, info) = self._core.step_next(
                self._key, self._state, self._obs, self._prev_done, actions
            )
        else:
            self._key, obs, self._state, reward, term, trunc, info = self._core.step(self._key, self._state, actions)
            self._obs = obs
        return obs, reward, term, trunc, info

    def step(self, actions):
        obs, reward, term, trunc, info = jax.device_get(self.step_arrays(actions))
        term, trunc = np.asarray(term, bool), np.asarray(trunc, bool)
        done = term | trunc
        self._prev_done = done
        infos = {}
        ones = np.ones(self.num_envs, bool)
        for k, v in info.items():
            if k in ("final_observation", "terminated", "truncated"):
                continue
            infos[k] = np.asarray(v)
            infos["_" + k] = ones
        if not self.next_step and done.any():
            final = np.full(self.num_envs, None, dtype=object)
            fo = np.asarray(info["final_observation"], np.float32)
            for i in np.flatnonzero(done):
                final[i] = fo[i]
            infos["final_obs"] = final
            infos["_final_obs"] = done.copy()
        return np.asarray(obs, np.float32), np.asarray(reward, np.float64), term, trunc, infos

    def render(self):
        """One ``(H, W, 3)`` uint8 top view per environment (``render_mode="rgb_array"``), else ``None``."""
        if self.render_mode is None or self._state is None:
            return None
        state = jax.device_get(self._state)
        return tuple(
            render_frame(self.env, jax.tree.map(lambda a, i=i: a[i], state), self.params) for i in range(self.num_envs)
        )

    @property
    def state(self):
        """The current batched JAX state (a pytree), e.g. for inspection or rendering."""
        return self._state

    def __repr__(self):
        return (
            f"JaxVectorEnv({self.env.name!r}, num_envs={self.num_envs}, "
            f"autoreset_mode={self.metadata['autoreset_mode'].value!r})"
        )


class JaxEnv(gymnasium.Env):
    """One sims.envs environment as a :class:`gymnasium.Env` (module docstring)."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 20}

    def __init__(self, env="jaxtire/Braking-v0", params=None, render_mode: str | None = None, **make_kwargs):
        self._vec = JaxVectorEnv(env, 1, params, autoreset_mode="same_step", **make_kwargs)
        self.env = self._vec.env
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.render_mode = check_render_mode(render_mode)
        self.metadata = {**type(self).metadata, "render_fps": int(round(1.0 / float(self._vec.params.dt)))}
        self._final_state: tuple[Any, Any, np.ndarray] | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or self._vec._key is None:
            self._vec._key = seed_key(seed, self.np_random)
        _, infos = self._vec.reset()
        self._final_state = None
        info = {k: v[0].item() for k, v in infos.items() if not k.startswith("_")}
        return np.asarray(self._vec._obs[0], np.float32), info

    def step(self, action):
        before, key = self._vec.state, self._vec._key
        action = np.asarray(action, np.float32)
        obs, reward, term, trunc, info = jax.device_get(self._vec.step_arrays(action[None]))
        done = bool(term[0] or trunc[0])
        out = {
            k: np.asarray(v[0]) for k, v in info.items() if k not in ("final_observation", "terminated", "truncated")
        }
        # the episode is over: return its last observation; keep what recomputes its last state for render()
        self._final_state = (key, jax.tree.map(lambda a: a[0], before), action) if done else None
        obs = info["final_observation"] if done else obs
        return np.asarray(obs[0], np.float32), float(reward[0]), bool(term[0]), bool(trunc[0]), out

    def final_state(self):
        """After a terminal step, the state the episode ended in (before the automatic reset), recomputed by
        ``env.step_env`` with the step's own key (``sims.envs.vector`` splits ``key -> (key, sub)``, ``sub ->
        keys``, and ``env.step`` each key ``-> (k_step, k_reset)``); ``None`` otherwise."""
        if self._final_state is None:
            return None
        key, state, action = self._final_state
        k_step = jax.random.split(jax.random.split(jax.random.split(key)[1], 1)[0])[0]
        return jax.jit(self.env.step_env)(k_step, state, action, self._vec.params)[1]

    def render(self):
        """An ``(H, W, 3)`` uint8 top view (``render_mode="rgb_array"``), else ``None``; after a terminal step,
        of the final state (:meth:`final_state`)."""
        if self.render_mode is None or self._vec.state is None:
            return None
        final = self.final_state()
        state = jax.tree.map(lambda a: a[0], self._vec.state) if final is None else final
        return render_frame(self.env, jax.device_get(state), self._vec.params)

    @property
    def state(self):
        return self._vec.state


register()

__all__ = ["GYM_IDS", "JaxEnv", "JaxVectorEnv", "as_env", "autoreset_mode", "register", "seed_key", "to_gym_box"]
