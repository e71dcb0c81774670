"""The full vehicle's parts: the tire's vertical model through the interface, the Suspension pytree and
its validation, road profiles (sims.roads.profile) and ISO 8608."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.simple import default_simple_params
from jaxtire.tire import tire_deflection, tire_free_radius, vertical_force
from jaxtire.validation import ValidationError
from jaxtire.vertical import vertical_force as mf_vertical_force
from sims.roads import profile as rp
from sims.vehicles import full, presets
from sims.vehicles.params import fleet_axes
from sims.vehicles.suspension import (
    BMW_320I_CHASSIS,
    BMW_320I_SUSPENSION,
    SUSPENSION_PRESETS,
    default_suspension,
    make_suspension,
    preset_suspension,
)


def test_vertical_force_through_the_interface(tnop):
    """MF: the file's vertical model; simple: the linear spring it is given; exactly 0 off the ground;
    tire_deflection inverts it."""
    rho = jnp.asarray([-0.01, 0.0, 0.005, 0.02])
    np.testing.assert_allclose(vertical_force(tnop, rho, 30.0, 1.0), mf_vertical_force(tnop, rho, 30.0), rtol=1e-6)
    simple = default_simple_params()
    np.testing.assert_allclose(vertical_force(simple, rho, 30.0, 2e5), [0.0, 0.0, 1000.0, 4000.0], rtol=1e-6)
    assert float(vertical_force(tnop, -0.01, 0.0, 1.0)) == 0.0
    for tire in (tnop, simple):
        for fz in (1000.0, 4000.0, 8000.0):
            d = tire_deflection(tire, fz, 0.0, 2e5)
            assert float(vertical_force(tire, d, 0.0, 2e5)) == pytest.approx(fz, rel=1e-4)
    assert float(tire_free_radius(tnop, 0.0)) == pytest.approx(0.3135 * float(tnop.Q_RE0), rel=1e-6)
    assert float(tire_free_radius(simple, 0.0)) == pytest.approx(float(simple.radius))


def test_suspension_validation():
    with pytest.raises(ValidationError, match="spring_front"):
        make_suspension(spring_front=-1.0)
    with pytest.raises(ValidationError, match="unknown"):
        make_suspension(sprung=1.0)
    ch = presets.get("hatchback").chassis
    with pytest.raises(ValidationError, match="arb_front"):
        make_suspension(chassis=ch, arb_front=-1e6)
    with pytest.raises(ValidationError, match="unsprung"):
        make_suspension(chassis=ch, unsprung_mass_front=400.0, unsprung_mass_rear=400.0)
    make_suspension(chassis=ch, **BMW_320I_SUSPENSION)
    assert set(BMW_320I_CHASSIS) <= set(ch._fields)


def test_default_suspension_numbers():
    """default_suspension: front ride frequency of the corner's sprung mass on the wheel rate, the bars'
    split equal to the chassis' roll_stiffness_front, the unsprung fraction."""
    ch = presets.get("hatchback").chassis
    s = default_suspension(ch, freq=(1.2, 1.35), zeta=0.3, unsprung=0.1)
    m, a, b = float(ch.mass), float(ch.cg_to_front), float(ch.cg_to_rear)
    assert 2 * float(s.unsprung_mass_front + s.unsprung_mass_rear) == pytest.approx(0.1 * m, rel=1e-6)
    ms = 0.9 * m
    msf = 0.5 * ms * b / (a + b)
    assert np.sqrt(float(s.spring_front) / msf) / (2 * np.pi) == pytest.approx(1.2, rel=1e-5)
    kf = 0.5 * float(s.spring_front) * float(ch.track_front) ** 2 + float(s.arb_front)
    kr = 0.5 * float(s.spring_rear) * float(ch.track_rear) ** 2 + float(s.arb_rear)
    assert kf / (kf + kr) == pytest.approx(float(ch.roll_stiffness_front), rel=1e-5)
    for name in SUSPENSION_PRESETS:
        preset_suspension(name, presets.get(name).chassis)
    with pytest.raises(ValidationError, match="unknown preset"):
        preset_suspension("bus", ch)


def test_profile_reading_and_builders():
    base = rp.flat(10.0, 0.1, 0.0)
    left = jnp.asarray(np.arange(base.left.shape[0]) * 0.01)
    p = base._replace(left=left)
    # linear between samples, the right track stays flat, held beyond the ends
    assert float(rp.heights_at(p, 0.25, 1.0)) == pytest.approx(0.025, abs=1e-6)
    assert float(rp.heights_at(p, 0.25, -1.0)) == 0.0
    assert float(rp.heights_at(p, 50.0, 1.0)) == pytest.approx(float(left[-1]))
    assert float(rp.slope_at(p, 0.25, 1.0)) == pytest.approx(0.1, rel=1e-5)
    nx, _, nz = rp.normal_at(p, 0.25, 1.0)
    assert float(nx) == pytest.approx(-0.1 / np.sqrt(1.01), rel=1e-5)
    assert float(nz) == pytest.approx(1 / np.sqrt(1.01), rel=1e-5)
    b = rp.bump(base, 2.0, 0.05, 1.0, side="left")
    assert float(rp.heights_at(b, 2.5, 1.0)) == pytest.approx(0.05, rel=1e-5)
    assert float(rp.heights_at(b, 2.5, -1.0)) == 0.0
    k = rp.kerb(base, 4.0, 0.1, 3.0, ramp=0.5)
    assert float(rp.heights_at(k, 5.5, 1.0)) == pytest.approx(0.1, rel=1e-5)
    assert float(rp.heights_at(k, 4.25, 1.0)) == pytest.approx(0.05, rel=1e-4)
    w = rp.washboard(base, 1.0, 9.0, 0.02, 0.4)
    assert float(rp.heights_at(w, 1.2, -1.0)) == pytest.approx(0.02, rel=1e-4)
    c = rp.combine(b, k)
    assert float(rp.heights_at(c, 2.5, 1.0)) == pytest.approx(0.05, rel=1e-5)
    with pytest.raises(ValidationError):
        rp.bump(base, 2.0, 5.0, 1.0)
    with pytest.raises(ValidationError):
        rp.combine(base, rp.flat(20.0, 0.1))


def test_iso8608_statistics():
    """Each track's variance equals int Gd(n) dn over the band (the cosine sum's, up to the taper), the
    same seed gives the same road, and classes step by 4x in variance."""
    base = rp.flat(2000.0, 0.1, 0.0)
    n_min, n_max = 0.05, 2.0
    r = rp.iso8608(base, "C", seed=3, n_min=n_min, n_max=n_max, fade=0.0)
    gd0 = rp.ISO8608_GD0["C"]
    expect = gd0 * rp.ISO8608_N0**2 * (1 / n_min - 1 / n_max)
    assert float(jnp.var(r.left)) == pytest.approx(expect, rel=0.05)
    assert float(jnp.var(r.right)) == pytest.approx(expect, rel=0.05)
    same = rp.iso8608(base, "C", seed=3, n_min=n_min, n_max=n_max, fade=0.0)
    np.testing.assert_array_equal(np.asarray(same.left), np.asarray(r.left))
    d = rp.iso8608(base, "D", seed=3, n_min=n_min, n_max=n_max, fade=0.0)
    assert float(jnp.var(d.left)) / float(jnp.var(r.left)) == pytest.approx(4.0, rel=1e-4)
    with pytest.raises(ValidationError):
        rp.iso8608(base, "Z")


def test_per_vehicle_roads_batch():
    base = rp.flat(50.0, 0.1)
    roads = rp.batched([rp.bump(base, 10.0, h, 1.0) for h in (0.01, 0.02)])
    assert roads.per_vehicle
    p = presets.get("hatchback")._replace(road=roads)
    assert fleet_axes(p).road == 0
    assert fleet_axes(p._replace(road=base)).road is None
    assert full.MODEL.name == "full"
