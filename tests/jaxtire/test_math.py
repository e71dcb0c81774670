"""jaxtire._math.materialise (an exact identity XLA:CPU computes once) and safe_div as ``num * (1 / den)``."""

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.fusion_ab import fused_op_count, fusion_count
from jaxtire._math import materialise, safe_div


def _sweep32():
    """Finite float32 values over the whole range: +-0, denormals, a dense logarithmic sweep to FLT_MAX."""
    mag = np.geomspace(1e-45, 3.4e38, 200_001).astype(np.float32)
    x = np.concatenate([[0.0, np.finfo(np.float32).max, np.finfo(np.float32).tiny], mag, -mag]).astype(np.float32)
    return np.concatenate([x, [-0.0]]).astype(np.float32)


def test_materialise_is_the_identity_bit_for_bit():
    x = _sweep32()
    got = np.asarray(jax.jit(materialise)(x))
    normal = (np.abs(x) >= np.finfo(np.float32).tiny) | (x == 0)
    np.testing.assert_array_equal(got[normal].view(np.int32), x[normal].view(np.int32))  # keeps -0.0
    # denormals: XLA:CPU's divide flushes them to a zero of the same sign (documented), or keeps them
    sub = got[~normal]
    assert np.all((sub == x[~normal]) | ((sub == 0) & (np.signbit(sub) == np.signbit(x[~normal]))))
    assert np.isnan(float(materialise(jnp.float32(np.nan))))
    assert np.isnan(float(materialise(jnp.float32(np.inf))))  # documented: finite values only


def test_materialise_float64_and_derivative(x64):
    x = np.array([-3.5e300, -1.0, -0.0, 2.3e-308, 0.25, 7.0, 1.7e308])
    np.testing.assert_array_equal(np.asarray(jax.jit(materialise)(jnp.asarray(x))), x)
    f = lambda v: jnp.sin(materialise(v * v))  # noqa: E731
    g = float(jax.grad(f)(0.7))
    fd = (np.sin(0.7000001**2) - np.sin(0.6999999**2)) / 2e-7
    np.testing.assert_allclose(g, 2 * 0.7 * np.cos(0.49), rtol=1e-12)
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    assert float(jax.grad(materialise)(jnp.float32(3.0))) == 1.0


def test_materialise_stores_a_shared_cheap_value_once():
    """A cheap polynomial read by two outputs is evaluated in both loops; materialised, it is evaluated once."""
    x = jnp.linspace(0.1, 2.0, 256, dtype=jnp.float32)

    def poly(v):
        p = v
        for c in range(1, 30):
            p = p * v + c
        return p

    def two_outputs(wrap):
        def f(v):
            y = wrap(poly(v))
            return y * y + 1.0, y * 3.0 - v

        return jax.jit(f).lower(x).compile().as_text()

    plain, stored = two_outputs(lambda y: y), two_outputs(materialise)
    assert fusion_count(plain) == 2 and fusion_count(stored) == 3
    # the 29 multiply-adds of poly: twice without, once with (plus the divide and the 0 x + 1)
    assert fused_op_count(plain) - fused_op_count(stored) >= 2 * 29 - 29 - 5, (
        fused_op_count(plain),
        fused_op_count(stored),
    )
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: materialise(poly(v)))(x)), np.asarray(jax.jit(poly)(x)))


def test_safe_div_within_1p5_ulp_of_the_quotient():
    rng = np.random.default_rng(1)
    num = (rng.normal(size=200_000) * 10.0 ** rng.uniform(-6, 6, 200_000)).astype(np.float32)
    den = (rng.normal(size=200_000) * 10.0 ** rng.uniform(-5, 6, 200_000)).astype(np.float32)
    den = np.where(np.abs(den) < 1e-3, 1e-3, den).astype(np.float32)
    got = np.asarray(jax.jit(lambda a, b: safe_div(a, b, 0.0))(num, den)).astype(np.float64)
    ref = num.astype(np.float64) / den.astype(np.float64)
    ulp = np.abs(got - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert ulp.max() <= 1.5, ulp.max()  # two roundings: 1/den (0.5 ulp) and the product (0.5 ulp)
    # the regularisation: den -> den + eps sign(den), +eps at 0
    np.testing.assert_allclose(float(safe_div(1.0, 0.0)), 1e6, rtol=1e-6)
    np.testing.assert_allclose(float(safe_div(1.0, -1e-6)), -5e5, rtol=1e-6)
    g = jax.grad(lambda b: safe_div(3.0, b))(jnp.float32(2.0))
    np.testing.assert_allclose(float(g), -3.0 / (2.0 + 1e-6) ** 2, rtol=1e-6)
