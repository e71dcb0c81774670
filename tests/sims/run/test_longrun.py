"""sims.run.longrun: a run killed midway (SIGKILL after a chunk) resumes to results bitwise identical to an
uninterrupted run; records stream to one file per chunk; the manifest guards against mixing runs."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]

WORKER = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    from sims import drivers
    from sims.run.fleet import Sampling, sample_fleet
    from sims.run.longrun import KillAfter, long_run
    from sims.scenarios.braking import BrakingReducer
    from sims.vehicles import DOUBLE_TRACK, presets

    out_dir, mode = sys.argv[1], sys.argv[2]
    base = presets.get("hatchback", tire="simple")
    fleet, _ = sample_fleet(jax.random.PRNGKey(7), base, 5, Sampling(surfaces=(0, 2, 9)))
    state0 = jax.vmap(lambda c, v: DOUBLE_TRACK.init_state(base._replace(chassis=c), v, yaw_rate=0.01))(
        fleet.chassis, jnp.linspace(15.0, 28.0, 5))
    drv = drivers.StraightBraking(abs_on=1.0, t_brake=0.05)
    kw = dict(dt=0.005, chunk_steps=25, record="telemetry", every=5, reducer=BrakingReducer(), progress=False,
              compiler_options={"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False})
    on_chunk = KillAfter(2) if mode == "kill" else None
    res = long_run(out_dir, fleet, state0, drv, 150, on_chunk=on_chunk, **kw)
    np.savez(out_dir + "/final.npz", *[np.asarray(x) for x in jax.tree.leaves((res.final_state, res.driver_state,
                                                                               res.reduced))])
    print("RESULT", json.dumps({"resumed_from_chunk": res.resumed_from_chunk,
                                "completed": len(res.manifest["completed"]), "done": res.manifest["done"]}))
""")


def _env(cache):
    return dict(os.environ, JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(cache),
                JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
                PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _worker(out_dir, mode, cache):
    return subprocess.run([sys.executable, "-c", WORKER, str(out_dir), mode], cwd=REPO, env=_env(cache),
                          capture_output=True, text=True, timeout=300)


def _result(proc):
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])


def test_kill_and_resume_equals_uninterrupted(tmp_path):
    cache = tmp_path / "jax-cache"
    killed, full = tmp_path / "killed", tmp_path / "full"
    proc = _worker(killed, "kill", cache)
    assert proc.returncode == -signal.SIGKILL, proc.stdout[-2000:] + proc.stderr[-2000:]
    man = json.loads((killed / "manifest.json").read_text())
    assert len(man["completed"]) == 3 and not man["done"]  # chunks 0, 1, 2 made it to disk
    assert sorted(p.name for p in killed.glob("carry_*.npz")) == ["carry_000001.npz", "carry_000002.npz"]  # the last two kept
    resumed = _result(_worker(killed, "resume", cache))
    assert resumed == {"resumed_from_chunk": 3, "completed": 6, "done": True}
    fresh = _result(_worker(full, "full", cache))
    assert fresh["resumed_from_chunk"] == 0

    from sims.run.longrun import iter_records, load_records

    a, b = load_records(killed), load_records(full)
    assert set(a) == set(b) and {"fx", "fy", "kappa", "time"} <= set(a)
    assert a["fx"].shape == (5, 30, 4) and a["time"].shape == (30,)  # 150 steps, every 5th recorded
    np.testing.assert_allclose(a["time"], 0.005 * 5 * np.arange(30))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    with np.load(killed / "final.npz") as za, np.load(full / "final.npz") as zb:
        assert za.files == zb.files and len(za.files) > 9
        for k in za.files:
            np.testing.assert_array_equal(za[k], zb[k], err_msg=k)
    assert len(list(iter_records(full))) == 6
    assert not list(killed.glob("*.tmp"))
    assert sorted(p.name for p in killed.glob("chunk_*.npz")) == [f"chunk_{i:06d}.npz" for i in range(6)]


def test_manifest_mismatch_and_validation(tmp_path):
    import jax

    from sims import drivers
    from sims.run.fleet import make_fleet
    from sims.run.longrun import long_run, read_manifest
    from sims.vehicles import DOUBLE_TRACK, presets

    base = presets.get("hatchback", tire="simple")
    fleet = make_fleet(base, 2)
    state0 = jax.vmap(lambda c: DOUBLE_TRACK.init_state(base._replace(chassis=c), 10.0))(fleet.chassis)
    drv = drivers.Constant(steer=0.0, throttle=0.1)
    kw = dict(dt=0.01, chunk_steps=4, record=None, progress=False)
    res = long_run(tmp_path / "r", fleet, state0, drv, 8, **kw)
    assert read_manifest(tmp_path / "r")["done"] and len(res.manifest["completed"]) == 2
    again = long_run(tmp_path / "r", fleet, state0, drv, 8, **kw)  # already complete: nothing to run
    assert again.resumed_from_chunk == 2
    np.testing.assert_array_equal(np.asarray(again.final_state.vx), np.asarray(res.final_state.vx))
    with pytest.raises(ValueError, match="different run"):
        long_run(tmp_path / "r", fleet, state0, drv, 12, **kw)
    with pytest.raises(ValueError, match="every"):
        long_run(tmp_path / "s", fleet, state0, drv, 8, **dict(kw, every=3))
    with pytest.raises(ValueError, match="driver"):
        from sims.vehicles.params import Controls

        long_run(tmp_path / "t", fleet, state0, Controls(), 8, **kw)
