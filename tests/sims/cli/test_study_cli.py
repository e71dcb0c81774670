"""The identify and tune CLIs: --json / --csv outputs of the result and the progress bar on stderr."""

import csv
import json

import pytest

from sims.cli import main
from sims.studies.identify import DEFAULT_PARAMETERS, get_parameter
from sims.studies.tuning import LANE_GAINS, lane_gains
from sims.vehicles import presets


@pytest.fixture(scope="module")
def identify_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("identify")
    argv = ["identify", "--tire", "simple", "--steps", "80", "--window", "40", "--iters", "3",
            "--json", str(d / "res.json"), "--csv", str(d / "res.csv")]
    return d, argv


def test_identify_writes_json_and_csv(identify_run, capsys):
    d, argv = identify_run
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


def test_identify_no_progress_keeps_stderr_quiet(identify_run, capsys):
    _, argv = identify_run
    assert main(argv[:-4] + ["--no-progress"]) == 0
    assert "3/3" not in capsys.readouterr().err


def test_tune_writes_json_and_csv(tmp_path, capsys):
    argv = ["tune", "--tire", "simple", "--lateral-only", "--iters", "2", "--vehicles", "2", "--heldout", "1",
            "--dt", "0.05", "--json", str(tmp_path / "t.json"), "--csv", str(tmp_path / "t.csv")]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "lane-change tuning" in cap.err and "2/2" in cap.err
    res = json.loads((tmp_path / "t.json").read_text())
    (c,) = res["controllers"]
    assert c["report"]["iterations"] == 2 and len(c["report"]["losses"]) == 2 and c["report"]["n_vehicles"] == 2
    assert set(c["gains"]) == set(LANE_GAINS) and list(c["evaluation"]) == ["1001"]
    untuned = lane_gains()
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert [r["gain"] for r in rows] == list(LANE_GAINS) and {r["controller"] for r in rows} == {"lane_change"}
    for r in rows:  # the untuned column is the driver's defaults, the tuned one the result's gains
        assert float(r["untuned"]) == pytest.approx(untuned[r["gain"]], rel=1e-5)
        assert float(r["tuned"]) == pytest.approx(c["gains"][r["gain"]], rel=1e-5)


@pytest.mark.parametrize("cmd", ["identify", "tune"])
def test_output_folder_must_exist(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([cmd, "--json", "/nonexistent/dir/r.json"])
    assert e.value.code == 2
    assert "--json /nonexistent/dir/r.json: the folder /nonexistent/dir does not exist" in capsys.readouterr().err
