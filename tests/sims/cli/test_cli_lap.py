"""``python -m sims --scenario lap``: a lap of an unseen circuit file (no code change), its outputs, flag errors."""

import numpy as np
import pytest

from sims.cli.fleet import main


def test_lap_cli_on_an_unseen_circuit_file(tmp_path):
    t = np.linspace(0, 2 * np.pi, 241)[:-1]
    rows = [f"{400 * np.cos(u):.3f},{200 * np.sin(u) + 60 * np.sin(3 * u):.3f},6,6" for u in t]
    track = tmp_path / "Bean.csv"
    track.write_text("# x_m,y_m,w_tr_right_m,w_tr_left_m\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    res = main(
        ["--scenario", "lap", "--track", str(track), "--preset", "race_car", "--tire", "simple", "--out", str(out)]
    )
    assert 20 < res["lap_time"] < 80 and np.isclose(sum(res["sector_times"]), res["lap_time"], rtol=1e-4)
    prof = np.genfromtxt(out / "lap_profile.csv", delimiter=",", names=True)
    assert set(prof.dtype.names) >= {"s", "x", "y", "v", "ax", "ay", "t"} and len(prof) > 500
    assert (out / "lap.png").stat().st_size > 10_000
    tire = main(
        [
            "--scenario",
            "lap",
            "--track",
            str(track),
            "--preset",
            "race_car",
            "--tire",
            "simple",
            "--envelope",
            "tire",
            "--out",
            str(out),
            "--no-plot",
        ]
    )
    assert (
        res["lap_time"] < tire["lap_time"] < 1.1 * res["lap_time"]
    )  # the tire's own envelope: slip drag, combined slip


def test_lap_cli_refuses_an_unknown_track(capsys):
    with pytest.raises(SystemExit):
        main(["--scenario", "lap", "--track", "Nordschleife"])
    assert "neither a shipped circuit" in capsys.readouterr().err


def test_lap_cli_says_a_track_file_is_missing(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["--scenario", "lap", "--track", str(tmp_path / "my_circuit.csv")])
    assert f"no such file ({tmp_path / 'my_circuit.csv'})" in capsys.readouterr().err
