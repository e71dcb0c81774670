"""FleetRun over 2 forced host devices is bitwise the one-device run (subprocess: the XLA flag must be set
before JAX starts, so it cannot leak into the other tests).  Covered: a fleet size that is not a multiple of
the device count (padding), chunks with a partial last one, the compiled (``compile()``) and the lazily
compiled path, and the braking run's dropping of finished vehicles (a compaction mid-run)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import pytest

from jaxtire.validation import ValidationError
from tests.conftest import run_on_host_devices

REPO = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent("""
    import json
    import jax, jax.numpy as jnp, numpy as np
    assert jax.device_count() == 2, jax.devices()
    from sims.run.fleet import Sampling, sample_fleet
    from sims.run.spec import fast_compile_options
    from sims.scenarios.braking import braking_run
    from sims.vehicles import presets

    base = presets.get("hatchback", tire="simple")
    n = 13                                   # odd: padded to 14 on 2 devices
    fleet, _ = sample_fleet(jax.random.PRNGKey(5), base, n, Sampling(surfaces=(0, 2, 4)))
    speeds = np.where(np.arange(n) < 10, 4.0, 20.0).astype(np.float32)  # 10 stop early: 3 left -> compaction
    out = {}

    def go(devices, compile_first):
        run = braking_run(fleet, jnp.ones(n), speed=speeds, chunk_steps=30, block=None, devices=devices,
                          compiler_options=fast_compile_options())
        if compile_first:
            run.compile()
        s, d, a, st = run.run(250, active=lambda a: ~a.stopped, min_batch=2, max_compactions=2)  # 8 x 30 + 10
        work = round(st.vehicle_steps_per_s * st.run_s)
        return run.devices, jax.tree.map(np.asarray, (s, d, a)), work, len(s.vx.sharding.device_set), st.steps

    ref = go(1, True)
    for name, dev, cf in (("two_compiled", None, True), ("two_lazy", 2, False)):
        got = go(dev, cf)
        out[name] = dict(
            devices=got[0], result_devices=got[3], work=[ref[2], got[2]], steps=[ref[4], got[4]],
            shapes=[list(np.shape(x)) for x in jax.tree.leaves(got[1])] == [list(np.shape(x)) for x in jax.tree.leaves(ref[1])],
            exact=all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(got[1]), jax.tree.leaves(ref[1]), strict=True)),
        )
    out["stopped"] = int(ref[1][2].stopped.sum())

    # a reducer built from unbatched fields (the skidpad's): its initial accumulator is replicated
    from sims.run.fleet import broadcast
    from sims.scenarios.skidpad import circle_run
    circle = base._replace(chassis=broadcast(base.chassis, 3))
    pts = [circle_run(circle, np.array([8.0, 10.0, 12.0], np.float32), duration=1.0, settle=0.5, chunk_steps=50,
                      devices=d, compiler_options=fast_compile_options()) for d in (1, 2)]
    out["circle_exact"] = all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(pts[0], pts[1], strict=True))
    print("RESULT", json.dumps(out))
""")


def test_fleet_run_on_two_devices_is_bitwise_the_one_device_run():
    out = run_on_host_devices(SCRIPT, 2)
    assert out["stopped"] == 10, out
    assert out["circle_exact"], (
        out
    )  # circle run (replicated reducer fields) on 2 devices = 1 device  # the 10 cars from 4 m/s stop within 1.25 s, the 3 from 20 m/s do not
    for name in ("two_compiled", "two_lazy"):
        r = out[name]
        assert r["devices"] == 2 and r["result_devices"] == 2, out
        assert r["steps"] == [250, 250] and r["shapes"], out
        # the same compaction at the same chunk: 6 full chunks of 13 x 30 vehicle-steps, then the 3 active
        # cars in a batch of 4 (a multiple of min_batch = 2, on the first device) for the remaining 70 steps
        assert r["work"] == [13 * 30 * 6 + 4 * 70] * 2, out
        assert r["exact"], out


def test_devices_argument_is_checked():
    from sims.drivers import StraightBraking
    from sims.run.fleet import FleetRun, fleet_start, make_fleet
    from sims.vehicles import presets

    fleet = make_fleet(presets.get("kart"), 2)
    m, s0, drv = fleet_start(fleet, "double_track", StraightBraking(), speed=5.0)
    run = FleetRun(fleet, s0, drv, dt=0.005, model=m, devices=1)
    assert run.devices == 1 and run.mesh is None
    assert FleetRun(fleet, s0, drv, dt=0.005, model=m).devices == len(jax.local_devices())
    with pytest.raises(ValidationError, match="devices"):
        FleetRun(fleet, s0, drv, dt=0.005, model=m, devices=len(jax.local_devices()) + 1)
    with pytest.raises(ValueError, match="empty"):
        FleetRun(fleet, s0, drv, dt=0.005, model=m, devices=[])


def test_fleet_cli_runs_on_one_host_device_per_core_by_default(tmp_path):
    """``python -m sims`` (argv from the command line: ``tune_cpu(host_devices=os.cpu_count())`` before JAX
    starts) splits the fleet over one host device per core and says so; ``--devices 1`` keeps one."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    env.pop("JAXTIRE_HOST_DEVICES", None)  # the test suite's one-device setting (tests/conftest.py), not a user's
    base = [sys.executable, "-m", "sims", "--scenario", "throughput", "--counts", "24", "--steps", "4"]
    base += ["--no-progress", "--fast-compile", "--model", "single_track", "--out", str(tmp_path)]
    lines = {}
    for extra in ((), ("--devices", "1")):
        proc = subprocess.run(base + list(extra), cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        lines[extra] = [ln for ln in proc.stdout.splitlines() if "vehicles:" in ln][0]
    assert lines[()].endswith(f", {os.cpu_count()} device(s))"), lines
    assert lines[("--devices", "1")].endswith(", 1 device(s))"), lines
