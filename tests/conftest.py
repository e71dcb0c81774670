import functools
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
# one CPU device: the tests pin their own device counts (importing sims.run would give one per core)
os.environ.setdefault("JAXTIRE_HOST_DEVICES", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_TIR = REPO.parent / "shared" / "tir"


def tir_path(name: str = "TNO_car205_60R15.tir") -> Path:
    """A real .tir file: from ../shared/tir when present, else the copy bundled in the package."""
    p = SHARED_TIR / name
    if p.exists():
        return p
    bundled = REPO / "jaxtire" / "data" / name
    if bundled.exists():
        return bundled
    pytest.skip(f"{name} not available")


def tir_numbers(path) -> dict:
    """The numbers of a ``.tir`` file read with plain Python (``KEY = value``, comments after ``$`` dropped), for
    formulas the tests write independently of ``jaxtire.load_tir``."""
    vals = {}
    for line in open(path):
        s = line.split("$")[0].strip()
        if "=" in s and not s.startswith(("[", "!")):
            k, v = (t.strip() for t in s.split("=", 1))
            try:
                vals[k] = float(v)
            except ValueError:
                pass
    return vals


@pytest.fixture(scope="session")
def tnop():
    import jaxtire

    return jaxtire.load_tir(tir_path())


@pytest.fixture
def x64():
    """Run a test in float64 (restores the previous setting afterwards)."""
    import jax

    with jax.enable_x64(True):
        yield


@pytest.fixture(params=["float32", "float64"])
def dtype(request):
    """Run a test twice: in float32 (the default) and in float64 (inside ``jax.enable_x64``, restored
    afterwards); yields the numpy dtype.  For the tests that pin numbers against hand-worked values, with
    a tolerance per dtype (:func:`tol`)."""
    import jax

    if request.param == "float64":
        with jax.enable_x64(True):
            yield np.float64
    else:
        yield np.float32


def tol(dtype, f32: float, f64: float) -> float:
    """The tolerance of a pinned number for ``dtype``: ``f32`` in float32, ``f64`` in float64."""
    return f64 if np.dtype(dtype) == np.float64 else f32


@pytest.fixture
def tnop_dtype(dtype):
    """The bundled TNO .tir tire (:func:`tir_path`) loaded in ``dtype`` (cached per dtype)."""
    return _tire(np.dtype(dtype).name)


@functools.cache
def _tire(dtype_name: str):
    import jaxtire

    return jaxtire.load_tir(tir_path(), dtype=np.dtype(dtype_name))


def run_on_host_devices(script: str, n_devices: int, *args: str, timeout: float = 300) -> dict:
    """Run ``script`` (``python -c``) in a fresh CPU-only Python with ``n_devices`` forced host devices and return
    the JSON it prints after ``RESULT `` on its last such line.  A subprocess, because XLA reads the device
    count when JAX starts: the flag cannot leak into the other tests."""
    import json
    import subprocess
    import sys

    env = dict(
        os.environ,
        XLA_FLAGS=f"--xla_force_host_platform_device_count={n_devices}",
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    cmd = [sys.executable, "-c", script, *args]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1][len("RESULT ") :])


def _map_count() -> int:
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:
        return -1


@pytest.fixture(autouse=True)
def _free_compiled_programs():
    """Drop the compiled programs once the process holds many memory maps.

    XLA:CPU maps memory for each executable it compiles, and JAX's caches keep them alive: a serial run of the
    whole suite passed Linux's default ``vm.max_map_count`` (65 530) and the next compile segfaulted inside
    LLVM (one module, the Gymnasium checker over every env id, alone reaches ~45 000). After any test that
    leaves more than 20 000 maps, the caches are cleared (back to ~1 100).
    """
    yield
    if _map_count() > 20_000:
        import gc

        import jax

        jax.clear_caches()
        gc.collect()


# ----------------------------------------------------------------------------------------------- test tiers
#: The slow tier: modules whose tests compile many programs or run long fleets, laps, trainings and
#: subprocesses (seconds of test time on the 2-core VM, session 12's `--durations` run).  `python -m pytest -n 2`
#: runs the rest (the fast tier, <= 15 min there); `python -m pytest -m slow -n 2` runs these; `.ci/run` both.
SLOW_MODULES = {
    "tests/sims/cli/test_cli_study_sampler.py": 55,
    # every code block of the README and docs/ (issue 37): 7.8 min wall with -n 2 on the loaded VM
    "tests/test_docs.py": 770,
    "tests/sims/studies/test_event_studies.py": 260,
    "tests/benchmarks/test_xla.py": 45,  # the lap CLI twice against the library's lap
    "tests/sims/studies/test_replay.py": 30,
    "tests/sims/studies/test_channels.py": 30,
    "tests/sims/studies/test_limit_study.py": 25,
    "tests/sims/test_gymnasium_wrapper.py": 222,
    "tests/sims/vehicles/test_driveline.py": 198,
    "tests/sims/studies/test_laptime.py": 147,
    "tests/sims/envs/test_rl_front_end.py": 136,
    "tests/test_notebooks.py": 88,
    "tests/sims/vehicles/test_physics.py": 81,
    "tests/sims/vehicles/test_invariants.py": 79,
    "tests/sims/vehicles/test_full.py": 78,
    "tests/sims/studies/test_lap_setup.py": 75,
    "tests/sims/scenarios/test_lap_scenario.py": 68,
    "tests/sims/studies/test_study.py": 66,
    "tests/sims/run/test_fleet.py": 65,
    "tests/sims/studies/test_study_lap.py": 64,
    "tests/jaxtire/test_fit_files.py": 60,
    "tests/benchmarks/test_benchmarks.py": 59,
    "tests/sims/test_envs_sb3.py": 56,
    "tests/sims/test_envs.py": 56,
    "tests/sims/cli/test_cli.py": 52,
    "tests/sims/studies/test_tuning.py": 50,
    "tests/sims/run/test_fleet_devices.py": 47,
    "tests/sims/vehicles/test_accuracy.py": 43,
    "tests/sims/cli/test_cli_drive.py": 38,
    "tests/sims/test_envs_gymnax.py": 31,
    "tests/sims/envs/test_env_devices.py": 30,
    "tests/sims/scenarios/test_catalog.py": 30,
    "tests/sims/vehicles/test_full_driveline.py": 29,
    # second cut (the fast tier measured 950 s with the above on a busy VM)
    "tests/sims/envs/test_env_models.py": 27,
    "tests/sims/run/test_longrun_integrity.py": 26,
    "tests/sims/run/test_rollout_grad.py": 26,
    "tests/sims/scenarios/test_sine_dwell.py": 25,
    "tests/sims/cli/test_cli_lap.py": 24,
    "tests/jaxtire/test_fit_ranges.py": 24,
    "tests/sims/run/test_sharding.py": 24,
    "tests/sims/test_env_ppo.py": 23,
    "tests/sims/scenarios/test_catalog_scenarios.py": 23,
    "tests/sims/run/test_longrun.py": 20,
    "tests/sims/run/test_distributed.py": 19,
    "tests/sims/studies/test_identify.py": 18,
    "tests/sims/cli/test_study_cli.py": 18,
    "tests/sims/scenarios/test_abs.py": 17,
    "tests/sims/studies/test_distributed_study.py": 12,
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.split("::")[0] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    # the longest modules first (their measured seconds; a stable sort keeps each module's own order and the
    # fast tier's): pytest-xdist hands out tests in this order, so the last minutes are short tests on both
    # workers, not one docs page on one worker while the other idles
    items.sort(key=lambda item: -SLOW_MODULES.get(item.nodeid.split("::")[0], 0))
