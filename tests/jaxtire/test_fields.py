"""jaxtire.fields: one field table drives construction, validation, replace and the docs (issue 35 item 4)."""

import math

import numpy as np
import pytest

from jaxtire import fields
from jaxtire.fields import Field
from jaxtire.validation import ValidationError

TABLE = {
    "mass": Field(1350.0, "kg", 0.0, 1e6, False, True),
    "bias": Field(0.7, "-", 0.0, 1.0),
    "gain": Field(None, "1/s", 0.0, math.inf, True, False),
}


def test_columns_come_from_the_one_table():
    assert fields.defaults(TABLE) == {"mass": 1350.0, "bias": 0.7}  # a field without a default has none
    assert fields.ranges(TABLE)["mass"] == (0.0, 1e6, False, True) == TABLE["mass"].range
    assert fields.units(TABLE) == {"mass": "kg", "bias": "-", "gain": "1/s"}


def test_merge_fills_defaults_and_names_an_unknown_field():
    assert fields.merge(TABLE, {"bias": 0.6}, source="Car") == {"mass": 1350.0, "bias": 0.6}
    with pytest.raises(ValidationError, match=r"Car: unknown field\(s\) \['masss'\]; allowed \['bias', 'gain', 'mass'\]"):
        fields.merge(TABLE, {"masss": 1.0}, source="Car")


def test_check_names_the_field_the_value_and_the_range():
    fields.check(TABLE, {"mass": np.array([900.0, 2000.0]), "bias": 1.0}, source="Car")  # per-vehicle arrays
    with pytest.raises(ValidationError, match=r"Car: mass = 0.0 .*\(0.0, 1000000.0\]"):
        fields.check(TABLE, {"mass": np.array([900.0, 0.0])}, source="Car")  # the open lower end
    with pytest.raises(ValidationError, match=r"bias = 1.5"):
        fields.check(TABLE, {"bias": 1.5}, source="Car")
    with pytest.raises(ValidationError, match=r"Car: bias"):
        fields.check(TABLE, {"bias": None}, source="Car")  # a field given as None is not skipped


def test_replace_checks_the_changed_fields_of_the_chassis():
    from sims.vehicles.params import make_chassis, replace_chassis

    ch = make_chassis()
    heavier = replace_chassis(ch, mass=1500.0, brake_bias_front=0.65)
    assert float(heavier.mass) == 1500.0 and float(heavier.brake_bias_front) == 0.65
    assert float(heavier.cg_height) == float(ch.cg_height)
    with pytest.raises(ValidationError, match=r"Chassis: brake_bias_front = 1.2 .*\[0.0, 1.0\]"):
        replace_chassis(ch, brake_bias_front=1.2)  # ch._replace would store it


def test_markdown_lists_every_field_with_unit_default_and_range():
    text = fields.markdown(TABLE).splitlines()
    assert text[0] == "| field | unit | default | allowed |" and len(text) == 2 + len(TABLE)
    assert text[2] == "| `mass` | kg | 1350 | (0.0, 1000000.0] |"
    assert text[4] == "| `gain` | 1/s | - | [0.0, inf) |"


@pytest.mark.parametrize(
    "module, table, pytree",
    [
        ("sims.vehicles.params", "CHASSIS_FIELDS", "Chassis"),
        ("sims.roads.contact", "CONTACT_FIELDS", "Contact"),
        ("sims.vehicles.suspension", "SUSPENSION_FIELDS", "Suspension"),
        ("sims.drivers", "DRIVER_FIELDS", None),
    ],
)
def test_every_parameter_table_is_a_field_table_whose_defaults_lie_in_range(module, table, pytree):
    import importlib

    mod = importlib.import_module(module)
    tab = getattr(mod, table)
    assert tab and all(isinstance(f, Field) and f.unit and f.low < f.high for f in tab.values())
    fields.check(tab, fields.defaults(tab), source=table)  # every default inside its own range
    if pytree is not None:  # every listed name is a field of the pytree
        assert set(tab) <= set(getattr(mod, pytree)._fields)
