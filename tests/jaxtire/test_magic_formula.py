import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.magic_formula import cosine_weight, magic_formula, magic_formula_direct, peak_phase
from tests.conftest import tol

B, C, D, E = 10.0, 1.6, 1.35, -0.6


def _np_general(x, B, C, D, E, Sh=0.0, Sv=0.0):
    bx = B * (x + Sh)
    return D * np.sin(C * np.arctan(bx - E * (bx - np.arctan(bx)))) + Sv


def test_general_matches_numpy_and_shifts(dtype):
    x = np.linspace(-1, 1, 201, dtype=dtype)
    y = magic_formula(x, B, C, D, E, 0.01, 0.02)
    assert y.dtype == dtype
    ref = _np_general(x.astype(np.float64), B, C, D, E, 0.01, 0.02)
    np.testing.assert_allclose(y, ref, rtol=tol(dtype, 0, 1e-13), atol=tol(dtype, 2e-6 * D, 0))
    shifted = magic_formula(x + dtype(0.01), B, C, D, E) + 0.02
    np.testing.assert_allclose(y, shifted, rtol=tol(dtype, 0, 1e-12), atol=tol(dtype, 2e-6 * D, 0))


def test_direct_variant_known_values(dtype):
    # by hand: x = 0.1 -> Bx = 1, atan(1) = pi/4, inner = 1 - atan(1) = 0.2146..., E*atan(inner) = -0.6*0.2114...
    bx = 1.0
    inner = bx - np.arctan(bx)
    expected = D * np.sin(C * np.arctan(bx - E * np.arctan(inner)))
    y = magic_formula_direct(dtype(0.1), B, C, D, E)
    assert y.dtype == dtype
    np.testing.assert_allclose(float(y), expected, rtol=tol(dtype, 1e-6, 1e-14))
    # with E = 0 both variants are D sin(C atan(Bx))
    x = np.linspace(-0.5, 0.5, 11, dtype=dtype)
    np.testing.assert_allclose(
        magic_formula_direct(x, B, C, D, 0.0), magic_formula(x, B, C, D, 0.0), rtol=tol(dtype, 1e-6, 1e-14)
    )


def test_peak_is_d_and_slope_is_bcd(dtype):
    x = np.linspace(0, 1, 200001, dtype=dtype)
    y = np.asarray(magic_formula(x, B, C, D, E))
    assert y.dtype == dtype
    np.testing.assert_allclose(y.max(), D, rtol=tol(dtype, 1e-6, 1e-9))
    # the sine's phase is pi/2 at the peak (float32: the flat top spans many grid points)
    np.testing.assert_allclose(float(peak_phase(x[y.argmax()], B, C, E)), np.pi / 2, atol=tol(dtype, 1e-3, 1e-4))
    for f in (magic_formula, magic_formula_direct):
        np.testing.assert_allclose(float(jax.grad(f)(dtype(0.0), B, C, D, E)), B * C * D, rtol=tol(dtype, 1e-6, 1e-14))


def test_odd_symmetry_and_cosine_weight():
    x = jnp.linspace(0, 1, 101)
    np.testing.assert_allclose(magic_formula(-x, B, C, D, E), -magic_formula(x, B, C, D, E), atol=1e-6)
    np.testing.assert_allclose(magic_formula_direct(-x, B, C, D, E), -magic_formula_direct(x, B, C, D, E), atol=1e-6)
    w = cosine_weight(x, 5.0, 1.0, 0.0)
    np.testing.assert_allclose(w, 1 / np.sqrt(1 + (5.0 * np.asarray(x)) ** 2), rtol=1e-5)


def test_broadcasts_over_coefficients():
    x = jnp.linspace(-0.2, 0.2, 5)[None, :]
    Bs = jnp.array([8.0, 10.0, 12.0])[:, None]
    out = magic_formula(x, Bs, C, D, E)
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out[1], magic_formula(x[0], 10.0, C, D, E), rtol=1e-6)


@pytest.mark.parametrize("f", [magic_formula, magic_formula_direct])
def test_gradients_finite_and_match_fd(f, x64):
    args = (0.05, B, C, D, E)
    g = jax.grad(f, argnums=(0, 1, 2, 3, 4))(*args)
    for i, gi in enumerate(g):
        h = 1e-6
        up, dn = list(args), list(args)
        up[i] += h; dn[i] -= h
        np.testing.assert_allclose(float(gi), (f(*up) - f(*dn)) / (2 * h), rtol=1e-6, atol=1e-9)
    g0 = jax.grad(f, argnums=(0, 1, 2, 3, 4))(0.0, B, C, D, E)
    assert all(np.isfinite(float(v)) for v in g0)


def test_float32_curve_matches_float64_numpy():
    """float32 uses the fused polynomial atan / sin / cos: the curve stays within float32 rounding
    of the float64 formula (relative to the peak D), slip up to |x| = 5 and large C E B."""
    x = np.linspace(-5, 5, 4001).astype(np.float32)
    for b, c, d, e in [(B, C, D, E), (25.0, 1.9, 4000.0, 0.9), (3.0, 2.4, 1.0, -3.0)]:
        got = np.asarray(magic_formula(jnp.asarray(x), b, c, d, e, 0.003, 0.01 * d))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, _np_general(x.astype(np.float64), b, c, d, e, 0.003, 0.01 * d), rtol=0, atol=1e-6 * d)
        bx = b * x.astype(np.float64)
        direct = d * np.sin(c * np.arctan(bx - e * np.arctan(bx - np.arctan(bx))))
        np.testing.assert_allclose(np.asarray(magic_formula_direct(jnp.asarray(x), b, c, d, e)), direct, rtol=0, atol=1e-6 * d)
        w = np.asarray(cosine_weight(jnp.asarray(x), b, c, e))
        np.testing.assert_allclose(w, np.cos(c * np.arctan(bx - e * (bx - np.arctan(bx)))), rtol=0, atol=1e-6)
        # float32 gradient at zero slip: the slip stiffness B C D (finite, through the polynomial sin/atan)
        slope = float(jax.grad(magic_formula)(jnp.float32(0.0), b, c, d, e))
        assert slope == pytest.approx(b * c * d, rel=1e-6)
