"""RL environments on the four-wheel Magic Formula vehicle: gymnax API, pure-functional, vmap-able.

::

    import jax, sims.envs
    env = sims.envs.make("jaxtire/Braking-v0")  # or "jaxtire/RaceOval-v0", "jaxtire/RaceTwisty-v0", "jaxtire/Drift-v0"
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    action = env.action_space(params).sample(jax.random.key(1))
    obs, state, reward, terminated, truncated, info = env.step(jax.random.key(2), state, action, params)

Everything is a pure function: ``jax.vmap(env.reset, in_axes=(0, None))(keys, params)`` runs a batch,
``in_axes=(0, 0)`` with a batched ``params`` gives every environment its own physics.  ``step`` resets
automatically on ``terminated | truncated``.  Protocol, spaces, physics and dtypes: :mod:`sims.envs.base`;
tasks: :mod:`sims.envs.race`, :mod:`sims.envs.drift`, :mod:`sims.envs.braking`; tracks:
:mod:`sims.envs.tracks`; adapters: :mod:`sims.envs.gymnax` (gymnax's ``Environment`` and spaces),
:mod:`sims.envs.gymnasium` (``gymnasium.Env`` / ``VectorEnv``), :mod:`sims.envs.sb3`
(Stable-Baselines3 ``VecEnv``); a batch over every core / device: :mod:`sims.envs.devices`; top-view frames
and GIFs: :mod:`sims.envs.render`; PPO: :mod:`sims.envs.ppo`; evaluation over fixed seeds (laps, crashes, lap
times): :mod:`sims.envs.evaluate`; training and evaluation runs on disk: ``python -m sims rl train|eval``
(:mod:`sims.studies.rl`).

Importing this package registers the gymnasium ids (:mod:`sims.envs.registration`, ``jaxtire/Braking-v0``
...) and nothing else: the tasks (and JAX) load on first use of an attribute below, so ``import sims``
stays cheap.
"""

from __future__ import annotations

import importlib

from sims.envs.registration import GYM_IDS, register

register()

#: attribute -> module that defines it (loaded on first access, PEP 562)
_LAZY = {
    "REGISTRY": "sims.envs.catalog",
    "make": "sims.envs.catalog",
    "registered": "sims.envs.catalog",
    "Box": "sims.envs.base",
    "Environment": "sims.envs.base",
    "Physics": "sims.envs.base",
    "DeviceEnv": "sims.envs.devices",
    "Braking": "sims.envs.braking",
    "BrakingParams": "sims.envs.braking",
    "Drift": "sims.envs.drift",
    "DriftParams": "sims.envs.drift",
    "Race": "sims.envs.race",
    "RaceParams": "sims.envs.race",
}
_SUBMODULES = ("base", "braking", "catalog", "devices", "drift", "race", "tracks")


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


__all__ = [
    "Box",
    "Braking",
    "BrakingParams",
    "DeviceEnv",
    "Drift",
    "DriftParams",
    "Environment",
    "GYM_IDS",
    "Physics",
    "REGISTRY",
    "Race",
    "RaceParams",
    "make",
    "register",
    "registered",
    "tracks",
]
