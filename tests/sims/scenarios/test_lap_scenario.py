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


def test_race_car_transient_lap_on_norisring_tracks_its_profile_and_is_repeatable():
    """The race car (LapFollower) round Norisring on the minimum-curvature line kept 1.5 m from the edges, at
    0.85 of its quasi-steady profile: never faster than the QSS lap, within 2 % of the profile's own time
    (QSS lap / margin: the driver keeps the profile), no wheel beyond an edge, no spin; bitwise repeatable."""
    from sims.roads.raceline import min_curvature_line
    from sims.run.rollout import fast_compile_options
    from sims.studies.laptime import lap_times, transient_lap

    centre = get_track("Norisring", dtype=np.float32, ds=2.5)
    line, _ = min_curvature_line(centre, margin=1.5, dtype=np.float32)
    p = presets.get("race_car")
    fleet = p._replace(chassis=jax.tree.map(lambda x: jnp.broadcast_to(x, (1,) + jnp.shape(x)), p.chassis))
    fast = fast_compile_options()
    qss = lap_times(fleet, line, compiler_options=fast)
    margin = 0.85
    met, _ = transient_lap(fleet, line, centre, margin=margin, qss=qss, dt=0.01, compiler_options=fast)
    again, _ = transient_lap(fleet, line, centre, margin=margin, qss=qss, dt=0.01, compiler_options=fast)
    lap, q = float(met["lap_time"][0]), float(qss.lap_time[0])
    assert q <= lap <= 1.02 * q / margin
    assert met["time_off"][0] == 0 and met["spun"][0] == 0 and met["passed"][0] == 1
    assert all(np.array_equal(met[k], again[k]) for k in met)
