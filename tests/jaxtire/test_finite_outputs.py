"""Inside jit every public force function gives finite outputs for every finite input, float32 and
float64 (property test: hypothesis over huge finite ranges of kappa, alpha, gamma, Fz, Vx).

Slips, loads and speeds are saturated as each function documents; the test only asserts finiteness
(the invariant issue 15 asks for), so it cannot pass on NaN/inf."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxtire.load_table import load_table_force, make_load_table
from jaxtire.simple import make_simple_params, simple_forces
from jaxtire.spline import make_spline, spline_curve
from jaxtire.surfaces import preset
from tests.conftest import tir_path

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
F32_MAX = float(np.finfo(np.float32).max)


def finite(lo, hi):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False, width=32)


def huge():
    """Finite float32 values of any magnitude, with the hard ones (0, tiny, huge) often."""
    return st.one_of(finite(-F32_MAX, F32_MAX), st.sampled_from([0.0, -0.0, 1e-30, -1e-30, 3e19, -3e19, 1e38,
                                                                  -1e38, F32_MAX, -F32_MAX]), finite(-2.0, 2.0))


INPUTS = st.tuples(huge(), huge(), huge(), st.one_of(finite(0.0, F32_MAX), finite(0.0, 2e4)), huge())


@pytest.fixture(scope="module")
def fns():
    from jaxtire.tir import load_tir
    from jaxtire.tire import tire_forces

    mf = load_tir(tir_path())
    simple = make_simple_params()
    spline = make_spline()
    table = make_load_table([1000.0, 4000.0, 8000.0], [10.0, 9.0, 8.0], [1.6, 1.6, 1.5], [1.1, 1.0, 0.9],
                            [0.5, 0.4, 0.3])
    surf = preset("asphalt_wet")

    def all_outputs(k, a, g, fz, vx):
        out = []
        for t in (mf, simple):
            f = tire_forces(t, k, a, g, fz, vx, surf)
            out += [f.fx, f.fy, f.mz]
        out.append(simple_forces(simple, k, a, g, fz, vx).fx)
        out.append(spline_curve(spline, k))
        out.append(load_table_force(table, a, fz))
        return jnp.stack([jnp.asarray(o, jnp.float32).reshape(()) for o in out])

    return jax.jit(all_outputs)


@SETTINGS
@given(INPUTS)
def test_finite_outputs_float32(fns, x):
    k, a, g, fz, vx = (np.float32(v) for v in x)
    out = np.asarray(fns(k, a, g, fz, vx))
    assert np.all(np.isfinite(out)), (x, out)


@pytest.mark.parametrize("x", [(3e19, 0.0, 0.0, 4000.0, 20.0), (-3e19, 1e30, 0.0, 4000.0, 1e-30),
                               (0.1, 0.05, 0.0, 0.0, 0.0), (F32_MAX, -F32_MAX, F32_MAX, F32_MAX, -F32_MAX)])
def test_named_hard_cases_float32(fns, x):
    out = np.asarray(fns(*(np.float32(v) for v in x)))
    assert np.all(np.isfinite(out)), (x, out)


F64_SCRIPT = """
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jaxtire.tir import load_tir
from jaxtire.tire import tire_forces
from jaxtire.simple import make_simple_params
from jaxtire.spline import make_spline, spline_curve
from jaxtire.load_table import load_table_force, make_load_table
from jaxtire.surfaces import preset
from tests.conftest import tir_path
mf = load_tir(tir_path(), dtype=jnp.float64)
simple, spline = make_simple_params(dtype=jnp.float64), make_spline(dtype=jnp.float64)
table = make_load_table([1000.0, 4000.0, 8000.0], [10.0, 9.0, 8.0], [1.6, 1.6, 1.5], [1.1, 1.0, 0.9], [0.5, 0.4, 0.3],
                        dtype=jnp.float64)
surf = preset("asphalt_wet")
@jax.jit
def f(k, a, g, fz, vx):
    out = []
    for t in (mf, simple):
        r = tire_forces(t, k, a, g, fz, vx, surf)
        out += [r.fx, r.fy, r.mz, r.mx, r.my]
    return jnp.stack(out + [spline_curve(spline, k), load_table_force(table, a, fz)], -1)
rng = np.random.default_rng(15)
big = np.finfo(np.float64).max
mag = 10.0 ** rng.uniform(-300, 308, (5, 400)) * rng.choice([-1, 1], (5, 400))
x = np.concatenate([mag, [[0, 3e19, -1e300, big], [0, 1e30, -big, 1], [0, 1e300, 0, -big], [0, 0, big, 1e300],
                          [0, 1e-300, big, -big]]], axis=1)
x[3] = np.abs(x[3])
out = np.asarray(f(*x))
assert out.dtype == np.float64, out.dtype
bad = ~np.isfinite(out)
print("NONFINITE", int(bad.sum()), x[:, bad.any(-1)][:, :3].T.tolist())
"""


def test_finite_outputs_float64():
    """The same property in float64 (a subprocess: x64 is process-wide), seeded log-uniform magnitudes up to
    the float64 maximum plus the hard cases."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", F64_SCRIPT], cwd=repo, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(repo)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("NONFINITE")][-1]
    assert line.startswith("NONFINITE 0 "), line
