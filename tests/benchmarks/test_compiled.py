"""The numba baseline (benchmarks/compiled.py) computes what jaxtire computes; skipped without numba."""

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import compiled, inputs, suite  # noqa: E402


def test_missing_numba_is_skipped_with_a_message(monkeypatch):
    monkeypatch.setattr(compiled, "AVAILABLE", False)
    monkeypatch.setattr(compiled, "_WHY", "numba not installed (test)")
    said = []
    cfg = suite.Config.make(quick=True, compiled=True)
    assert suite._compiled_rows(cfg, "mf_curve", 1000, lambda a: a, (np.zeros(1000),), said.append) == []
    assert said and "numba not installed" in said[0]


numba = pytest.importorskip("numba")


def test_polynomials_match_numpy_float64():
    from numba import njit

    @njit
    def ev(x):
        a = np.empty_like(x)
        s = np.empty_like(x)
        c = np.empty_like(x)
        for i in range(x.shape[0]):
            a[i] = compiled.atan_p(x[i])
            s[i], c[i] = compiled.sincos_p(x[i])
        return a, s, c

    x = np.linspace(-9.0, 9.0, 2001).astype(np.float32)
    a, s, c = ev(x)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(a, np.arctan(x64), atol=5e-7)
    np.testing.assert_allclose(s, np.sin(x64), atol=5e-7)
    np.testing.assert_allclose(c, np.cos(x64), atol=5e-7)


def test_curve_matches_jaxtire():
    from jaxtire import magic_formula

    x = inputs.curve_inputs(4000, seed=5)
    B, C, D, E = (np.float32(v) for v in inputs.MF_BCDE)
    out = np.empty_like(x)
    compiled.curve(x, B, C, D, E, out)
    want = np.asarray(magic_formula(x, *inputs.MF_BCDE))
    assert np.max(np.abs(out - want)) <= 1e-6 * np.max(np.abs(want))


def test_tire_matches_jaxtire():
    """Combined Fx, Fy, Mz of the bundled TNO tire agree with jaxtire float32 to 2e-6 of the peak.

    Compiling the kernel takes 0.5-4 min (numba, parallel): only runs where numba is installed."""
    import jax
    import jax.numpy as jnp

    import jaxtire
    from jaxtire.slip import slip_angle, slip_ratio

    R = inputs.WHEEL_RADIUS
    d = inputs.tire_inputs(3000, seed=7)
    a = [d[k] for k in ("vx", "vy", "omega", "gamma", "fz")]
    kern = compiled.tire_kernel({k: float(v) for k, v in vars(inputs.reference_tire(np.float64)).items()}, R)
    outs = [np.empty(3000, np.float32) for _ in range(3)]
    kern(*a, *outs)
    p = jaxtire.default_tire(dtype=jnp.float32)
    vx, vy, om, ga, fz = (jnp.asarray(v) for v in a)
    o = jax.jit(lambda: jaxtire.mf_forces(p, slip_ratio(om, R, vx), slip_angle(vx, vy), ga, fz, vx))()
    for got, want in zip(outs, (o.fx, o.fy, o.mz)):
        want = np.asarray(want)
        assert np.max(np.abs(got - want)) <= 2e-6 * np.max(np.abs(want))
