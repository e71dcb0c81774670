"""The Gymnasium adapters of sims.envs: step-for-step agreement with the JAX env in both autoreset modes,
registration on ``import sims`` (``make``, ``make_vec``, the ``module:id`` form), gymnasium's env checker
for every task (one shipped circuit; every circuit id is built on its own track), and gymnasium's vector wrappers (RecordEpisodeStatistics, NormalizeObservation).  Shares
the compiled batched braking step with tests/sims/test_envs.py."""

import jax
import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="gymnasium (the rl extra) is not installed")

import sims  # noqa: E402,F401  (registers the ids)
import sims.envs as envs  # noqa: E402
from sims.envs.base import batched  # noqa: E402
from sims.envs.gymnasium import JaxEnv, JaxVectorEnv  # noqa: E402
from sims.envs.registration import CIRCUIT_NAMES, GYM_IDS  # noqa: E402

N = 4
RACE_CHECKED = ("jaxtire/RaceOval-v0", "jaxtire/RaceTwisty-v0", "jaxtire/RaceMonza-v0")


def _replay(params, seed):
    """The JAX env driven with the adapter's key scheme: yields (obs, reward, term, trunc, info) per step."""
    env = envs.make("braking")
    reset, step = batched(env)
    key = jax.random.key(seed)
    key, sub = jax.random.split(key)
    obs, state = reset(jax.random.split(sub, N), params)
    return env, reset, step, key, obs, state


def test_same_step_vector_env_matches_jax_env_step_for_step():
    params = envs.make("braking").params(max_steps=15)
    venv = JaxVectorEnv("braking", num_envs=N, params=params, autoreset_mode="same_step")
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert venv.observation_space.shape == (N, 13) and venv.action_space.shape == (N, 2)
    assert venv.single_action_space.dtype == np.float32
    env, reset, step, key, obs_j, state = _replay(params, 3)
    obs_g, _ = venv.reset(seed=3)
    assert obs_g.dtype == np.float32
    np.testing.assert_array_equal(obs_g, np.asarray(obs_j))
    rng = np.random.default_rng(0)
    n_done = 0
    for _ in range(40):
        actions = rng.uniform(-1, 1, (N, 2)).astype(np.float32)
        key, sub = jax.random.split(key)
        obs_j, state, rew_j, term_j, trunc_j, info_j = step(jax.random.split(sub, N), state, actions, params)
        obs_g, rew_g, term_g, trunc_g, infos = venv.step(actions)
        np.testing.assert_array_equal(obs_g, np.asarray(obs_j))
        assert rew_g.dtype == np.float64 and term_g.dtype == np.bool_ and trunc_g.dtype == np.bool_
        np.testing.assert_array_equal(rew_g, np.asarray(rew_j, np.float64))
        np.testing.assert_array_equal(term_g, np.asarray(term_j))
        np.testing.assert_array_equal(trunc_g, np.asarray(trunc_j))
        np.testing.assert_array_equal(infos["episode_length"], np.asarray(info_j["episode_length"]))
        done = np.asarray(term_j | trunc_j)
        if done.any():
            n_done += int(done.sum())
            assert np.array_equal(infos["_final_obs"], done)
            for i in np.flatnonzero(done):
                np.testing.assert_array_equal(infos["final_obs"][i], np.asarray(info_j["final_observation"][i]))
        else:
            assert "final_obs" not in infos
    for a, b in zip(jax.tree.leaves(venv.state), jax.tree.leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert n_done >= N  # truncated at 15 steps (or stopped) and reset inside step


def test_next_step_vector_env_returns_final_obs_then_reset_obs():
    """Next-step autoreset: the finishing step returns the JAX env's final observation, the next one the
    reset observation with reward 0 and no flags, ignoring the action; the physics is not stepped twice."""
    params = envs.make("braking").params(max_steps=4)
    venv = JaxVectorEnv("braking", num_envs=N, params=params)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    env, reset, step, key, obs_j, state = _replay(params, 5)
    obs_g, _ = venv.reset(seed=5)
    np.testing.assert_array_equal(obs_g, np.asarray(obs_j))
    no_brake = -np.ones((N, 2), np.float32)  # no stop within 4 steps: all truncate together
    for t in range(1, 5):
        key, sub = jax.random.split(key)
        obs_j, state, rew_j, term_j, trunc_j, info_j = step(jax.random.split(sub, N), state, no_brake, params)
        obs_g, rew_g, term_g, trunc_g, infos = venv.step(no_brake)
        np.testing.assert_array_equal(obs_g, np.asarray(info_j["final_observation"]))
        np.testing.assert_array_equal(rew_g, np.asarray(rew_j, np.float64))
        assert np.all(trunc_g == (t == 4)) and not term_g.any()
    # the step after: reset observations (those the JAX env returned on the finishing step), reward 0
    obs_g, rew_g, term_g, trunc_g, infos = venv.step(np.ones((N, 2), np.float32))
    np.testing.assert_array_equal(obs_g, np.asarray(obs_j))
    assert np.all(rew_g == 0) and not (term_g | trunc_g).any() and np.all(infos["episode_length"] == 0)
    for a, b in zip(jax.tree.leaves(venv.state), jax.tree.leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # and the episode goes on from there: its first real step is counted as step 1
    obs_g, rew_g, term_g, trunc_g, infos = venv.step(no_brake)
    assert np.all(infos["episode_length"] == 1) and np.all(rew_g != 0)


def test_record_episode_statistics_and_normalize_observation():
    """Gymnasium's vector RecordEpisodeStatistics counts every episode length and return as the env does
    (random pedals from 2-6 m/s: episodes stop after different numbers of steps, or truncate at 12), and
    NormalizeObservation's running mean equals the mean of the raw observations it saw."""
    from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

    params = envs.make("braking").params(max_steps=12, speed=(2.0, 6.0))
    raw = JaxVectorEnv("braking", num_envs=N, params=params)
    venv = RecordEpisodeStatistics(NormalizeObservation(JaxVectorEnv("braking", num_envs=N, params=params)))
    obs, _ = venv.reset(seed=1)
    raw_obs, _ = raw.reset(seed=1)
    seen = [raw_obs]
    rng = np.random.default_rng(1)
    lengths, returns, ours_l, ours_r = [], [], [], []
    for _ in range(60):
        a = rng.uniform(-1, 1, (N, 2)).astype(np.float32)
        obs, rew, term, trunc, infos = venv.step(a)
        raw_obs, raw_rew, raw_term, raw_trunc, raw_infos = raw.step(a)
        seen.append(raw_obs)
        np.testing.assert_array_equal(rew, raw_rew)
        done = term | trunc
        if done.any():
            lengths += list(infos["episode"]["l"][done])
            returns += list(infos["episode"]["r"][done])
            ours_l += list(raw_infos["episode_length"][done])
            ours_r += list(raw_infos["episode_return"][done])
    assert len(lengths) >= 12 and len(set(lengths)) >= 3, lengths
    np.testing.assert_array_equal(lengths, ours_l)
    np.testing.assert_allclose(returns, ours_r, rtol=1e-5, atol=1e-6)
    seen = np.concatenate(seen)
    np.testing.assert_allclose(venv.env.obs_rms.mean, seen.mean(axis=0), rtol=1e-4, atol=1e-5)
    assert np.all(np.abs(obs) < 10.0)


def test_registered_ids_make_make_vec_and_module_form():
    for gym_id in GYM_IDS:
        assert gym_id in gymnasium.registry
    venv = gymnasium.make_vec("jaxtire/Braking-v0", num_envs=N)
    assert isinstance(venv, JaxVectorEnv) and venv.num_envs == N
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=1)
    obs2, rew, term, trunc, _ = venv.step(venv.action_space.sample())
    assert obs2.shape == obs.shape == (N, 13) and rew.shape == (N,)
    same = gymnasium.make_vec("jaxtire/Braking-v0", num_envs=2, autoreset_mode="same_step")
    assert same.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert isinstance(gymnasium.make("sims:jaxtire/Braking-v0").unwrapped, JaxEnv)
    assert isinstance(gymnasium.make("sims.envs:jaxtire/Braking-v0").unwrapped, JaxEnv)
    with pytest.raises(ValueError, match="num_envs"):
        JaxVectorEnv("braking", num_envs=0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        JaxVectorEnv("braking", num_envs=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="render_mode"):
        JaxEnv("braking", render_mode="human")


#: The ids the checker runs on: every task, and one shipped circuit for the race on a database track (the
#: other circuits are the same env and code with another ``params.track``: see the test after this one).
CHECKED_IDS = sorted(i for i in GYM_IDS if not i.startswith("jaxtire/Race") or i in RACE_CHECKED)


@pytest.mark.parametrize("gym_id", CHECKED_IDS)
def test_every_task_passes_the_env_checker(gym_id):
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(gym_id, render_mode="rgb_array")
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    frame = env.render()
    assert frame.shape == (320, 320, 3) and frame.dtype == np.uint8
    venv = gymnasium.make_vec(gym_id, num_envs=2, render_mode="rgb_array")
    venv.reset(seed=0)
    obs, rew, term, trunc, infos = venv.step(venv.action_space.sample())
    assert venv.observation_space.contains(obs) and len(venv.render()) == 2


def test_every_circuit_id_drives_its_own_circuit():
    """Each shipped circuit's id builds the race env on that circuit (its centreline, widths and length as
    :func:`sims.roads.circuits.get_track` reads the file) with the checked id's spaces; one reset on it."""
    from sims.roads.circuits import get_track

    monza = gymnasium.make("jaxtire/RaceMonza-v0").unwrapped
    for name in CIRCUIT_NAMES:
        env = gymnasium.make(f"jaxtire/Race{name}-v0").unwrapped
        track, want = env._vec.params.track, get_track(name)
        assert env.env.track.lower() == name.lower() and track.xy.shape == want.xy.shape
        np.testing.assert_allclose(np.asarray(track.length), float(want.length), rtol=1e-6)
        assert env.observation_space == monza.observation_space and env.action_space == monza.action_space
    obs, _ = env.reset(seed=0)  # the last circuit: the start sits on its line
    assert env.observation_space.contains(obs) and abs(obs[15]) < 0.5  # lateral offset / half width


def test_single_env_episode_to_the_end():
    env = JaxEnv("braking", render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    total, done, n = 0.0, False, 0
    while not done:
        obs, r, term, trunc, info = env.step(np.ones(2, np.float32))  # full brake: locks, stops
        total += r
        done = term or trunc
        n += 1
    assert term and info["stopped"] == 1.0 and np.isclose(info["episode_return"], total, rtol=1e-5)
    assert info["episode_length"] == n and env.observation_space.contains(obs)
    assert obs[0] * 30.0 < 0.5  # the final observation: stopped (vx / 30 below v_stop / 30)
    # the final state (recomputed for render()) is the one of that observation, not the reset one
    final = env.final_state()
    np.testing.assert_allclose(np.asarray(env.env.get_obs(final, env._vec.params)), obs,
                               rtol=1e-6, atol=1e-6)
    assert float(final.t) == n and env.render().shape == (320, 320, 3)
