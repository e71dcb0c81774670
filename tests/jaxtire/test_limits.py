"""Validity ranges (limits="clamp" | "off") and the out-of-range flags, on the real TNO 205/60 R15 file.

Ranges of the file: FZMIN 100 N, FZMAX 10000 N, KPU +-1.5, ALP +-1.5 rad, CAM +-0.175 rad,
PRES 10 kPa .. 1 MPa.  MFeval's rules: alpha, gamma, pressure saturate everywhere; Fz above FZMAX
saturates in Fx, Fy, Mz, Mx but not My; below FZMIN Mz uses FZMIN, Mx and My scale their load with
(Fz/FZMIN)^2 and Fz/FZMIN; kappa saturates in the forces.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire.mf61 import mf_forces
from tests.conftest import tir_path


@pytest.fixture(scope="module")
def p64():
    with jax.enable_x64(True):
        yield jaxtire.load_tir(tir_path())


def _f(p, *a, **kw):
    o = mf_forces(p, *a, **kw)
    return np.array([float(o.fx), float(o.fy), float(o.mz), float(o.mx), float(o.my)])


def test_clamped_inputs_give_the_boundary_values(p64):
    with jax.enable_x64(True):
        base = {"gamma": 0.05, "fz": 4000.0, "vx": 15.0}
        # kappa beyond KPUMAX = 1.5: Fx, Fy, Mz, Mx at the limit; My does not use kappa
        np.testing.assert_array_equal(_f(p64, 3.0, 0.05, **base), _f(p64, 1.5, 0.05, **base))
        # alpha beyond ALPMAX = 1.5
        np.testing.assert_array_equal(_f(p64, 0.05, 1.55, **base), _f(p64, 0.05, 1.5, **base))
        # camber beyond CAMMAX = 0.175 (every channel, My included)
        kw = {"fz": 4000.0, "vx": 15.0}
        np.testing.assert_array_equal(_f(p64, 0.05, 0.05, 0.3, **kw), _f(p64, 0.05, 0.05, 0.175, **kw))
        np.testing.assert_array_equal(_f(p64, 0.05, 0.05, -0.3, **kw), _f(p64, 0.05, 0.05, -0.175, **kw))
        # pressure beyond PRESMAX = 1 MPa
        np.testing.assert_array_equal(_f(p64, 0.05, 0.05, 0.0, 4000.0, 15.0, pressure=2e6),
                                      _f(p64, 0.05, 0.05, 0.0, 4000.0, 15.0, pressure=1e6))
        # limits="off" does not saturate: the test above is not vacuous
        assert not np.allclose(_f(p64, 3.0, 0.05, **base, limits="off")[:2], _f(p64, 1.5, 0.05, **base)[:2])
        assert not np.allclose(_f(p64, 0.05, 0.05, 0.3, **kw, limits="off"), _f(p64, 0.05, 0.05, 0.175, **kw))


def test_load_above_fzmax_saturates_forces_not_my(p64):
    with jax.enable_x64(True):
        hi, at = _f(p64, 0.05, 0.05, 0.0, 12000.0, 15.0), _f(p64, 0.05, 0.05, 0.0, 10000.0, 15.0)
        np.testing.assert_array_equal(hi[:4], at[:4])
        # My keeps the given load: ratio of the load power (Fz/Fz0)^QSY7
        qsy7 = float(p64.QSY7)
        np.testing.assert_allclose(hi[4] / at[4], (12000.0 / 10000.0) ** qsy7, rtol=1e-12)
        off = _f(p64, 0.05, 0.05, 0.0, 12000.0, 15.0, limits="off")
        assert abs(off[1] - at[1]) > 1.0


def test_below_fzmin_mx_my_scale_and_mz_uses_fzmin(p64):
    with jax.enable_x64(True):
        # Mx with only QSX1: Mx = R0 Fz_eff QSX1, Fz_eff = Fz (Fz/FZMIN)^2 below FZMIN
        zero = {f"QSX{i}": 0.0 for i in range(2, 15)}
        p = p64.replace(**zero)
        r0, q1, fzmin = float(p.UNLOADED_RADIUS), float(p.QSX1), float(p.FZMIN)
        for mode in ("clamp", "off"):
            mx = float(mf_forces(p, 0.0, 0.0, 0.0, 50.0, limits=mode).mx)
            np.testing.assert_allclose(mx, r0 * 50.0 * (50.0 / fzmin) ** 2 * q1, rtol=1e-12)
        # My with QSY1 only and QSY7 = 1: My = -R0 Fz0 QSY1 (Fz_eff / Fz0), Fz_eff = Fz^2 / FZMIN
        p = p64.replace(QSY2=0.0, QSY3=0.0, QSY4=0.0, QSY7=1.0, QSY8=0.0)
        my = float(mf_forces(p, 0.0, 0.0, 0.0, 50.0).my)
        np.testing.assert_allclose(my, -r0 * float(p.QSY1) * 50.0**2 / fzmin, rtol=1e-12)
        # Mz at Fz < FZMIN: the trail and residual torque carry FZMIN, so Mz differs from limits="off"
        a, b = mf_forces(p64, 0.0, 0.05, 0.0, 50.0), mf_forces(p64, 0.0, 0.05, 0.0, 50.0, limits="off")
        np.testing.assert_allclose(float(a.fy), float(b.fy), rtol=1e-12)
        assert abs(float(a.mz) - float(b.mz)) > 1e-3
        # and Mz is zero at zero load in both modes
        assert float(mf_forces(p64, 0.0, 0.05, 0.0, 0.0).mz) == 0.0


def test_flags_name_the_inputs_outside_their_range(p64):
    e = jaxtire.evaluate(p64, jnp.array([0.0, 2.0]), jnp.array([1.6, 0.0]), jnp.array([0.0, -0.2]),
                         jnp.array([50.0, 20000.0]), pressure=jnp.array([2e5, 5e3]))
    f = e.out_of_range
    assert f.fz_low.tolist() == [True, False] and f.fz_high.tolist() == [False, True]
    assert f.kappa.tolist() == [False, True] and f.alpha.tolist() == [True, False]
    assert f.gamma.tolist() == [False, True] and f.pressure.tolist() == [False, True]
    g = jaxtire.mf61.out_of_range(p64, jnp.array([0.0, 2.0]), jnp.array([1.6, 0.0]), jnp.array([0.0, -0.2]),
                                  jnp.array([50.0, 20000.0]), pressure=jnp.array([2e5, 5e3]))
    assert all(a.tolist() == b.tolist() for a, b in zip(f, g))
    # ranges apply in the tyre's own frame: a mirrored tyre at gamma = +0.1 is the measured one at -0.1
    q = p64.replace(CAMMIN=-0.05, CAMMAX=0.2)
    assert not bool(jaxtire.mf61.out_of_range(q, 0.0, 0.0, 0.1, 4000.0, side=1.0).gamma)
    assert bool(jaxtire.mf61.out_of_range(q, 0.0, 0.0, 0.1, 4000.0, side=-1.0).gamma)


def test_file_without_ranges_clamps_nothing():
    p = jaxtire.make_params({"PKY1": -15.0, "PDY1": 1.0, "PCY1": 1.3, "PKY2": 1.7, "PKY4": 2.0})
    a, b = mf_forces(p, 0.0, 0.3, 0.0, 20000.0), mf_forces(p, 0.0, 0.3, 0.0, 20000.0, limits="off")
    assert float(a.fy) == float(b.fy)


def test_bad_option_is_a_clear_error(p64):
    with pytest.raises(ValueError, match="limits"):
        mf_forces(p64, 0.0, 0.0, limits="saturate")
    with pytest.raises(ValueError, match="convention"):
        mf_forces(p64, 0.0, 0.0, convention="tno")
