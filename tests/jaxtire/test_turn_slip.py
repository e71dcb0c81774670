"""Turn slip (Pacejka 2012 §4.3.3): zeta factors worked by hand in numpy at chosen points, and invariants."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire.mf61 import mf_forces
from tests.conftest import tir_numbers, tir_path


@pytest.fixture(scope="module")
def tno():
    with jax.enable_x64(True):
        yield jaxtire.load_tir(tir_path()), tir_numbers(tir_path())


def _pure(r, fz):
    fz0 = r["FNOMIN"]
    return fz0, (fz - fz0) / fz0


@pytest.mark.parametrize("kappa, phi, fz", [(0.05, 0.2, 4000.0), (-0.1, -0.5, 3000.0), (0.02, 1.0, 5500.0)])
def test_fx0_with_zeta1(tno, kappa, phi, fz):
    p, r = tno
    with jax.enable_x64(True):
        p = p.replace(PDXP2=0.3, PDXP3=2.0)  # make every Bx_phi term count
        r = {**r, "PDXP2": 0.3, "PDXP3": 2.0}
        _fz0, dfz = _pure(r, fz)
        R0 = r["UNLOADED_RADIUS"]
        bxp = r["PDXP1"] * (1 + r["PDXP2"] * dfz) * np.cos(np.arctan(r["PDXP3"] * kappa))
        z1 = np.cos(np.arctan(bxp * R0 * phi))
        dx = (r["PDX1"] + r["PDX2"] * dfz) * fz * z1
        kxk = fz * (r["PKX1"] + r["PKX2"] * dfz) * np.exp(r["PKX3"] * dfz)
        shx, svx = r["PHX1"] + r["PHX2"] * dfz, fz * (r["PVX1"] + r["PVX2"] * dfz)
        kx = kappa + shx
        ex = (r["PEX1"] + r["PEX2"] * dfz + r["PEX3"] * dfz**2) * (1 - r["PEX4"] * np.sign(kx))
        cx = r["PCX1"]
        bx = kxk / (cx * dx)
        fx0 = dx * np.sin(cx * np.arctan(bx * kx - ex * (bx * kx - np.arctan(bx * kx)))) + svx
        got = mf_forces(p, kappa, 0.0, 0.0, fz, phi=phi, combined=False).fx
        np.testing.assert_allclose(float(got), fx0, rtol=1e-8)
        assert abs(z1 - 1) > 1e-4  # the factor matters at these points


@pytest.mark.parametrize("alpha, phi, fz", [(0.05, 0.2, 4000.0), (-0.08, -0.6, 3000.0), (0.0, 1.5, 5000.0)])
def test_fy0_with_zeta2_zeta3_and_turn_slip_shift(tno, alpha, phi, fz):
    p, r = tno
    with jax.enable_x64(True):
        extra = {"PDYP2": 0.2, "PDYP3": 1.5, "PDYP4": 0.3, "PHYP3": 0.05, "PECP2": 0.1}
        p, r = p.replace(**extra), {**r, **extra}
        fz0, dfz = _pure(r, fz)
        R0, ta = r["UNLOADED_RADIUS"], np.tan(alpha)
        z3 = np.cos(np.arctan(r["PKYP1"] * R0**2 * phi**2))
        kya = r["PKY1"] * fz0 * np.sin(r["PKY4"] * np.arctan(fz / (r["PKY2"] * fz0))) * z3
        kyg0 = fz * (r["PKY6"] + r["PKY7"] * dfz)
        eps_g = r["PECP1"] * (1 + r["PECP2"] * dfz)
        chp, dhp, ehp = r["PHYP1"], r["PHYP2"] + r["PHYP3"] * dfz, min(r["PHYP4"], 1.0)
        bhp = kyg0 / (1 - eps_g) / (chp * dhp * kya)
        x = bhp * R0 * phi
        shyp = dhp * np.sin(chp * np.arctan(x - ehp * (x - np.arctan(x))))
        byp = r["PDYP1"] * (1 + r["PDYP2"] * dfz) * np.cos(np.arctan(r["PDYP3"] * ta))
        z2 = np.cos(np.arctan(byp * (R0 * abs(phi) + r["PDYP4"] * np.sqrt(R0 * abs(phi)))))
        shy = r["PHY1"] + r["PHY2"] * dfz + shyp
        svy = fz * (r["PVY1"] + r["PVY2"] * dfz) * z2
        ay = ta + shy
        cy = r["PCY1"]
        dy = (r["PDY1"] + r["PDY2"] * dfz) * fz * z2
        ey = (r["PEY1"] + r["PEY2"] * dfz) * (1 - r["PEY3"] * np.sign(ay))
        by = kya / (cy * dy)
        fy0 = dy * np.sin(cy * np.arctan(by * ay - ey * (by * ay - np.arctan(by * ay)))) + svy
        got = mf_forces(p, 0.0, alpha, 0.0, fz, phi=phi, combined=False).fy
        np.testing.assert_allclose(float(got), fy0, rtol=1e-8)


@pytest.mark.parametrize("phi, lmp", [(0.5, 1.0), (-1.2, 1.3), (3.0, 0.8)])
def test_parking_torque_zeta6_zeta7_zeta8_and_lmp(tno, phi, lmp):
    """With the Fy and Mz shifts removed, at alpha = kappa = gamma = 0 the aligning torque is the turn-slip
    residual torque alone: Mz = Dr_phi cos(zeta7 atan(Br zeta6 alpha_r)), alpha_r = SHy_phi."""
    p, r = tno
    with jax.enable_x64(True):
        zero = {k: 0.0 for k in ("PHY1", "PHY2", "PVY1", "PVY2", "QDZ6", "QDZ7", "QHZ1", "QHZ2", "RHY1", "RHY2", "PHX1", "PHX2", "PVX1", "PVX2")}
        extra = {"QDZ9": 0.05, "QCRP2": 0.3, "LMP": lmp}
        p, r = p.replace(**zero, **extra), {**r, **zero, **extra}
        fz = 3500.0
        fz0, dfz = _pure(r, fz)
        R0 = r["UNLOADED_RADIUS"]
        z3 = np.cos(np.arctan(r["PKYP1"] * R0**2 * phi**2))
        kya = r["PKY1"] * fz0 * np.sin(r["PKY4"] * np.arctan(fz / (r["PKY2"] * fz0))) * z3
        eps_g = r["PECP1"] * (1 + r["PECP2"] * dfz)
        kyg0 = fz * (r["PKY6"] + r["PKY7"] * dfz)
        chp, dhp, ehp = r["PHYP1"], r["PHYP2"] + r["PHYP3"] * dfz, min(r["PHYP4"], 1.0)
        x = kyg0 / (1 - eps_g) / (chp * dhp * kya) * R0 * phi
        alpha_r = dhp * np.sin(chp * np.arctan(x - ehp * (x - np.arctan(x))))
        muy = r["PDY1"] + r["PDY2"] * dfz
        mzp_inf = r["QCRP1"] * muy * R0 * fz * np.sqrt(fz / fz0) * lmp
        cdr = r["QDRP1"]
        ddr = mzp_inf / np.sin(0.5 * np.pi * cdr)
        kzgr0 = fz * R0 * (r["QDZ8"] + r["QDZ9"] * dfz)
        bdr = kzgr0 / (cdr * ddr * (1 - eps_g))
        drp = ddr * np.sin(cdr * np.arctan(bdr * R0 * phi))
        mzp90 = mzp_inf * 2 / np.pi * np.arctan(r["QCRP2"] * R0 * abs(phi))
        z7 = 2 / np.pi * np.arccos(np.clip(mzp90 / abs(drp), -1, 1))
        z6 = np.cos(np.arctan(r["QBRP1"] * R0 * phi))
        br = r["QBZ9"] * z6
        mz = drp * np.cos(z7 * np.arctan(br * alpha_r))
        got = mf_forces(p, 0.0, 0.0, 0.0, fz, phi=phi).mz
        np.testing.assert_allclose(float(got), mz, rtol=1e-6)
        assert 0.05 < z7 < 0.999 and abs(mz) > 1.0


def test_zero_turn_slip_gives_todays_output(tno):
    p, _ = tno
    k = jnp.linspace(-0.3, 0.3, 7)[:, None]
    a = jnp.linspace(-0.2, 0.2, 5)[None, :]
    off = mf_forces(p, k, a, 0.0, 4200.0, vx=15.0)
    on = mf_forces(p, k, a, 0.0, 4200.0, vx=15.0, phi=0.0)
    tiny = mf_forces(p, k, a, 0.0, 4200.0, vx=15.0, phi=1e-7)
    for x, y in zip(off[:5], on[:5]):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-9, atol=1e-9)
    for name in ("fx", "fy", "mx", "my"):
        np.testing.assert_allclose(getattr(tiny, name), getattr(off, name), rtol=1e-5, atol=1e-3, err_msg=name)
    # Mz: the book's Cr = zeta7 = (2/pi) acos(Mz_phi90 / |Dr_phi|) does not tend to 1 as phi -> 0 (both
    # terms are linear in phi), so the residual torque's shape moves by a fraction of a percent of peak Mz
    peak = float(jnp.max(jnp.abs(off.mz)))
    np.testing.assert_allclose(tiny.mz, off.mz, atol=5e-3 * peak)
    # a real turn changes the forces (the comparison above is not vacuous)
    assert abs(float(mf_forces(p, 0.0, 0.05, 0.0, 4200.0, phi=0.5).fy - off.fy[3, 3])) > 10.0


def test_camber_sign_kept_and_finite_at_nominal_load(tno):
    p, _ = tno
    for g in (0.03, -0.03):
        plain = float(mf_forces(p, 0.0, 0.0, g, 4000.0, vx=20.0).fy - mf_forces(p, 0.0, 0.0, 0.0, 4000.0, vx=20.0).fy)
        spin = float(mf_forces(p, 0.0, 0.0, g, 4000.0, vx=20.0, phi=0.0).fy
                     - mf_forces(p, 0.0, 0.0, 0.0, 4000.0, vx=20.0, phi=0.0).fy)
        assert np.sign(spin) == np.sign(plain) and abs(spin / plain - 1) < 0.3, (plain, spin)
    # Fz = FNOMIN (dfz = 0), zero turn slip, with and without the Mz camber coefficients: finite
    for q in (p, p.replace(QDZ8=0.0, QDZ9=0.0, QDZ10=0.0, QDZ11=0.0)):
        o = mf_forces(q, 0.05, 0.05, 0.0, float(q.FNOMIN), vx=10.0, phi=0.0)
        assert all(bool(jnp.isfinite(x)) for x in o[:5])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_finite_at_zero_speed_load_curvature(dtype):
    with jax.enable_x64(dtype == "float64"):
        p = jaxtire.load_tir(tir_path())

        def total(k, a, g, fz, vx, phi):
            o = mf_forces(p, k, a, g, fz, vx=vx, phi=phi)
            return o.fx + o.fy + 0.1 * o.mz + o.mx + o.my

        z = jnp.zeros((), dtype)
        for x0 in ((z, z, z, z + 4000.0, z + 10.0, z), (z + 0.1, z + 0.05, z + 0.02, z, z, z),
                   (z, z, z, z + 4000.0, z, z + 0.3), (z + 0.05, z + 0.05, z, z + float(p.FNOMIN), z + 5.0, z)):
            g = jax.grad(total, argnums=range(6))(*x0)
            assert all(bool(jnp.isfinite(v)) for v in g), (x0, g)
        if dtype == "float64":
            x0 = (0.05, 0.04, 0.02, 3500.0, 12.0, 0.4)
            g = jax.grad(total, argnums=range(6))(*x0)
            for i, h in enumerate((1e-6, 1e-6, 1e-6, 1e-3, 1e-5, 1e-6)):
                up, dn = list(x0), list(x0)
                up[i] += h
                dn[i] -= h
                np.testing.assert_allclose(float(g[i]), float(total(*up) - total(*dn)) / (2 * h), rtol=1e-5, atol=1e-6)


def test_mf52_turn_slip_is_a_clear_error():
    p = jaxtire.make_params({"PKY1": -15.0}, fittyp=6)
    with pytest.raises(ValueError, match="turn slip"):
        mf_forces(p, 0.0, 0.0, phi=0.1)


def test_turn_slip_from_yaw_rate_and_spin_from_camber():
    from jaxtire.slip import spin, turn_slip
    # a wheel on a 20 m radius left-hand circle at 10 m/s: psi_dot = 0.5 rad/s, phi_t = -1/R
    np.testing.assert_allclose(float(turn_slip(0.5, 10.0, 0.0, v_reg=0.0)), -1 / 20.0, rtol=1e-6)
    assert bool(jnp.isfinite(jax.grad(lambda v: turn_slip(0.3, v))(0.0)))
    # spin of a cambered wheel rolling straight: (1 - eps) Omega sin(gamma) / Vc, Omega ~ Vc / R0
    np.testing.assert_allclose(float(spin(0.0, 10.0 / 0.3, 0.05, 10.0, 0.5)), 0.5 * np.sin(0.05) / 0.3, rtol=1e-6)


def test_param_gradients_finite_with_every_option():
    p = jaxtire.load_tir(tir_path())

    def total(q, k, a, g, fz, vx, phi, side):
        o = mf_forces(q, k, a, g, fz, vx=vx, phi=phi, side=side)
        e = jaxtire.evaluate(q, k, a, g, fz, vx=vx, phi=phi, side=side)
        return o.fx + o.fy + 0.1 * o.mz + o.mx + o.my + e.re + e.rl + e.a + e.b + e.sigma_kappa + e.sigma_alpha

    for x in ((0.0, 0.0, 0.0, 4000.0, 10.0, 0.0, 1.0), (0.1, 0.05, 0.02, 0.0, 0.0, 0.0, -1.0),
              (0.0, 0.0, 0.0, 4000.0, 0.0, 0.3, -1.0)):
        g = jax.grad(total)(p, *x)
        bad = [k for k, v in g.coef.items() if not bool(jnp.isfinite(v))]
        assert not bad, (x, bad)
