"""Issue 29, item 2: the rolling-resistance moment My opposes the wheel's spin (MFeval's rule).

At ``kappa < -1`` the wheel turns backwards while the car moves forwards (spin ``omega = (1 + kappa) vx / Re``).
MFeval turns My round there.  Hand-worked from the files (Fz = FNOMIN, vx = LONGVL, p = NOMPRES, gamma = 0,
QSY2 = QSY5 = QSY6 = 0 in both, so Fx drops out):
``|My| = R0 FNOMIN LMY (QSY1 + QSY3 + QSY4)``:

* TNO 205/60 R15: 0.3135 * 4000 * (0.00702 + 0.001515 + 8.514e-5) = 10.8097 N m;
* MagicFormula61_Parameters: 0.3943 * 6752 * (0.01 + 0.0004 + 4e-5) = 27.7944 N m;

MFeval gives +10.81 / +27.79 N m at ``kappa = KPUMIN - 0.2`` (forward rolling: -10.81 / -27.79).
"""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire.tir import load_tir
from jaxtire.tire import tire_forces
from tests.conftest import tir_path

HAND = {"TNO_car205_60R15.tir": 0.3135 * 4000 * (0.00702 + 0.001515 + 8.514e-5),
        "MagicFormula61_Parameters.tir": 0.3943 * 6752 * (0.01 + 0.0004 + 4e-5)}


@pytest.mark.parametrize("name", sorted(HAND))
@pytest.mark.parametrize("limits", ["clamp", "off"])
def test_my_turns_round_when_the_wheel_spins_backwards(name, limits):
    p = load_tir(tir_path(name))
    k = float(p.KPUMIN) - 0.2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # KPUMIN - 0.2 is outside the file's range: that warns, on purpose
        rev = jaxtire.mf_forces(p, k, 0.0, limits=limits).my
        ev = jaxtire.evaluate(p, k, 0.0, limits=limits).my
        fwd = jaxtire.mf_forces(p, 0.0, 0.0, limits=limits).my
    assert float(rev) == pytest.approx(HAND[name], rel=2e-5)
    assert float(fwd) == pytest.approx(-HAND[name], rel=2e-5)  # rolling forward: against the spin
    assert float(ev) == float(rev)  # evaluate and mf_forces (and so the vehicle, through tire_forces) agree


def test_ramp_through_the_locked_wheel_and_the_vehicle_path():
    p = load_tir(tir_path())
    v, vxlow = 10.0, float(p.VXLOW)  # ramp half width in kappa: VXLOW / v = 0.1
    kap = jnp.array([-1.0, -1.0 + 0.05, -1.0 - 0.05, -1.0 + 0.1, -1.0 - 0.3])
    my = jax.jit(lambda k: tire_forces(p, k, 0.0, 0.0, 4000.0, v).my)(kap)
    full = float(jax.jit(lambda: tire_forces(p, 0.0, 0.0, 0.0, 4000.0, v).my)())
    s = math.sin(math.pi / 4)  # (1 + kappa) v / VXLOW = +-0.5 -> sin(+-pi/4)
    np.testing.assert_allclose(np.asarray(my) / full, [0.0, s, -s, 1.0, -1.0], atol=2e-5)
    assert full < 0 and vxlow == 1.0
    # backwards travel, wheel spinning forwards (kappa < -1 with vx < 0): My negative again, against the spin
    back = float(jax.jit(lambda: tire_forces(p, -1.5, 0.0, 0.0, 4000.0, -v).my)())
    assert back == pytest.approx(full, rel=1e-5)
