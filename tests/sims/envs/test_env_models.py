"""The RL envs on the full vehicle (``model="full"``, issue 26): the race and braking tasks run, observe
finite numbers and reset automatically; the default stays the double track."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims.envs import make
from sims.vehicles.full import BodyState
from sims.vehicles.params import VehicleState
from tests.sims.conftest import FAST


def batched(env):
    """Jitted, vmapped ``(reset, step)`` of ``env`` (as :func:`sims.envs.base.batched`) with the fast XLA
    compile options."""
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)), compiler_options=FAST)
    return reset, jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)), compiler_options=FAST)


def test_model_choice_is_static_config():
    env = make("jaxtire/Braking-v0", model="full")
    assert env.model == "full" and env.vehicle_model.name == "full"
    assert env != make("jaxtire/Braking-v0") and make("jaxtire/Braking-v0").model == "double_track"
    assert "model='full'" in repr(env)
    with pytest.raises(ValueError, match="model = 'single_track'.*allowed: double_track, full"):
        make("jaxtire/Braking-v0", model="single_track")
    default = make("jaxtire/RaceOval-v0")
    state = jax.eval_shape(default.reset, jax.random.key(0), default.default_params)[1]
    assert type(state.vehicle) is VehicleState


def test_race_full_model_steps_and_auto_resets():
    """Three race envs on the oval with the full vehicle, a 4-step time limit, 6 steps of a scripted
    throttle-and-steer action: finite observations in the observation space, the state's body a BodyState (body
    roll and heave present), truncation at step 4 and the automatic reset's first observation after it."""
    env = make("jaxtire/RaceOval-v0", model="full")
    params = env.params(max_steps=4)
    reset, step = batched(env)
    keys = jax.random.split(jax.random.key(0), 3)
    obs, state = reset(keys, params)
    assert isinstance(state.vehicle.body, BodyState) and state.vehicle.body.roll.shape == (3,)
    action = jnp.tile(jnp.asarray([0.1, 0.6]), (3, 1))
    space = env.observation_space(params)
    for i in range(6):
        obs, state, reward, term, trunc, info = step(jax.random.split(jax.random.key(i + 1), 3), state, action, params)
        obs = np.asarray(obs)
        assert obs.shape == (3, *space.shape) and np.all(np.isfinite(obs)) and np.all(np.isfinite(np.asarray(reward)))
        assert all(space.contains(o) for o in obs)
        assert not np.any(np.asarray(term))
        if i == 3:
            assert np.all(np.asarray(trunc)) and np.all(np.asarray(state.t) == 0)  # reset inside the step
            assert np.all(np.isfinite(np.asarray(info["final_observation"])))
    assert np.all(np.asarray(state.t) == 2)
    assert np.any(np.abs(np.asarray(state.vehicle.body.roll)) > 0.0)  # the body rolls in the turn-in


def test_braking_full_model_stops():
    """Two braking envs with the full vehicle, a moderate brake (pedals 0.6 / 0.4) until both cars stop
    (terminated, ``stopped`` 1): finite observations and rewards all the way, the stop's final observation
    finite, the envs reset to a new episode in the same step."""
    env = make("jaxtire/Braking-v0", model="full")
    params = env.default_params
    reset, step = batched(env)
    obs, state = reset(jax.random.split(jax.random.key(3), 2), params)
    action = jnp.tile(jnp.asarray([0.2, -0.2]), (2, 1))
    stopped = np.zeros(2, bool)
    for i in range(120):
        obs, state, reward, term, trunc, info = step(jax.random.split(jax.random.key(i), 2), state, action, params)
        assert np.all(np.isfinite(np.asarray(obs))) and np.all(np.isfinite(np.asarray(reward)))
        done = np.asarray(term)
        assert np.all(np.asarray(info["stopped"])[done] == 1.0) and not np.any(np.asarray(trunc))
        assert np.all(np.isfinite(np.asarray(info["final_observation"])))
        assert np.all(np.asarray(state.t)[done] == 0)
        stopped |= done
        if stopped.all():
            break
    assert stopped.all()
