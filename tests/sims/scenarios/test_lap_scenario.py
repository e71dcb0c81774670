"""The transient lap scenario (sims.scenarios.lap) on the built-in oval at a constant target speed."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sims.roads.circuits import get_track
from sims.scenarios import catalog
from sims.scenarios.base import run_scenario
from sims.vehicles import presets


def test_oval_lap_at_constant_speed_is_length_over_speed():
    p = presets.get("hatchback")
    fleet = p._replace(chassis=jax.tree.map(lambda x: jnp.broadcast_to(x, (2,) + x.shape), p.chassis))
    sc = dataclasses.replace(catalog.get("lap"), max_time=56.0, dt=0.01)
    met, _ = run_scenario(sc, fleet, {"speed": np.array([14.0, 16.0])})
    length = float(get_track("oval").length)
    # the car starts at the target speed on the line; the lap is the centreline's length at that speed
    assert np.allclose(met["lap_time"], [length / 14.0, length / 16.0], rtol=0.01)
    assert np.all(met["time_off"] == 0) and np.all(met["spun"] == 0) and np.all(met["passed"] == 1)
    assert np.all(met["peak_alpha"] > 0) and np.all(met["peak_alpha"] < 0.1)
