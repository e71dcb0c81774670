"""The driveline scenarios of issue 27 (acceleration, split-mu launch, sine with dwell) run from the fleet CLI
as Monte Carlo studies (``python -m sims --scenario ...``: a sampled fleet of the preset with its driveline).

Three hatchbacks each, one compile per scenario; the numbers checked are kinematic invariants of a launch
from rest, the open differential's traction bound on split-mu (twice the ice wheel's peak force, from a
dense scan of the tire written here) and FMVSS 126 S5.2's pass rule applied to the printed percentiles.
"""

import math

import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import lookup, surface_id
from jaxtire.tire import scale_tire, tire_forces
from sims.cli import main
from sims.run.fleet import Sampling
from sims.vehicles import presets

ARGS = ["--vehicles", "3", "--preset", "hatchback", "--fast-compile", "--no-progress", "--seed", "1"]


def _run(tmp_path, capsys, scenario):
    out = main(["--scenario", scenario, *ARGS, "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "3 x hatchback with its driveline" in text
    return out, text


def test_acceleration_from_cli(tmp_path, capsys):
    """0-100 km/h and the quarter mile: all reached; the distances lie between the constant-acceleration
    value v t / 2 and v t (speed rising with falling acceleration: a concave v(t)); the Monte Carlo draws differ."""
    out, text = _run(tmp_path, capsys, "acceleration")
    assert "time_to_speed" in text and "quarter_speed" in text
    assert out["passed"] == 1.0
    v = 100.0 / 3.6
    t, d = out["time_to_speed"], out["distance_to_speed"]
    assert 0.5 * v * t["p50"] < d["p50"] < v * t["p50"]
    q_t, q_v = out["quarter_time"]["p50"], out["quarter_speed"]["p50"]
    assert q_t > t["p50"] and q_v > v
    assert 0.5 * q_v * q_t < 402.336 < q_v * q_t
    assert t["p5"] < t["p95"]  # payload and tires drawn per vehicle


def test_split_mu_launch_from_cli(tmp_path, capsys):
    """The front-driven hatchback (open differential, no traction control) on ice (left) / dry (right): the
    mean acceleration is bounded by twice the ice wheel's peak force over the mass, mu_ice g b / L at
    the static load (the largest sampled friction factor on top), and reaches more than half of it."""
    out, text = _run(tmp_path, capsys, "split-mu-launch")
    assert "max_yaw" in text
    p = presets.get("hatchback")
    ch = p.chassis
    fz = float(ch.mass) * GRAVITY * float(ch.cg_to_rear) / float(ch.wheelbase) / 2.0
    tire = scale_tire(p.tire_front, *ch.tire_scale_front)
    kap = np.linspace(0.0, 0.5, 2001)
    fx = tire_forces(
        tire, jnp.asarray(kap), 0.0, 0.0, jnp.asarray(fz), 1.0, lookup(p.surfaces, jnp.asarray(surface_id("ice")))
    )
    mu_ice = float(np.max(np.asarray(fx.fx))) / fz
    bound = 2.0 * mu_ice * fz / float(ch.mass) * Sampling().mu[1]
    a = out["acceleration"]
    assert a["p95"] <= bound
    assert a["p5"] >= 0.5 * bound * Sampling().mu[0] / Sampling().mu[1]
    assert out["max_yaw"]["p95"] < math.radians(10.0) and out["passed"] == 1.0


def test_sine_with_dwell_from_cli(tmp_path, capsys):
    """FMVSS 126 S5.2 through the CLI, the fleet with its ESC on and, for comparison, off (issue 38: the report
    said neither): a car that spins fails (passed <= 1 - spun rate), and where the median of a criterion fails
    (S5.2.1 yaw ratio at 1.00 s <= 0.35, S5.2.2 at 1.75 s <= 0.20, S5.2.3 >= 1.83 m) at least two of the three
    cars fail.  The hatchbacks spin at 6.5 A of their own slowly increasing steer without ESC, not with it."""
    both, text = _run(tmp_path, capsys, "sine-with-dwell")
    assert "ESC on:" in text and "ESC off:" in text and set(both) == {"esc_on", "esc_off"}
    for out in both.values():
        for k in ("yaw_ratio_100", "yaw_ratio_175", "lateral_displacement", "sis_steer", "spun", "passed"):
            assert k in out
        assert out["passed"] <= 1.0 - out["spun"] + 1e-9
        median_fails = (
            out["yaw_ratio_100"]["p50"] > 0.35
            or out["yaw_ratio_175"]["p50"] > 0.20
            or out["lateral_displacement"]["p50"] < 1.83
        )
        if median_fails:
            assert out["passed"] <= 1.0 / 3.0 + 1e-6
    assert both["esc_off"]["spun"] == 1.0 and both["esc_on"]["spun"] == 0.0
    # the same cars, the same A within 0.5 % (the SIS runs with the vehicle's ESC, which barely acts below 0.375 g:
    # measured 0.28 % on these three cars, 0.03 % on the three the CLI's former jax.random stream drew)
    on, off = both["esc_on"]["sis_steer"], both["esc_off"]["sis_steer"]
    assert on["mean"] == pytest.approx(off["mean"], rel=5e-3) and 0.005 < on["p5"] < on["p95"] < 0.05


def test_every_other_catalogue_scenario_runs_under_its_catalogue_name(tmp_path, capsys):
    """Issue 35 item 2 (the CLI takes the catalogue's names): ``--scenario`` accepts every catalogue scenario
    but the four whose names the CLI gives its own meaning, by the catalogue's name (dashes read as
    underscores); ``iso3888_2`` from the CLI equals :func:`run_scenario` on the same sampled fleet, its flags
    printed as rates."""
    from sims.cli._drive import CATALOGUE_RUNS, CLI_OWN, catalogue_name
    from sims.cli.fleet import SCENARIOS
    from sims.scenarios import catalog
    from sims.scenarios.base import run_scenario
    from sims.studies.variation import sample

    assert set(CATALOGUE_RUNS) == set(catalog.names()) - set(CLI_OWN) and set(CATALOGUE_RUNS) <= set(SCENARIOS)
    assert catalogue_name("split-mu-launch") == "split_mu_launch" and catalogue_name("step-steer") is None
    out, text = _run(tmp_path, capsys, "iso3888_2")
    assert "scenario iso3888_2" in text and "cone_hit               rate" in text
    from sims.run.spec import fast_compile_options

    base = presets.get("hatchback", tire="mf", driveline=True)
    sid = surface_id("asphalt_dry")
    fleet, _ = sample(base, 3, Sampling(surfaces=(sid,)), seed=1)  # the studies' sampler, as the CLI's
    ref, _ = run_scenario("iso3888_2", fleet, compiler_options=fast_compile_options())
    assert out["cone_hit"] == float(np.mean(ref["cone_hit"])) and out["passed"] == float(np.mean(ref["passed"]))
    np.testing.assert_allclose(out["max_ay"]["p50"], np.percentile(np.asarray(ref["max_ay"], float), 50), rtol=1e-6)
    assert 0.0 < out["max_ay"]["p50"] < 1.2 * GRAVITY  # a lane change of a road car on dry asphalt
