"""convention="book" vs "mfeval": combined Mz worked in numpy float64 with each MFeval deviation switchable.

Deviations (MFeval / the TNO solver vs Pacejka 2012):
  bt_dt  camber in Bt as (1 + QBZ4 gamma + QBZ5 |gamma|) and Dt as (1 + QDZ3 gamma + QDZ4 gamma^2)
         (book: gamma* = sin(gamma), and |gamma*| in the QDZ3 term);
  eq     equivalent slip angles atan(sqrt(tan^2(alpha_t) + (Kxk/Kya)^2 kappa^2)) (book: sqrt(alpha_t^2 + ...));
  fyp    Fy' = Gyk(gamma) Fy0(gamma = 0) (book: Gyk at gamma = 0 too);
  cosr   Dr carries cos(tan(alpha)) (book: cos(alpha));
  s_lfzo s uses Fy / FNOMIN and t is multiplied by LFZO (book: Fy / Fz0', no LFZO).
"""

import jax
import numpy as np
import pytest

import jaxtire
from jaxtire.mf61 import mf_forces
from tests.conftest import tir_numbers, tir_path

FLAGS = ("bt_dt", "eq", "fyp", "cosr", "s_lfzo")
EXTRA = {"RBY4": 5.0, "LFZO": 1.1}  # so that every deviation shows on this file


@pytest.fixture(scope="module")
def tno():
    with jax.enable_x64(True):
        yield jaxtire.load_tir(tir_path()).replace(**EXTRA), {**tir_numbers(tir_path()), **EXTRA}


def _mz(p, r, kappa, alpha, gamma, fz, on):
    """Combined Mz at nominal pressure and speed, no turn slip (Pacejka 2012 4.E31-4.E49, 4.E71-4.E78)."""
    fz0 = r["FNOMIN"] * r["LFZO"]
    dfz = (fz - fz0) / fz0
    gs, ta, R0 = np.sin(gamma), np.tan(alpha), r["UNLOADED_RADIUS"]
    kya = r["PKY1"] * fz0 * (1 - r["PKY3"] * abs(gs)) * np.sin(r["PKY4"] * np.arctan(fz / ((r["PKY2"] + r["PKY5"] * gs**2) * fz0)))
    kyg0 = fz * (r["PKY6"] + r["PKY7"] * dfz)
    svyg = fz * (r["PVY3"] + r["PVY4"] * dfz) * gs
    shy = r["PHY1"] + r["PHY2"] * dfz + (kyg0 * gs - svyg) / kya
    svy = fz * (r["PVY1"] + r["PVY2"] * dfz) + svyg
    kxk = fz * (r["PKX1"] + r["PKX2"] * dfz) * np.exp(r["PKX3"] * dfz)
    sht = r["QHZ1"] + r["QHZ2"] * dfz + (r["QHZ3"] + r["QHZ4"] * dfz) * gs
    at, ar = ta + sht, ta + shy + svy / kya
    g = gamma if on["bt_dt"] else gs
    bt = (r["QBZ1"] + r["QBZ2"] * dfz + r["QBZ3"] * dfz**2) * (1 + r["QBZ4"] * g + r["QBZ5"] * abs(g))
    dq = (1 + r["QDZ3"] * gamma + r["QDZ4"] * gamma**2) if on["bt_dt"] else (1 + r["QDZ3"] * abs(gs) + r["QDZ4"] * gs**2)
    dt = fz * (R0 / fz0) * (r["QDZ1"] + r["QDZ2"] * dfz) * dq
    ct = r["QCZ1"]
    et = min((r["QEZ1"] + r["QEZ2"] * dfz + r["QEZ3"] * dfz**2) * (1 + (r["QEZ4"] + r["QEZ5"] * gs) * 2 / np.pi * np.arctan(bt * ct * at)), 1)
    r2 = (kxk / kya) ** 2 * kappa**2
    if on["eq"]:
        at_eq, ar_eq = (np.arctan(np.sqrt(np.tan(x) ** 2 + r2)) * np.sign(x) for x in (at, ar))
    else:
        at_eq, ar_eq = (np.sqrt(x**2 + r2) * np.sign(x) for x in (at, ar))
    t = dt * np.cos(ct * np.arctan(bt * at_eq - et * (bt * at_eq - np.arctan(bt * at_eq)))) * np.cos(alpha)
    if on["s_lfzo"]:
        t *= r["LFZO"]
    dr = fz * R0 * ((r["QDZ6"] + r["QDZ7"] * dfz) + (r["QDZ8"] + r["QDZ9"] * dfz + (r["QDZ10"] + r["QDZ11"] * dfz) * abs(gs)) * gs)
    dr *= np.cos(ta) if on["cosr"] else np.cos(alpha)
    assert r["QBZ10"] == 0.0
    mzr = dr * np.cos(np.arctan(r["QBZ9"] * ar_eq))
    # Fy' = Gyk Fy0(gamma = 0); Fy0 at zero camber is not under test here and comes from jaxtire
    fy0_g0 = float(mf_forces(p, 0.0, alpha, 0.0, fz, combined=False).fy)
    gg = gs if on["fyp"] else 0.0
    byk = (r["RBY1"] + r["RBY4"] * gg**2) * np.cos(np.arctan(r["RBY2"] * (ta - r["RBY3"])))
    cyk, eyk, shyk = r["RCY1"], min(r["REY1"] + r["REY2"] * dfz, 1), r["RHY1"] + r["RHY2"] * dfz

    def ph(x):
        return cyk * np.arctan(byk * x - eyk * (byk * x - np.arctan(byk * x)))
    fyp = np.cos(ph(kappa + shyk)) / np.cos(ph(shyk)) * fy0_g0
    # the combined Fx and Fy (not under test) from jaxtire
    o = mf_forces(p, kappa, alpha, gamma, fz)
    fy_n = float(o.fy) / (r["FNOMIN"] if on["s_lfzo"] else fz0)
    s = R0 * (r["SSZ1"] + r["SSZ2"] * fy_n + (r["SSZ3"] + r["SSZ4"] * dfz) * gs)
    return -t * fyp + mzr + s * float(o.fx)


POINTS = [(0.05, 0.06, 0.05, 4000.0), (-0.08, -0.1, -0.08, 3000.0), (0.12, 0.03, 0.1, 5500.0), (0.02, 0.6, -0.05, 4500.0)]


@pytest.mark.parametrize("kappa, alpha, gamma, fz", POINTS)
def test_book_and_mfeval_forms(tno, kappa, alpha, gamma, fz):
    p, r = tno
    with jax.enable_x64(True):
        book = _mz(p, r, kappa, alpha, gamma, fz, dict.fromkeys(FLAGS, False))
        mfev = _mz(p, r, kappa, alpha, gamma, fz, dict.fromkeys(FLAGS, True))
        np.testing.assert_allclose(float(mf_forces(p, kappa, alpha, gamma, fz).mz), book, rtol=1e-7)
        np.testing.assert_allclose(float(mf_forces(p, kappa, alpha, gamma, fz, convention="mfeval").mz), mfev, rtol=1e-7)
        # Fx, Fy, Mx, My are the same in both conventions
        a, b = mf_forces(p, kappa, alpha, gamma, fz), mf_forces(p, kappa, alpha, gamma, fz, convention="mfeval")
        np.testing.assert_array_equal([a.fx, a.fy, a.mx, a.my], [b.fx, b.fy, b.mx, b.my])


@pytest.mark.parametrize("flag", FLAGS)
def test_each_deviation_is_pinned(tno, flag):
    """Every deviation moves Mz: dropping any one of them from the numpy mfeval form no longer matches
    jaxtire's convention="mfeval" (at one of the points at least; the camber forms differ most at negative camber)."""
    p, r = tno
    with jax.enable_x64(True):
        diffs = []
        for k, a, g, fz in POINTS:
            got = float(mf_forces(p, k, a, g, fz, convention="mfeval").mz)
            diffs.append(abs(got - _mz(p, r, k, a, g, fz, {f: f != flag for f in FLAGS})))
        assert max(diffs) > 1e-2, (flag, diffs)
