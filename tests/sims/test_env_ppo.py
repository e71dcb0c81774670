"""PPO smoke test through the command line: a small budget (200k steps, ~10 s of training) on the
braking task must beat the random policy, and the run writes its learning curve as JSON, CSV and PNG
that read back to the returned history.  Well under a minute on two CPU cores."""

import csv
import json

import numpy as np

from sims.envs.ppo import CSV_COLUMNS, main


def test_ppo_beats_random_on_braking_quickly(tmp_path, capsys):
    hist = main(["--task", "braking", "--steps", "200000", "--lr", "3e-3", "--minibatches", "8", "--seed", "0",
                 "--out", str(tmp_path / "run"), "--no-progress", "--no-initial"])
    n_updates = 200_000 // (64 * 64)
    assert len(hist["steps"]) == n_updates and hist["steps"][-1] == n_updates * 64 * 64
    assert np.isfinite(hist["mean_return"]).sum() >= n_updates // 2
    # uniform random pedals lock wheels and overload the rear axle: about 1.3 ideal stopping distances
    assert -0.6 < hist["random_score"] < -0.15
    # 48 updates gain 0.1-0.2 (10-20 % of the ideal stopping distance; seeds 0-3), 1M steps about 0.3
    assert hist["final_score"] > hist["random_score"] + 0.05, hist
    assert hist["sample_score"] > hist["random_score"] + 0.05, hist
    assert "learning curve written to" in capsys.readouterr().out
    doc = json.load(open(tmp_path / "run.json"))
    assert doc["config"]["total_steps"] == 200_000 and doc["config"]["lr"] == 3e-3 and doc["num_updates"] == n_updates
    assert doc["final_score"] == hist["final_score"] and doc["curve"]["steps"] == hist["steps"]
    rows = list(csv.reader(open(tmp_path / "run.csv")))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == n_updates + 1
    back = np.array([float(r[2]) for r in rows[1:]])
    np.testing.assert_allclose(back, hist["mean_return"], rtol=1e-12, equal_nan=True)
    assert [int(r[1]) for r in rows[1:]] == hist["steps"]
    assert (tmp_path / "run.png").stat().st_size > 5000
