"""The identify and tune CLIs: --json / --csv outputs of the result and the progress bar on stderr."""

import csv
import json

import numpy as np
import pytest

from sims.cli import main
from sims.cli import tune as tune_cli
from sims.studies.identify import DEFAULT_PARAMETERS, get_parameter
from sims.studies.tuning import LANE_GAINS, TuneReport, TuneResult, lane_gains
from sims.vehicles import presets


def test_identify_writes_json_and_csv(tmp_path, capsys):
    d = tmp_path  # end to end, tiny: 3 iterations on a 40-step log
    argv = ["identify", "--tire", "simple", "--steps", "40", "--window", "20", "--iters", "3",
            "--json", str(d / "res.json"), "--csv", str(d / "res.csv")]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert f"wrote {d / 'res.json'}" in cap.out and f"wrote {d / 'res.csv'}" in cap.out
    assert "identify" in cap.err and "3/3" in cap.err  # the tqdm bar reached the last iteration, on stderr
    res = json.loads((d / "res.json").read_text())
    assert res["command"] == "identify" and res["preset"] == "hatchback" and res["tire"].startswith("simple")
    assert res["report"]["iterations"] == 3 and len(res["report"]["losses"]) == 3
    assert [r["parameter"] for r in res["rows"]] == list(DEFAULT_PARAMETERS)
    base = presets.get("hatchback", tire="simple")
    for r in res["rows"]:  # the start is the preset; the error column is identified / true - 1
        assert r["start"] == pytest.approx(float(get_parameter(base, r["parameter"])), rel=1e-6)
        assert r["rel_error"] == pytest.approx(r["identified"] / r["true"] - 1.0, rel=1e-6, abs=1e-9)
    rows = list(csv.DictReader(open(d / "res.csv")))
    assert [r["parameter"] for r in rows] == list(DEFAULT_PARAMETERS)
    for r, j in zip(rows, res["rows"], strict=True):
        assert float(r["identified"]) == pytest.approx(j["identified"], rel=1e-5)  # csv keeps 6 digits


class _FakeTuning:
    """Stands in for tune_lateral / evaluate_lateral (tested in tests/sims/studies): known gains and
    metrics, and it drives the progress bar the CLI hands it, so this test checks the CLI layer only."""

    def __init__(self):
        self.gains = {k: 2.0 * v for k, v in lane_gains().items()}

    def tune(self, setup, *, verbose, progress, n_iter, heldout_seeds, n_vehicles, **kw):
        for _ in range(n_iter):
            progress.update(1)
        gains = {k: (v, self.gains[k]) for k, v in lane_gains().items()}
        held = {s: (1.0, 0.5) for s in heldout_seeds}
        rep = TuneReport("lane change", gains, np.array([3.0, 2.0]), "loss", held, n_vehicles, n_iter, 0.1, 0.2)
        return TuneResult(dict(self.gains), rep)

    def evaluate(self, gains, setup, seeds, n):
        return {s: (np.full(n, 0.1), np.full(n, 0.2)) for s in seeds}


@pytest.mark.parametrize("progress", [True, False])
def test_tune_writes_json_and_csv(tmp_path, capsys, monkeypatch, progress):
    fake = _FakeTuning()
    monkeypatch.setattr(tune_cli, "tune_lateral", fake.tune)
    monkeypatch.setattr(tune_cli, "evaluate_lateral", fake.evaluate)
    argv = ["tune", "--lateral-only", "--iters", "2", "--vehicles", "3", "--heldout", "1",
            "--json", str(tmp_path / "t.json"), "--csv", str(tmp_path / "t.csv")] + ([] if progress else ["--no-progress"])
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert ("lane-change tuning" in cap.err and "2/2" in cap.err) == progress  # the bar, on stderr only
    assert "2/2" not in cap.out
    res = json.loads((tmp_path / "t.json").read_text())
    (c,) = res["controllers"]
    assert c["report"]["iterations"] == 2 and c["report"]["losses"] == [3.0, 2.0] and c["report"]["n_vehicles"] == 3
    assert c["gains"] == pytest.approx(fake.gains) and c["evaluation"]["1001"]["tuned_rms_error"] == pytest.approx(0.1)
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert [r["gain"] for r in rows] == list(LANE_GAINS) and {r["controller"] for r in rows} == {"lane_change"}
    for r in rows:  # the untuned column is the driver's defaults, the tuned one the result's gains
        assert float(r["untuned"]) == pytest.approx(lane_gains()[r["gain"]], rel=1e-5)
        assert float(r["tuned"]) == pytest.approx(fake.gains[r["gain"]], rel=1e-5)


@pytest.mark.parametrize("cmd", ["identify", "tune"])
def test_output_folder_must_exist(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([cmd, "--json", "/nonexistent/dir/r.json"])
    assert e.value.code == 2
    assert "--json /nonexistent/dir/r.json: the folder /nonexistent/dir does not exist" in capsys.readouterr().err
