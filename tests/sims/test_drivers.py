"""Driver configs are validated when built (every numeric field against sims.drivers.DRIVER_RANGES), and
JAX transforms that rebuild a driver from leaves (jit, vmap, grad, tree.map) still work."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims import drivers
from sims.drivers import (
    DRIVER_RANGES,
    CircleFollower,
    Constant,
    LaneChangeDriver,
    LapFollower,
    OpenLoop,
    SineSteer,
    StepSteer,
    StraightBraking,
)
from sims.run.fleet import broadcast
from sims.vehicles.params import Controls

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CLASSES = (Constant, StepSteer, SineSteer, CircleFollower, StraightBraking, LaneChangeDriver)
#: every (class, numeric field) pair; OpenLoop's controls_seq is tested on its own
PAIRS = [(c, f.name) for c in CLASSES for f in dataclasses.fields(c)]


def test_every_driver_field_has_a_range():
    for cls in (*CLASSES, OpenLoop, LapFollower):
        for f in dataclasses.fields(cls):
            assert f.name in ("controls_seq", "path") or f.name in DRIVER_RANGES, (cls.__name__, f.name)


@pytest.mark.parametrize(
    "cls, field, value, text",
    [
        (Constant, "steer", math.nan, "steer = nan is not finite"),
        (Constant, "throttle", 5.0, "throttle = 5.0 is outside the allowed range [0.0, 1.0]"),
        (Constant, "brake", -1.0, "brake = -1.0 is outside the allowed range [0.0, 1.0]"),
        (StraightBraking, "abs_on", 2.0, "abs_on = 2.0 is outside the allowed range [0.0, 1.0]"),
        (StraightBraking, "t_brake", -1.0, "t_brake = -1.0 is outside the allowed range [0.0, inf)"),
        (StraightBraking, "bandwidth", 0.0, "bandwidth = 0.0 is outside the allowed range (0.0, 1000.0]"),
        (StepSteer, "amplitude", math.nan, "amplitude = nan is not finite"),
        (StepSteer, "ramp", -0.1, "ramp = -0.1 is outside"),
        (StepSteer, "target_speed", 1e39, "target_speed = 1e+39 is not finite"),  # inf once stored in float32
        (SineSteer, "frequency", math.inf, "frequency = inf is not finite"),
        (CircleFollower, "zeta", -0.5, "zeta = -0.5 is outside"),
        (LaneChangeDriver, "length", 0.0, "length = 0.0 is outside the allowed range (0.0, 100000.0]"),
    ],
)
def test_bad_field_is_refused_naming_driver_field_value_and_range(cls, field, value, text):
    with pytest.raises(ValidationError) as e:
        cls(**{field: value})
    assert f"{cls.__name__}: {text}" in str(e.value)


def test_zero_radius_and_bad_open_loop_sequence():
    with pytest.raises(ValidationError, match="CircleFollower: radius = 0.0 is not allowed"):
        CircleFollower(radius=0.0)
    CircleFollower(radius=-40.0, center_y=-40.0)  # clockwise: allowed
    ok = Controls(jnp.zeros(3), jnp.full(3, 0.5), jnp.zeros(3))
    OpenLoop(ok, 0.01)
    with pytest.raises(
        ValidationError, match=r"OpenLoop: controls_seq.throttle = 2.0 is outside the allowed range \[0.0, 1.0\]"
    ):
        OpenLoop(ok._replace(throttle=jnp.array([0.0, 2.0, 0.0])), 0.01)
    with pytest.raises(ValidationError, match="OpenLoop: controls_seq.steer = nan is not finite"):
        OpenLoop(ok._replace(steer=jnp.array([0.0, jnp.nan, 0.0])), 0.01)
    with pytest.raises(ValidationError, match=r"OpenLoop: dt = 0.0 is outside the allowed range \(0.0, inf\)"):
        OpenLoop(ok, 0.0)
    with pytest.raises(ValidationError, match="Constant: steer = 'x' is not a number"):
        Constant(steer="x")


def test_per_vehicle_arrays_are_checked_element_by_element():
    drv = broadcast(StraightBraking(), 3)
    dataclasses.replace(drv, abs_on=np.array([0.0, 1.0, 0.5]))
    with pytest.raises(ValidationError, match="StraightBraking: abs_on = 3.0"):
        dataclasses.replace(drv, abs_on=np.array([0.0, 1.0, 3.0]))


def test_jax_transforms_rebuild_drivers_without_validating_their_leaves():
    drv = dataclasses.replace(broadcast(StraightBraking(), 3), abs_on=jnp.array([0.0, 1.0, 1.0]))
    f = lambda d: d.abs_on * d.brake - d.t_brake  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(f)(drv), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(drv), [0.0, 1.0, 1.0])
    # a gradient is a driver whose leaves are cotangents: here -1 for t_brake, outside its range
    g = jax.grad(lambda d: jnp.sum(f(d)))(drv)
    assert isinstance(g, StraightBraking)
    np.testing.assert_array_equal(g.t_brake, [-1.0, -1.0, -1.0])
    np.testing.assert_array_equal(g.brake, [0.0, 1.0, 1.0])
    assert jax.tree.map(lambda x: None, Constant()).steer is None  # axis specs / None leaves
    assert jax.eval_shape(lambda d: d, Constant()).steer.shape == ()
    # built inside jit with traced values: nothing to check until run time, and it runs
    out = jax.jit(lambda s: Constant(steer=s).controls(0.0, None, None).steer)(jnp.float32(0.1))
    assert float(out) == pytest.approx(0.1)
    keys = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(Constant())[0]]
    assert keys == [".steer", ".throttle", ".brake"]


def _in_range(rng):
    lo, hi, lo_incl, hi_incl = rng
    lo, hi = max(lo, -1e30), min(hi, 1e30)
    return st.floats(lo, hi, exclude_min=not lo_incl, exclude_max=not hi_incl, allow_nan=False)


def _out_of_range(rng):
    lo, hi, lo_incl, hi_incl = rng
    bad = [st.just(math.nan), st.just(math.inf), st.just(-math.inf), st.just(1e39), st.just(-1e39)]
    if math.isfinite(lo):
        bad.append(st.floats(max_value=lo, exclude_max=lo_incl, allow_nan=False, allow_infinity=False, min_value=-1e30))
    if math.isfinite(hi):
        bad.append(st.floats(min_value=hi, exclude_min=hi_incl, allow_nan=False, allow_infinity=False, max_value=1e30))
    return st.one_of(*bad)


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_property_in_range_values_build(data):
    cls, field = data.draw(st.sampled_from(PAIRS))
    value = data.draw(_in_range(DRIVER_RANGES[field]))
    if field == "radius" and value == 0.0:
        value = 1.0
    drv = cls(**{field: value})
    assert getattr(drv, field) == value


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_property_out_of_range_values_are_refused_naming_the_field(data):
    cls, field = data.draw(st.sampled_from(PAIRS))
    value = data.draw(_out_of_range(DRIVER_RANGES[field]))
    with pytest.raises(ValidationError) as e:
        cls(**{field: value})
    assert f"{cls.__name__}: {field} = " in str(e.value)
    assert "allowed" in str(e.value)


def test_module_documents_the_table():
    assert "DRIVER_RANGES" in (drivers.validate_driver.__doc__ or "")


def test_one_driver_field_name_one_quantity():
    """Issue 35 item 4: a field name means one quantity in every driver, with one range and one unit;
    LapFollower's speed feedback (an acceleration per speed error, [1/s]) is ``accel_gain``, not the pedal per
    m/s ``speed_gain`` of PathFollower (it no longer inherits PathFollower's unused gains either)."""
    import dataclasses

    import sims.drivers as D

    classes = [c for c in vars(D).values() if isinstance(c, type) and issubclass(c, D.Driver) and c is not D.Driver]
    fields = {f.name for c in classes for f in dataclasses.fields(c)}
    # every scalar field of every driver has its one range and unit (DRIVER_FIELDS); the rest are pytrees
    assert fields - set(D.DRIVER_FIELDS) == {"path", "controls_seq"}, fields - set(D.DRIVER_FIELDS)
    DRIVER_UNITS, PathFollower = D.DRIVER_UNITS, D.PathFollower
    lap = {f.name for f in dataclasses.fields(LapFollower)}
    assert "accel_gain" in lap and not lap & {"speed_gain", "k_y", "k_psi", "x_preview", "target_speed"}
    assert not issubclass(LapFollower, PathFollower)
    assert DRIVER_UNITS["speed_gain"] == "1/(m/s)" and DRIVER_UNITS["accel_gain"] == "1/s"
