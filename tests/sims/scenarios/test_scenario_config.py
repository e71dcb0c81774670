"""Scenario arguments (speeds, distances, durations, counts, dt) are validated before anything is built or
compiled: a ValidationError naming the function, the argument, the value and the allowed range."""

import math

import jax
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.run.fleet import broadcast
from sims.scenarios import braking, skidpad, step_steer
from sims.scenarios.config import SCENARIO_COUNTS, SCENARIO_RANGES, check_config
from sims.studies.braking import monte_carlo_study
from sims.vehicles import presets

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.fixture(scope="module")
def fleet():
    p = presets.get("hatchback")
    return p._replace(chassis=broadcast(p.chassis, 2))


def _entry_points(fleet):
    """name -> callable(**kw) of each validated scenario entry point (kw: the argument under test)."""
    return {
        "braking_run": lambda **kw: braking.braking_run(fleet, 1.0, **kw),
        "brake_test": lambda **kw: braking.brake_test(fleet, 1.0, **kw),
        "monte_carlo_study": lambda **kw: monte_carlo_study(kw.pop("n", 4), **kw),
        "circle_run": lambda **kw: skidpad.circle_run(fleet, kw.pop("speeds", [5.0, 6.0]), **kw),
        "skidpad": lambda **kw: skidpad.skidpad(presets.get("hatchback"), **kw),
        "step_steer": lambda **kw: step_steer.step_steer(fleet, **kw),
    }


#: (entry point, argument, bad value, expected text)
BAD = [
    ("braking_run", "speed", -1.0, "speed = -1.0 is outside the allowed range (0.0, 90.0]"),
    ("braking_run", "speed", math.nan, "speed = nan is not finite"),
    ("braking_run", "speed", np.array([20.0, 1e39]), "speed = 1e+39 is not finite"),
    ("braking_run", "yaw_rate0", math.inf, "yaw_rate0 = inf is not finite"),
    ("braking_run", "dt", 0.0, "dt = 0.0 is outside the allowed range (0.0, 1.0]"),
    ("braking_run", "substeps", 0, "substeps = 0 is outside the allowed range [1, 1000]"),
    ("braking_run", "chunk_steps", 2.5, "chunk_steps = 2.5 is not an integer"),
    ("brake_test", "max_time", -5.0, "max_time = -5.0 is outside"),
    ("brake_test", "reducer", braking.BrakingReducer(stop_speed=0.0), "BrakingReducer: stop_speed = 0.0 is outside"),
    ("braking_run", "reducer", braking.BrakingReducer(spin_angle=math.nan), "BrakingReducer: spin_angle = nan"),
    ("monte_carlo_study", "n", 0, "n = 0 is outside the allowed range [1, 100000000]"),
    ("monte_carlo_study", "abs_fraction", 1.5, "abs_fraction = 1.5 is outside the allowed range [0.0, 1.0]"),
    ("circle_run", "speeds", [5.0, math.nan], "speeds = nan is not finite"),
    ("circle_run", "radius", 0.0, "radius = 0.0 is outside the allowed range (0.0, 100000.0]"),
    ("circle_run", "duration", 5.0, "duration = 5 s leaves no measurement window (it must exceed 10 s)"),
    ("circle_run", "tolerance", 0.0, "tolerance = 0.0 is outside"),
    ("skidpad", "n_points", 0, "n_points = 0 is outside the allowed range [1, 1000000]"),
    ("skidpad", "ay_max", -3.0, "ay_max = -3.0 is outside"),
    ("step_steer", "speed", 0.0, "speed = 0.0 is outside the allowed range (0.0, 90.0]"),
    ("step_steer", "ramp", -0.1, "ramp = -0.1 is outside"),
    ("step_steer", "duration", 1.2, "duration = 1.2 s leaves no measurement window (it must exceed 1.6 s)"),
    ("step_steer", "ay_target", math.nan, "ay_target = nan is not finite"),
    ("step_steer", "dt", 2.0, "dt = 2.0 is outside the allowed range (0.0, 1.0]"),
]


@pytest.mark.parametrize("func, arg, value, text", BAD, ids=[f"{b[0]}-{b[1]}-{i}" for i, b in enumerate(BAD)])
def test_bad_argument_is_refused_before_running(fleet, func, arg, value, text):
    with pytest.raises(ValidationError) as e:
        _entry_points(fleet)[func](**{arg: value})
    assert (text if text.startswith("BrakingReducer") else f"{func}: {text}") in str(e.value)


def _in_range(rng):
    lo, hi, lo_incl, hi_incl = rng
    return st.floats(lo, hi, exclude_min=not lo_incl, exclude_max=not hi_incl, allow_nan=False)


def _out_of_range(rng):
    lo, hi, lo_incl, hi_incl = rng
    return st.one_of(
        st.sampled_from([math.nan, math.inf, -math.inf, 1e39, -1e39]),
        st.floats(max_value=lo, exclude_max=lo_incl, min_value=-1e30),
        st.floats(min_value=hi, exclude_min=hi_incl, max_value=1e30),
    )


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_property_in_range_arguments_pass(data):
    name = data.draw(st.sampled_from(sorted(SCENARIO_RANGES) + sorted(SCENARIO_COUNTS)))
    if name in SCENARIO_COUNTS:
        value = data.draw(st.integers(*SCENARIO_COUNTS[name]))
    else:
        value = data.draw(_in_range(SCENARIO_RANGES[name]))
    check_config("scenario", **{name: value})


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_property_out_of_range_arguments_are_refused_naming_the_argument(data):
    name = data.draw(st.sampled_from(sorted(SCENARIO_RANGES) + sorted(SCENARIO_COUNTS)))
    if name in SCENARIO_COUNTS:
        lo, hi = SCENARIO_COUNTS[name]
        value = data.draw(st.one_of(st.integers(max_value=lo - 1), st.integers(min_value=hi + 1), st.just(math.nan)))
    else:
        value = data.draw(_out_of_range(SCENARIO_RANGES[name]))
    with pytest.raises(ValidationError) as e:
        check_config("scenario", **{name: value})
    assert f"scenario: {name} = " in str(e.value)


def test_setup_cache_is_bounded_least_recently_used_out(monkeypatch):
    """Issue 35 item 4 (hidden global state): :func:`sims.scenarios.base.jitted_setup` keeps at most
    ``SETUP_CACHE_SIZE`` set-up programs (its keys hold the scenarios' data: it grew with every circuit); the
    least recently used goes first, a hit moves a program to the back."""
    import collections
    import dataclasses

    from sims.scenarios import base, catalog
    from sims.vehicles import presets

    monkeypatch.setattr(base, "SETUP_CACHE_SIZE", 2)
    monkeypatch.setattr(base, "_SETUPS", collections.OrderedDict())
    p = presets.get("hatchback", tire="simple")
    fleet = p._replace(chassis=broadcast(p.chassis, 1))
    a, b, c = (dataclasses.replace(catalog.get("braking"), dt=dt) for dt in (0.004, 0.005, 0.01))
    setups = []
    for sc in (a, b, a, c):  # a is used again before c arrives: b is the least recently used
        setups.append(base.jitted_setup(sc, fleet, base.resolve_settings(sc, fleet, {})))
    held = [k[0] for k in base._SETUPS]
    assert held == [a, c], held
    assert [s.dt for s in setups] == [0.004, 0.005, 0.004, 0.01]  # each program is its own scenario's
