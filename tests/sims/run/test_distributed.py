"""sims.run.distributed: two processes on localhost (jax.distributed.initialize, Gloo on CPU) run one Monte
Carlo, each writes its shard, and the merged result equals the single-process run of the same inputs."""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]

WORKER = textwrap.dedent("""
    import json, sys
    out_dir, nproc, pid, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    from sims.run import distributed
    if nproc > 1:
        distributed.initialize(f"localhost:{port}", num_processes=nproc, process_id=pid,
                               initialization_timeout=120)
    import jax, jax.numpy as jnp
    from sims import drivers
    from sims.run.fleet import Sampling, sample_fleet
    from sims.scenarios.braking import BrakingReducer
    from sims.vehicles import DOUBLE_TRACK, presets

    n = 7                                                   # odd: the last process gets a padded block
    base = presets.get("hatchback", tire="simple")
    fleet, _ = sample_fleet(jax.random.PRNGKey(11), base, n, Sampling(surfaces=(0, 2, 4, 9)))
    state0 = jax.vmap(lambda c, v: DOUBLE_TRACK.init_state(base._replace(chassis=c), v, yaw_rate=0.02))(
        fleet.chassis, jnp.linspace(12.0, 30.0, n))
    drv = drivers.StraightBraking(abs_on=1.0, t_brake=0.02)
    fast = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}  # compile time
    info = distributed.monte_carlo(out_dir, fleet, state0, drv, 60, dt=0.005, driver_axes=None,
                                   reducer=BrakingReducer(), run_id="mc-test", compiler_options=fast)
    distributed.barrier("written")
    # the same run through the one fleet runner with hosts=True: every process gets the whole result
    from sims.run.fleet import fleet_rollout
    from sims.run.placement import Placement
    whole = fleet_rollout(fleet, state0, drv, 60, dt=0.005, driver_axes=None, reducer=BrakingReducer(),
                          placement=Placement(hosts=True), compiler_options=fast)
    distance = [float(x) for x in whole.reduced.distance]
    merged_rows = None
    if info.process_index == 0:
        merged_rows = int(distributed.merge(out_dir)["vehicle"].shape[0])
    print("RESULT", json.dumps(dict(process_index=jax.process_index(), process_count=jax.process_count(),
                                    devices=len(jax.devices()), local=len(jax.local_devices()),
                                    start=info.start, stop=info.stop, merged_rows=merged_rows,
                                    distance=distance)), flush=True)
    distributed.shutdown()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _env():
    return dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="",
                PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _start(out_dir, nproc, pid, port):
    return subprocess.Popen([sys.executable, "-c", WORKER, str(out_dir), str(nproc), str(pid), str(port)], cwd=REPO,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc, timeout=300):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("worker timed out:\n" + out[-2000:] + err[-3000:])
    assert proc.returncode == 0, out[-2000:] + err[-4000:]
    return json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1][7:])


def test_two_processes_merge_equals_single_process(tmp_path):
    from sims.run import distributed

    multi, single = tmp_path / "multi", tmp_path / "single"
    port = _free_port()
    procs = [_start(multi, 2, pid, port) for pid in (0, 1)]
    res = [_result(p) for p in procs]
    assert [r["process_index"] for r in res] == [0, 1]
    assert all(r["process_count"] == 2 and r["devices"] == 2 and r["local"] == 1 for r in res)
    assert (res[0]["start"], res[0]["stop"], res[1]["start"], res[1]["stop"]) == (0, 4, 4, 7)
    assert res[0]["merged_rows"] == 7
    assert sorted(p.name for p in multi.glob("shard-*.npz")) == ["shard-00000-of-00002.npz",
                                                                   "shard-00001-of-00002.npz"]
    one = _result(_start(single, 1, 0, 0))
    assert (one["process_count"], one["start"], one["stop"]) == (1, 0, 7)

    a, b = distributed.merge(multi), distributed.merge(single)
    assert set(a) == set(b) and "final_state.vx" in a and "reduced.distance" in a
    np.testing.assert_array_equal(a["vehicle"], np.arange(7))
    for k in a:
        # the batches differ (4 + 3 padded rows vs 7): XLA:CPU contracts multiply-adds in its vector loops but
        # not in their scalar tails, so a car can see 1-ulp differences; the ABS's PI integrator (driver_state)
        # carries them over the 60 steps (measured 8.6e-6 relative), the physical states stay within 2e-6
        rtol = 2e-5 if k.startswith("driver_state") else 2e-6
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=1e-6, err_msg=k)
    assert np.all(np.isfinite(a["reduced.distance"])) and np.all(a["reduced.distance"] > 0)
    # fleet_rollout(placement=Placement(hosts=True)): both processes hold the whole result (7 rows, padding
    # dropped), bitwise the same on each, and equal to the shards' rows (the same global program)
    assert res[0]["distance"] == res[1]["distance"] and len(res[0]["distance"]) == 7
    np.testing.assert_array_equal(np.asarray(res[0]["distance"], np.float32), a["reduced.distance"])
    np.testing.assert_allclose(one["distance"], b["reduced.distance"], rtol=0, atol=0)


def test_merge_detects_missing_shard(tmp_path):
    from sims.run import distributed

    (tmp_path / "shard-00000-of-00002.json").write_text(json.dumps(dict(
        run_id="r", process_index=0, process_count=2, start=0, stop=2, n_vehicles=4, names=["x"])))
    np.savez(tmp_path / "shard-00000-of-00002.npz", x=np.zeros(2), vehicle=np.arange(2))
    with pytest.raises(ValueError, match="1 of 2 shards"):
        distributed.merge(tmp_path)
    with pytest.raises(ValueError, match="no result shards"):
        distributed.merge(tmp_path / "nothing")
