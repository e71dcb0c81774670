"""sims.studies on a real scenario (short wet braking, a small fleet): the study file and the API, the run
folder, bitwise reproduction from the saved study file, Sobol' indices (friction beats mass), pathwise
gradients against finite differences, the CLI, and report.html in headless Chromium."""

import base64
import datetime
import json
import re
import shutil
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims import studies
from sims.scenarios.base import scenario_metrics
from sims.studies import braking, report, table
from sims.studies import study as sm
from sims.studies.variation import Variation
from tests.sims.conftest import FAST
from tests.sims.studies.wet import BASE, MASS, MU, MU_ALSO

#: Short wet braking from 12 m/s (stops in about 2 s), single track, a Saltelli design of 16 x (2 + 2) runs.
WET = dict(
    BASE,
    runs=16,
    seed=3,
    design="saltelli",
    metrics=["distance", "stop_time", "passed"],
    vary=[
        {"path": MU, "dist": "uniform", "by": "factor", "low": 0.6, "high": 1.1, "also": MU_ALSO},
        {"path": MASS, "dist": "uniform", "by": "factor", "low": 0.9, "high": 1.25},
    ],
)


@pytest.fixture(scope="module")
def wet(tmp_path_factory):
    out = tmp_path_factory.mktemp("studies")
    return studies.run(sm.Study.from_dict(WET), folder=out / "wet", compiler_options=FAST)


def test_table_summary_and_folder(wet):
    pytest.importorskip("pandas", reason="the DataFrame needs the 'studies' extra (pandas)")
    df = wet.frame()
    assert len(df) == 16 * 4
    mu_abs, mu_y_abs, mass_abs = f"{MU} [-]", "vehicle.tire_scale.mu_y [-]", f"{MASS} [kg]"
    assert list(df.columns) == ["run", MU, mu_abs, mu_y_abs, MASS, mass_abs, "distance", "stop_time", "passed"]
    assert df[MU].between(0.6, 1.1).all() and df[MASS].between(0.9, 1.25).all()
    f = wet.folder
    results = "results.parquet" if table.has_parquet() else "results.csv"  # CSV without pyarrow
    for name in ("study.toml", results, "summary.json", "report.html", "plots/convergence.png"):
        assert (f / name).is_file(), name
    s = json.loads((f / "summary.json").read_text())
    assert s["seed"] == 3 and s["version"] and s["runs"] == 64
    assert s["host"] and datetime.datetime.fromisoformat(s["date"]).tzinfo is not None
    d = s["statistics"]["distance"]
    # locked or ABS, wet asphalt from 12 m/s: v^2 / (2 mu g) with mu 0.4 - 0.8 gives 9 - 18 m
    assert 6.0 < d["percentiles"]["p50"]["value"] < 20.0
    # issue 37 item 4: the statistics of a Saltelli design are over its 2 n independent A and B rows
    assert s["population"]["rows"] == 32 and s["population"]["of"] == 64 and "A and B" in s["population"]["method"]
    assert d["n"] == 32 and d["mean"] == pytest.approx(float(np.mean(df["distance"][:32])), rel=1e-6)
    assert s["statistics"]["passed"]["kind"] == "flag" and s["statistics"]["passed"]["n"] == 32
    assert s["timing"]["compile_s"] > 0 and s["timing"]["run_s"] > 0
    # issue 37 item 6: absolute values beside the factors, flags as booleans, units in the metadata
    base = sm._vehicle(wet.study)
    np.testing.assert_allclose(df[mass_abs], df[MASS] * float(base.chassis.mass), rtol=1e-12)
    np.testing.assert_allclose(df[mu_y_abs], df[MU] * float(base.chassis.tire_scale_front.mu_y), rtol=1e-12)
    assert df["passed"].dtype == bool
    units = {"run": "-", MU: "-", mu_abs: "-", mass_abs: "kg", "distance": "m", "stop_time": "s", "passed": "-"}
    assert {k: s["units"][k] for k in units} == units and set(s["units"]) == set(df.columns)
    assert table.read_units(f / results) == s["units"]
    back = table.read(f / results)
    assert back["passed"].dtype == bool and np.array_equal(back[mass_abs], df[mass_abs].to_numpy())
    page = (f / "report.html").read_text()
    assert "Varied factors" in page and f"{mass_abs}: " in page and "clipped to [0, 1]" in page


def test_friction_dominates_wet_braking(wet):
    """Total Sobol' index of the friction factor exceeds that of the mass factor (beyond their intervals)."""
    sob = wet.summary["sensitivity"]["sobol"]["distance"]
    assert sob[MU]["total"] > 0.5 > sob[MASS]["total"]
    assert sob[MU]["total_low"] > sob[MASS]["total_high"]


def test_run_folder_reproduces_bitwise(wet, tmp_path):
    again = studies.run(wet.folder / "study.toml", folder=tmp_path / "again", compiler_options=FAST)
    assert sm.load(wet.folder / "study.toml") == wet.study
    results = "results.parquet" if table.has_parquet() else "results.csv"  # CSV without pyarrow
    a, b = table.read(wet.folder / results), table.read(again.folder / results)
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), k
        assert a[k].tobytes() == b[k].tobytes(), k
    sa, sb = (json.loads((x / "summary.json").read_text()) for x in (wet.folder, again.folder))
    assert sa["statistics"] == sb["statistics"] and sa["sensitivity"] == sb["sensitivity"]


def test_report_html_self_contained(wet):
    page = (wet.folder / "report.html").read_text()
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    pngs = sorted((wet.folder / "plots").glob("*.png"))
    assert len(imgs) == len(pngs) >= 4
    for data in imgs:
        raw = base64.b64decode(data, validate=True)
        assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched from elsewhere


def test_report_in_headless_chromium(wet, tmp_path):
    """Chromium loads report.html without a script error and every plot decodes (naturalWidth > 0)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    page = (wet.folder / "report.html").read_text()
    probe = (
        "<script>var errs=[];window.addEventListener('error',function(e){errs.push(String(e.message))});"
        "window.addEventListener('load',function(){var im=document.images,ok=0;"
        "for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0)ok++;}"
        "document.body.setAttribute('data-images',im.length);document.body.setAttribute('data-decoded',ok);"
        "document.body.setAttribute('data-errors',errs.length);});</script>"
    )
    probed = tmp_path / "report.html"
    probed.write_text(page.replace("</body>", probe + "</body>"))
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--virtual-time-budget=5000",
        "--dump-dom",
        probed.as_uri(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    body = re.search(r"<body[^>]*>", out.stdout).group(0)
    n = int(re.search(r'data-images="(\d+)"', body).group(1))
    assert n == len(list((wet.folder / "plots").glob("*.png")))
    assert re.search(r'data-decoded="(\d+)"', body).group(1) == str(n)
    assert re.search(r'data-errors="(\d+)"', body).group(1) == "0"
    assert "Uncaught" not in out.stderr


def test_pathwise_gradients_match_finite_differences(x64):
    """d distance / d (friction factor, mass factor, entry speed) per vehicle, by jax.vjp through the whole
    scenario, against central differences (float64, simple tire, locked wheels, 0.6 s of braking): < 1 %."""
    st = sm.Study(
        scenario="braking",
        tire="simple",
        surface="asphalt_wet",
        runs=4,
        seed=2,
        settings={"speed": 12.0, "abs_on": 0.0},
        options={"max_time": 0.6, "dt": 0.01, "model": "single_track"},
        metrics=("distance",),
        vary=(
            Variation(MU, "uniform", "factor", 0.7, 1.1),
            Variation(MASS, "uniform", "factor", 0.9, 1.2),
            Variation("scenario.speed", "uniform", low=10.0, high=14.0),
        ),
    )
    scenario, metrics, draws, _ = sm._prepare(st)
    base = sm._vehicle(st)
    g = sm.gradients(st, 4, scenario=scenario, base=base, draws=draws, metrics=metrics, compiler_options=FAST)
    g = g["distance"]
    cols = sm._rows(draws, 0, 4)

    @jax.jit
    def dist(c):
        p, s = sm._inputs(st, scenario, base, c, 4)
        return scenario_metrics(scenario, p, s, compiler_options=FAST)["distance"]

    for path in (MU, MASS, "scenario.speed"):
        h = 1e-5 * np.abs(cols[path])
        up, dn = dict(cols), dict(cols)
        up[path], dn[path] = cols[path] + h, cols[path] - h
        fd = (np.asarray(dist(up)) - np.asarray(dist(dn))) / (2 * h)
        np.testing.assert_allclose(g[path], fd, rtol=0.01, err_msg=path)
    # the physics: more friction shortens, more speed lengthens the 0.6 s braking distance (~ v t)
    assert (g[MU] < 0).all() and (g["scenario.speed"] > 0.5).all()
    assert jnp.asarray(base.chassis.mass).dtype == jnp.float64


def test_cli_study_and_errors(wet, tmp_path, capsys):
    from sims import cli

    path = tmp_path / "s.toml"
    path.write_text(sm.dumps(sm.Study.from_dict({**WET, "name": "cli"})))  # the fixture's fleet: compiled already
    argv = ["study", str(path), "--folder", str(tmp_path / "run"), "--format", "csv", "--fast-compile", "--no-progress"]
    assert cli.main(argv) == 0
    cap = capsys.readouterr()
    assert "distance" in cap.out and (tmp_path / "run" / "results.csv").is_file()
    assert "simulate" not in cap.err and "compile" not in cap.err  # --no-progress: no bars
    csv = table.read(tmp_path / "run" / "results.csv")
    assert len(csv["distance"]) == 64 and csv["passed"].dtype == bool
    assert table.read_units(tmp_path / "run" / "results.csv")["vehicle.chassis.mass [kg]"] == "kg"
    assert (tmp_path / "run" / "results.units.json").is_file()
    bad = tmp_path / "bad.toml"
    bad.write_text('scenario = "braking"\n[[vary]]\npath = "vehicle.chassis.mass"\nlow = 2000\nhigh = 1000\n')
    assert cli.main(["study", str(bad)]) == 2
    assert "swap" in capsys.readouterr().err


def test_a_study_folder_is_complete_only_when_every_file_is_written(wet, tmp_path, monkeypatch):
    """Issue 38 item 7 / 36 item 4: the COMPLETE marker is written last; a write that fails half way (a kill,
    a full disk: here the plots raise) leaves a folder that does not read as complete, also when it
    overwrites a finished one."""
    assert report.is_complete(wet.folder)
    folder = report.write_folder(wet, folder=tmp_path / "again")
    assert report.is_complete(folder) and json.loads((folder / report.COMPLETE).read_text())["rows"] == 64

    def killed(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "plots", killed)
    with pytest.raises(OSError, match="No space"):
        report.write_folder(wet, folder=folder)
    assert not report.is_complete(folder)
    assert not list(folder.glob(".*.tmp"))  # no temporary file left behind


def test_study_cli_without_pandas_or_pyarrow(wet, tmp_path, capsys, monkeypatch):
    """Issue 38 item 4: after the README's plain install (no ``studies`` extra) ``python -m sims study`` writes
    results.csv and report.html with the standard library, and only the DataFrame asks for pandas by name."""
    import sys

    from sims import cli

    for mod in ("pandas", "pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, mod, None)  # `import pandas` now raises ImportError
    assert not table.has_parquet()
    path = tmp_path / "s.toml"
    path.write_text(sm.dumps(sm.Study.from_dict({**WET, "name": "plain"})))
    assert cli.main(["study", str(path), "--folder", str(tmp_path / "run"), "--fast-compile"]) == 0
    cap = capsys.readouterr()
    assert "distance" in cap.out
    assert "plain: set-up + compile (64 vehicles)" in cap.err and "plain: simulate 64 vehicles" in cap.err
    assert (tmp_path / "run" / "report.html").is_file() and not (tmp_path / "run" / "results.parquet").exists()
    back = table.read(tmp_path / "run" / "results.csv")
    assert back["distance"].dtype == np.float64 and len(back["distance"]) == 64
    np.testing.assert_array_equal(back["distance"], np.asarray(wet.columns["distance"], np.float64))
    assert back["run"].dtype == np.int64 and (back["run"] == np.arange(64)).all()
    with pytest.raises(ImportError, match=r"jaxtire\[studies\]"):
        table.to_frame(back)


@pytest.mark.parametrize(
    "d, match",
    [
        ({"scenario": "braking", "runs": 0}, "runs = 0"),
        ({"scenario": "braking", "colour": 1}, "unknown key"),
        ({"scenario": "braking", "design": "halton"}, "design"),
        ({"scenario": "braking", "vehicle": {"preset": "truck"}}, "truck"),
        ({"scenario": "braking", "vehicle": {"surface": "tarmac"}}, "surface"),
        ({"scenario": "braking", "percentiles": [101]}, "percentile"),
        ({"scenario": "braking", "second_order": True}, "second_order = true needs design = 'saltelli'"),
        ({"scenario": "braking", "design": "saltelli", "second_order": 1}, "second_order = 1 must be true or false"),
        ({"scenario": "braking", "levels": 6}, "levels = 6 is for design = 'morris'"),
        ({"scenario": "braking", "design": "morris", "levels": 1}, "levels = 1"),
    ],
)
def test_bad_study_files(d, match):
    with pytest.raises(ValidationError, match=match):
        sm.Study.from_dict(d)


def test_flag_options_are_true_or_false():
    """A scenario's flag option (the step steer's ``calibrate``) takes true or false, not a number."""
    sm.check(sm.Study(scenario="step_steer", options={"calibrate": True}))
    with pytest.raises(ValidationError, match="calibrate = 1 must be true or false"):
        sm.check(sm.Study(scenario="step_steer", options={"calibrate": 1}))


def test_timing_progress_and_morris_study(tmp_path, capsys):
    """Issue 37 items 4 and 5: a Morris study (8 trajectories of 2 factors) with pathwise gradients, through
    the API with its default progress bars.  summary.json's wall time is the process's (within 5 %),
    gradients and the folder's writing included, and its phases add up to it; every long phase had a bar on
    stderr; the screening ranks friction first for the braking distance, the statistics are over the
    trajectories' first rows."""
    d = dict(
        name="timed",
        scenario="braking",
        vehicle={"tire": "simple", "surface": "asphalt_wet"},
        runs=8,
        seed=1,
        design="morris",
        gradients=2,
        settings={"speed": 12.0},
        options={"max_time": 1.5, "dt": 0.01, "model": "single_track"},
        metrics=["distance", "passed"],
        vary=[
            {"path": MU, "dist": "uniform", "by": "factor", "low": 0.6, "high": 1.1},
            {"path": MASS, "dist": "uniform", "by": "factor", "low": 0.9, "high": 1.25},
        ],
    )
    t0 = time.perf_counter()
    res = studies.run(d, folder=tmp_path / "timed", compiler_options=FAST)
    wall = time.perf_counter() - t0
    s = json.loads((res.folder / "summary.json").read_text())
    t = s["timing"]
    assert abs(t["wall_s"] - wall) <= 0.05 * wall, (t, wall)
    parts = [k for k in t if k.endswith("_s") and k not in ("wall_s", "vehicles_per_s")]
    assert sum(t[k] for k in parts) == pytest.approx(t["wall_s"], rel=1e-9)
    assert 0 <= t["other_s"] < 0.02 * t["wall_s"], t
    for k in ("prepare_s", "setup_s", "compile_s", "run_s", "statistics_s", "gradients_s", "write_s"):
        assert t[k] > 0, k
    assert res.summary["timing"] == t
    err = capsys.readouterr().err
    for bar in (
        "set-up + compile (24 vehicles)",
        "simulate 24 vehicles",
        "gradients of 2 vehicles",
        "write the run folder",
    ):
        assert f"timed: {bar}" in err, bar
    mor = s["sensitivity"]["morris"]["distance"]
    assert mor["ranking"] == [MU, MASS] and mor[MU]["mu"] < 0 < mor[MASS]["mu"]
    assert mor[MU]["mu_star_low"] > mor[MASS]["mu_star_high"]
    assert s["population"]["rows"] == 8 and s["statistics"]["distance"]["n"] == 8
    assert (res.folder / "plots" / "morris_distance.png").is_file()
    assert "Morris screening" in (res.folder / "report.html").read_text()


def test_bad_study_metric_and_setting():
    with pytest.raises(ValidationError, match="metric 'grip'"):
        sm._prepare(sm.Study(metrics=("grip",)))
    with pytest.raises(ValidationError, match="not settings of"):
        sm._prepare(sm.Study(settings={"sped": 20.0}))


def test_fleet_monte_carlo_is_a_study(tmp_path):
    """The fleet CLI's braking Monte Carlo as a study: the same factors and distributions."""
    st = braking.monte_carlo_study(1000, seed=4)
    d = sm._prepare(st)[2].columns
    assert d["vehicle.chassis.mass"].min() >= 0.9 and d["vehicle.chassis.mass"].max() <= 1.25
    assert np.mean(d["scenario.abs_on"]) == pytest.approx(0.5, abs=0.05)
    assert (
        set(np.unique(d["vehicle.surface"]).astype(int)) == {0, 2, 4, 6, 9} or len(np.unique(d["vehicle.surface"])) == 5
    )
    (tmp_path / "mc.toml").write_text(sm.dumps(st))  # what python -m sims --save-study writes
    assert sm.load(tmp_path / "mc.toml") == st
    assert report  # the report module imports without a display


def test_chunks_and_driver_variation(wet):
    """A study run in two chunks of 32 vehicles (statistics accumulated as it goes) gives the table and the
    statistics of the one-fleet run; a driver field (the ABS target slip) varies per vehicle."""
    d = {**WET, "design": "random", "runs": 64, "name": "chunks"}
    d["vary"] = [*WET["vary"], {"path": "driver.brake", "dist": "uniform", "low": 0.3, "high": 1.0}]
    whole = studies.run(d, write=False, compiler_options=FAST)
    parts = studies.run({**d, "chunk": 32}, write=False, compiler_options=FAST)
    for k in ("run", MU, MASS, "driver.brake"):
        assert np.array_equal(whole.columns[k], parts.columns[k]), k
    np.testing.assert_allclose(parts.columns["distance"], whole.columns["distance"], rtol=1e-5)
    sw, sp = whole.summary["statistics"]["distance"], parts.summary["statistics"]["distance"]
    assert sp["n"] == sw["n"] == 64 and sp["mean"] == pytest.approx(sw["mean"], rel=1e-5)
    # the drawn pedal is the driver's, vehicle by vehicle
    st = sm.Study.from_dict(d)
    scenario, _, draws, _ = sm._prepare(st)
    cols = sm._rows(draws, 0, 64)
    p, settings = sm._inputs(st, scenario, sm._vehicle(st), cols, 64)
    drv = scenario.setup(p, settings).driver
    np.testing.assert_allclose(np.asarray(drv.brake), cols["driver.brake"], rtol=1e-6)
    # a weaker pedal brakes longer (the slope of a linear fit on friction, mass and pedal)
    x = np.stack([np.ones(64), cols[MU], cols[MASS], cols["driver.brake"]], axis=1)
    coef = np.linalg.lstsq(x, whole.columns["distance"], rcond=None)[0]
    assert coef[3] < 0 and coef[1] < 0


def test_vehicle_study_intervals_cover_a_reference_run():
    """64 small vehicle studies (64 vehicles each, short braking, simple tire) against a 4096-vehicle reference
    of the same study with another seed: the median's order-statistic interval holds the reference median,
    and the Clopper-Pearson interval of P(distance > reference p80) holds 0.2, as often as 95 % intervals
    should (binomial test against their exact coverage; the reference's own error is ~1/16 of a width)."""
    from scipy import stats as sps

    from sims.studies import statistics as st

    d = dict(
        scenario="braking",
        vehicle={"tire": "simple", "surface": "asphalt_wet"},
        runs=4096,
        settings={"speed": 8.0},
        options={"max_time": 2.0, "dt": 0.02, "model": "single_track"},
        metrics=["distance"],
        vary=[
            {"path": MU, "dist": "uniform", "by": "factor", "low": 0.6, "high": 1.1},
            {"path": MASS, "dist": "normal", "by": "factor", "mean": 1.1, "sd": 0.1, "low": 0.8, "high": 1.4},
        ],
    )
    ref = studies.run({**d, "seed": 11}, write=False, compiler_options=FAST).columns["distance"]
    trials = studies.run({**d, "seed": 12}, write=False, compiler_options=FAST).columns["distance"]
    median, p80 = np.quantile(ref, 0.5), np.quantile(ref, 0.8)
    blocks = trials.reshape(64, 64)
    lo, hi, cover = st.quantile_ranks(64, 0.5)
    hits = sum(
        st.quantile_interval(np.sort(b), 0.5)["low"] <= median <= st.quantile_interval(np.sort(b), 0.5)["high"]
        for b in blocks
    )
    assert sps.binomtest(int(hits), 64, cover).pvalue > 1e-3, (hits, cover)
    rates = [st.rate_interval(int(np.count_nonzero(b > p80)), 64) for b in blocks]
    hits = sum(r["low"] <= 0.2 <= r["high"] for r in rates)
    assert sps.binomtest(int(hits), 64, 0.95, alternative="less").pvalue > 1e-3, hits
