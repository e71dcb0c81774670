"""The sine with dwell per FMVSS 126 / UN R140 (issue 38 item 2), checked against the regulation's definitions
worked here in numpy on recorded runs of the same hatchback:

* ``A``: the slowly increasing steer (S7.6: 80 km/h held, handwheel at 13.5 deg/s, the least-squares line of
  steer against lateral acceleration over 0.1-0.375 g, read at 0.3 g) equals the scenario's own within 2 %;
  the earlier linear-bicycle rule was 10-20 % smaller (a milder test);
* BOS at 5 deg of handwheel, the lateral displacement 1.07 s after it (S5.2.3);
* the first local peak of the yaw rate after the steer changes sign (S5.2.1) and the ratios at 1.00 / 1.75 s
  after the completion of steer.
"""

import dataclasses
import math

import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from sims.drivers import SineWithDwell, SlowlyIncreasingSteer
from sims.run.fleet import make_fleet
from sims.run.rollout import rollout
from sims.scenarios import catalog
from sims.scenarios.base import run_scenario
from sims.scenarios.sine_dwell import RULES, bicycle_steer
from sims.vehicles import get_model, presets
from tests.sims.conftest import FAST

V = 80.0 / 3.6
RATIO = 16.0
DT = 0.005


@pytest.fixture(scope="module")
def car():
    return presets.get("hatchback")


@pytest.fixture(scope="module")
def scenario_run(car):
    sc = catalog.get("sine_with_dwell")
    m, _ = run_scenario(sc, make_fleet(car, 1), compiler_options=FAST)
    return sc, {k: float(v[0]) for k, v in m.items()}


def _sis_by_hand(car):
    """S7.6 in numpy on a recorded run: the road-wheel ramp 13.5 deg/s / 16 from 0.5 s at 80 km/h held."""
    m = get_model("double_track")
    drv = SlowlyIncreasingSteer(target_speed=V, rate=math.radians(13.5) / RATIO, t_start=0.5)
    rec = lambda t, s, c, tel: (c.steer, tel.ay, s.vx)  # noqa: E731
    res = rollout(car, m.init_state(car, V), drv, int(6.0 / DT), dt=DT, model=m, record=rec, compiler_options=FAST)
    steer, ay, vx = (np.asarray(a, np.float64) for a in res.trajectory)
    band = (ay >= 0.1 * GRAVITY) & (ay <= 0.375 * GRAVITY) & (steer > 0)
    assert band.sum() > 50  # ~1 s of samples in the band
    assert np.all(np.abs(vx[band] - V) <= 2.0 / 3.6)  # the regulation's 80 +- 2 km/h
    slope, icpt = np.polyfit(ay[band], steer[band], 1)
    return slope * 0.3 * GRAVITY + icpt


def test_amplitude_is_the_regulations_sis_and_the_bicycle_rule_was_milder(car, scenario_run):
    _, m = scenario_run
    a = _sis_by_hand(car)
    assert m["sis_steer"] == pytest.approx(a, rel=0.02)
    ratio = float(bicycle_steer(car, V)) / a
    assert 0.80 < ratio < 0.90, ratio  # issue 38: 13 % too small for the hatchback


def test_bos_first_peak_and_ratios_match_a_recorded_run(car, scenario_run):
    sc, m = scenario_run
    a = m["sis_steer"]
    amp = 6.5 * a
    drv = SineWithDwell(amplitude=amp, frequency=sc.frequency, dwell=sc.dwell, t_start=sc.t_start)
    mod = get_model("double_track")
    rec = lambda t, s, c, tel: (s.yaw_rate, s.y, c.steer)  # noqa: E731
    n = int(sc.max_time / DT)
    res = rollout(car, mod.init_state(car, V), drv, n, dt=DT, model=mod, record=rec, compiler_options=FAST)
    r, y, steer = (np.asarray(v, np.float64) for v in res.trajectory)
    t = np.arange(n) * DT  # entry k: the state at the start of step k, the controls over it
    # BOS: the handwheel (ratio x road wheel) first at 5 deg
    t_bos = sc.t_start + math.asin(math.radians(5.0) / RATIO / amp) / (2 * math.pi * sc.frequency)
    hw = np.degrees(np.asarray(steer) * RATIO)
    i = int(np.argmax(hw >= 5.0))
    assert i * DT == pytest.approx(t_bos, abs=DT)
    assert m["lateral_displacement"] == pytest.approx(np.interp(t_bos + 1.07, t, y), abs=0.01)
    # first local peak of the yaw rate (second half-wave positive) after the sign change
    change = sc.t_start + 0.5 / sc.frequency
    r2 = -r
    k = np.flatnonzero((t[1:-1] > change) & (r2[1:-1] > 0) & (r2[2:] < r2[1:-1]))[0] + 1
    assert m["peak_yaw_rate"] == pytest.approx(r2[k], rel=0.01)
    cos = sc.t_start + 1.0 / sc.frequency + sc.dwell
    assert m["yaw_ratio_100"] == pytest.approx(abs(np.interp(cos + 1.0, t, r2)) / r2[k], rel=0.01)
    assert m["yaw_ratio_175"] == pytest.approx(abs(np.interp(cos + 1.75, t, r2)) / r2[k], rel=0.01)


def test_earlier_rules_are_options_named_as_such():
    sc = catalog.get("sine_with_dwell")
    assert (sc.amplitude, sc.beginning, sc.yaw_peak) == tuple(v[0] for v in RULES.values())
    dataclasses.replace(sc, amplitude="bicycle", beginning="onset", yaw_peak="window")
    with pytest.raises(ValueError, match=r"yaw_peak = 'max'; allowed \('first', 'window'\)"):
        dataclasses.replace(sc, yaw_peak="max")


def test_a_car_whose_yaw_rate_never_reverses_has_infinite_ratios_and_fails():
    """S5.2.1's ratio needs a peak of the reversed yaw rate; a car that spun in the first direction has none:
    its ratios read inf (they read |r| / 1e-6 ~ 1e5 before), a car with a peak keeps |r| / r_peak."""
    from types import SimpleNamespace

    import jax
    import jax.numpy as jnp

    from sims.scenarios.sine_dwell import MIN_PEAK_YAW_RATE, SineDwellAcc

    sc = catalog.get("sine_with_dwell")
    z = jnp.zeros(3)
    acc = SineDwellAcc(
        r_peak=jnp.array([0.0, 0.5 * MIN_PEAK_YAW_RATE, 0.5]),
        r_100=jnp.array([-0.8, -0.8, 0.1]),
        r_175=jnp.array([-0.9, -0.9, -0.05]),
        y_disp=jnp.full(3, 2.5),
        max_yaw=z,
        y0=z,
        yaw0=z,
        peaked=z,
    )
    setup = SimpleNamespace(reducer=SimpleNamespace(steer_03g=jnp.full(3, 0.03)))
    m = sc.evaluate(acc, setup, dict(sc.settings))
    np.testing.assert_array_equal(np.asarray(m["yaw_ratio_100"])[:2], [np.inf, np.inf])
    np.testing.assert_array_equal(np.asarray(m["yaw_ratio_175"])[:2], [np.inf, np.inf])
    assert float(m["yaw_ratio_100"][2]) == pytest.approx(0.2) and float(m["yaw_ratio_175"][2]) == pytest.approx(0.1)
    np.testing.assert_array_equal(np.asarray(m["passed"]), [0.0, 0.0, 1.0])
    # the gradient through the ratio stays finite on both sides of the rule
    g = jax.grad(lambda p: sc.evaluate(acc._replace(r_peak=p), setup, dict(sc.settings))["yaw_ratio_100"][2])
    assert np.isfinite(np.asarray(g(acc.r_peak))).all()
