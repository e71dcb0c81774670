"""Road-geometry scenarios (issue 14 item 4): downhill and split-mu braking, banked skidpad."""

import math

import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from sims.run.fleet import broadcast
from sims.scenarios.braking import brake_test, downhill_brake_test, sliding_friction, split_mu_brake_test
from sims.scenarios.skidpad import circle_run
from sims.vehicles import presets

GRADE = math.atan(0.1)


def test_4_downhill_locked_braking_distance_scales_as_mu_over_mu_cos_minus_sin():
    """Locked wheels from 20 m/s on dry asphalt: flat a = mu g, downhill a = g (mu cos - sin), so the
    distance ratio is mu / (mu cos theta - sin theta) (mu the tire's sliding friction; aero drag and
    rolling resistance small at this speed) within 3 %."""
    p = presets.get("hatchback")
    fleet = p._replace(chassis=broadcast(p.chassis, 1))
    kw = dict(speed=20.0, yaw_rate0=0.0, max_time=10.0, chunk_steps=200)
    flat, _, _ = brake_test(fleet, 0.0, **kw)
    down, _, _ = downhill_brake_test(fleet, 0.0, GRADE, **kw)
    mu = sliding_friction(p, "asphalt_dry", speed=10.0)
    ratio = mu / (mu * math.cos(GRADE) - math.sin(GRADE))
    assert float(down.distance[0] / flat.distance[0]) == pytest.approx(ratio, rel=0.03)


def test_4_split_mu_braking_stops_between_the_uniform_surfaces_and_yaws_to_the_grippy_side():
    p = presets.get("hatchback")
    fleet = p._replace(chassis=broadcast(p.chassis, 1))
    kw = dict(speed=20.0, yaw_rate0=0.0, max_time=30.0, chunk_steps=200)
    res, _, run = split_mu_brake_test(fleet, 1.0, "asphalt_dry", "ice", **kw)
    dry, _, _ = brake_test(fleet, 1.0, **kw)
    assert np.isfinite(res.distance[0]) and res.distance[0] > dry.distance[0]
    assert res.max_yaw[0] > 0.01  # the braking forces differ left / right: the car turns


def test_4_banked_circle_at_the_balance_speed_needs_no_side_force_so_steer_is_kinematic():
    """Bank phi towards the centre, speed sqrt(g R tan phi): tire side forces vanish, steer = L / R."""
    p = presets.get("hatchback")
    bank, R = 0.15, 40.0
    v = math.sqrt(GRAVITY * R * math.tan(bank))
    banked = p._replace(chassis=broadcast(p.chassis, 1), contact=p.contact._replace(bank=np.float32(-bank)))
    pts = circle_run(banked, [v], radius=R, duration=12.0, settle=8.0)
    L = float(p.chassis.wheelbase)
    assert pts.holds[0]
    assert float(pts.steer[0]) == pytest.approx(L / R, rel=0.05)
