"""Every Chassis field is validated by make_chassis: NaN and 1e39 (inf once stored in float32) refused with
the field's name, negative masses / inertias / lengths refused, tire_sides in {-1, 0, +1}; in-range values
build (property-based, hypothesis)."""

import math

import jax
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.vehicles import make_chassis
from sims.vehicles.params import CHASSIS_RANGES, TIRE_SCALE_RANGE, TireScale

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FIELDS = sorted(CHASSIS_RANGES)
SCALES = [f"tire_scale_{axle}.{f}" for axle in ("front", "rear") for f in TireScale._fields]


def _build(name, value):
    """make_chassis with one field (or one tire-scale entry, ``tire_scale_front.mu_x``) set to ``value``."""
    if "." in name:
        arg, f = name.split(".")
        return make_chassis(**{arg: TireScale()._replace(**{f: value})})
    return make_chassis(**{name: value})


@pytest.mark.parametrize("name", FIELDS + SCALES)
@pytest.mark.parametrize("value", [math.nan, 1e39, -1e39])
def test_nan_and_float32_overflow_are_refused_naming_the_field(name, value):
    with pytest.raises(ValidationError) as e:
        _build(name, value)
    assert f"Chassis: {name} = " in str(e.value) and "not finite" in str(e.value)


NEGATIVE = [
    "mass",
    "yaw_inertia",
    "wheel_inertia_front",
    "wheel_inertia_rear",
    "cg_to_front",
    "cg_to_rear",
    "cg_height",
    "track_front",
    "track_rear",
    "wheel_radius_front",
    "wheel_radius_rear",
]


@pytest.mark.parametrize("name", NEGATIVE)
def test_negative_mass_inertia_and_length_refused(name):
    with pytest.raises(ValidationError, match=rf"Chassis: {name} = -0.5 is outside the allowed range"):
        make_chassis(**{name: -0.5})


@pytest.mark.parametrize(
    "sides, bad", [((1, -1, 1, 2), "2.0"), ((1, -1, 0.5, -1), "0.5"), ((1, -1, 1, math.nan), "nan")]
)
def test_tire_sides_must_be_minus_one_zero_or_one(sides, bad):
    with pytest.raises(ValidationError, match=rf"Chassis: tire_sides = {bad} is not one of -1.0, 0.0, 1.0"):
        make_chassis(tire_sides=sides)
    np.testing.assert_array_equal(make_chassis(tire_sides=(0, 0, -1, 1)).tire_sides, [0, 0, -1, 1])


def test_float32_chassis_under_x64_still_refuses_what_float32_cannot_hold():
    with jax.enable_x64(True):
        assert float(make_chassis(mass=1500.0, dtype=np.float64).mass) == 1500.0
        with pytest.raises(ValidationError, match="max_power = 1e"):
            make_chassis(max_power=1e39, dtype=np.float32)  # would be stored as inf
        assert float(make_chassis(max_power=1e39, dtype=np.float64).max_power) == 1e39


def _range(name):
    return TIRE_SCALE_RANGE if "." in name else CHASSIS_RANGES[name]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_property_in_range_values_build(data):
    name = data.draw(st.sampled_from(FIELDS + SCALES))
    lo, hi, lo_incl, hi_incl = _range(name)
    value = data.draw(st.floats(lo, min(hi, 1e30), exclude_min=not lo_incl, exclude_max=not hi_incl and hi <= 1e30))
    ch = _build(name, value)
    head, _, tail = name.partition(".")
    stored = getattr(getattr(ch, head), tail) if tail else getattr(ch, head)
    assert np.isfinite(stored) and float(stored) == pytest.approx(value, rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_property_out_of_range_values_are_refused_naming_the_field(data):
    name = data.draw(st.sampled_from(FIELDS + SCALES))
    lo, hi, lo_incl, hi_incl = _range(name)
    bad = [
        st.sampled_from([math.nan, -math.inf, 1e39, -1e39]),
        st.floats(max_value=lo, exclude_max=lo_incl, min_value=-1e30),
    ]
    if math.isfinite(hi):
        bad += [st.just(math.inf), st.floats(min_value=hi, exclude_min=hi_incl, max_value=1e30)]
    value = data.draw(st.one_of(*bad))
    with pytest.raises(ValidationError) as e:
        _build(name, value)
    assert f"Chassis: {name} = " in str(e.value) and "allowed range" in str(e.value)
