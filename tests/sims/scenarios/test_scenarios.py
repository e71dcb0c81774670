"""Scenarios: the braking table (a study per preset, the former fleet run), the locked-wheel reference, skidpad
(its table a study per preset and surface, the same sweep) and step steer (its table a study per preset)."""

import numpy as np
import pytest

from jaxtire.surfaces import PRESETS as SURFACE_PRESETS
from jaxtire.surfaces import surface_id
from sims.run.fleet import broadcast
from sims.scenarios import braking, skidpad, step_steer
from sims.studies import braking as braking_study
from sims.studies import skidpad as skidpad_study
from sims.studies import step_steer as step_steer_study
from sims.vehicles import presets
from tests.sims.conftest import FAST


@pytest.fixture(scope="module")
def table():
    return braking_study.braking_table(run={"compiler_options": FAST})


def test_braking_table_has_published_shape(table):
    cell = {(r["preset"], r["surface"], r["mode"]): r for r in table}
    assert len(table) == 4 * 5 * 2
    assert cell["hatchback", "asphalt_dry", "abs"]["distance"] < 50.0
    assert cell["hatchback", "asphalt_dry", "locked"]["distance"] < 60.0
    for mode in ("abs", "locked"):
        assert cell["hatchback", "ice", mode]["distance"] > 250.0  # several hundred metres
    for name in ("hatchback", "sports_car", "race_car"):
        dry = {m: cell[name, "asphalt_dry", m]["distance"] for m in ("abs", "locked")}
        for s in braking.SURFACES:
            g = SURFACE_PRESETS[s].grip
            for m in ("abs", "locked"):
                r = cell[name, s, m]
                assert r["stopped"] and not r["spun"], (name, s, m)
                ratio = r["distance"] / dry[m]
                assert 0.6 / g < ratio < 1.5 / g, (name, s, m, ratio)  # ~ 1 / grip
            assert cell[name, s, "abs"]["distance"] < cell[name, s, "locked"]["distance"]
    # the rear-braked kart swaps ends on slippery surfaces with locked wheels; its ABS gives up rear slip
    # for side grip as the kart starts to yaw, so it stops straight on every surface (issue 14 item 7)
    for s in ("asphalt_wet", "snow", "ice"):
        assert cell["kart", s, "locked"]["spun"]
    for s in braking.SURFACES:
        assert cell["kart", s, "abs"]["stopped"] and not cell["kart", s, "abs"]["spun"], s
    text = braking.format_table(table)
    assert "spins" in text and "| hatchback |" in text


def test_braking_table_study_is_the_former_fleet_run(table):
    """The table's study (grid ABS x surface, one run a cell) gives the distances of the former table's fleet
    (the preset broadcast over ``2 len(surfaces)`` vehicles, locked then ABS, braked by ``brake_test``): the same
    vehicles in another compiled program, so equal to float32 round-off, which the ABS's slip cycling amplifies
    over a 20 s stop on ice (to ~4e-4 relative here); the same rows in the same order, the same spins."""
    base = presets.get("sports_car")
    ids = [surface_id(s) for s in braking.SURFACES]
    n = 2 * len(ids)
    sid = np.broadcast_to(np.asarray(ids * 2, np.int32)[:, None], (n, 4))
    contact = broadcast(base.contact, n)._replace(surface_ids=sid)
    fleet = base._replace(chassis=broadcast(base.chassis, n), contact=contact)
    res, _, _ = braking.brake_test(fleet, np.repeat([0.0, 1.0], len(ids)), compiler_options=FAST)
    rows = [r for r in table if r["preset"] == "sports_car"]
    assert [(r["mode"], r["surface"]) for r in rows] == [(m, s) for m in ("locked", "abs") for s in braking.SURFACES]
    got, want = np.asarray([r["distance"] for r in rows]), np.asarray(res.distance, np.float64)
    locked = np.arange(n) < len(ids)
    np.testing.assert_allclose(got[locked], want[locked], rtol=1e-5)
    np.testing.assert_allclose(got[~locked], want[~locked], rtol=2e-3)
    np.testing.assert_array_equal([r["spun"] for r in rows], np.asarray(res.spun))


def test_locked_wheel_stop_is_within_10_percent_of_v2_over_2_mu_g():
    rows = braking_study.braking_table(
        ("hatchback", "sports_car"), chassis={"drag_area": 0.0, "lift_area": 0.0}, run={"compiler_options": FAST}
    )
    for r in rows:
        if r["mode"] == "locked":
            assert r["distance"] == pytest.approx(r["reference"], rel=0.10), r
    # the reference itself: sliding friction of the tire, from jaxtire, below the peak
    p = presets.get("hatchback")
    mu = braking.sliding_friction(p, "asphalt_dry")
    assert 0.6 < mu < 0.9


def test_skidpad_limit_understeer_and_yaw_rate():
    dry = skidpad.skidpad(presets.get("hatchback"), compiler_options=FAST)
    assert 6.0 < dry.ay_limit < 10.0  # 0.6 - 1.0 g
    assert 0.0 < dry.understeer_deg_per_g < 6.0
    pts = dry.points
    ok = pts.holds
    np.testing.assert_allclose(pts.yaw_rate[ok], pts.speed[ok] / 40.0, rtol=0.01)  # r = V / R
    snow = skidpad.skidpad(presets.get("hatchback", surface_ids=8), compiler_options=FAST)
    assert snow.ay_limit < 0.45 * dry.ay_limit
    # the CLI's skidpad table is a study of the catalogue's Skidpad on the same a_y grid: the same sweep (the
    # limit to the bit here, the fitted gradient to float32 round-off: the speeds are rounded in another order)
    saved = []
    run = {"compiler_options": FAST, "on_study": saved.append}
    (row,) = skidpad_study.skidpad_table(("hatchback",), ("asphalt_dry",), run=run)
    assert row["ay_limit"] == pytest.approx(dry.ay_limit, rel=1e-6)
    assert row["understeer_deg_per_g"] == pytest.approx(dry.understeer_deg_per_g, rel=1e-4)
    assert saved[0].scenario == "skidpad" and len(saved[0].vary[0].values) == len(dry.points.ay) == 24
    text = skidpad.format_table(
        [
            dict(
                preset="hatchback",
                surface="asphalt_dry",
                ay_limit=dry.ay_limit,
                ay_limit_g=dry.ay_limit / 9.81,
                understeer_deg_per_g=dry.understeer_deg_per_g,
            )
        ]
    )
    assert "understeer" in text


def test_step_steer_response():
    """The CLI's step-steer table, a study per preset (the catalogue's step steer, calibrated): the amplitude's
    calibration run brings a_y to the 4 m/s^2 target, ISO 7401 response times of a few tenths of a second."""
    saved = []
    rows = step_steer_study.step_steer_table(("hatchback", "race_car"), run={"compiler_options": FAST, "on_study": saved.append})
    assert [st.options["calibrate"] for st in saved] == [True, True]
    for r in rows:
        assert r["ay_ss"] == pytest.approx(4.0, rel=0.1)
        assert 0.05 < r["response_time"] < 0.6
        assert -0.01 <= r["overshoot"] < 0.5
    assert "response time" in step_steer.format_table(rows)


def test_braking_reducer_gradient_finite_at_standstill():
    """The distance integral uses a safe norm: at standstill its gradient is 0, not NaN; while
    moving it is the trapezoid's dt/2 * v/|v| per end point."""
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp

    class S(NamedTuple):
        vx: jnp.ndarray
        vy: jnp.ndarray
        yaw: jnp.ndarray

    red = braking.BrakingReducer()
    dt = 0.01

    def dist(vx, vy):
        s = S(vx, vy, jnp.zeros(()))
        acc = red.init(None, s)
        return red.update(acc, 0.0, s, None, None, S(vx * 0.5, vy * 0.5, jnp.zeros(())), None, dt).distance

    g = jax.grad(dist, argnums=(0, 1))(jnp.float32(0.0), jnp.float32(0.0))
    assert all(np.isfinite(float(x)) and float(x) == 0.0 for x in g)
    g = jax.grad(dist, argnums=(0, 1))(jnp.float32(3.0), jnp.float32(4.0))
    # d/dvx of dt/2 (|v| + |v|/2) = dt/2 * 1.5 * vx/|v|
    np.testing.assert_allclose([float(g[0]), float(g[1])], [0.75 * dt * 0.6, 0.75 * dt * 0.8], rtol=1e-5)
