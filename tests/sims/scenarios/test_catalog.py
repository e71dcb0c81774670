"""The scenario protocol (sims.scenarios.base) and the catalogue (sims.scenarios.catalog)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.run.fleet import make_fleet
from sims.scenarios import braking, catalog
from sims.scenarios.base import Scenario, resolve_settings, run_scenario, scenario_metrics
from sims.vehicles import presets
from tests.sims.conftest import FAST

#: A short braking test: 12 m/s stops in ~1.2-1.7 s (dry asphalt), 500 steps of 5 ms are enough.
SHORT = dataclasses.replace(catalog.get("braking"), max_time=2.5)
SETTINGS = {"speed": np.array([12.0, 12.0]), "abs_on": np.array([0.0, 1.0])}


@pytest.fixture(scope="module")
def fleet():
    return make_fleet(presets.get("hatchback"), 2)


@pytest.fixture(scope="module")
def ran(fleet):
    return run_scenario(SHORT, fleet, SETTINGS, compiler_options=FAST, chunk_steps=100)


def test_braking_scenario_matches_the_braking_functions(fleet, ran):
    metrics, stats = ran
    assert set(metrics) == {m.name for m in SHORT.metrics} and "passed" in metrics
    res, _, _ = braking.brake_test(
        fleet, SETTINGS["abs_on"], speed=SETTINGS["speed"], max_time=2.5, compiler_options=FAST
    )
    np.testing.assert_array_equal(metrics["distance"], res.distance)
    np.testing.assert_array_equal(metrics["stopped"], res.stopped.astype(float))
    assert metrics["passed"].tolist() == [1.0, 1.0]
    # ABS stops shorter than locked wheels; both near v^2 / (2 mu g) with mu ~ 0.8-1.1
    assert metrics["distance"][1] < metrics["distance"][0]
    assert 12.0**2 / (2 * 1.2 * 9.81) < metrics["distance"][1] < 12.0**2 / (2 * 0.6 * 9.81)
    # early stop: every vehicle stopped before the 300-step horizon
    assert stats.steps < 500 and stats.compile_s >= 0.0 and stats.run_s > 0.0


def test_scenario_metrics_is_the_same_computation_and_differentiable(fleet, ran):
    n = 500
    out = scenario_metrics(SHORT, fleet, SETTINGS, n_steps=n, compiler_options=FAST)
    np.testing.assert_allclose(out["distance"], ran[0]["distance"], rtol=1e-5)

    def dist(mass_f):
        ch = fleet.chassis
        p = fleet._replace(chassis=ch._replace(mass=ch.mass * mass_f))
        return jnp.sum(scenario_metrics(SHORT, p, SETTINGS, n_steps=100)["distance"])

    # traced end to end (setup, rollout, evaluate); the studies check the gradients' values (compiling the
    # gradient of the double track costs ~20 s)
    g = jax.eval_shape(jax.grad(dist), jnp.float32(1.0))
    assert g.shape == () and g.dtype == jnp.float32


def test_catalogue_get_register_and_protocol():
    assert isinstance(catalog.get("braking"), Scenario)
    assert catalog.get(SHORT) is SHORT
    with pytest.raises(KeyError, match="braking"):
        catalog.get("brakign")
    with pytest.raises(ValueError, match="already registered"):
        catalog.register(braking.Braking())
    with pytest.raises(TypeError, match="passed"):
        catalog.register(dataclasses.replace(SHORT, name="x", metrics=SHORT.metrics[:-1]))


def test_settings_are_checked_at_the_boundary(fleet):
    with pytest.raises(ValidationError, match=r"unknown setting.*'sped'.*\['abs_on', 'speed', 'yaw_rate0'\]"):
        resolve_settings(SHORT, fleet, {"sped": 10.0})
    with pytest.raises(ValidationError, match=r"speed = 100 m/s .*km/h.*100 km/h is 27.78 m/s"):
        resolve_settings(SHORT, fleet, {"speed": 100.0})
    with pytest.raises(ValidationError, match="abs_on"):
        resolve_settings(SHORT, fleet, {"abs_on": 2.0})
    with pytest.raises(ValidationError, match="one per vehicle"):
        resolve_settings(SHORT, fleet, {"speed": [10.0, 11.0, 12.0]})
    vals = resolve_settings(SHORT, fleet, {"speed": 10.0})
    assert vals["speed"].shape == (2,) and float(vals["abs_on"][0]) == 1.0
