"""The road under a car (sims.roads.contact): one table of its fields, checked at the boundary, batched per leaf
in a fleet, and the only place a vehicle reads grade, bank and surfaces from (issue 35 item 3: no road fields in
the chassis)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.validation import ValidationError
from sims.drivers import Constant
from sims.roads.contact import (
    CONTACT_FIELDS,
    Contact,
    broadcast_contact,
    contact_axes,
    make_contact,
    replace_contact,
)
from sims.run.fleet import fleet_rollout, make_fleet
from sims.studies.table import unit
from sims.studies.variation import resolve, vary_vehicle
from sims.vehicles import DOUBLE_TRACK, fleet_axes, presets
from sims.vehicles.core import gravity
from sims.vehicles.params import Chassis
from tests.sims.conftest import FAST


def test_the_chassis_holds_no_road_and_the_contact_one_table():
    assert not {"road_grade", "road_bank", "surface_ids"} & set(Chassis._fields)
    assert list(CONTACT_FIELDS) == ["grade", "bank"] and set(Contact._fields) == {"grade", "bank", "surface_ids"}
    c = presets.get("hatchback", grade=0.1, bank=-0.05, surface_ids=[1, 2, 1, 2]).contact
    assert float(c.grade) == pytest.approx(0.1) and float(c.bank) == pytest.approx(-0.05)
    assert np.asarray(c.surface_ids).tolist() == [1, 2, 1, 2] and c.surface_ids.dtype == jnp.int32


def test_bad_contacts_are_refused_naming_the_field_value_and_range():
    with pytest.raises(ValidationError, match=r"grade.*0\.9.*\[-0\.8, 0\.8\]"):
        make_contact(grade=0.9)
    with pytest.raises(ValidationError, match="bank"):
        replace_contact(make_contact(), bank=-1.0)
    with pytest.raises(ValidationError, match="surface id 11 is outside the surface table"):
        presets.get("hatchback", surface_ids=11)  # the preset table has 11 entries
    with pytest.raises(ValidationError, match="last axis of 4"):
        make_contact(surface_ids=[0, 1])
    with pytest.raises(ValidationError, match="grade"):
        presets.get("hatchback", grade=math.nan)


def test_gravity_of_the_contact_by_hand():
    """g_x = -g sin(theta), g_y = -g cos(theta) sin(phi), g_n = g cos(theta) cos(phi)."""
    gx, gy, gn = (float(v) for v in gravity(make_contact(0.2, 0.1)))
    assert gx == pytest.approx(-GRAVITY * math.sin(0.2), rel=1e-6)
    assert gy == pytest.approx(-GRAVITY * math.cos(0.2) * math.sin(0.1), rel=1e-6)
    assert gn == pytest.approx(GRAVITY * math.cos(0.2) * math.cos(0.1), rel=1e-6)


def _roll(fleet, n_steps=120):
    s0 = jax.vmap(lambda p: DOUBLE_TRACK.init_state(p, 12.0), in_axes=(fleet_axes(fleet),))(fleet)
    drv = Constant(throttle=0.0, brake=0.2)
    res = fleet_rollout(fleet, s0, drv, n_steps, dt=0.005, driver_axes=None, compiler_options=FAST)
    return res.final_state


def test_a_shared_contact_is_the_per_vehicle_one_and_each_vehicle_reads_its_own():
    """A fleet sharing one contact (scalar grade, (4,) ids: contact_axes None) runs bitwise as the same fleet with the
    contact copied per vehicle; with one grade per vehicle each car decelerates by its own g sin(theta): the speed
    lost over the run differs between the two cars by g sin(0.1) m / (m + sum I_w / r^2) t (the rolling wheels'
    spin inertia) to 1 % (brake, drag and rolling resistance the same to first order)."""
    base = presets.get("hatchback")
    fleet = base._replace(chassis=make_fleet(base, 2).chassis)  # the contact shared
    assert contact_axes(fleet.contact) == Contact(None, None, None)
    per = fleet._replace(contact=broadcast_contact(fleet.contact, 2))
    assert contact_axes(per.contact) == Contact(0, 0, 0)
    a, b = _roll(fleet), _roll(per)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    graded = per._replace(contact=replace_contact(per.contact, grade=jnp.asarray([0.0, 0.1], jnp.float32)))
    end = _roll(graded)
    dv = float(end.vx[0] - end.vx[1])  # the uphill car (grade 0.1) is slower
    ch = base.chassis
    spin = sum(2 * float(getattr(ch, f"wheel_inertia_{a}") / getattr(ch, f"wheel_radius_{a}") ** 2) for a in ("front", "rear"))
    m = float(ch.mass)
    assert dv == pytest.approx(GRAVITY * math.sin(0.1) * m / (m + spin) * 120 * 0.005, rel=0.01)


def test_studies_vary_the_road_grade_on_the_contact():
    base = presets.get("hatchback")
    assert resolve("road.grade").kind == "contact" and unit("road.bank") == "rad"
    with pytest.raises(ValidationError, match="names nothing"):
        resolve("vehicle.chassis.road_grade")
    fleet = vary_vehicle(base, 3, {"road.grade": np.asarray([0.0, 0.05, -0.1])}, {"road.grade": "value"})
    np.testing.assert_allclose(np.asarray(fleet.contact.grade), [0.0, 0.05, -0.1], rtol=1e-6)
    assert np.shape(fleet.contact.surface_ids) == (3, 4) and np.shape(fleet.contact.bank) == (3,)
