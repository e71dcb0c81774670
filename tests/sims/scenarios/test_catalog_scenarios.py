"""The catalogue's braking variants (split-mu, grade, mu-jump), step steer and skidpad as scenarios."""

import dataclasses
import math

import jax.numpy as jnp
import numpy as np
import pytest

from sims.run.fleet import make_fleet
from sims.scenarios import catalog
from sims.scenarios.base import run_scenario
from sims.scenarios.braking import sliding_friction
from sims.scenarios.skidpad import understeer_theory
from sims.scenarios.step_steer import response_metrics
from sims.vehicles import presets
from tests.sims.conftest import FAST

V = 12.0  # [m/s]: short stops (~1.5 s)


@pytest.fixture(scope="module")
def hatch2():
    return make_fleet(presets.get("hatchback"), 2)


def _run(name, fleet, settings, **options):
    sc = dataclasses.replace(catalog.get(name), **options)
    return run_scenario(sc, fleet, settings, compiler_options=FAST, chunk_steps=100)[0]


def test_every_catalogue_scenario_follows_the_protocol():
    assert {
        "braking",
        "split_mu_braking",
        "grade_braking",
        "mu_jump_braking",
        "iso3888_1",
        "iso3888_2",
        "step_steer",
        "skidpad",
    } <= set(catalog.names())
    for name in catalog.names():
        sc = catalog.get(name)
        kinds = {m.name: m.kind for m in sc.metrics}
        assert kinds["passed"] == "flag" and set(kinds.values()) <= {"value", "flag"}, name
        assert all(isinstance(v, float) for v in sc.settings.values()), name


def test_grade_and_split_mu_braking(hatch2):
    """Locked wheels from 12 m/s down a 10 % grade: the distance ratio to the flat stop is mu / (mu cos - sin)
    (within 4 %: drag and rolling resistance are small at this speed).  Split-mu (left dry, right ice) with
    ABS: longer than on dry asphalt, and the car yaws to the left, the grippy side."""
    grade = math.atan(0.1)
    g = _run(
        "grade_braking",
        hatch2,
        {"speed": V, "abs_on": 0.0, "yaw_rate0": 0.0, "grade": np.array([0.0, grade])},
        max_time=4.0,
    )
    mu = sliding_friction(presets.get("hatchback"), "asphalt_dry", V)
    want = mu / (mu * math.cos(grade) - math.sin(grade))
    assert g["distance"][1] / g["distance"][0] == pytest.approx(want, rel=0.04)
    s = _run("split_mu_braking", hatch2, {"speed": V, "abs_on": np.array([0.0, 1.0]), "yaw_rate0": 0.0}, max_time=6.0)
    assert s["distance"][1] > g["distance"][0] * 0.9 and s["max_yaw"][1] > 0.01


def test_mu_jump_braking_lands_between_the_uniform_surfaces(hatch2):
    """ABS stops from 12 m/s: dry -> wet at 3 m (about a third of the stop) lies between all-dry and all-wet."""
    jump = _run("mu_jump_braking", hatch2, {"speed": V, "yaw_rate0": 0.0}, max_time=4.0, station=3.0)
    dry = _run("mu_jump_braking", hatch2, {"speed": V, "yaw_rate0": 0.0}, max_time=4.0, station=1e3)
    wet = _run("mu_jump_braking", hatch2, {"speed": V, "yaw_rate0": 0.0}, max_time=4.0, station=-1.0)
    assert dry["distance"][0] < jump["distance"][0] < wet["distance"][0]
    assert jump["passed"].tolist() == [1.0, 1.0]


def test_response_metrics_of_a_first_order_lag():
    """r = r_ss (1 - exp(-(t - t50) / tau)): 90 % at tau ln 10, no overshoot (the sign follows r_ss)."""
    t = jnp.arange(0.0, 5.0, 0.001)
    tau, t50 = 0.2, 0.5
    for r_ss in (0.3, -0.3):
        r = r_ss * jnp.where(t > t50, 1.0 - jnp.exp(-(t - t50) / tau), 0.0)
        resp, peak, over = response_metrics(t, r[None], jnp.asarray([r_ss]), t50)
        assert float(resp[0]) == pytest.approx(tau * math.log(10.0), abs=2e-3)
        assert float(over[0]) == pytest.approx(0.0, abs=1e-3) and float(peak[0]) > 3.0


def test_step_steer_and_skidpad_scenarios(hatch2):
    st = _run("step_steer", hatch2, {"ay_target": np.array([2.0, 4.0])}, duration=3.0)
    # the neutral-steer amplitude L a_y / V^2 gives less a_y on an understeering car; the ISO 7401 times
    L = float(presets.get("hatchback").chassis.wheelbase)
    np.testing.assert_allclose(st["amplitude"], L * np.array([2.0, 4.0]) / (80 / 3.6) ** 2, rtol=1e-5)
    assert np.all((st["ay_ss"] > 0.6 * np.array([2.0, 4.0])) & (st["ay_ss"] < np.array([2.0, 4.0])))
    assert np.all((st["response_time"] > 0.05) & (st["response_time"] < 0.6)) and st["passed"].tolist() == [1.0, 1.0]
    sk = _run("skidpad", hatch2, {"ay_target": np.array([3.0, 15.0])}, settle=5.0, duration=7.0)
    assert sk["passed"].tolist() == [1.0, 0.0]  # 15 m/s^2 is beyond the tires
    assert sk["ay"][0] == pytest.approx(3.0, rel=0.05)
    # secant understeer at 0.3 g against the linear theory m / L (b / C_f - a / C_r) (load transfer left out)
    assert sk["understeer"][0] == pytest.approx(understeer_theory(presets.get("hatchback")), rel=0.35)
