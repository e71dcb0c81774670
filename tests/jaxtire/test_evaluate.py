"""jaxtire.evaluate: the MFeval-like record of one operating point."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import transient, vertical
from jaxtire.mf61 import mf_forces
from tests.conftest import tir_path


@pytest.fixture(scope="module")
def p64():
    with jax.enable_x64(True):
        yield jaxtire.load_tir(tir_path())


def test_record_matches_its_parts(p64):
    with jax.enable_x64(True):
        k, a, g, fz, vx = 0.05, -0.04, 0.02, 4500.0, 20.0
        e = jaxtire.evaluate(p64, k, a, g, fz, vx=vx)
        o = mf_forces(p64, k, a, g, fz, vx=vx)
        for name in ("fx", "fy", "mz", "mx", "my", "mux", "muy"):
            np.testing.assert_array_equal(getattr(e, name), getattr(o, name))
        assert float(e.fz) == fz
        # omega solves omega = vx (1 + kappa) / Re(omega)
        np.testing.assert_allclose(float(e.omega) * float(e.re), vx * (1 + k), rtol=1e-9)
        np.testing.assert_allclose(float(e.re), float(vertical.effective_rolling_radius(p64, fz, e.omega)), rtol=1e-12)
        np.testing.assert_allclose(float(e.rl), float(vertical.loaded_radius(p64, fz, e.omega, g, e.fx, e.fy)), rtol=1e-12)
        np.testing.assert_allclose(float(e.rl), float(vertical.free_radius(p64, e.omega)) - float(e.deflection), rtol=1e-12)
        pa, pb = vertical.contact_patch(p64, fz)
        np.testing.assert_allclose([float(e.a), float(e.b)], [float(pa), float(pb)], rtol=1e-12)
        sk, sa = transient.relaxation_lengths(p64, fz, g)
        np.testing.assert_allclose([float(e.sigma_kappa), float(e.sigma_alpha)], [float(sk), float(sa)], rtol=1e-12)
        np.testing.assert_allclose(float(e.sigma_kappa), abs(float(e.kxk) / float(e.cx)), rtol=1e-12)
        np.testing.assert_allclose(float(e.sigma_alpha), abs(float(e.kya) / float(e.cy)), rtol=1e-12)
        np.testing.assert_allclose(float(e.cz), fz / float(e.deflection), rtol=1e-9)
        # the slip stiffnesses are the slopes of the pure-slip curves at their zero crossing
        np.testing.assert_allclose(float(e.kxk), float(jaxtire.mf61.slip_stiffness(p64, fz)), rtol=1e-12)
        assert 0.0 < float(e.t) < 0.1 and float(e.pressure) == float(p64.INFLPRES)
        assert not any(bool(f) for f in e.out_of_range)


def test_mirrored_record(p64):
    with jax.enable_x64(True):
        e = jaxtire.evaluate(p64, 0.03, 0.05, 0.02, 4000.0, vx=15.0, side=-1.0)
        r = jaxtire.evaluate(p64, 0.03, -0.05, -0.02, 4000.0, vx=15.0)
        for name in ("fx", "my", "re", "rl", "a", "b", "sigma_kappa", "sigma_alpha", "t", "kxk", "kya"):
            np.testing.assert_allclose(getattr(e, name), getattr(r, name), rtol=1e-12, err_msg=name)
        for name in ("fy", "mx", "mz", "mzr"):
            np.testing.assert_allclose(getattr(e, name), -getattr(r, name), rtol=1e-12, err_msg=name)


def test_radii_use_the_given_load_forces_the_clamped_one(p64):
    with jax.enable_x64(True):
        e, at = jaxtire.evaluate(p64, 0.0, 0.05, 0.0, 12000.0), jaxtire.evaluate(p64, 0.0, 0.05, 0.0, 10000.0)
        assert float(e.fy) == float(at.fy) and float(e.rl) < float(at.rl) and float(e.a) > float(at.a)
        assert bool(e.out_of_range.fz_high)


def test_batched_jit_vmap_and_gradients():
    p = jaxtire.load_tir(tir_path())
    f = jax.jit(lambda k, a, s: jaxtire.evaluate(p, k, a, 0.01, 4000.0, vx=15.0, side=s))
    e = f(jnp.linspace(-0.1, 0.1, 5), jnp.linspace(-0.1, 0.1, 5), jnp.array([1.0, -1.0, 1.0, -1.0, 1.0]))
    assert e.fx.shape == (5,) and e.re.shape == (5,) and e.out_of_range.alpha.shape == (5,)
    v = jax.vmap(lambda k: jaxtire.evaluate(p, k, 0.02, 0.0, 4000.0).rl)(jnp.linspace(0.0, 0.1, 3))
    assert v.shape == (3,)

    def total(k, a, fz, vx, phi):
        e = jaxtire.evaluate(p, k, a, 0.0, fz, vx=vx, phi=phi)
        return e.fx + e.fy + e.mz + e.re + e.rl + e.a + e.b + e.sigma_kappa + e.sigma_alpha + 1e-3 * e.omega

    z = jnp.float32(0.0)
    for x0 in ((z, z, z + 4000.0, z, z), (z + 0.1, z + 0.05, z, z + 10.0, z), (z, z, z + 3000.0, z + 5.0, z + 0.2)):
        g = jax.grad(total, argnums=range(5))(*x0)
        assert all(bool(jnp.isfinite(x)) for x in g), (x0, g)


def test_new_keys_round_trip(tmp_path, x64):
    p = jaxtire.load_tir(tir_path())
    for key in ("VERTICAL_STIFFNESS", "BREFF", "Q_FCY2", "PCFY3", "Q_RA1", "FZMAX", "CAMMIN", "QDRP1", "PECP1"):
        assert key in p.coef and p.meta_value(key) is None
    jaxtire.save_tir(p, tmp_path / "t.tir")
    q = jaxtire.load_tir(tmp_path / "t.tir")
    for k in p.coef:
        assert np.array_equal(np.asarray(p.coef[k]), np.asarray(q.coef[k])), k
    assert q.tyreside == p.tyreside == 1.0


def test_new_inputs_pass_through_the_one_dispatch():
    p = jaxtire.load_tir(tir_path())
    kw = {"side": -1.0, "phi": 0.1, "pressure": 2.4e5, "omega": 60.0, "limits": "off", "convention": "mfeval"}
    a = jaxtire.tire_forces(p, 0.05, 0.04, 0.02, 4000.0, 18.0, None, **kw)
    b = mf_forces(p, 0.05, 0.04, 0.02, 4000.0, 18.0, None, **kw)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    s = jaxtire.default_simple_params()
    for opt in ("phi", "side", "pressure"):
        with pytest.raises(ValueError, match=opt):
            jaxtire.tire_forces(s, 0.0, 0.0, **{opt: 0.1})
