"""A lap-time Monte Carlo as a study: the transient lap on a real circuit, each vehicle at its own QSS profile."""

import numpy as np

from sims import studies
from sims.run.spec import fast_compile_options
from sims.studies import study as sm
from sims.studies.variation import Variation
from sims.vehicles.qss import at_grip, lap_times

MU, MU_Y = "vehicle.tire_scale.mu_x", "vehicle.tire_scale.mu_y"


def test_lap_time_study_over_surface_and_tire_friction_on_norisring(tmp_path):
    """No JAX written: ``Study(scenario="lap", options={"circuit": "Norisring"})`` with the surface (dry / wet,
    the surface table) and the tires' friction (x0.9 / x1.0, both directions) on a grid: every vehicle driven at
    the QSS profile of its own car at 0.95 of its grip (``sims.scenarios.lap.qss_profile``) completes the lap
    with no wheel off and no spin, never faster than its own QSS lap (tire envelope) and within 5 % of it;
    wet is slower than dry and less friction slower than more.  Measured: dry 53.27 / 54.51 s (x1.0 / x0.9),
    wet 59.83 / 62.27 s; 1.027-1.030 of each one's QSS lap."""
    st = sm.Study(
        scenario="lap",
        preset="race_car",
        runs=1,
        options={"circuit": "Norisring", "dt": 0.01, "max_time": 90.0},
        vary=(
            Variation("vehicle.surface", "grid", values=("asphalt_dry", "asphalt_wet")),
            Variation(MU, "grid", "factor", values=(0.9, 1.0), also=(MU_Y,)),
        ),
    )
    res = studies.run(st, folder=tmp_path / "lap", compiler_options=fast_compile_options())
    c = res.columns
    lap = np.asarray(c["lap_time"])
    assert np.all(c["passed"] == 1) and np.all(c["time_off"] == 0) and np.all(c["spun"] == 0), c
    wet = np.asarray(c["vehicle.surface_name"]) == "asphalt_wet"
    low = np.asarray(c[MU]) < 0.95
    for w in (False, True):  # less friction is slower, on either surface
        assert lap[(wet == w) & low][0] > lap[(wet == w) & ~low][0]
    for f in (False, True):  # wet is slower, at either friction
        assert lap[wet & (low == f)][0] > 1.05 * lap[~wet & (low == f)][0]
    # the bound: each vehicle's own QSS lap with its full grip, on the scenario's line
    scenario, _, draws, _ = sm._prepare(st)
    params, _ = sm._inputs(st, scenario, sm._vehicle(st), sm._rows(draws, 0, 4), 4)
    q = np.asarray(lap_times(at_grip(params, 1.0), scenario.scenario.qss_line, envelope="tire").lap_time)
    assert np.all(q <= lap) and np.all(lap <= 1.05 * q), (lap, q, lap / q)
    # the report's lap section: every lap completed, none off or spun, the median lap with its interval
    page = (res.folder / "report.html").read_text()
    assert "<h2>Lap: Norisring</h2>" in page and "0 of 4 vehicles had a wheel beyond an edge" in page
    assert f"p50 {res.summary['statistics']['lap_time']['percentiles']['p50']['value']:.4g} s" in page
