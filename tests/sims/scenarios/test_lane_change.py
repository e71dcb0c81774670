"""ISO 3888-1 / -2: the cone gates against the standards' formulas, the cone-hit measure, the nominal car's pass."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.run.fleet import make_fleet
from sims.scenarios import catalog
from sims.scenarios.base import run_scenario
from sims.scenarios.lane_change import (
    CONE_RADIUS,
    GateReducer,
    cones,
    iso3888_1_gates,
    iso3888_2_gates,
    reference_path,
)
from sims.vehicles import presets
from sims.vehicles.params import VehicleState, make_chassis
from tests.sims.conftest import FAST


def _standard_lanes(w, part):
    """The lanes written out from the standards' tables for a vehicle of width w: (x0, x1, right, left)."""
    if part == 1:  # ISO 3888-1: 15 | 30 | 25 | 25 | 15 + 15; offset 3.5 m between the right boundaries
        a, b, c = 1.1 * w + 0.25, 1.2 * w + 0.25, 1.3 * w + 0.25
        return [(0, 15, -a / 2, a / 2), (45, 70, -a / 2 + 3.5, -a / 2 + 3.5 + b), (95, 125, -a / 2, -a / 2 + c)]
    a, b, c = 1.1 * w + 0.25, w + 1.0, max(1.3 * w + 0.25, 3.0)  # ISO 3888-2: 12 | 13.5 | 11 | 12.5 | 12
    return [(0, 12, -a / 2, a / 2), (25.5, 36.5, a / 2 + 1.0, a / 2 + 1.0 + b), (49, 61, -a / 2, -a / 2 + c)]


@pytest.mark.parametrize("part, fn", [(1, iso3888_1_gates), (2, iso3888_2_gates)])
@pytest.mark.parametrize("w", [1.4, 1.8, 2.2])
def test_gates_follow_the_standards_formulas(part, fn, w):
    g = fn(w)
    want = np.array(_standard_lanes(w, part))
    np.testing.assert_allclose(np.stack([g.x0, g.x1, g.right, g.left], axis=1), want, atol=1e-5)
    # the cones: on every lane boundary, one base radius outside it, from the lane's start to its end
    lanes = (15.0, 25.0, 30.0) if part == 1 else (12.0, 11.0, 12.0)
    cx, cy = (np.asarray(a) for a in cones(g, lanes))
    for x0, x1, right, left in want:
        on = (cx >= x0 - 1e-6) & (cx <= x1 + 1e-6)
        ys = np.unique(np.round(cy[on], 5))
        np.testing.assert_allclose(ys, [right - CONE_RADIUS, left + CONE_RADIUS], atol=1e-5)
        assert {x0, x1} <= set(np.round(cx[on], 5)) and np.diff(np.unique(cx[on])).max() <= 5.0 + 1e-6


def test_reference_path_runs_through_the_lane_centres():
    g = iso3888_1_gates(1.8)
    p = reference_path(g, 125.0, reach=5.0)
    for x0, x1, right, left in _standard_lanes(1.8, 1):
        inside = (np.asarray(p.x) >= x0 + 5.0) & (np.asarray(p.x) <= x1 - 5.0)
        np.testing.assert_allclose(np.asarray(p.y)[inside], 0.5 * (right + left), atol=1e-5)


def _state(x, y, yaw=0.0):
    z = jnp.zeros(())
    return VehicleState(jnp.asarray(x), jnp.asarray(y), jnp.asarray(yaw), z + 20.0, z, z, jnp.zeros(4), z, z)


def test_cone_hit_is_the_body_rectangle_touching_a_cone_base():
    """A body 1.8 m wide, its front 0.93 + 1.03 m ahead of the CG: a cone whose base circle is 0.05 m clear of
    the body is not hit, one that overlaps it by 0.05 m is; the departure is the corner's distance beyond the line."""
    ch = make_chassis(body_width=1.8, overhang_front=0.93)  # front = a + overhang = 1.03 + 0.93 = 1.96 m
    params = presets.get("hatchback")._replace(chassis=ch)
    red = GateReducer(
        jnp.array([0.0, 45.0, 95.0]),
        jnp.array([15.0, 70.0, 125.0]),
        jnp.array([-1.0, 2.0, -1.0]),
        jnp.array([1.0, 4.0, 1.0]),
        jnp.array([10.0]),
        jnp.array([1.0 + CONE_RADIUS]),
    )
    acc0 = red.init(params, _state(0.0, 0.0))
    for clear, hit in ((0.05, False), (-0.05, True)):
        # the cone base spans y = 1.0 .. 1.3 at x = 10 (inside the body's length: CG at x = 9 m); the body's
        # left side at y_cg + 0.9 = 1.0 - clear
        new = _state(9.0, 1.0 - clear - 0.9)
        a = red.update(acc0, 0.0, new, None, None, new, params, 0.01)
        assert bool(a.hit[0]) == hit, clear
    # a corner 0.2 m beyond the left boundary inside lane 1 (CG at x = 5 m): departure 0.2 m
    new = _state(5.0, 1.0 - 0.9 + 0.2)
    a = red.update(acc0, 0.0, new, None, None, new, params, 0.01)
    assert float(a.departure) == pytest.approx(0.2, abs=1e-5)


def test_body_dimensions_are_validated_chassis_fields():
    for name in presets.PRESET_NAMES:
        ch = presets.get(name).chassis
        assert 1.0 < float(ch.body_width) < 2.1 and float(ch.body_length) > float(ch.wheelbase)
    assert float(presets.get("hatchback").chassis.body_length) == pytest.approx(4.26, abs=0.01)  # Golf VII: 4.255 m
    with pytest.raises(ValidationError, match="body_width"):
        make_chassis(body_width=0.0)
    with pytest.raises(ValidationError, match="overhang_rear"):
        make_chassis(overhang_rear=-0.1)


@pytest.fixture(scope="module")
def dlc():
    fleet = make_fleet(presets.get("hatchback"), 2)
    return run_scenario(
        "iso3888_1", fleet, {"speed": np.array([80.0, 100.0]) / 3.6}, compiler_options=FAST, chunk_steps=500
    )


def test_nominal_hatchback_passes_iso3888_1_at_80_kmh(dlc):
    m, stats = dlc
    assert m["passed"].tolist() == [1.0, 0.0]  # 80 km/h passes with the default driver; 100 km/h hits cones
    assert m["cone_hits"][0] == 0 and m["cone_hits"][1] > 0 and m["lane_departure"][1] > 0.0
    assert m["entry_speed"][0] == pytest.approx(80 / 3.6, abs=0.3)
    assert 4.0 < m["max_ay"][0] < 10.0  # a severe but feasible manoeuvre (0.4-1 g)
    assert stats.compile_s > 0.0 and stats.steps <= 2000  # stopped once both had left the track


def test_iso3888_2_throttle_off_at_60_kmh():
    fleet = make_fleet(presets.get("hatchback"), 1)
    sc = dataclasses.replace(catalog.get("iso3888_2"), run_out=10.0)
    m, _ = run_scenario(sc, fleet, compiler_options=FAST, chunk_steps=500)
    assert m["passed"][0] == 1.0 and m["entry_speed"][0] == pytest.approx(60 / 3.6, abs=0.3)
    assert m["exit_speed"][0] < m["entry_speed"][0] - 1.0  # the throttle is off after the entry
