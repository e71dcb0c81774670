"""The fleet CLI: default-shaped run on a small fleet, table scenarios, bad flags."""

import csv

import pytest

from sims.cli import main
from sims.studies.study import load


def test_braking_monte_carlo_prints_summary_and_writes_files(tmp_path, capsys):
    out = main(["--vehicles", "64", "--steps", "1200", "--out", str(tmp_path), "--no-progress", "--fast-compile",
                "--seed", "3"])
    text = capsys.readouterr().out
    for s in ("asphalt_dry", "ice", "p50", "spins", "M vehicle-steps/s", "compile"):
        assert s in text
    assert (tmp_path / "braking_hist.png").stat().st_size > 10_000
    rows = list(csv.DictReader(open(tmp_path / "braking.csv")))
    assert len(rows) == 64
    assert {"surface", "abs", "distance_m", "stop_time_s", "spun", "mass_factor"} <= set(rows[0])
    assert out["stats"].vehicles == 64
    # same seed, same results
    out2 = main(["--vehicles", "64", "--steps", "1200", "--out", str(tmp_path / "b"), "--no-progress",
                 "--fast-compile", "--seed", "3", "--no-plot"])
    assert open(tmp_path / "b" / "braking.csv").read() == open(tmp_path / "braking.csv").read()
    assert out2["summary"].splitlines()[:-1] == out["summary"].splitlines()[:-1]  # all but the timing line


def test_table_scenario(tmp_path, capsys):
    """The braking table is a study per preset: --save-study writes it (the grid ABS x surface, one run a cell)."""
    main(["--scenario", "braking-table", "--preset", "kart", "--surfaces", "asphalt_dry,ice", "--out", str(tmp_path),
          "--fast-compile", "--save-study", str(tmp_path / "table.toml")])
    text = capsys.readouterr().out
    assert "| kart |" in text and "spins" in text
    assert (tmp_path / "braking_table.csv").exists()
    study = load(tmp_path / "table.toml")
    assert (study.scenario, study.preset, study.runs) == ("braking", "kart", 1)
    assert [v.path for v in study.vary] == ["scenario.abs_on", "vehicle.surface"]


@pytest.mark.parametrize("argv, message", [
    (["--dt", "0"], "--dt 0.0 is outside the allowed range"),
    (["--dt", "-0.01"], "--dt -0.01 is outside"),
    (["--vehicles", "0"], "--vehicles 0 is outside"),
    (["--preset", "truck"], "--preset 'truck' is unknown; known presets: hatchback"),
    (["--surfaces", "lava"], "unknown surface"),
    (["--scenario", "drag-race"], "--scenario 'drag-race' is unknown"),
    (["--integrator", "rk45"], "--integrator 'rk45' is unknown"),
    (["--device", "quantum"], "--device 'quantum' is unknown"),
])
def test_bad_flags_fail_before_anything_runs(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv + ["--out", "/nonexistent/never-written"])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_tir_missing_file_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--tir", "/nonexistent/tire.tir", "--out", "/nonexistent/never-written"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["python -m sims: error: --tir /nonexistent/tire.tir: no such file"]


def test_tir_unparsable_file_and_tire_clash_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.tir"
    bad.write_text("this is not a tire property file\n")
    with pytest.raises(SystemExit) as e:
        main(["--tir", str(bad), "--vehicles", "2", "--out", str(tmp_path)])
    assert e.value.code == 2 and "--tir" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--tir", str(bad), "--tire", "simple", "--out", str(tmp_path)])
    assert e.value.code == 2 and "exclude each other" in capsys.readouterr().err


def test_tir_runs_the_monte_carlo_on_that_tire(tmp_path, capsys):
    """The same seed on another tire file: the run names the file and its distances differ from the default's."""
    from tests.conftest import tir_path

    tir = tir_path("MagicFormula61_Parameters.tir")
    argv = ["--vehicles", "8", "--steps", "1200", "--surfaces", "asphalt_dry", "--no-plot", "--no-progress",
            "--fast-compile", "--seed", "1"]
    out = main(argv + ["--tir", str(tir), "--out", str(tmp_path / "a")])
    assert f"{tir.name} tires" in capsys.readouterr().out
    ref = main(argv + ["--out", str(tmp_path / "b")])
    a = [r["distance_m"] for r in csv.DictReader(open(tmp_path / "a" / "braking.csv"))]
    b = [r["distance_m"] for r in csv.DictReader(open(tmp_path / "b" / "braking.csv"))]
    assert len(a) == 8 and a != b
    assert out["stats"].vehicles == ref["stats"].vehicles == 8


def test_full_model_runs_the_default_monte_carlo(tmp_path, capsys):
    """``python -m sims --model full``: the default braking Monte Carlo (from 100 km/h) on the 14-DOF full
    vehicle (issue 26); the stopped cars on dry asphalt stop between ``v^2 / (2 g 1.3)`` and ``v^2 / (2 g 0.6)``
    (the tire's peak friction bounds them; locked wheels slide at ~0.75)."""
    main(["--model", "full", "--vehicles", "8", "--steps", "1200", "--surfaces", "asphalt_dry,ice", "--no-plot",
          "--no-progress", "--fast-compile", "--seed", "0", "--out", str(tmp_path)])
    assert "(full," in capsys.readouterr().out
    rows = list(csv.DictReader(open(tmp_path / "braking.csv")))
    assert len(rows) == 8
    v = 100 / 3.6
    dry = [float(r["distance_m"]) for r in rows if r["surface"] == "asphalt_dry" and r["stopped"] == "1"]
    assert dry and all(v * v / (2 * 9.81 * 1.3) < d < v * v / (2 * 9.81 * 0.6) for d in dry), dry
