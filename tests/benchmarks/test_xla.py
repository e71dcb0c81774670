"""sims.run._xla.tune_cpu: host devices appended to the user's XLA_FLAGS, never overriding them, and no
vector-width flag (512-bit vectors computed run-to-run different laps: the module docstring)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sims.run import _xla

REPO = Path(__file__).resolve().parents[2]
COUNT2 = " ".join(["--xla_force_host_platform_device_count=2", *_xla._known_flags(_xla.COLLECTIVE_FLAGS)])


def test_host_devices_appended_to_the_users_flags():
    env = {"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=true"}
    assert _xla.tune_cpu(env, host_devices=2) == COUNT2
    assert env["XLA_FLAGS"] == "--xla_cpu_use_thunk_runtime=true " + COUNT2
    env = {}
    assert _xla.tune_cpu(env, host_devices=2) == COUNT2 and env["XLA_FLAGS"] == COUNT2


def test_no_vector_width_and_the_users_count_wins():
    env = {}
    assert _xla.tune_cpu(env) is None and "XLA_FLAGS" not in env  # no device count asked: nothing
    assert _xla.tune_cpu(env, host_devices=1) is None and "XLA_FLAGS" not in env
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    assert _xla.tune_cpu(env, host_devices=2) is None
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
    env = {"JAXTIRE_XLA_DEFAULT": "1"}
    assert _xla.tune_cpu(env, host_devices=2) is None and "XLA_FLAGS" not in env


def test_cpu_flags_reads_proc_cpuinfo():
    flags = _xla.cpu_flags()
    assert isinstance(flags, set)
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return
    assert ("avx2" in flags) == (" avx2" in text.split("flags", 1)[1].split("\n", 1)[0] if "flags" in text else False)


@pytest.mark.slow
def test_lap_cli_equals_the_library_lap(tmp_path):
    """``python -m sims --scenario lap`` (the CLI's XLA flags: two host devices) reads the library's Monza lap
    (105.907 s) to 0.01 s, twice: with the 512-bit vectors the CLI used to set on AVX-512 CPUs, the same
    program read 105.93-108.87 s in five runs."""
    import jax
    import numpy as np

    from sims.roads import circuits
    from sims.vehicles.qss import solve_lap
    from sims.vehicles import presets

    line = circuits.astype(circuits.load_raceline("Monza", ds=2.5), np.float32)
    want = float(jax.jit(solve_lap)(presets.get("race_car", dtype=np.float32), line).lap_time)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k in ("XLA_FLAGS", "JAXTIRE_HOST_DEVICES", "JAXTIRE_XLA_DEFAULT"):
        env.pop(k, None)
    cmd = [sys.executable, "-m", "sims", "--scenario", "lap", "--track", "Monza", "--preset", "race_car"]
    cmd += ["--no-plot", "--out", str(tmp_path)]
    for _ in range(2):
        out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        lap = float(next(ln for ln in out.stdout.splitlines() if ln.startswith("lap time")).split("(")[1].split()[0])
        assert abs(lap - want) < 0.01, (lap, want)
