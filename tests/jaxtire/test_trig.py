"""The vectorisable float32 sin / cos / tan / atan2 of jaxtire._trig: accuracy, derivatives, float64 passthrough."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire import _trig


def _ulp_err(got, ref):
    sp = np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / sp


def test_sin_cos_accuracy():
    x = np.concatenate([np.linspace(-10, 10, 200_001), np.linspace(-1e4, 1e4, 200_001)]).astype(np.float32)
    x64 = x.astype(np.float64)
    for f, g in ((_trig.sin, np.sin), (_trig.cos, np.cos)):
        got = np.asarray(jax.jit(f)(x))
        ref = g(x64)
        assert np.max(np.abs(got - ref)) < 1.2e-7
        big = np.abs(ref) > 1e-3
        assert np.max(_ulp_err(got, ref)[big]) <= 2.0


def test_tan_atan2_accuracy():
    x = np.linspace(-1.56, 1.56, 100_001).astype(np.float32)
    got = np.asarray(jax.jit(_trig.tan)(x))
    ref = np.tan(x.astype(np.float64))
    assert np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-30)) < 4e-7
    rng = np.random.default_rng(0)
    y = (rng.normal(size=100_000) * rng.choice([1e-3, 1.0, 1e3], 100_000)).astype(np.float32)
    xx = rng.normal(size=100_000).astype(np.float32)
    got = np.asarray(jax.jit(_trig.atan2)(y, xx))
    assert np.max(np.abs(got - np.arctan2(y.astype(np.float64), xx.astype(np.float64)))) < 5e-7
    assert float(_trig.atan2(0.0, 0.0)) == 0.0
    np.testing.assert_allclose(float(_trig.atan2(1.0, 0.0)), np.pi / 2, rtol=1e-7)
    np.testing.assert_allclose(float(_trig.atan2(-0.0, -1.0)), -np.pi, rtol=1e-7)


def test_derivatives_exact():
    for x in (0.0, 0.3, -2.0, 7.5):
        np.testing.assert_allclose(jax.grad(_trig.sin)(x), np.cos(x), rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(jax.grad(_trig.cos)(x), -np.sin(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(jax.grad(_trig.tan)(0.3), 1 / np.cos(0.3) ** 2, rtol=2e-6)
    np.testing.assert_allclose(jax.grad(lambda y: _trig.atan2(y, 2.0))(1.0), 0.4, rtol=2e-6)


def test_float64_is_jnp(x64):
    x = jnp.linspace(-3.0, 3.0, 11, dtype=jnp.float64)
    np.testing.assert_array_equal(np.asarray(_trig.sin(x)), np.asarray(jnp.sin(x)))
    np.testing.assert_array_equal(np.asarray(_trig.cos(x)), np.asarray(jnp.cos(x)))
    np.testing.assert_array_equal(np.asarray(_trig.tan(x)), np.asarray(jnp.tan(x)))
    np.testing.assert_array_equal(np.asarray(_trig.atan2(x, 2.0 + x * 0)), np.asarray(jnp.arctan2(x, 2.0 + x * 0)))


def test_vmap_and_jit_shapes():
    x = jnp.ones((3, 4), jnp.float32) * 0.5
    assert jax.vmap(_trig.sin)(x).shape == (3, 4)
    assert jax.jit(_trig.tan)(x).dtype == jnp.float32


def test_safe_pow_matches_math_safe_pow():
    from jaxtire._math import safe_pow as ref_pow

    x = jnp.asarray(np.concatenate([[0.0, 1e-13, 1e-6], np.linspace(0.01, 5.0, 1000)]), jnp.float32)
    for q in (0.9008, -0.4089, 2.5):
        got, ref = np.asarray(_trig.safe_pow(x, q)), np.asarray(ref_pow(x, q))
        np.testing.assert_allclose(got, ref, rtol=3e-6, atol=0)
    g = jax.grad(lambda v: _trig.safe_pow(v, 0.9))(jnp.float32(2.0))
    np.testing.assert_allclose(g, 0.9 * 2.0 ** -0.1, rtol=1e-5)
    assert float(jax.grad(lambda v: _trig.safe_pow(v, 0.9))(jnp.float32(0.0))) == 0.0
