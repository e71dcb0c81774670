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


def test_scenarios_with_other_geometry_do_not_share_a_setup_program():
    """A lap scenario whose line carries another speed profile (a field left out of the scenario's equality)
    gets its own setup program: the cached one closed over the first scenario's line and drove the second lap
    at the first one's speeds (found 2026-12-05)."""
    from sims.scenarios.base import jitted_setup, resolve_settings

    fleet = fleet_of(presets.get("hatchback"), 1)
    a = catalog.get("lap")
    b = dataclasses.replace(a, line=a.line._replace(speed=jnp.full_like(a.line.s, 20.0)))
    assert a == b  # equal options: only the line differs
    speeds = []
    for sc in (a, b):
        s = jitted_setup(sc, fleet, resolve_settings(sc, fleet, {"speed": np.array([14.0])}))
        speeds.append(np.asarray(s.driver.path.speed)[0])
    assert np.all(speeds[0] == 14.0) and np.all(speeds[1] == 20.0)


def fleet_of(p, n):
    """``n`` copies of the vehicle ``p`` (chassis leaves on a leading axis, tires shared)."""
    return p._replace(chassis=jax.tree.map(lambda x: jnp.broadcast_to(x, (n,) + jnp.shape(x)), p.chassis))


#: The three circuits of the transient-lap test, the driver's share of the grip and the point count they share.
LAP_TRACKS, LAP_GRIP, LAP_POINTS = ("Norisring", "IMS", "Spielberg"), 0.95, 1700


def test_race_car_transient_laps_on_three_circuits_in_one_program():
    """The race car (LapFollower) round three circuits, one vehicle each in one compiled program, on the
    minimum-curvature line kept 2 m from the edges, at the QSS speed profile of 0.95 of its grip (the driver's
    margin): never faster than its QSS lap (the tire envelope, the bound), within 5 % of it, no wheel beyond an
    edge, no spin; bitwise repeatable; the point mass's lap (the default, friction-ellipse envelope) bounds it too,
    within 6 %.  Measured: 1.028, 1.024, 1.027 of the tire envelope's lap, 1.032, 1.045, 1.040 of the point
    mass's (float32, dt 0.01 s); with the race car's tires sized to its wheels (issue 38: all of the power now
    reaches the road, both laps faster) 1.034, 1.051, 1.042 of the point mass's.

    In the same program, a lap-time Monte Carlo's vehicles on Norisring (each with its own QSS profile): a wet
    track (the surface table's ``asphalt_wet`` under all four wheels), tires with 0.9 of the friction, 2/3 of the
    downforce: each as slow as its lost grip says (slower than the dry car, in that order of QSS laps), each
    within 5 % of its own QSS lap, none off or spun.  Measured: 59.97 s (QSS 58.29 s), 54.65 s (53.18 s), 54.32 s
    (52.91 s) against the dry car's 53.41 s (51.95 s)."""
    from jaxtire.surfaces import surface_id
    from sims.roads import circuits
    from sims.roads.raceline import min_curvature_line
    from sims.run.spec import fast_compile_options
    from sims.scenarios.lap import transient_lap
    from sims.vehicles.qss import lap_times

    centres, lines = [], []
    for name in LAP_TRACKS:
        cl = circuits.resample(circuits.load_circuit(name, ds=2.5), LAP_POINTS, dtype=np.float32)
        line, _ = min_curvature_line(cl, margin=2.0)
        centres.append(cl)
        lines.append(circuits.resample(line, LAP_POINTS, dtype=np.float32))
    n = len(LAP_TRACKS)
    centres, lines = centres + [centres[0]] * 3, lines + [lines[0]] * 3  # + the Monte Carlo's three on Norisring
    p = presets.get("race_car")
    fleet = fleet_of(p, n + 3)
    ch = fleet.chassis
    wet, mu = surface_id("asphalt_wet"), jnp.asarray([1.0] * n + [1.0, 0.9, 1.0], jnp.float32)
    fleet = fleet._replace(
        contact=fleet.contact._replace(
            surface_ids=jnp.asarray([[0] * 4] * n + [[wet] * 4, [0] * 4, [0] * 4], jnp.int32)
        ),
        chassis=ch._replace(
            tire_scale_front=ch.tire_scale_front.with_friction(mu),
            tire_scale_rear=ch.tire_scale_rear.with_friction(mu),
            lift_area=ch.lift_area * jnp.asarray([1.0] * (n + 2) + [2.0 / 3.0], jnp.float32),
        )
    )
    kw = dict(grip=LAP_GRIP, dt=0.01, compiler_options=fast_compile_options())
    met, qss = transient_lap(fleet, lines, centres, **kw)
    again, _ = transient_lap(fleet, lines, centres, qss=qss, **kw)
    lap, q = met["lap_time"], np.asarray(qss.lap_time)
    assert np.all(q <= lap) and np.all(lap <= 1.05 * q), (lap, q, lap / q)
    assert np.all(met["time_off"] == 0) and np.all(met["spun"] == 0) and np.all(met["passed"] == 1), met
    assert all(np.array_equal(met[k], again[k]) for k in met)
    # the point mass's lap (the default envelope, the friction ellipse: faster still) bounds it as well
    q_point = np.array([float(lap_times(fleet_of(p, 1), ln).lap_time[0]) for ln in lines[:n]])
    assert np.all(q_point <= q[:n]) and np.all(lap[:n] <= 1.06 * q_point), (lap, q_point, lap[:n] / q_point)
    # the Monte Carlo: wet slowest, then less friction, then less downforce, all slower than dry
    assert q[n] > q[n + 1] > q[n + 2] > q[0] and lap[n] > lap[n + 1] > lap[n + 2] > lap[0], (lap, q)
