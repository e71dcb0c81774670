"""``n`` environments stepped in one jitted call that also carries the PRNG key: the engine of the
Gymnasium (:mod:`sims.envs.gymnasium`) and Stable-Baselines3 (:mod:`sims.envs.sb3`) adapters.

Random numbers: every call does ``key, sub = split(key)`` and gives environment ``i`` the key
``split(sub, n)[i]``, inside the same jitted call as the step (one dispatch per step, no separate key
arithmetic on the host), so the adapters replay :func:`sims.envs.base.batched` exactly.

Two autoreset conventions (Gymnasium's ``AutoresetMode``):

* same step (:func:`VectorFns.step`): a finished environment is reset inside the step; the returned
  observation is the new episode's first one and ``info["final_observation"]`` the last one of the old;
* next step (:func:`VectorFns.step_next`): the step returns the last observation of a finished episode
  (with its reward and flags); the *next* call ignores that environment's action and returns the new
  episode's first observation with reward 0 and both flags false.  The state is already reset inside
  the finishing step (the JAX env resets in the same step), so no physics is recomputed.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from sims.envs.base import Environment, chunked, dtype_of


class VectorFns(NamedTuple):
    """Jitted functions of ``n`` environments (``n`` is the leading axis of the arrays; ``key`` a single key).

    * ``reset(key, params, n) -> (key, obs, state)`` (``n`` static);
    * ``step(key, state, actions, params) -> (key, obs, state, reward, terminated, truncated, info)``,
      same-step autoreset;
    * ``step_next(key, state, obs, prev_done, actions, params) -> (key, obs_out, obs_next, state, reward,
      terminated, truncated, info)``, next-step autoreset: ``obs_out`` is what the user sees, ``obs_next``
      what the next call needs (the first observation of the new episode where ``obs_out`` is a final
      one), ``prev_done`` the ``terminated | truncated`` of the previous call.
    """

    reset: Any
    step: Any
    step_next: Any


def _split(key, n):
    key, sub = jax.random.split(key)
    return key, jax.random.split(sub, n)


@functools.lru_cache(maxsize=64)
def vector_fns(env: Environment, chunk: int | None = None) -> VectorFns:
    """The :class:`VectorFns` of ``env`` (cached per env configuration and ``chunk``, see
    :func:`sims.envs.base.chunked`)."""
    vreset = chunked(jax.vmap(env.reset, in_axes=(0, None)), chunk, in_axes=(0, None))
    vstep = chunked(jax.vmap(env.step, in_axes=(0, 0, 0, None)), chunk)

    def reset(key, params, n):
        key, keys = _split(key, n)
        obs, state = vreset(keys, params)
        return key, obs, state

    def step(key, state, actions, params):
        key, keys = _split(key, actions.shape[0])
        obs, state, reward, term, trunc, info = vstep(keys, state, actions.astype(dtype_of(params)), params)
        return key, obs, state, reward, term, trunc, info

    def step_next(key, state, obs, prev_done, actions, params):
        key, obs_new, state_new, reward, term, trunc, info = step(key, state, actions, params)
        keep = prev_done  # these were reset by the previous call: hand out their first observation now

        def sel(a, b):
            return jnp.where(keep.reshape(keep.shape + (1,) * (a.ndim - 1)), a, b)

        state_out = jax.tree.map(sel, state, state_new)
        obs_out = sel(obs, info["final_observation"])
        obs_next = sel(obs, obs_new)
        reward = jnp.where(keep, jnp.zeros_like(reward), reward)
        term, trunc = term & ~keep, trunc & ~keep
        zero = {"episode_return": jnp.zeros_like(info["episode_return"]),
                "episode_length": jnp.zeros_like(info["episode_length"])}
        info = {**info, "terminated": term, "truncated": trunc, "final_observation": obs_out,
                "discount": 1.0 - term.astype(reward.dtype),
                **{k: jnp.where(keep, v, info[k]) for k, v in zero.items()}}
        return key, obs_out, obs_next, state_out, reward, term, trunc, info

    return VectorFns(jax.jit(reset, static_argnums=2), jax.jit(step), jax.jit(step_next))
