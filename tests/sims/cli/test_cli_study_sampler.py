"""Issue 35 item 2: the fleet CLI's braking Monte Carlo is a study.  Its fleet is drawn by the studies' one
sampler (``sims.studies.study.inputs`` of ``sims.studies.braking.monte_carlo_study``), so

* the study file ``--save-study`` writes runs the CLI's very vehicles (the same factors; the same stopping
  distances up to float32 rounding, which ABS limit cycles amplify in a few runs);
* the draws moved from the CLI's former ``jax.random`` stream (``sims.run.fleet.sample_fleet`` and a uniform
  ABS / normal yaw-rate draw, rebuilt here) to the study's design, and the distributions did not: per surface
  and ABS mode the two samples of stopping distances pass a two-sample Kolmogorov-Smirnov test at 0.1 %."""

import csv

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxtire.surfaces import surface_id
from sims.cli import main
from sims.run.fleet import Sampling, sample_fleet
from sims.run.spec import fast_compile_options
from sims.scenarios import braking
from sims.studies import study as sm
from sims.vehicles import presets

N = 1500
SURFACES = ("asphalt_dry", "snow")
SPEED = 60.0  # km/h: short stops


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli")
    main(["--vehicles", str(N), "--surfaces", ",".join(SURFACES), "--speed", str(SPEED), "--seed", "5",
          "--out", str(out), "--save-study", str(out / "mc.toml"), "--no-progress", "--no-plot", "--fast-compile"])
    rows = list(csv.DictReader(open(out / "braking.csv")))
    return out, rows


def test_the_saved_study_runs_the_cli_vehicles(cli_run):
    out, rows = cli_run
    study = sm.load(out / "mc.toml")
    cols = sm.inputs(study).draws.columns
    for name, path in (("mass_factor", "vehicle.chassis.mass"), ("mu_factor", "vehicle.tire_scale.mu_x"),
                       ("stiffness_factor", "vehicle.tire_scale.k_x"), ("yaw_rate0", "scenario.yaw_rate0"),
                       ("abs", "scenario.abs_on")):
        np.testing.assert_allclose([float(r[name]) for r in rows], cols[path], rtol=1e-5, atol=1e-9)
    assert [r["surface"] for r in rows] == [SURFACES[0] if surface_id(SURFACES[0]) == s else SURFACES[1]
                                           for s in cols["vehicle.surface"].astype(int)]
    res = sm.run(study, progress=False, compiler_options=fast_compile_options())
    got = np.asarray(res.columns["distance"], float)
    want = np.array([float(r["distance_m"]) for r in rows])
    rel = np.abs(got - want) / want
    assert np.median(rel) < 1e-5 and np.mean(rel < 1e-4) > 0.98 and rel.max() < 5e-3, np.sort(rel)[-5:]


def test_the_distributions_are_those_of_the_former_jax_random_draws(cli_run):
    _, rows = cli_run
    base = presets.get("hatchback")
    ids = tuple(surface_id(s) for s in SURFACES)
    k_fleet, k_abs, k_yaw = jax.random.split(jax.random.PRNGKey(5), 3)
    fleet, sample = sample_fleet(k_fleet, base, N, Sampling(surfaces=ids))
    abs_on = (jax.random.uniform(k_abs, (N,)) < 0.5).astype(jnp.float32)
    yaw0 = braking.YAW_RATE0 * jax.random.normal(k_yaw, (N,))
    run = braking.braking_run(fleet, abs_on, speed=SPEED / 3.6, yaw_rate0=yaw0, compiler_options=fast_compile_options())
    old, _ = braking.run_to_stop(run, 12_000)
    sid, abs_np = np.asarray(sample.surface_id), np.asarray(abs_on)
    for s in SURFACES:
        for flag in (0, 1):
            new = [float(r["distance_m"]) for r in rows if r["surface"] == s and int(r["abs"]) == flag]
            was = old.distance[(sid == surface_id(s)) & (abs_np == flag)]
            assert len(new) > 250 and len(was) > 250
            assert stats.ks_2samp(new, was).pvalue > 1e-3, (s, flag, np.median(new), np.median(was))
