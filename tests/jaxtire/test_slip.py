import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.slip import V_REG, regularised_speed, slip_angle, slip_ratio


def test_slip_ratio_driving_braking_lockup():
    r = 0.3
    assert float(slip_ratio(0.0, r, 30.0)) == pytest.approx(-1.0, rel=2e-4)  # locked wheel
    assert float(slip_ratio(30.0 / r, r, 30.0)) == pytest.approx(0.0, abs=1e-6)  # free rolling
    assert float(slip_ratio(1.1 * 30.0 / r, r, 30.0)) == pytest.approx(0.1, rel=2e-4)  # driving
    assert float(slip_ratio(0.9 * 30.0 / r, r, 30.0)) == pytest.approx(-0.1, rel=2e-4)  # braking


def test_regularisation_error_bound_and_standstill():
    vx = jnp.array([2.0, 5.0, 20.0])
    exact = jnp.abs(vx)
    rel = regularised_speed(vx) / exact - 1
    assert bool(jnp.all(rel <= 0.5 * (V_REG / vx) ** 2 + 1e-7))
    # standstill: finite, zero for a still wheel, bounded for a spinning one
    assert float(slip_ratio(0.0, 0.3, 0.0)) == 0.0
    assert float(slip_ratio(10.0, 0.3, 0.0)) == pytest.approx(3.0 / V_REG)


def test_slip_angle_values():
    assert float(slip_angle(20.0, 2.0)) == pytest.approx(np.arctan2(2.0, np.hypot(20.0, V_REG)), rel=1e-6)
    assert float(slip_angle(0.0, 0.0)) == 0.0
    # driving backwards uses |vx|: the same sign convention
    assert float(slip_angle(-20.0, 2.0)) == pytest.approx(float(slip_angle(20.0, 2.0)))
    # bounded by pi/2 even sliding sideways at standstill
    assert abs(float(slip_angle(0.0, 50.0))) < np.pi / 2


def test_gradients_finite_at_standstill_and_match_fd(x64):
    g = jax.grad(lambda w, v: slip_ratio(w, 0.3, v), argnums=(0, 1))(0.0, 0.0)
    assert all(np.isfinite(float(x)) for x in g)
    g = jax.grad(slip_angle, argnums=(0, 1))(0.0, 0.0)
    assert all(np.isfinite(float(x)) for x in g)
    f = lambda v: slip_ratio(40.0, 0.3, v)
    h = 1e-6
    np.testing.assert_allclose(float(jax.grad(f)(7.0)), (f(7.0 + h) - f(7.0 - h)) / (2 * h), rtol=1e-7)


def test_slip_angle_float32_matches_arctan2_and_analytic_gradient():
    """float32 uses the polynomial atan: within a few ulp of float64 arctan2 over the whole range
    (reversing, standstill, sliding sideways at 60 m/s), with the analytic derivative
    d alpha / d vy = vr / (vr^2 + vy^2), vr = sqrt(vx^2 + v_reg^2)."""
    vx, vy = np.meshgrid(np.linspace(-80, 80, 321), np.concatenate([np.linspace(-60, 60, 241), [1e-6, -3e-4]]))
    vx32, vy32 = vx.astype(np.float32), vy.astype(np.float32)
    got = np.asarray(slip_angle(jnp.asarray(vx32), jnp.asarray(vy32)))
    assert got.dtype == np.float32
    vr = np.hypot(vx32.astype(np.float64), V_REG)
    ref = np.arctan2(vy32.astype(np.float64), vr)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=3e-7)
    assert np.all(np.abs(got) < np.pi / 2)
    dvy = np.asarray(jax.vmap(jax.grad(slip_angle, argnums=1))(jnp.asarray(vx32.ravel()), jnp.asarray(vy32.ravel())))
    np.testing.assert_allclose(dvy, (vr / (vr ** 2 + vy32.astype(np.float64) ** 2)).ravel(), rtol=2e-6)
    # standstill in float32: finite, d/dvx = 0 (even in vx), d/dvy = 1 / v_reg
    g = jax.grad(slip_angle, argnums=(0, 1))(jnp.float32(0.0), jnp.float32(0.0))
    assert float(g[0]) == 0.0 and float(g[1]) == pytest.approx(1.0 / V_REG, rel=1e-6)
