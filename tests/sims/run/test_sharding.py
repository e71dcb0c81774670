"""Fleet runs over 8 forced host devices equal the one-device run (subprocess: the XLA flag must be
set before JAX starts, so it cannot leak into the other tests)."""

import textwrap
from pathlib import Path

from tests.conftest import run_on_host_devices

REPO = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    assert jax.device_count() == 8, jax.devices()
    from sims import drivers
    from sims.run.fleet import fleet_rollout, sample_fleet, Sampling
    from sims.run.sharding import fleet_mesh, gather, sharded
    from sims.vehicles import DOUBLE_TRACK, presets
    from sims.vehicles.params import fleet_axes

    n, steps = 13, 40                                   # 13 is not a multiple of 8: padding is exercised
    base = presets.get("hatchback", tire=sys.argv[1])
    fleet, _ = sample_fleet(jax.random.PRNGKey(3), base, n, Sampling(surfaces=(0, 2, 4)))
    speeds = jnp.linspace(8.0, 30.0, n)
    state0 = jax.vmap(lambda c, v: DOUBLE_TRACK.init_state(base._replace(chassis=c), v))(fleet.chassis, speeds)
    drv = drivers.StepSteer(amplitude=0.06, t_step=0.05, target_speed=20.0)
    fast = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}  # compile time
    kw = dict(dt=0.005, driver_axes=None, record="telemetry", every=4, compiler_options=fast)
    ref = gather(fleet_rollout(fleet, state0, drv, steps, devices=1, **kw))   # the one-device run
    out = {}
    # the runner's own placement (devices=, FleetRun's): 13 vehicles padded to 16, bitwise the one-device run
    split = fleet_rollout(fleet, state0, drv, steps, **kw)                    # default: every local device
    out["runner_devices"] = len(split.final_state.vx.sharding.device_set)
    out["runner_exact"] = all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(gather(split)), jax.tree.leaves(ref)))
    out["runner_shapes"] = [np.shape(a) for a in jax.tree.leaves(gather(split))] == [np.shape(a) for a in jax.tree.leaves(ref)]
    # any per-vehicle function through sharded(): XLA's partitioner (jit) or shard_map
    fn = lambda p, s: fleet_rollout(p, s, drv, steps, **kw)
    for method in ("jit", "shard_map"):
        res = sharded(fn, in_axes=(fleet_axes(fleet), 0), method=method, compiler_options=fast)(fleet, state0)
        vx = res.final_state.vx
        out[method + "_devices"] = len(vx.sharding.device_set)
        got = gather(res)
        diffs = [float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30)) if np.size(a) else 0.0
                 for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(ref))]
        out[method + "_max_rel_diff"] = max(diffs)
        out[method + "_shapes_equal"] = [np.shape(a) for a in jax.tree.leaves(got)] == [np.shape(a) for a in jax.tree.leaves(ref)]
        out[method + "_exact"] = all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(ref)))
    # the generic wrapper on a plain function, with a shared argument
    f = lambda x, scale: jnp.sin(x) * scale
    x = jnp.arange(21.0)
    y = sharded(f, fleet_mesh(), (0, None))(x, 2.0)
    out["generic_ok"] = bool(np.allclose(np.asarray(y), np.sin(np.arange(21.0)) * 2.0)) and y.shape == (21,)
    out["generic_devices"] = len(y.sharding.device_set)
    out["n_final"] = int(ref.final_state.vx.shape[0])
    # a chunked long run with the fleet (13 vehicles: padded to 16) split over the 8 devices, FleetRun's placement:
    # the same records, final state and carry files as on one device, bitwise; resumed on another device count
    import os, tempfile
    from sims.run.longrun import load_records, long_run
    f13, _ = sample_fleet(jax.random.PRNGKey(5), base, 13)
    s13 = jax.vmap(lambda c: DOUBLE_TRACK.init_state(base._replace(chassis=c), 15.0))(f13.chassis)
    lkw = dict(dt=0.005, chunk_steps=10, every=5, progress=False, compiler_options=fast)
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        r1 = long_run(d1, f13, s13, drv, 30, devices=8, **lkw)
        r2 = long_run(d2, f13, s13, drv, 30, devices=1, max_chunks=2, **lkw)
        r2 = long_run(d2, f13, s13, drv, 30, devices=4, **lkw)   # resumed after 2 of 3 chunks on 4 devices
        a, b = load_records(d1), load_records(d2)
        out["longrun_resumed_at"] = r2.resumed_from_chunk
        out["longrun_exact"] = all(np.array_equal(a[k], b[k]) for k in a) and all(
            np.array_equal(x, y) for x, y in zip(jax.tree.leaves(r1.final_state), jax.tree.leaves(r2.final_state)))
        carries = [f for f in sorted(os.listdir(d1)) if f.startswith("carry_")]
        out["longrun_carry_equal"] = bool(carries) and all(
            all(np.array_equal(x[k], y[k]) for k in x.files)
            for x, y in ((np.load(os.path.join(d1, f)), np.load(os.path.join(d2, f))) for f in carries))
        out["longrun_shape"] = list(a["fx"].shape)
    print("RESULT", json.dumps(out))
""")


def _run(tire: str) -> dict:
    return run_on_host_devices(SCRIPT, 8, tire)


def test_fleet_sharded_over_8_devices_equals_single_device():
    out = _run("simple")
    assert out["n_final"] == 13
    assert out["runner_devices"] == 8 and out["runner_exact"] and out["runner_shapes"], out
    for method in ("jit", "shard_map"):
        assert out[method + "_devices"] == 8, out
        assert out[method + "_shapes_equal"], out
        assert out[method + "_max_rel_diff"] <= 1e-5, out  # float32 rounding of a differently vectorised loop
    assert out["generic_ok"] and out["generic_devices"] == 8
    assert out["longrun_shape"] == [13, 6, 4] and out["longrun_resumed_at"] == 2, out
    assert out["longrun_exact"] and out["longrun_carry_equal"], out
