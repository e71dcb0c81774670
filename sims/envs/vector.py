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
import numpy as np
from jax.flatten_util import ravel_pytree

from sims.envs.base import Environment, chunked, dtype_of


class VectorFns(NamedTuple):
    """Jitted functions of ``n`` environments (``n`` is the leading axis of the arrays; ``key`` a single key;
    ``flat`` the env params packed into one vector by :class:`VectorCore`).

    * ``reset(key, flat, n) -> (key, obs, state)`` (``n`` static);
    * ``step(key, state, actions, flat) -> (key, obs, state, reward, terminated, truncated, info)``,
      same-step autoreset;
    * ``step_next(key, state, obs, prev_done, actions, flat) -> (key, obs_out, obs_next, state, reward,
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
def vector_fns(env: Environment, chunk: int | None, treedef, spec: tuple) -> VectorFns:
    """The :class:`VectorFns` of ``env`` for params of structure ``treedef`` with leaves of ``spec``
    (``((shape, dtype), ...)``), cached per env configuration, ``chunk`` (:func:`sims.envs.base.chunked`)
    and params structure, so adapters with different params values share the compiled code."""
    template = jax.tree.unflatten(treedef, [np.zeros(shape, dtype) for shape, dtype in spec])
    _, unravel = ravel_pytree(template)
    vreset = chunked(jax.vmap(env.reset, in_axes=(0, None)), chunk, in_axes=(0, None))
    vstep = chunked(jax.vmap(env.step, in_axes=(0, 0, 0, None)), chunk)

    def reset(key, flat, n):
        key, keys = _split(key, n)
        obs, state = vreset(keys, unravel(flat))
        return key, obs, state

    def step(key, state, actions, flat):
        params = unravel(flat)
        key, keys = _split(key, actions.shape[0])
        obs, state, reward, term, trunc, info = vstep(keys, state, actions.astype(dtype_of(params)), params)
        return key, obs, state, reward, term, trunc, info

    def step_next(key, state, obs, prev_done, actions, flat):
        key, obs_new, state_new, reward, term, trunc, info = step(key, state, actions, flat)
        keep = prev_done  # these were reset by the previous call: hand out their first observation now

        def sel(a, b):
            return jnp.where(keep.reshape(keep.shape + (1,) * (a.ndim - 1)), a, b)

        state_out = jax.tree.map(sel, state, state_new)
        obs_out = sel(obs, info["final_observation"])
        obs_next = sel(obs, obs_new)
        reward = jnp.where(keep, jnp.zeros_like(reward), reward)
        term, trunc = term & ~keep, trunc & ~keep
        zero = {
            "episode_return": jnp.zeros_like(info["episode_return"]),
            "episode_length": jnp.zeros_like(info["episode_length"]),
        }
        info = {
            **info,
            "terminated": term,
            "truncated": trunc,
            "final_observation": obs_out,
            "discount": 1.0 - term.astype(reward.dtype),
            **{k: jnp.where(keep, v, info[k]) for k, v in zero.items()},
        }
        return key, obs_out, obs_next, state_out, reward, term, trunc, info

    return VectorFns(jax.jit(reset, static_argnums=2), jax.jit(step), jax.jit(step_next))


class VectorCore:
    """``env`` with fixed ``params``, stepped ``n`` environments per call (module docstring).

    The params pytree (hundreds of leaves: the vehicle, its tires, the surface table) is packed once
    into one vector (``jax.flatten_util.ravel_pytree``; integer and boolean leaves round-trip exactly
    through the float vector) and unpacked inside the jitted call: a call passes ~25 arrays instead of
    ~400, which cuts the host overhead of a small batch several-fold.  Methods as :class:`VectorFns`
    without the ``flat`` argument."""

    def __init__(self, env: Environment, params, chunk: int | None = None):
        self.env, self.params = env, params
        self.flat, _ = ravel_pytree(params)
        leaves, treedef = jax.tree.flatten(params)
        spec = tuple((tuple(np.shape(x)), np.dtype(jnp.asarray(x).dtype).name) for x in leaves)
        self.fns = vector_fns(env, chunk, treedef, spec)

    def reset(self, key, n: int):
        return self.fns.reset(key, self.flat, n)

    def step(self, key, state, actions):
        return self.fns.step(key, state, actions, self.flat)

    def step_next(self, key, state, obs, prev_done, actions):
        return self.fns.step_next(key, state, obs, prev_done, actions, self.flat)
