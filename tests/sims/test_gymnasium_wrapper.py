"""The Gymnasium wrappers of sims.envs: step-for-step agreement with the JAX env, gymnasium's env
checker, registration.  Shares the compiled batched braking step with tests/sims/test_envs.py."""

import jax
import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import sims.envs as envs  # noqa: E402
from sims.envs.base import batched  # noqa: E402
from sims.envs.gymnasium import GYM_IDS, JaxEnv, JaxVectorEnv  # noqa: E402

N = 4


def test_vector_env_matches_jax_env_step_for_step():
    env = envs.make("braking")
    params = env.params(max_steps=15)
    venv = JaxVectorEnv(env, num_envs=N, params=params)
    assert venv.metadata["autoreset_mode"].name == "SAME_STEP"
    assert venv.single_observation_space.shape == env.observation_space(params).shape
    assert venv.observation_space.shape == (N,) + env.observation_space(params).shape
    assert venv.action_space.shape == (N, 2) and venv.single_action_space.dtype == np.float32

    reset, step = batched(env)
    key = jax.random.key(3)
    key, sub = jax.random.split(key)
    obs_j, state = reset(jax.random.split(sub, N), params)
    obs_g, infos = venv.reset(seed=3)
    assert isinstance(obs_g, np.ndarray) and obs_g.dtype == np.float32 and obs_g.shape == (N, 13)
    np.testing.assert_array_equal(obs_g, np.asarray(obs_j))

    rng = np.random.default_rng(0)
    n_done = 0
    for t in range(40):
        actions = rng.uniform(-1, 1, (N, 2)).astype(np.float32)
        key, sub = jax.random.split(key)
        obs_j, state, rew_j, done_j, info_j = step(jax.random.split(sub, N), state, actions, params)
        obs_g, rew_g, term_g, trunc_g, infos = venv.step(actions)
        np.testing.assert_array_equal(obs_g, np.asarray(obs_j))
        assert rew_g.dtype == np.float64 and term_g.dtype == np.bool_ and trunc_g.dtype == np.bool_
        np.testing.assert_array_equal(rew_g, np.asarray(rew_j, np.float64))
        np.testing.assert_array_equal(term_g, np.asarray(info_j["terminated"]))
        np.testing.assert_array_equal(trunc_g, np.asarray(info_j["truncated"]))
        np.testing.assert_array_equal(term_g | trunc_g, np.asarray(done_j))
        np.testing.assert_array_equal(infos["episode_length"], np.asarray(info_j["episode_length"]))
        if done_j.any():
            n_done += int(np.sum(done_j))
            assert np.array_equal(infos["_final_obs"], np.asarray(done_j))
            for i in np.flatnonzero(np.asarray(done_j)):
                np.testing.assert_array_equal(infos["final_obs"][i], np.asarray(info_j["final_obs"][i]))
        else:
            assert "final_obs" not in infos
        for a, b in zip(jax.tree.leaves(venv.state), jax.tree.leaves(state)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert n_done >= N  # the episodes were truncated at 15 steps (or stopped) and reset inside step


def test_single_env_passes_gymnasium_env_checker():
    from gymnasium.utils.env_checker import check_env

    env = JaxEnv("braking")
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    total, done, n = 0.0, False, 0
    while not done:
        obs, r, term, trunc, info = env.step(np.ones(2, np.float32))  # full brake: locks, stops
        total += r
        done = term or trunc
        n += 1
    assert term and info["stopped"] == 1.0 and np.isclose(info["episode_return"], total, rtol=1e-5)
    assert env.observation_space.contains(obs)


def test_registered_with_gymnasium():
    for gym_id in GYM_IDS:
        assert gym_id in gymnasium.registry
    venv = gymnasium.make_vec("jaxtire/Braking-v0", num_envs=N)
    assert isinstance(venv, JaxVectorEnv) and venv.num_envs == N
    obs, _ = venv.reset(seed=1)
    obs2, rew, term, trunc, _ = venv.step(venv.action_space.sample())
    assert obs2.shape == obs.shape == (N, 13) and rew.shape == (N,)
    single = gymnasium.make("jaxtire/Braking-v0")
    assert isinstance(single.unwrapped, JaxEnv)
    with pytest.raises(ValueError, match="num_envs"):
        JaxVectorEnv("braking", num_envs=0)
