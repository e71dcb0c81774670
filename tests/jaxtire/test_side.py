"""Tyre side: a tyre mounted on the other side than its .tir TYRESIDE is the reflection y -> -y."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire.mf61 import mf_forces
from tests.conftest import tir_path

POINTS = [(0.0, 0.0, 0.0, 4000.0), (0.08, 0.06, 0.03, 3500.0), (-0.2, -0.1, -0.05, 5500.0), (0.02, 0.3, 0.1, 2000.0)]


@pytest.fixture(scope="module")
def tires():
    with jax.enable_x64(True):
        yield jaxtire.load_tir(tir_path()), jaxtire.load_tir(tir_path("MagicFormula61_Parameters.tir"))


def test_tyreside_is_read(tires):
    left, right = tires
    assert left.tyreside == 1.0 and right.tyreside == -1.0


@pytest.mark.parametrize("k, a, g, fz", POINTS)
def test_mirrored_tire_gives_mirrored_forces(tires, k, a, g, fz):
    for p in tires:
        other = -p.tyreside
        m = mf_forces(p, k, a, g, fz, vx=12.0, side=other)
        ref = mf_forces(p, k, -a, -g, fz, vx=12.0)  # the measured tyre at reflected inputs
        np.testing.assert_allclose([m.fx, m.my], [ref.fx, ref.my], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose([m.fy, m.mx, m.mz], [-ref.fy, -ref.mx, -ref.mz], rtol=1e-12, atol=1e-9)
        # turn slip is reflected too
        mp = mf_forces(p, k, a, g, fz, vx=12.0, side=other, phi=0.05)
        rp = mf_forces(p, k, -a, -g, fz, vx=12.0, phi=-0.05)
        np.testing.assert_allclose([mp.fy, mp.mz], [-rp.fy, -rp.mz], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("k, a, g, fz", POINTS)
def test_side_equal_to_tyreside_changes_nothing(tires, k, a, g, fz):
    for p in tires:
        same = mf_forces(p, k, a, g, fz, vx=12.0, side=p.tyreside)
        ref = mf_forces(p, k, a, g, fz, vx=12.0)
        for x, y in zip(same, ref):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_left_and_right_wheels_cancel_at_zero_steer(tires):
    """Four wheels, left pair as measured, right pair mirrored: no net side force or yaw moment at zero slip."""
    p, _ = tires
    side = jnp.array([1.0, -1.0, 1.0, -1.0])
    o = mf_forces(p, 0.0, 0.0, 0.0, jnp.array([4200.0, 4200.0, 3800.0, 3800.0]), vx=27.8, side=side)
    assert abs(float(o.fy[0])) > 10.0  # the measured tyre is pushed sideways (ply steer, conicity)
    assert abs(float(jnp.sum(o.fy))) < 1e-9 and abs(float(jnp.sum(o.mz))) < 1e-9
    # the same wheels all as measured push the car sideways by ~1-2 % of its weight
    same = mf_forces(p, 0.0, 0.0, 0.0, jnp.array([4200.0, 4200.0, 3800.0, 3800.0]), vx=27.8)
    assert abs(float(jnp.sum(same.fy))) > 100.0


def test_side_is_vmappable_and_differentiable():
    p = jaxtire.load_tir(tir_path())
    f = jax.jit(jax.vmap(lambda s, a: mf_forces(p, 0.0, a, 0.02, 4000.0, vx=20.0, side=s).fy))
    fy = f(jnp.array([1.0, -1.0]), jnp.array([0.03, -0.03]))
    np.testing.assert_allclose(float(fy[0]), float(mf_forces(p, 0.0, 0.03, 0.02, 4000.0, vx=20.0).fy), rtol=1e-5)
    np.testing.assert_allclose(float(fy[1]), -float(mf_forces(p, 0.0, 0.03, -0.02, 4000.0, vx=20.0).fy), rtol=1e-5)
    g = jax.grad(lambda a: mf_forces(p, 0.0, a, 0.0, 4000.0, vx=0.0, side=-1.0).fy)(jnp.float32(0.0))
    assert bool(jnp.isfinite(g))
