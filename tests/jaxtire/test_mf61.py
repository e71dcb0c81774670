"""MF 6.1 pure and combined slip on the real TNO 205/60 R15 MF-Tyre 6.2 file."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import surfaces
from jaxtire.mf61 import cornering_stiffness, mf_forces, peak_values, slip_stiffness
from tests.conftest import tir_numbers, tir_path, tol

LOADS = [2000.0, 4000.0, 6000.0]


@pytest.mark.parametrize("fz", LOADS)
def test_peak_forces_match_dense_grid_search(tnop, fz):
    kappa = np.linspace(-0.6, 0.6, 120001)
    alpha = np.linspace(-0.5, 0.5, 100001)
    fx = np.asarray(mf_forces(tnop, kappa, 0.0, 0.0, fz, combined=False).fx, dtype=np.float64)
    fy = np.asarray(mf_forces(tnop, 0.0, alpha, 0.0, fz, combined=False).fy, dtype=np.float64)
    pk = peak_values(tnop, fz)
    np.testing.assert_allclose(fx.max(), float(pk.fx_max), rtol=1e-3)
    np.testing.assert_allclose(fx.min(), float(pk.fx_min), rtol=1e-3)
    np.testing.assert_allclose(fy.max(), float(pk.fy_max), rtol=1e-3)
    np.testing.assert_allclose(fy.min(), float(pk.fy_min), rtol=1e-3)
    # the peak is a physical friction coefficient of a car tire
    assert 0.7 < fy.max() / fz < 1.3 and 0.8 < fx.max() / fz < 1.3


@pytest.mark.parametrize("fz", LOADS)
def test_cornering_stiffness_is_analytic_kya(x64, fz):
    p = jaxtire.load_tir(tir_path())
    r = tir_numbers(tir_path())
    fz0 = r["FNOMIN"] * r["LFZO"]
    kya = r["PKY1"] * fz0 * np.sin(r["PKY4"] * np.arctan(fz / (r["PKY2"] * fz0))) * r["LKY"]  # gamma = 0, dpi = 0
    np.testing.assert_allclose(float(cornering_stiffness(p, fz)), kya, rtol=1e-12)
    dfz = (fz - fz0) / fz0
    shy = (r["PHY1"] + r["PHY2"] * dfz) * r["LHY"]
    a0 = np.arctan(-shy)  # where the curve's argument alpha* + SHy is zero
    slope = jax.grad(lambda a: mf_forces(p, 0.0, a, 0.0, fz, combined=False).fy)(a0)
    np.testing.assert_allclose(float(slope) * np.cos(a0) ** 2, kya, rtol=1e-9)
    kxk = fz * (r["PKX1"] + r["PKX2"] * dfz) * np.exp(r["PKX3"] * dfz) * r["LKX"]
    np.testing.assert_allclose(float(slip_stiffness(p, fz)), kxk, rtol=1e-12)


def _zero_shifts(p):
    zero = [k for k in p.coef if k[:3] in ("PHX", "PVX", "PHY", "PVY", "QHZ", "RHX", "RHY", "RVY")]
    zero += ["PEX4", "PEY3", "PEY4", "QEZ4", "QEZ5", "QDZ6", "QDZ7", "QDZ8", "QDZ9", "RBY3", "SSZ1", "SSZ2"]
    return p.replace(**{k: 0.0 for k in zero})


def test_odd_symmetry_without_shifts(tnop_dtype, dtype):
    tnop = tnop_dtype
    p = _zero_shifts(tnop)
    s = jnp.linspace(0.0, 0.4, 41, dtype=dtype)
    f_tol, m_tol = tol(dtype, 1e-3, 1e-9), tol(dtype, 1e-4, 1e-10)
    for k, a in [(s, 0.0), (0.0, s), (s, 0.5 * s)]:
        pos, neg = mf_forces(p, k, a, 0.0, 4000.0), mf_forces(p, -jnp.asarray(k), -jnp.asarray(a), 0.0, 4000.0)
        assert pos.fx.dtype == dtype
        np.testing.assert_allclose(neg.fx, -pos.fx, atol=f_tol)
        np.testing.assert_allclose(neg.fy, -pos.fy, atol=f_tol)
        np.testing.assert_allclose(neg.mz, -pos.mz, atol=m_tol)
    # with the file's shifts the curve is not odd: the test above is not vacuous
    assert abs(float(mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0).fy)) > 10.0


def test_combined_slip_reduces_forces(tnop):
    kappa = jnp.linspace(-0.3, 0.3, 61)[:, None]
    alpha = jnp.linspace(-0.2, 0.2, 41)[None, :]
    comb = mf_forces(tnop, kappa, alpha, 0.0, 4000.0)
    fx0 = mf_forces(tnop, kappa, 0.0 * alpha, 0.0, 4000.0, combined=False).fx
    fy0 = mf_forces(tnop, 0.0 * kappa, alpha, 0.0, 4000.0, combined=False).fy
    # Gxa <= 1 everywhere: combined |Fx| never exceeds the pure-slip |Fx0|
    assert bool(jnp.all(jnp.abs(comb.fx) <= jnp.abs(fx0) * (1 + 1e-5) + 1e-3))
    # the resultant stays within the pure-slip peaks (friction-circle-like bound, 5% for SVyk)
    pk = peak_values(tnop, 4000.0)
    ratio = jnp.sqrt((comb.fx / pk.fx_max) ** 2 + (comb.fy / pk.fy_max) ** 2)
    assert float(ratio.max()) < 1.05
    # at kappa = 0 the combined model reduces to pure lateral slip exactly
    at0 = mf_forces(tnop, 0.0, alpha, 0.0, 4000.0)
    np.testing.assert_allclose(at0.fy[0], fy0[0], rtol=1e-5, atol=1e-3)


def test_camber_thrust_sign_and_size(tnop):
    # TNO file: PKY6 = -0.9004 -> Fy ~ Kyg0 * gamma = Fz * PKY6 * gamma for small camber at alpha ~ 0
    g = 0.02
    d = mf_forces(tnop, 0.0, 0.0, g, 4000.0).fy - mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0).fy
    expected = 4000.0 * float(tnop.PKY6) * np.sin(g)
    np.testing.assert_allclose(float(d), expected, rtol=0.1)


def test_grip_scales_peak_and_moves_it_to_smaller_slip(tnop):
    alpha = jnp.linspace(0.0, 0.5, 50001)
    kappa = jnp.linspace(0.0, 0.6, 60001)
    ice, dry = surfaces.preset("ice"), surfaces.preset("asphalt_dry")
    p = _zero_shifts(tnop)
    for kw in (dict(kappa=0.0, alpha=alpha), dict(kappa=kappa, alpha=0.0)):
        f_dry = mf_forces(p, gamma=0.0, fz=4000.0, surface=dry, combined=False, **kw)
        f_ice = mf_forces(p, gamma=0.0, fz=4000.0, surface=ice, combined=False, **kw)
        key = "fy" if np.ndim(kw["alpha"]) else "fx"
        d, i = np.abs(np.asarray(getattr(f_dry, key))), np.abs(np.asarray(getattr(f_ice, key)))
        np.testing.assert_allclose(i.max() / d.max(), 0.12, rtol=2e-3)
        assert i.argmax() < 0.6 * d.argmax()
        # stiffness unchanged: same slope at the origin
        np.testing.assert_allclose(i[1] / d[1], 1.0, rtol=2e-2)


def test_load_sensitivity_friction_falls_with_load(tnop):
    mu = [float(peak_values(tnop, fz).fy_max) / fz for fz in (2000.0, 4000.0, 8000.0)]
    assert mu[0] > mu[1] > mu[2]


def test_low_speed_fade_gives_zero_force_at_standstill(tnop):
    o = mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0, vx=0.0)
    for f in (o.fx, o.fy, o.mz, o.my):
        assert abs(float(f)) < 1e-6
    # full strength above VXLOW
    full = mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0, vx=5.0)
    assert abs(float(full.fy)) > 10.0 and float(full.my) < 0.0


def test_rolling_resistance_moment_opposes_rolling_and_scales_with_surface(tnop_dtype, dtype):
    tnop = tnop_dtype
    dry = mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0, vx=20.0)
    assert dry.my.dtype == dtype
    gravel = mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0, vx=20.0, surface=surfaces.preset("gravel"))
    rev = mf_forces(tnop, 0.0, 0.0, 0.0, 4000.0, vx=-20.0)
    assert float(dry.my) < 0 < float(rev.my)
    np.testing.assert_allclose(float(gravel.my), 2.0 * float(dry.my), rtol=tol(dtype, 1e-6, 1e-14))
    # QSY1 term at nominal load, nominal speed (QSY3 |Vx/V0|, QSY4 (Vx/V0)^4 at Vx = V0)
    r0, fz0 = float(tnop.UNLOADED_RADIUS), float(tnop.FNOMIN)
    v = float(tnop.LONGVL)
    nominal = mf_forces(tnop, 0.0, 0.0, 0.0, fz0, vx=v)
    poly = float(tnop.QSY1 + tnop.QSY3 + tnop.QSY4 + tnop.QSY2 * nominal.fx / fz0)
    np.testing.assert_allclose(float(nominal.my), -r0 * fz0 * poly, rtol=tol(dtype, 1e-5, 1e-12))


INPUT_POINTS = {
    "zero": (0.0, 0.0, 0.0, 4000.0, 0.0),
    "zero_load": (0.1, 0.05, 0.01, 0.0, 10.0),
    "zero_speed": (0.05, 0.05, 0.0, 4000.0, 0.0),
    "lockup": (-1.0, 0.02, 0.0, 4000.0, 20.0),
    "generic": (0.07, -0.04, 0.02, 3500.0, 15.0),
}


def _total(p, k, a, g, f, v):
    o = mf_forces(p, k, a, g, f, vx=v)
    return o.fx + o.fy + 0.1 * o.mz + o.mx + o.my


@pytest.mark.parametrize("point", INPUT_POINTS)
def test_gradients_finite_everywhere(tnop, point):
    args = tuple(jnp.float32(x) for x in INPUT_POINTS[point])
    grads = jax.grad(_total, argnums=(1, 2, 3, 4, 5))(tnop, *args)
    assert all(bool(jnp.isfinite(g)) for g in grads), grads
    pgrad = jax.grad(_total)(tnop, *args)
    bad = [k for k, v in pgrad.coef.items() if not bool(jnp.isfinite(v))]
    assert not bad, bad


def test_gradient_through_slip_at_standstill_omega_zero(tnop):
    def f(omega, vx, vy):
        k = jaxtire.slip_ratio(omega, 0.3, vx)
        a = jaxtire.slip_angle(vx, vy)
        o = mf_forces(tnop, k, a, 0.0, 4000.0, vx=vx)
        return o.fx + o.fy
    g = jax.grad(f, argnums=(0, 1, 2))(0.0, 0.0, 0.0)
    assert all(bool(jnp.isfinite(x)) for x in g)


def test_gradients_match_finite_differences(x64):
    p = jaxtire.load_tir(tir_path())
    x0 = (0.07, -0.04, 0.02, 3500.0, 15.0)
    g = jax.grad(_total, argnums=(1, 2, 3, 4, 5))(p, *x0)
    steps = (1e-6, 1e-6, 1e-6, 1e-3, 1e-5)
    for i, (gi, h) in enumerate(zip(g, steps)):
        up = list(x0); dn = list(x0)
        up[i] += h; dn[i] -= h
        fd = (_total(p, *up) - _total(p, *dn)) / (2 * h)
        np.testing.assert_allclose(float(gi), float(fd), rtol=1e-5, atol=1e-6)
    pg = jax.grad(_total)(p, *x0)
    for name in ("PKY1", "PDY1", "PCX1", "PKX1", "QBZ1", "QDZ1", "RBX1", "RBY1", "QSY1", "LMUY", "FNOMIN"):
        h = 1e-6 * max(1.0, abs(float(p.coef[name])))
        fd = (_total(p.replace(**{name: p.coef[name] + h}), *x0) - _total(p.replace(**{name: p.coef[name] - h}), *x0)) / (2 * h)
        np.testing.assert_allclose(float(pg.coef[name]), float(fd), rtol=1e-5, atol=1e-6, err_msg=name)


def test_float32_and_float64_agree():
    kappa = np.linspace(-0.4, 0.4, 81)
    alpha = np.linspace(-0.3, 0.3, 81)
    p32 = jaxtire.load_tir(tir_path())
    o32 = mf_forces(p32, kappa, alpha, 0.01, 4500.0, vx=12.0)
    assert o32.fx.dtype == jnp.float32
    with jax.enable_x64(True):
        p64 = jaxtire.load_tir(tir_path())
        o64 = mf_forces(p64, kappa, alpha, 0.01, 4500.0, vx=12.0)
        assert o64.fx.dtype == jnp.float64
        for a, b in zip(o32[:5], o64[:5]):
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b), rtol=2e-5, atol=5e-3)


def test_vmap_over_10000_tires_equals_loop(tnop):
    n = 10_000
    rng = np.random.default_rng(0)
    scales = {k: jnp.asarray(rng.uniform(0.8, 1.2, n), jnp.float32) for k in ("LMUX", "LMUY", "LKX", "LKY")}
    batched = jax.tree.map(lambda v: jnp.broadcast_to(v, (n,)), tnop).replace(**scales)
    kappa = jnp.asarray(rng.uniform(-0.2, 0.2, n), jnp.float32)
    alpha = jnp.asarray(rng.uniform(-0.2, 0.2, n), jnp.float32)
    fz = jnp.asarray(rng.uniform(1000, 7000, n), jnp.float32)
    out = jax.jit(jax.vmap(lambda p, k, a, f: mf_forces(p, k, a, 0.0, f)))(batched, kappa, alpha, fz)
    # broadcasting over a batched pytree gives the same answer as vmap
    bcast = mf_forces(batched, kappa, alpha, 0.0, fz)
    np.testing.assert_allclose(out.fy, bcast.fy, rtol=1e-5, atol=1e-2)
    for i in rng.choice(n, 10, replace=False):
        pi = jax.tree.map(lambda v: v[i], batched)
        oi = mf_forces(pi, kappa[i], alpha[i], 0.0, fz[i])
        for a, b in zip(oi[:5], out[:5]):
            np.testing.assert_allclose(float(b[i]), float(a), rtol=1e-5, atol=1e-2)


def test_negative_load_is_a_clear_error(tnop):
    with pytest.raises(ValueError, match="fz must be >= 0"):
        mf_forces(tnop, 0.0, 0.0, 0.0, -100.0)
    # inside jit it is documented clamping to zero (lift-off): no force, no NaN
    o = jax.jit(lambda f: mf_forces(tnop, 0.1, 0.1, 0.0, f))(-100.0)
    assert float(o.fx) == 0.0 and float(o.fy) == 0.0


def test_mf52_family_uses_pac2002_stiffness(tnop):
    p52 = jaxtire.make_params({k: float(v) for k, v in tnop.coef.items()}, fittyp=6)
    fz = 5000.0
    fz0 = float(p52.FNOMIN * p52.LFZO)
    kya = float(p52.PKY1) * fz0 * np.sin(2 * np.arctan(fz / (float(p52.PKY2) * fz0))) * float(p52.LKY)
    np.testing.assert_allclose(float(cornering_stiffness(p52, fz)), kya, rtol=1e-5)
    o = mf_forces(p52, 0.05, 0.05, 0.02, fz)
    assert all(bool(jnp.isfinite(x)) for x in o[:5])
