"""Bad input gives a clear ValueError before anything runs."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.surfaces import make_table
from sims.drivers import Constant
from sims.run.rollout import rollout
from sims.vehicles import DOUBLE_TRACK, make_chassis, make_vehicle, presets
from sims.roads.contact import make_contact
from sims.vehicles.params import Chassis


def test_negative_mass_and_other_out_of_range_fields():
    with pytest.raises(ValueError, match=r"mass = -100.0 is outside the allowed range \(0.0, 1000000.0\]"):
        make_chassis(mass=-100.0)
    with pytest.raises(ValueError, match="brake_bias_front = 1.5"):
        make_chassis(brake_bias_front=1.5)
    with pytest.raises(ValueError, match="tire_scale_front.mu_x = 0.0"):
        make_chassis(tire_scale_front=(0.0, 1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="unknown field"):
        make_chassis(masss=1000.0)
    with pytest.raises(ValueError, match="mass = nan"):
        presets.get("hatchback", mass=float("nan"))


def test_a_hand_built_invalid_chassis_is_caught_by_rollout(hatch):
    bad = hatch._replace(chassis=hatch.chassis._replace(mass=jnp.float32(-5.0)))
    with pytest.raises(ValueError, match="mass = -5.0"):
        rollout(bad, DOUBLE_TRACK.init_state(hatch, 1.0), Constant(), 10, dt=0.005)
    assert isinstance(bad.chassis, Chassis)


@pytest.mark.parametrize("dt", [0.0, -0.001, float("nan"), 2.0])
def test_bad_dt(hatch, dt):
    with pytest.raises(ValueError, match="dt"):
        rollout(hatch, DOUBLE_TRACK.init_state(hatch, 1.0), Constant(), 10, dt=dt)


def test_bad_steps_integrator_substeps(hatch):
    s0 = DOUBLE_TRACK.init_state(hatch, 1.0)
    with pytest.raises(ValueError, match="n_steps"):
        rollout(hatch, s0, Constant(), 0, dt=0.005)
    with pytest.raises(ValueError, match="unknown integrator 'rk5'"):
        rollout(hatch, s0, Constant(), 10, dt=0.005, integrator="rk5")
    with pytest.raises(ValueError, match="substeps"):
        rollout(hatch, s0, Constant(), 10, dt=0.005, substeps=0)
    with pytest.raises(ValueError, match="unknown model"):
        rollout(hatch, s0, Constant(), 10, dt=0.005, model="tricycle")


def test_unknown_preset_and_tire():
    with pytest.raises(ValueError, match="unknown preset 'truck'; known presets: hatchback, sports_car, kart"):
        presets.get("truck")
    with pytest.raises(ValueError, match="tire = 'pacejka89' is not one of 'mf', 'simple'"):
        presets.get("hatchback", tire="pacejka89")


def test_surface_id_out_of_range_for_a_table_of_16():
    table = make_table(["asphalt_dry"] * 16)
    with pytest.raises(
        ValueError, match="surface id 16 is outside the surface table .allowed 0 to 15 for a table of 16"
    ):
        presets.get("hatchback", surfaces=table, surface_ids=16)
    with pytest.raises(ValueError, match="surface id -1"):
        presets.get("hatchback", surfaces=table, surface_ids=[0, 0, -1, 0])
    p = presets.get("hatchback", surfaces=table, surface_ids=[15, 15, 0, 3])
    assert np.asarray(p.contact.surface_ids).tolist() == [15, 15, 0, 3]
    with pytest.raises(ValueError, match="surface id 11"):  # the 11-entry preset table
        make_vehicle(make_chassis(), presets.base_tire(), contact=make_contact(surface_ids=11, n_surfaces=16))


def test_one_table_of_chassis_fields():
    """Issue 35 item 4: every scalar field of Chassis has one row in CHASSIS_FIELDS (default, unit, range), from
    which construction (CHASSIS_DEFAULTS), validation (CHASSIS_RANGES) and the study table's units
    (CHASSIS_UNITS) are read; every default lies in its own range and builds a valid chassis."""
    from sims.vehicles import params as P

    pytree_fields = {"tire_scale_front", "tire_scale_rear", "tire_sides"}
    assert list(P.CHASSIS_FIELDS) == [f for f in P.Chassis._fields if f not in pytree_fields]
    for name, f in P.CHASSIS_FIELDS.items():
        assert f.low < f.high and f.unit, name
        assert (f.low < f.default or (f.low_incl and f.low == f.default)) and f.default <= f.high, name
        assert P.CHASSIS_RANGES[name] == (f.low, f.high, f.low_incl, f.high_incl) and P.CHASSIS_UNITS[name] == f.unit
    ch = P.make_chassis()
    assert float(ch.mass) == P.CHASSIS_FIELDS["mass"].default == 1350.0 and P.CHASSIS_UNITS["max_power"] == "W"
