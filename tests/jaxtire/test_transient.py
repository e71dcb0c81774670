"""Relaxation lengths and the first-order contact-slip lag (jaxtire.transient)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import transient as T
from tests.conftest import tir_numbers, tir_path


@pytest.mark.parametrize("fz, gamma, pres", [(2000.0, 0.0, None), (4000.0, 0.05, None), (6500.0, -0.03, 250000.0)])
def test_mf6_relaxation_lengths_are_kxk_over_cx(x64, fz, gamma, pres):
    p, r = jaxtire.load_tir(tir_path()), tir_numbers(tir_path())
    fz0 = r["FNOMIN"] * r["LFZO"]
    dfz = (fz - fz0) / fz0
    dpi = 0.0 if pres is None else (pres - r["NOMPRES"]) / r["NOMPRES"]
    kxk = fz * (r["PKX1"] + r["PKX2"] * dfz) * np.exp(r["PKX3"] * dfz) * (1 + r["PPX1"] * dpi + r["PPX2"] * dpi**2)
    gs = np.sin(gamma)
    kya = (r["PKY1"] * fz0 * (1 + r["PPY1"] * dpi) * (1 - r["PKY3"] * abs(gs))
           * np.sin(r["PKY4"] * np.arctan(fz / ((r["PKY2"] + r["PKY5"] * gs**2) * (1 + r["PPY2"] * dpi) * fz0))))
    cx = r["LONGITUDINAL_STIFFNESS"] * (1 + r["PCFX1"] * dfz + r["PCFX2"] * dfz**2) * (1 + r["PCFX3"] * dpi)
    cy = r["LATERAL_STIFFNESS"] * (1 + r["PCFY1"] * dfz + r["PCFY2"] * dfz**2) * (1 + r["PCFY3"] * dpi)
    sk, sa = T.relaxation_lengths(p, fz, gamma, pres)
    np.testing.assert_allclose([float(sk), float(sa)], [abs(kxk / cx), abs(kya / cy)], rtol=1e-12)
    assert 0.05 < float(sk) < 1.0 and 0.1 < float(sa) < 1.0  # tens of centimetres for a car tyre


def test_mf52_relaxation_lengths_use_ptx_pty(x64):
    path = tir_path("wild/CityBus_Pac02Tire.tir")
    with pytest.warns(UserWarning):
        q = jaxtire.load_tir(path)
    p, r = jaxtire.make_params({k: float(v) for k, v in q.coef.items()}, fittyp=6), tir_numbers(path)
    fz, gamma = 25000.0, 0.02
    fz0 = r["FNOMIN"] * r.get("LFZO", 1.0)
    dfz = (fz - fz0) / fz0
    sk = (r["PTX1"] + r["PTX2"] * dfz) * np.exp(-r["PTX3"] * dfz) * r["UNLOADED_RADIUS"] * fz / r["FNOMIN"]
    sa = r["PTY1"] * np.sin(2 * np.arctan(fz / (r["PTY2"] * fz0))) * (1 - r["PKY3"] * abs(gamma)) * r["UNLOADED_RADIUS"]
    got = T.relaxation_lengths(p, fz, gamma)
    np.testing.assert_allclose([float(g) for g in got], [sk, sa], rtol=1e-12)


@pytest.fixture(scope="module")
def lag_run():
    p = jaxtire.load_tir(tir_path())
    sk, sa = T.relaxation_lengths(p, 4000.0)

    @functools.partial(jax.jit, static_argnames="exact")
    def run(vx, vsx, vsy, dt, exact):
        def step(s, _):
            if exact:
                s = T.relax_exact(s, vx, vsx, vsy, sk, sa, dt)
            else:
                d = T.contact_slip_rates(s, vx, vsx, vsy, sk, sa)
                s = T.ContactSlip(s.kappa + dt * d.kappa, s.tan_alpha + dt * d.tan_alpha)
            return s, s
        return jax.lax.scan(step, T.ContactSlip(jnp.float32(0.0), jnp.float32(0.0)), None, length=400)[1]

    return p, sk, sa, run


def test_lagged_slips_converge_to_steady_slips(lag_run):
    p, sk, _sa, run = lag_run
    vx, vsx, vsy = 20.0, -1.0, 0.8  # driving (omega Re > vx) and sliding left
    ss = T.steady_slips(vx, vsx, vsy)
    for exact, dt in ((False, 1e-3), (True, 1e-3), (True, 0.05)):
        hist = run(vx, vsx, vsy, dt, exact)
        np.testing.assert_allclose(float(hist.kappa[-1]), float(ss.kappa), rtol=1e-4)
        np.testing.assert_allclose(float(hist.tan_alpha[-1]), float(ss.tan_alpha), rtol=1e-4)
    # first order: after one relaxation length travelled the lag has reached 1 - 1/e
    hist = run(vx, vsx, vsy, 1e-4, True)
    n = round(float(sk) / vx / 1e-4)
    np.testing.assert_allclose(float(hist.kappa[n - 1]) / float(ss.kappa), 1 - np.exp(-1), rtol=2e-2)
    # the forces from the lagged slips approach the steady forces
    k, a = T.lagged_slips(run(vx, vsx, vsy, 0.05, True))
    lag = jaxtire.mf_forces(p, k[-1], a[-1], 0.0, 4000.0, vx=vx)
    steady = jaxtire.mf_forces(p, ss.kappa, jnp.arctan(ss.tan_alpha), 0.0, 4000.0, vx=vx)
    np.testing.assert_allclose([float(lag.fx), float(lag.fy)], [float(steady.fx), float(steady.fy)], rtol=1e-3)


def test_standstill_lag_integrates_slip_velocity_and_is_finite(lag_run):
    p, sk, sa, run = lag_run
    hist = run(0.0, -0.01, 0.02, 1e-3, True)
    # at Vx = 0 the lag integrates the slip velocity: kappa' = -Vsx t / sigma
    np.testing.assert_allclose(float(hist.kappa[99]), 0.01 * 0.1 / float(sk), rtol=1e-4)
    np.testing.assert_allclose(float(hist.tan_alpha[99]), 0.02 * 0.1 / float(sa), rtol=1e-4)
    for dtype in ("float32", "float64"):
        with jax.enable_x64(dtype == "float64"):
            def f(vx, vsx, fz):
                s, a = T.relaxation_lengths(p, fz)
                d = T.contact_slip_rates(T.ContactSlip(0.1, 0.05), vx, vsx, 0.3, s, a)
                e = T.relax_exact(T.ContactSlip(0.1, 0.05), vx, vsx, 0.3, s, a, 0.01)
                return d.kappa + d.tan_alpha + e.kappa + e.tan_alpha
            z = jnp.zeros((), dtype)
            for x0 in ((z, z, z + 4000.0), (z, z, z), (z + 10.0, z + 0.5, z + 3000.0)):
                g = jax.grad(f, argnums=(0, 1, 2))(*x0)
                assert all(bool(jnp.isfinite(v)) for v in g), (dtype, x0, g)


def test_gradient_of_relaxation_length_matches_finite_difference(x64):
    p = jaxtire.load_tir(tir_path())
    f = lambda fz: sum(T.relaxation_lengths(p, fz, 0.02))
    g = float(jax.grad(f)(3000.0))
    np.testing.assert_allclose(g, float(f(3000.0 + 1e-2) - f(3000.0 - 1e-2)) / 2e-2, rtol=1e-6)
