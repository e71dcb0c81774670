"""Lap-time gradients w.r.t. the setup (sims.studies.lap_setup) against finite differences; an optimisation.

The checks run in a child process with ``XLA_FLAGS`` fixed to one host device and XLA's default vector
width: with ``--xla_cpu_prefer_vector_width=512`` (what ``sims.run._xla.tune_cpu`` set on AVX-512 CPUs
until 2026-12-06) XLA:CPU computed NaN gradients and wrong float64 values of this
program (seen 2026-12 on the project's VM; reported to the lead).
"""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from sims.roads import circuits as c
from sims.run.spec import fast_compile_options
from sims.studies import lap_setup as S
from sims.vehicles import presets

INNER = os.environ.get("JAXTIRE_LAP_SETUP_INNER") == "1"
inner = pytest.mark.skipif(not INNER, reason="runs in the child process of test_setup_checks_in_a_child_process")


def test_setup_checks_in_a_child_process():
    if INNER:
        pytest.skip("the child itself")
    env = {**os.environ, "JAXTIRE_LAP_SETUP_INNER": "1", "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "slow or not slow", __file__],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert r.stdout.lstrip().startswith("s..")  # the outer test skipped, the two checks passed


@pytest.fixture(scope="module")
def car_line():
    # the simple tire (load-sensitive: the roll-stiffness split and the weight distribution matter) keeps the
    # compile short; float64 for the finite differences
    with jax.enable_x64(True):
        p = presets.get("race_car", tire="simple", dtype=np.float64)
        line = c.load_raceline("Norisring", ds=5.0, dtype=np.float64)
        yield p, line


@inner
def test_lap_time_gradient_matches_central_differences_for_every_setup_parameter(car_line):
    p, line = car_line
    s0 = S.setup_of(p)
    f = jax.jit(lambda s: S.lap_time(s, p, line))
    g = jax.jit(jax.grad(lambda s: S.lap_time(s, p, line)))(s0)
    fds = {}
    for name in S.LapSetup._fields:
        v = float(getattr(s0, name))
        h = 1e-4 * max(abs(v), 1.0)
        fds[name] = (float(f(s0._replace(**{name: v + h}))) - float(f(s0._replace(**{name: v - h})))) / (2 * h)
    scale = max(abs(d) * (1.0 if n != "mass" else 100.0) for n, d in fds.items())
    for name, fd in fds.items():
        ad = float(getattr(g, name))
        assert np.isfinite(ad)
        if name == "k_scale":  # the point mass sees the peak friction only: (near) zero both ways
            assert abs(ad - fd) < 1e-3 * scale and abs(fd) < 0.05 * scale
        else:
            assert abs(ad / fd - 1) < 0.01, (name, ad, fd)
    # signs a race engineer expects: more friction and less mass are faster
    assert fds["mu_scale"] < 0 and fds["mass"] > 0


@inner
def test_optimisation_lowers_the_lap_time_checked_by_a_rerun(car_line):
    p, line = car_line
    res = S.optimise_setup(p, line, n_iter=12, compiler_options=fast_compile_options())
    assert res.time_best < res.time_start - 0.05  # re-run laps at the start and the optimum
    assert res.time_best <= float(res.losses[0]) and np.isclose(res.time_start, float(res.losses[0]), rtol=1e-9)
    assert set(res.gains) == set(S.FREE) and any(g > 0 for g in res.gains.values())
    for f, (_a, b) in res.moves.items():
        assert S.BOUNDS[f][0] <= b <= S.BOUNDS[f][1]
