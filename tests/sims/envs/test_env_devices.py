"""sims.envs.devices.DeviceEnv: a batch of envs split over 2 forced host devices is bitwise the one-device run,
auto-reset included (subprocess: the XLA flag must be set before JAX starts, so it cannot leak into the other
tests).  Covered: a rollout continued from its returned carry, the recorded trajectories, ``reset``, ``step``, a
batch that is not a multiple of the device count (13 envs padded to 14: equal to float32 rounding), and the per-env
key scheme (rollout step = the documented ``split(key, 3)`` then ``env.step``, replayed by hand)."""

import textwrap

import jax
import pytest

from jaxtire.validation import ValidationError
from tests.conftest import run_on_host_devices

SCRIPT = textwrap.dedent("""
    import json
    import jax, jax.numpy as jnp, numpy as np
    assert jax.device_count() == 2, jax.devices()
    from sims.envs.braking import Braking
    from sims.envs.devices import DeviceEnv
    from sims.run.spec import fast_compile_options

    env = Braking(substeps=1)
    # short episodes: slow starts stop within a few steps (terminated), the others hit max_steps (truncated)
    params = env.params(max_steps=6, speed=(0.6, 3.0))
    n, steps = 32, 8                # 16 per device: whole SIMD vectors on one device and on two (bitwise)
    keys = jax.random.split(jax.random.key(3), n)

    def host(tree):
        f = lambda x: np.asarray(jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)
        return jax.tree.map(f, tree)

    res, devs, denvs = {}, {}, {}
    for d in (1, None):
        denv = denvs[d] = DeviceEnv(env, params, devices=d, compiler_options=fast_compile_options())
        obs, state = denv.reset(keys)
        c1, out1 = denv.rollout(keys, obs, state, steps, record=True)
        c2, out2 = denv.rollout(*c1, steps, record=True)       # continued from the carry
        devs[denv.devices] = len(c2[2].vehicle.vx.sharding.device_set)
        res[denv.devices] = host((obs, state, c1, out1, c2, out2))
    a, b = jax.tree.leaves(res[1]), jax.tree.leaves(res[2])
    out = dict(devices=devs, leaves=len(a), exact=all(np.array_equal(x, y) for x, y in zip(a, b, strict=True)))

    # 13 envs: padded to 14 on 2 devices; rows equal the first 13 of the 32-env run to float32 rounding (a block of 7
    # runs in the scalar tail of the vector loops, where XLA contracts no multiply-add: 1-ulp differences)
    obs13, st13 = denvs[None].reset(keys[:13])
    c13, o13 = denvs[None].rollout(keys[:13], obs13, st13, steps, record=True)
    r13, r32 = host((c13[2], o13)), jax.tree.map(lambda x: x[:13], host((res[1][2][2], res[1][3])))
    flags = ("terminated", "truncated", "episodes")
    out["pad_flags"] = all(np.array_equal(r13[1][f], r32[1][f]) for f in flags)
    out["pad_shape"] = list(o13["reward"].shape)
    out["pad_err"] = max(
        float(np.max(np.abs(x - y) / (1.0 + np.abs(y))))
        for x, y in zip(jax.tree.leaves(r13), jax.tree.leaves(r32), strict=True)
        if np.issubdtype(x.dtype, np.floating)
    )

    # the key scheme, replayed by hand on one device for 2 steps: split(key, 3) -> (next, action, step)
    rec = res[1][3]
    k, st, replay = keys, jax.tree.map(jnp.asarray, res[1][1]), []
    space = env.action_space(params)
    for t in range(2):
        ks = jax.vmap(lambda x: jax.random.split(x, 3))(k)
        act = jax.vmap(space.sample)(ks[:, 1])
        ob, st, rew, term, trunc, _ = denvs[1].step(ks[:, 2], st, act)  # DeviceEnv.step
        replay.append(dict(action=np.array_equal(np.asarray(act), rec["action"][:, t]),
                           reward=float(np.max(np.abs(np.asarray(rew) - rec["reward_t"][:, t]))),
                           done=np.array_equal(np.asarray(term | trunc), rec["terminated"][:, t] | rec["truncated"][:, t])))
        k = ks[:, 0]
    out["replay"] = replay

    o1, o2, s2 = res[1][3], res[1][5], res[1][4][2]
    term = np.concatenate([o1["terminated"], o2["terminated"]], 1)
    trunc = np.concatenate([o1["truncated"], o2["truncated"]], 1)
    rew = np.concatenate([o1["reward_t"], o2["reward_t"]], 1)
    out.update(term=term.tolist(), trunc=trunc.tolist(), rew=rew.tolist(), t_end=s2.t.tolist(),
               episodes=[o1["episodes"].tolist(), o2["episodes"].tolist()],
               reward=[o1["reward"].tolist(), o2["reward"].tolist()], vx0=res[1][1].vehicle.vx.tolist())
    print("RESULT", json.dumps(out))
""")


@pytest.fixture(scope="module")
def two_devices():
    return run_on_host_devices(SCRIPT, 2)


def test_two_devices_are_bitwise_the_one_device_run(two_devices):
    out = two_devices
    assert out["devices"] == {"1": 1, "2": 2}, out["devices"]  # the split result lives on both devices
    assert out["leaves"] > 50 and out["exact"]


def test_a_batch_padded_to_the_device_count_gives_the_same_envs(two_devices):
    out = two_devices
    assert out["pad_shape"] == [13] and out["pad_flags"], out
    assert out["pad_err"] < 1e-5, out["pad_err"]


def test_rollout_steps_are_the_documented_key_scheme(two_devices):
    for r in two_devices["replay"]:
        assert r["action"] and r["done"] and r["reward"] < 1e-6, r


def test_auto_reset_inside_the_rollout(two_devices):
    import numpy as np

    out = two_devices
    term, trunc, rew = np.array(out["term"]), np.array(out["trunc"]), np.array(out["rew"], np.float32)
    done = term | trunc
    assert term.sum() > 0 and trunc.sum() > 0  # both kinds of episode end happen, so both reset paths ran
    assert not np.any(term & trunc)
    # episode lengths worked from the flags: the time limit (6) is never exceeded, truncation happens at exactly 6
    for i in range(done.shape[0]):
        t = 0
        for k in range(done.shape[1]):
            t += 1
            assert t <= 6
            if trunc[i, k]:
                assert t == 6
            if done[i, k]:
                t = 0
        assert out["t_end"][i] == t  # the state's step counter restarted at every reset
    # per-call episode counts and summed rewards (float32, in step order) from the recorded trajectories
    steps = done.shape[1] // 2
    for c in range(2):
        blk = slice(c * steps, (c + 1) * steps)
        assert out["episodes"][c] == done[:, blk].sum(1).tolist()
        tot = np.zeros(done.shape[0], np.float32)
        for k in range(c * steps, (c + 1) * steps):
            tot = tot + rew[:, k]
        assert np.array_equal(tot, np.array(out["reward"][c], np.float32))


def test_devices_argument_is_checked():
    from sims.envs.braking import Braking
    from sims.envs.devices import DeviceEnv

    env = Braking(substeps=1)
    assert DeviceEnv(env, devices=1).mesh is None
    assert DeviceEnv(env).devices == len(jax.local_devices())
    with pytest.raises(ValidationError, match="devices"):
        DeviceEnv(env, devices=len(jax.local_devices()) + 1)
    with pytest.raises(ValueError, match="empty"):
        DeviceEnv(env, devices=[])
    with pytest.raises(ValueError, match="steps"):
        DeviceEnv(env, devices=1).rollout_fn(0)
