"""Road geometry along the path (issue 14 item 5): per-wheel surfaces and grade / bank by position.

Hand references: the road's gravity turned into the car's heading (numpy float64), the contact positions
of the wheels, and each surface's friction bound (:func:`sims.scenarios.braking.friction_bound`).
"""

import math

import jax
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import PRESETS as SURFACES
from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError
from sims.drivers import StraightBraking
from sims.run.rollout import rollout
from sims.scenarios.braking import friction_bound
from sims.roads import road
from sims.vehicles import DOUBLE_TRACK, core, presets
from sims.vehicles.params import Controls, validate_params
from tests.sims.conftest import FAST

DRY, ICE = surface_id("asphalt_dry"), surface_id("ice")


def test_surface_and_attitude_lookup_by_hand():
    r = road.make_road(
        [0.0, 10.0, 20.0],
        grade=[0.0, 0.1, 0.1],
        bank=[0.0, 0.0, -0.2],
        surface_left=[1, 2, 3],
        surface_right=[4, 5, 6],
        split_y=0.5,
    )
    ids = np.asarray(
        road.surface_at(r, np.array([-5.0, 0.0, 9.9, 10.0, 25.0, 15.0]), np.array([1.0, 1.0, 0.6, 0.4, 0.0, 0.5]))
    )
    np.testing.assert_array_equal(ids, [1, 1, 1, 5, 6, 2])
    # grade 0.1, bank -0.1 at x = 15 (linear); a car heading psi sees gravity Rot(-psi) (g_X, g_Y)
    for psi in (0.0, 0.7, -2.0):
        th, ph = (float(v) for v in road.attitude(r, 15.0, psi))
        gx_r, gy_r, gn = (
            -GRAVITY * math.sin(0.1),
            -GRAVITY * math.cos(0.1) * math.sin(-0.1),
            GRAVITY * math.cos(0.1) * math.cos(-0.1),
        )
        want = (gx_r * math.cos(psi) + gy_r * math.sin(psi), -gx_r * math.sin(psi) + gy_r * math.cos(psi), gn)
        c = presets.get("hatchback").contact._replace(grade=np.float32(th), bank=np.float32(ph))
        np.testing.assert_allclose([float(v) for v in core.gravity(c)], want, atol=2e-5)


def test_bad_roads_are_refused_with_the_field_named():
    with pytest.raises(ValidationError, match="station"):
        road.make_road([0.0, 0.0])
    with pytest.raises(ValidationError, match="grade"):
        road.make_road([0.0, 1.0], grade=[0.0, 1.0])
    with pytest.raises(ValidationError, match="surface_left"):
        road.make_road([0.0, 1.0], surface_left=[0, -1])
    p = presets.get("hatchback")
    with pytest.raises(ValueError, match="surface_right id 40"):
        validate_params(p._replace(road=road.make_road([0.0], surface_right=40)))


def test_a_uniform_road_equals_the_constant_chassis_fields():
    p = presets.get("hatchback", grade=0.05, bank=0.1, surface_ids=ICE)
    on_road = presets.get("hatchback")._replace(road=road.make_road([0.0], grade=0.05, bank=0.1, surface_left=ICE))
    s = DOUBLE_TRACK.init_state(p, 15.0, yaw_rate=0.1)
    u = Controls(0.05, 0.0, 0.3)
    rates = jax.jit(DOUBLE_TRACK.rates)
    a, _ = rates(p, s, u, 0.005)
    b, _ = rates(on_road, s, u, 0.005)
    for x, y in zip(a, b, strict=True):
        if x is None and y is None:  # the driveline state's rate (no driveline)
            continue
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def runs():
    """ABS braking from 20 m/s: (1) dry -> ice at station 15 m; (2) ice under the left wheels from 10 to
    30 m.  Both roads have three stations, so one compiled rollout serves both."""
    p = presets.get("hatchback")
    change = road.make_road([-1e4, 15.0, 1e4], surface_left=[DRY, ICE, ICE])
    split = road.split_patch(10.0, 30.0, "ice", "asphalt_dry", "left")
    s0 = DOUBLE_TRACK.init_state(p, 20.0)
    out = {}
    for name, r in (("change", change), ("split", split)):
        res = rollout(
            p._replace(road=r), s0, StraightBraking(abs_on=1.0), 700, dt=0.005, record="all", compiler_options=FAST
        )
        out[name] = {
            k: np.asarray(v)
            for k, v in (
                ("t", res.trajectory["t"]),
                ("x", res.trajectory["state"].x),
                ("vx", res.trajectory["state"].vx),
                ("yaw", res.trajectory["state"].yaw),
                ("grip", res.trajectory["telemetry"].grip),
                ("ax", res.trajectory["telemetry"].ax),
            )
        }
    return p, out


def test_braking_onto_ice_front_wheels_first_and_deceleration_follows_each_surface(runs):
    """The front wheels meet the ice when the CG is a = 1.03 m short of the station, the rear ones
    b = 1.61 m past it (telemetry grip 1 -> 0.12 per wheel); the ABS deceleration is each surface's friction
    bound mu_peak g within 4 % (measured +1.6 % dry, +3.2 % ice: rolling resistance and drag help)."""
    p, out = runs
    r = out["change"]
    ch = p.chassis
    ice = r["grip"] < 0.5
    first = [int(np.argmax(ice[:, i])) for i in range(4)]
    assert first[0] == first[1] and first[2] == first[3] and first[0] < first[2]
    assert r["x"][first[0]] == pytest.approx(15.0 - float(ch.cg_to_front), abs=0.15)
    assert r["x"][first[2]] == pytest.approx(15.0 + float(ch.cg_to_rear), abs=0.15)
    np.testing.assert_allclose(r["grip"][first[2] + 1], SURFACES["ice"].grip)
    t = r["t"]
    dry = (t > 0.3) & (t < t[first[0]] - 0.05)
    on_ice = t > t[first[2]] + 0.5
    mu_dry = friction_bound(p, "asphalt_dry", float(r["vx"][dry].mean()))[1]
    mu_ice = friction_bound(p, "ice", float(r["vx"][on_ice].mean()))[1]
    assert -r["ax"][dry].mean() == pytest.approx(mu_dry * GRAVITY, rel=0.04)
    assert -r["ax"][on_ice].mean() == pytest.approx(mu_ice * GRAVITY, rel=0.04)


def test_split_mu_patch_along_part_of_the_road(runs):
    """Ice under the left wheels only between stations 10 and 30 m: the left wheels' grip reads 0.12 there
    (front first), the right wheels' stays 1; the car yaws to the grippy (right) side, and while both left
    wheels are on the patch the deceleration lies between the uniform-ice and uniform-dry bounds."""
    p, out = runs
    r = out["split"]
    ice = r["grip"] < 0.5
    assert not ice[:, 1].any() and not ice[:, 3].any()
    fl, rl = int(np.argmax(ice[:, 0])), int(np.argmax(ice[:, 2]))
    assert 0 < fl < rl
    assert r["x"][fl] == pytest.approx(10.0 - float(p.chassis.cg_to_front), abs=0.15)
    both = ice[:, 0] & ice[:, 2]
    assert both.sum() > 20
    assert r["yaw"][both][-1] < -0.01  # turned right, towards the dry side
    v = float(r["vx"][both].mean())
    a = -r["ax"][both].mean()
    assert friction_bound(p, "ice", v)[1] * GRAVITY < a < friction_bound(p, "asphalt_dry", v)[1] * GRAVITY
