"""RL environments on the four-wheel Magic Formula vehicle: gymnax-style, pure-functional, vmap-able.

::

    import jax, sims.envs
    env = sims.envs.make("braking")            # or "race-oval", "race-twisty", "drift"
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    action = env.action_space(params).sample(jax.random.key(1))
    obs, state, reward, done, info = env.step(jax.random.key(2), state, action, params)

Everything is a pure function: ``jax.vmap(env.reset, in_axes=(0, None))(keys, params)`` runs a batch,
``in_axes=(0, 0)`` with a batched ``params`` gives every environment its own physics.  ``step`` resets
automatically on ``done``.  Protocol, spaces, physics and dtypes: :mod:`sims.envs.base`; tasks:
:mod:`sims.envs.race`, :mod:`sims.envs.drift`, :mod:`sims.envs.braking`; tracks:
:mod:`sims.envs.tracks`; Gymnasium wrappers: :mod:`sims.envs.gymnasium` (needs the ``rl`` extra);
PPO: ``python -m sims.envs.ppo``.
"""

from __future__ import annotations

from sims.envs.base import Box, Environment, Physics
from sims.envs.braking import Braking, BrakingParams
from sims.envs.drift import Drift, DriftParams
from sims.envs.race import Race, RaceParams
from sims.envs import tracks

#: name -> (class, constructor keywords)
REGISTRY = {
    "braking": (Braking, {}),
    "drift": (Drift, {}),
    "race-oval": (Race, {"track": "oval"}),
    "race-twisty": (Race, {"track": "twisty"}),
}


def make(name: str, **kwargs) -> Environment:
    """The environment ``name`` (:data:`REGISTRY`: ``"braking"``, ``"drift"``, ``"race-oval"``,
    ``"race-twisty"``); keywords go to the constructor (``substeps=10``, ``privileged=False``, and for
    the race ``track=`` a built-in name or a :class:`~sims.envs.tracks.Track`)."""
    try:
        cls, kw = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown environment {name!r}; allowed: {', '.join(REGISTRY)}") from None
    return cls(**{**kw, **kwargs})


__all__ = ["Box", "Braking", "BrakingParams", "Drift", "DriftParams", "Environment", "Physics", "REGISTRY",
           "Race", "RaceParams", "make", "registered", "tracks"]


def registered() -> tuple:
    """Names accepted by :func:`make`."""
    return tuple(REGISTRY)
