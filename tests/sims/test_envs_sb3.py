"""Stable-Baselines3 on the JAX vector env (sims.envs.sb3.JaxVecEnv): the VecEnv protocol (terminal
observations, truncation flags, episode records agree with the JAX env) and SB3's PPO learning the
braking task through it in well under a minute."""

import jax
import numpy as np
import pytest

pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0, then the sb3 extra)")
pytest.importorskip("stable_baselines3", reason="stable-baselines3 (the sb3 extra) is not installed")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

import sims.envs as envs  # noqa: E402
from sims.envs.base import batched  # noqa: E402
from sims.envs.sb3 import JaxVecEnv  # noqa: E402

N = 8


def test_vecenv_protocol_matches_the_jax_env():
    params = envs.make("braking").params(max_steps=6)
    venv = JaxVecEnv("braking", num_envs=N, params=params)
    assert isinstance(venv, VecEnv) and venv.observation_space.shape == (13,) and venv.action_space.shape == (2,)
    venv.seed(4)
    obs = venv.reset()
    reset, step = batched(envs.make("braking"))
    key, sub = jax.random.split(jax.random.key(4))
    obs_j, state = reset(jax.random.split(sub, N), params)
    np.testing.assert_array_equal(obs, np.asarray(obs_j))
    rng = np.random.default_rng(0)
    for t in range(1, 7):
        a = rng.uniform(-1, 1, (N, 2)).astype(np.float32)
        venv.step_async(a)
        obs, rew, dones, infos = venv.step_wait()
        key, sub = jax.random.split(key)
        obs_j, state, rew_j, term_j, trunc_j, info_j = step(jax.random.split(sub, N), state, a, params)
        np.testing.assert_array_equal(obs, np.asarray(obs_j))
        np.testing.assert_allclose(rew, np.asarray(rew_j))
        assert obs.dtype == np.float32 and rew.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == N
        np.testing.assert_array_equal(dones, np.asarray(term_j | trunc_j))
        for i in np.flatnonzero(dones):
            np.testing.assert_array_equal(infos[i]["terminal_observation"], np.asarray(info_j["final_observation"][i]))
            assert infos[i]["TimeLimit.truncated"] == bool(trunc_j[i])
            assert infos[i]["episode"]["l"] == int(info_j["episode_length"][i])
            assert np.isclose(infos[i]["episode"]["r"], float(info_j["episode_return"][i]))
        assert all(not infos[i] for i in np.flatnonzero(~dones))
    assert dones.all() and all(info["TimeLimit.truncated"] for info in infos)  # 6-step limit (no stop from 15 m/s)
    assert venv.get_attr("num_actions") == [2] * N and venv.env_is_wrapped(object) == [False] * N


def _first_episode_return(venv, act):
    """Mean return of the first episode of every env, started from seed 123."""
    venv.seed(123)
    obs = venv.reset()
    ret = np.full(venv.num_envs, np.nan)
    for _ in range(400):
        obs, _, dones, infos = venv.step(act(obs))
        for i in np.flatnonzero(dones & np.isnan(ret)):
            ret[i] = infos[i]["episode"]["r"]
        if not np.isnan(ret).any():
            break
    return float(np.mean(ret))


def test_sb3_ppo_learns_braking_through_the_adapter():
    """40k steps of SB3 PPO (16 envs x 128 steps per rollout, ~10-20 s here): the deterministic policy
    stops in a shorter distance than before training (the untrained mean action, both pedals at half,
    returns about -0.21) and stops clearly shorter than random pedals (0.03 ideal stopping distances)."""
    import torch

    torch.set_num_threads(1)
    venv = JaxVecEnv("braking", num_envs=16)
    model = PPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=5, learning_rate=1e-3, seed=0,
                policy_kwargs={"log_std_init": -1.0}, device="cpu", verbose=0)
    eval_env = JaxVecEnv("braking", num_envs=16)
    policy = lambda obs: model.predict(obs, deterministic=True)[0]  # noqa: E731
    rng = np.random.default_rng(0)
    random_policy = lambda obs: rng.uniform(-1.0, 1.0, (16, 2)).astype(np.float32)  # noqa: E731
    rand = _first_episode_return(eval_env, random_policy)
    before = _first_episode_return(eval_env, policy)
    model.learn(40_960)
    after = _first_episode_return(eval_env, policy)
    assert -1.0 < before < 0.0
    print(f"SB3 PPO braking: first-episode return random {rand:.3f}, untrained {before:.3f} -> trained {after:.3f}")
    # learned: better than random pedals by a clear margin and not worse than the untrained mean action
    # (which, both pedals at half, is already a decent stop with mirrored tires and lift-safe loads)
    assert after > rand + 0.03, (rand, before, after)
    assert after > before - 0.005, (before, after)
    assert len(model.ep_info_buffer) > 50  # SB3 logged the adapter's episode records
