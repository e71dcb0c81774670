"""Vertical model (jaxtire.vertical) against the MF 6.1 / 6.2 equations worked in numpy float64."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import vertical as V
from tests.conftest import tir_numbers, tir_path


@pytest.fixture(scope="module")
def files():
    with jax.enable_x64(True):
        out = {}
        for name in ("TNO_car205_60R15.tir", "MagicFormula61_Parameters.tir"):
            path = tir_path(name)
            out[name] = (jaxtire.load_tir(path), tir_numbers(path))
        yield out


def _np_free_radius(r, omega):
    return r["UNLOADED_RADIUS"] * (r.get("Q_RE0", 1.0) + r.get("Q_V1", 0.0) * (omega * r["UNLOADED_RADIUS"] / r["LONGVL"]) ** 2)


def _np_qfz1(r):
    return np.sqrt((r["VERTICAL_STIFFNESS"] * r["UNLOADED_RADIUS"] / r["FNOMIN"]) ** 2 - 4 * r["Q_FZ2"])


@pytest.mark.parametrize("name", ["TNO_car205_60R15.tir", "MagicFormula61_Parameters.tir"])
@pytest.mark.parametrize("fz, omega", [(1500.0, 0.0), (4000.0, 55.0), (7000.0, 90.0)])
def test_radii_and_patch_match_hand_equations(files, name, fz, omega):
    with jax.enable_x64(True):
        p, r = files[name]
        R0, Fz0 = r["UNLOADED_RADIUS"], r["FNOMIN"]
        rw = _np_free_radius(r, omega)
        np.testing.assert_allclose(float(V.free_radius(p, omega)), rw, rtol=1e-12)
        cz = r["VERTICAL_STIFFNESS"] * (1 + r.get("PFZ1", 0.0) * 0.0)  # INFLPRES = NOMPRES in both files
        re = rw - (Fz0 / cz) * (r["DREFF"] * np.arctan(r["BREFF"] * fz / Fz0) + r["FREFF"] * fz / Fz0)
        np.testing.assert_allclose(float(V.effective_rolling_radius(p, fz, omega)), re, rtol=1e-12)
        n = fz / (cz * R0)
        a = R0 * (r["Q_RA2"] * n + r["Q_RA1"] * np.sqrt(n))
        b = r["WIDTH"] * (r["Q_RB2"] * n + r["Q_RB1"] * n ** (1 / 3))
        pa, pb = V.contact_patch(p, fz)
        np.testing.assert_allclose([float(pa), float(pb)], [a, b], rtol=1e-12)


@pytest.mark.parametrize("fz, fx, fy", [(4000.0, 0.0, 0.0), (6000.0, 1500.0, -2500.0)])
def test_mf61_loaded_radius_is_the_quadratic_root(files, fz, fx, fy):
    with jax.enable_x64(True):
        p, r = files["MagicFormula61_Parameters.tir"]
        assert p.fittyp == 61
        R0, Fz0, omega = r["UNLOADED_RADIUS"], r["FNOMIN"], 60.0
        fcorr = 1 + r["Q_V2"] * R0 / r["LONGVL"] * omega - (r["Q_FCX"] * fx / Fz0) ** 2 - (r["Q_FCY"] * fy / Fz0) ** 2
        q1, q2 = _np_qfz1(r), r["Q_FZ2"]
        x = np.roots([q2, q1, -fz / (fcorr * Fz0)]).max()
        rl = _np_free_radius(r, omega) - x * R0
        np.testing.assert_allclose(float(V.loaded_radius(p, fz, omega, 0.0, fx, fy)), rl, rtol=1e-12)


def _np_fz62(r, rho, omega, gamma, fx, fy):
    R0, Fz0 = r["UNLOADED_RADIUS"], r["FNOMIN"]
    rw = _np_free_radius(r, omega)
    rl = rw - rho
    sfyg = (r["Q_FYS1"] + r["Q_FYS2"] * rl / rw + r["Q_FYS3"] * (rl / rw) ** 2) * gamma
    rtw = (1.075 - 0.5 * r["ASPECT_RATIO"]) * r["WIDTH"]
    ratio = (r["Q_CAM1"] * rl + r["Q_CAM2"] * rl**2) / (r["Q_CAM1"] * rw + r["Q_CAM2"] * rw**2)
    rhog = ratio**2 * rtw / 8 * abs(np.tan(gamma)) - r["Q_CAM3"] * rho * abs(gamma)
    rz = rho + rhog
    fcorr = (1 + r["Q_V2"] * R0 / r["LONGVL"] * abs(omega) - (r["Q_FCX"] * fx / Fz0) ** 2
             - ((rz / R0) ** r["Q_FCY2"] * r["Q_FCY"] * (fy - sfyg) / Fz0) ** 2)
    return fcorr * (_np_qfz1(r) * rz / R0 + r["Q_FZ2"] * (rz / R0) ** 2) * Fz0


@pytest.mark.parametrize("rho, gamma, fx, fy", [(0.02, 0.0, 0.0, 0.0), (0.025, 0.06, 800.0, -3000.0), (0.015, -0.1, 0.0, 2000.0)])
def test_mf62_vertical_force_with_camber_and_fy(files, rho, gamma, fx, fy):
    with jax.enable_x64(True):
        p, r = files["TNO_car205_60R15.tir"]
        assert p.fittyp == 62 and r["Q_FCY2"] != 0 and r["Q_FYS3"] != 0
        expect = _np_fz62(r, rho, 50.0, gamma, fx, fy)
        np.testing.assert_allclose(float(V.vertical_force(p, rho, 50.0, gamma, fx, fy)), expect, rtol=1e-12)
        # the loaded radius inverts it
        rl = V.loaded_radius(p, expect, 50.0, gamma, fx, fy)
        np.testing.assert_allclose(float(rl), _np_free_radius(r, 50.0) - rho, rtol=1e-10)
        # camber changes the MF 6.2 force (not vacuous)
        if gamma:
            assert abs(_np_fz62(r, rho, 50.0, 0.0, fx, fy) - expect) > 1.0


def test_bottoming_takes_over_near_the_rim(files):
    with jax.enable_x64(True):
        p, r = files["TNO_car205_60R15.tir"]
        rw = _np_free_radius(r, 0.0)
        rl = r["RIM_RADIUS"] + r["BOTTOM_OFFST"] - 0.05  # 50 mm into the bottoming range
        fz = float(V.vertical_force(p, rw - rl, 0.0))
        np.testing.assert_allclose(fz, max(_np_fz62(r, rw - rl, 0.0, 0.0, 0.0, 0.0), r["BOTTOM_STIFF"] * 0.05), rtol=1e-12)
        assert fz == pytest.approx(r["BOTTOM_STIFF"] * 0.05)  # the rim carries it
        # above the bottoming range the MF relation holds alone
        np.testing.assert_allclose(float(V.vertical_force(p, 0.02, 0.0)), _np_fz62(r, 0.02, 0.0, 0.0, 0.0, 0.0), rtol=1e-12)


def test_pressure_terms(files):
    with jax.enable_x64(True):
        p, r = files["TNO_car205_60R15.tir"]
        pres = 1.2 * r["NOMPRES"]
        cz = r["VERTICAL_STIFFNESS"] * (1 + r["PFZ1"] * 0.2)
        re = _np_free_radius(r, 0.0) - (r["FNOMIN"] / cz) * (r["DREFF"] * np.arctan(r["BREFF"]) + r["FREFF"])
        np.testing.assert_allclose(float(V.effective_rolling_radius(p, r["FNOMIN"], 0.0, pressure=pres)), re, rtol=1e-12)
        f_nom = float(V.vertical_force(p, 0.02, 0.0))
        np.testing.assert_allclose(float(V.vertical_force(p, 0.02, 0.0, pressure=pres)), f_nom * (1 + r["PFZ1"] * 0.2), rtol=1e-12)


def test_mf52_patch_uses_q_a1_q_a2():
    path = tir_path("wild/CityBus_Pac02Tire.tir")
    with jax.enable_x64(True):
        with pytest.warns(UserWarning):
            q = jaxtire.load_tir(path)  # PAC2002 without FITTYP: read as MF 5.2 (FITTYP 6) here
        p, r = jaxtire.make_params({k: float(v) for k, v in q.coef.items()}, fittyp=6), tir_numbers(path)
        assert p.is_mf52
        a, b = V.contact_patch(p, 20000.0)
        n = 20000.0 / r["FNOMIN"]
        qa1, qa2 = r.get("Q_A1", 0.0), r.get("Q_A2", 0.0)
        if qa1 == 0 and qa2 == 0:
            y = np.log10(r["UNLOADED_RADIUS"] * r["VERTICAL_STIFFNESS"] / r["FNOMIN"])
            qa1 = -0.0388 * y**3 + 0.2509 * y**2 - 0.6283 * y + 0.6279
            qa2 = 1.693 * qa1**2
        np.testing.assert_allclose(float(a), r["UNLOADED_RADIUS"] * (qa2 * n + qa1 * np.sqrt(n)), rtol=1e-12)
        np.testing.assert_allclose(float(b), r["WIDTH"] / 2, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_finite_at_zero_load_and_speed(dtype):
    with jax.enable_x64(dtype == "float64"):
        p = jaxtire.load_tir(tir_path())
        z = jnp.zeros((), dtype)

        def total(fz, omega, gamma, fy):
            a, b = V.contact_patch(p, fz)
            return (V.loaded_radius(p, fz, omega, gamma, 0.0, fy) + V.effective_rolling_radius(p, fz, omega)
                    + a + b + 1e-4 * V.vertical_force(p, V.deflection(p, fz, omega, gamma), omega, gamma))

        for x0 in ((z, z, z, z), (z + 4000.0, z, z + 0.05, z - 1000.0)):
            g = jax.grad(total, argnums=(0, 1, 2, 3))(*x0)
            assert all(bool(jnp.isfinite(v)) for v in g), g
        if dtype == "float64":
            x0 = (4000.0, 40.0, 0.05, -1000.0)
            g = jax.grad(total, argnums=(0, 1, 2, 3))(*x0)
            for i, h in enumerate((1e-2, 1e-4, 1e-6, 1e-2)):
                up, dn = list(x0), list(x0)
                up[i] += h
                dn[i] -= h
                np.testing.assert_allclose(float(g[i]), float(total(*up) - total(*dn)) / (2 * h), rtol=1e-5, atol=1e-10)


def test_broadcast_and_vmap(files):
    p, _ = files["TNO_car205_60R15.tir"]
    fz = jnp.linspace(1000.0, 8000.0, 4)
    rl = V.loaded_radius(p, fz[:, None], jnp.array([0.0, 50.0])[None, :])
    assert rl.shape == (4, 2) and bool(jnp.all(jnp.diff(rl[:, 0]) < 0))
    vm = jax.vmap(lambda f: V.loaded_radius(p, f, 50.0))(fz)
    np.testing.assert_allclose(vm, rl[:, 1], rtol=1e-12)
