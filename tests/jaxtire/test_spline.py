"""Two-piece Hermite spline friction curve (Unity WheelFrictionCurve)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.spline import SplineParams, make_spline
from jaxtire.spline import spline_curve as _spline_curve

CURVES = [
    dict(),  # Unity defaults 1 / 20000 / 2 / 10000 / 1
    dict(extremum_slip=0.4, extremum_value=1.0, asymptote_slip=0.8, asymptote_value=0.5, stiffness=2.0),
    dict(extremum_slip=0.2, extremum_value=6000.0, asymptote_slip=1.5, asymptote_value=6500.0, stiffness=0.7),
]

spline_curve = jax.jit(_spline_curve)  # one executable per shape keeps the tests fast
dslope = jax.jit(jax.vmap(jax.grad(_spline_curve, argnums=1), in_axes=(None, 0)))


def test_defaults_are_unity():
    for p in (SplineParams(), make_spline()):
        assert [float(v) for v in p] == [1.0, 20000.0, 2.0, 10000.0, 1.0]


@pytest.mark.parametrize("kw", CURVES)
def test_passes_through_knots_with_zero_slope(kw):
    p = make_spline(**kw)
    xe, ye, xa, ya, k = (float(v) for v in p)
    knots = np.array([0.0, xe, xa])
    np.testing.assert_allclose(spline_curve(p, knots), [0.0, k * ye, k * ya], rtol=1e-6)
    slopes = dslope(p, knots)
    # slope at 0 is the first piece's tangent ye / xe; zero at both knots
    np.testing.assert_allclose(slopes, [k * ye / xe, 0.0, 0.0], atol=1e-6 * k * ye / xe)
    # one-sided finite differences either side of the knots agree (C1): both tend to 0
    h = 1e-3 * xe
    for x0 in (xe, xa):
        left = (spline_curve(p, x0) - spline_curve(p, x0 - h)) / h
        right = (spline_curve(p, x0 + h) - spline_curve(p, x0)) / h
        assert abs(float(left)) < 1e-2 * k * ye / xe and abs(float(right)) < 1e-2 * k * ye / xe


@pytest.mark.parametrize("kw", CURVES)
def test_hermite_values_between_knots(kw):
    p = make_spline(**kw)
    xe, ye, xa, ya, k = (float(v) for v in p)
    # first piece ye (u + u^2 - u^3): u = 1/2 -> 0.625 ye; u = 1/4 -> 0.296875 ye
    np.testing.assert_allclose(spline_curve(p, 0.5 * xe), 0.625 * k * ye, rtol=1e-6)
    np.testing.assert_allclose(spline_curve(p, 0.25 * xe), 0.296875 * k * ye, rtol=1e-6)
    # second piece smoothstep: midpoint is the mean, v = 1/4 -> ye + (ya - ye) * 0.15625
    np.testing.assert_allclose(spline_curve(p, 0.5 * (xe + xa)), 0.5 * k * (ye + ya), rtol=1e-6)
    np.testing.assert_allclose(spline_curve(p, xe + 0.25 * (xa - xe)), k * (ye + (ya - ye) * 0.15625), rtol=1e-6)


@pytest.mark.parametrize("kw", CURVES)
def test_flat_beyond_asymptote_odd_and_monotone_pieces(kw):
    p = make_spline(**kw)
    xe, ye, xa, ya, k = (float(v) for v in p)
    far = np.array([xa * 1.0001, 1.5 * xa, 10.0 * xa, 1e4])
    np.testing.assert_allclose(spline_curve(p, far), k * ya, rtol=1e-6)
    np.testing.assert_array_equal(dslope(p, far), 0.0)
    s = np.linspace(-3 * xa, 3 * xa, 601)
    np.testing.assert_allclose(spline_curve(p, -s), -spline_curve(p, s), rtol=1e-6, atol=1e-6 * k * ye)
    d1 = np.diff(np.asarray(spline_curve(p, np.linspace(0.0, xe, 200))))
    assert (d1 >= 0).all()
    d2 = np.diff(np.asarray(spline_curve(p, np.linspace(xe, xa, 200))))
    assert (np.sign(ya - ye) * d2 >= -1e-6 * k * ye).all()


def test_stiffness_scales_everything():
    a, b = make_spline(), make_spline(stiffness=0.35)
    s = np.linspace(-4.0, 4.0, 81)
    np.testing.assert_allclose(spline_curve(b, s), 0.35 * spline_curve(a, s), rtol=1e-6, atol=1e-3)


@pytest.mark.parametrize("kw, match", [
    (dict(extremum_slip=0.0), r"extremum_slip = 0.0 .*\(0.0, inf\)"),
    (dict(extremum_slip=-1.0), "extremum_slip"),
    (dict(asymptote_slip=1.0), "asymptote_slip = 1.0 must be > extremum_slip = 1.0"),
    (dict(extremum_slip=3.0), "asymptote_slip = 2.0 must be > extremum_slip = 3.0"),
    (dict(extremum_value=-5.0), r"extremum_value = -5.0 .*\[0.0, inf\)"),
    (dict(asymptote_value=np.inf), "asymptote_value"),
    (dict(stiffness=-0.1), "stiffness"),
    (dict(extremum_slip=[0.5, 1.0], asymptote_slip=[1.0, 0.9]), r"at index \(1,\)"),
])
def test_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        make_spline(**kw)


def test_gradients_finite_at_zero_and_match_finite_differences(x64):
    p = make_spline(0.3, 5000.0, 0.9, 4200.0, 1.3, dtype=jnp.float64)
    g = jax.jit(jax.grad(_spline_curve, argnums=(0, 1)))
    gp, gs = g(p, 0.0)
    assert all(np.isfinite(float(v)) for v in (*gp, gs))
    np.testing.assert_allclose(gs, 1.3 * 5000.0 / 0.3, rtol=1e-12)
    for s in (0.11, -0.2, 0.5, -0.77, 1.4):  # both pieces and the flat tail, away from the knots
        gp, gs = g(p, s)
        for i in range(len(p) + 1):
            def f(x, i=i):
                if i == len(p):
                    return float(spline_curve(p, x))
                return float(spline_curve(p._replace(**{p._fields[i]: jnp.float64(x)}), s))
            x0 = s if i == len(p) else float(p[i])
            h = 1e-6 * max(abs(x0), 1e-2)
            fd = (f(x0 + h) - f(x0 - h)) / (2 * h)
            an = float(gs if i == len(p) else gp[i])
            np.testing.assert_allclose(an, fd, rtol=1e-5, atol=1e-6, err_msg=f"s={s} arg={i}")


def test_float32_matches_float64_and_vmap_equals_loop():
    s = np.linspace(-3.0, 3.0, 121)
    ps = [make_spline(**kw) for kw in CURVES]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *ps)
    vm = jax.jit(jax.vmap(_spline_curve, in_axes=(0, None)))(batch, jnp.asarray(s, jnp.float32))
    for i, p in enumerate(ps):
        np.testing.assert_allclose(vm[i], spline_curve(p, s.astype(np.float32)), rtol=1e-6, atol=1e-6)
    out32 = np.asarray(vm)
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        for i, kw in enumerate(CURVES):
            ref = np.asarray(spline_curve(make_spline(**kw, dtype=jnp.float64), s))
            assert ref.dtype == np.float64
            np.testing.assert_allclose(out32[i], ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    finally:
        jax.config.update("jax_enable_x64", prev)
