"""The fleet CLI: default-shaped run on a small fleet, table scenarios, bad flags."""

import csv

import pytest

from sims.cli import main


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
    main(["--scenario", "braking-table", "--preset", "kart", "--surfaces", "asphalt_dry,ice", "--out", str(tmp_path),
          "--fast-compile"])
    text = capsys.readouterr().out
    assert "| kart |" in text and "spins" in text
    assert (tmp_path / "braking_table.csv").exists()


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
