"""Issue 36 on vehicles: failure events in studies of wet braking from 12 m/s (single track, 10 ms; friction
~ N(1, 0.1) and mass x U(0.9, 1.25), hatchback, ~11 m stops).

* plain Monte Carlo with adaptive stopping: the rate and its Clopper-Pearson interval from the table, the
  history; a run resumed from a journal cut short gives the same table and summary, bit for bit;
* the rare-event estimators agree with a plain Monte Carlo reference of 32 768 runs within their combined
  standard errors at P[distance > 14.8 m] ~ 5e-3;
* the limit state's gradient (the metric's pathwise gradient times the factors' map) matches central
  differences of its value, in float32 and float64;
* ``python -m sims study`` killed with SIGKILL at two moments resumes to the same table and summary as a run
  never killed, and a killed folder never reads as complete.
"""

import json
import shutil
import signal
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from sims.studies import report, table
from sims.studies import statistics as stats
from sims.studies import study as sm
from sims.studies.journal import Journal
from tests.sims.conftest import FAST
from tests.sims.studies.wet import BASE, MASS, MU, MU_ALSO

WET = dict(
    BASE,
    runs=32768,
    seed=7,
    metrics=["distance"],
    vary=[
        {"path": MU, "by": "factor", "dist": "normal", "mean": 1.0, "sd": 0.1, "also": MU_ALSO},
        {"path": MASS, "by": "factor", "dist": "uniform", "low": 0.9, "high": 1.25},
    ],
)
RARE = "distance > 14.8"  # ~5e-3 (the 99.5th percentile of 32 768 runs: 14.77 m)


def _study(**kw):
    return sm.Study.from_dict({**WET, **kw})


def _same(a, b):
    """Two results: the same columns bit for bit and the same summary but for the timings and the run date."""
    assert list(a.columns) == list(b.columns)
    for k in a.columns:
        np.testing.assert_array_equal(a.columns[k], b.columns[k], err_msg=k)
    sa, sb = (dict(r.summary, timing=None, date=None) for r in (a, b))
    assert json.dumps(sa, sort_keys=True, default=str) == json.dumps(sb, sort_keys=True, default=str)


@pytest.fixture(scope="module")
def reference():
    """Plain Monte Carlo of the rare event over 32 768 runs (the whole design, one fleet)."""
    return sm.run(_study(event={"when": RARE}), compiler_options=FAST)


def test_monte_carlo_event_stops_at_its_target_and_resumes(tmp_path):
    st = _study(runs=16384, event={"when": "distance > 13.8", "target": 0.25, "batch": 512})
    full = sm.run(st, journal=tmp_path / "a", compiler_options=FAST)
    ev = full.summary["event"]
    n = full.summary["runs"]
    assert n % 512 == 0 and 512 < n < 16384 and ev["runs"] == n and ev["budget"] == 16384
    k = int(np.sum(full.columns["distance"] > 13.8))
    r = stats.rate_interval(k, n)
    assert (ev["p"], ev["low"], ev["high"]) == (r["rate"], r["low"], r["high"])
    assert ev["half_width"] <= 0.25 < (ev["history"][-2][3] - ev["history"][-2][2]) / (2 * ev["history"][-2][1])
    assert [h[0] for h in ev["history"]] == list(range(512, n + 1, 512))
    assert full.columns["failed"].dtype == bool and int(full.columns["failed"].sum()) == k
    # a journal cut short (the last two batches lost): the rerun replays the rest and ends the same
    files = sorted((tmp_path / "a").glob("batch-*.npz"))
    assert len(files) == n // 512
    (tmp_path / "b").mkdir()
    for f in files[:-2]:
        shutil.copy(f, tmp_path / "b" / f.name)
    _same(full, sm.run(st, journal=tmp_path / "b", compiler_options=FAST))


def test_rare_event_estimators_agree_with_plain_monte_carlo(reference):
    ref = reference.summary["event"]
    assert 2e-3 < ref["p"] < 1e-2, ref
    runs = {}
    for est, extra in (
        ("cross_entropy", {"batch": 500, "target": 0.15}),
        ("subset", {"batch": 500, "target": 0.3}),
        ("form", {"batch": 250, "target": 0.15}),
    ):
        res = sm.run(_study(runs=20000, event={"when": RARE, "estimator": est, **extra}), compiler_options=FAST)
        ev = res.summary["event"]
        z = abs(ev["p"] - ref["p"]) / np.hypot(ev["se"], ref["se"])
        print(f"{est}: {ev['p']:.4g} [{ev['low']:.4g}, {ev['high']:.4g}] from {ev['runs']} runs; MC {ref['p']:.4g} +- {ref['se']:.2g}; z {z:.2f}")  # fmt: skip
        assert z < 2.5, (est, ev, ref)
        assert ev["half_width"] <= extra["target"] or ev["runs"] >= 20000
        assert res.summary["statistics"] == {} and len(res.columns["run"]) == ev["runs"]
        # the table: every row the estimator ran, its factors, metric and failure flag
        assert np.array_equal(res.columns["failed"], res.columns["distance"] > 14.8)
        runs[est] = ev["runs"]
    # to the same relative half-width (0.15) plain Monte Carlo needs (1 - p) / p (1.96 / 0.15)^2 runs
    mc = (1 - ref["p"]) / ref["p"] * (1.96 / 0.15) ** 2
    assert runs["cross_entropy"] * 5 < mc and runs["form"] * 5 < mc, (runs, mc)


def test_limit_state_gradient_against_finite_differences():
    """float64: the gradient against central differences of the value (h = 1e-3 in u); float32: the same
    gradient, finite, within 1 % of float64's (float32 differences are noise at any step here)."""
    st = _study(runs=1000, event={"when": "distance > 14", "estimator": "form", "batch": 250})
    u = np.array([-1.2, 0.6])
    grads = {}
    for x64 in (True, False):
        with jax.enable_x64(x64):
            scenario, metrics, _, event = sm._prepare(st)
            state = sm.VehicleLimitState(
                st, scenario, sm._vehicle(st), event, tuple(metrics), Journal(None), None, FAST
            )
            g, grads[x64] = state.value_and_grad(u)
            assert np.all(np.isfinite(grads[x64])) and grads[x64][0] > 0 > grads[x64][1]  # grip: shorter; mass: longer
            if x64:
                h = 1e-3
                fd = [
                    (state.value_and_grad(u + h * e)[0] - state.value_and_grad(u - h * e)[0]) / (2 * h)
                    for e in np.eye(2)
                ]
                print(f"g {g:.5f}, grad {grads[x64]}, central differences {fd}")
                np.testing.assert_allclose(grads[x64], fd, rtol=1e-4)
    np.testing.assert_allclose(grads[False], grads[True], rtol=0.01)


def _cli(folder, toml):
    return subprocess.Popen(
        [sys.executable, "-m", "sims", "study", str(toml), "--folder", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_killed_study_resumes_to_the_same_numbers(tmp_path):
    st = _study(runs=4096, chunk=256, event={"when": "distance > 13.8"})
    toml = tmp_path / "wet.toml"
    toml.write_text(sm.dumps(st))
    whole = tmp_path / "whole"
    p = _cli(whole, toml)
    out = p.communicate(timeout=600)[0]
    assert p.returncode == 0, out
    killed = tmp_path / "killed"
    for at in (3, 9):  # kill -9 once 3, then once 9 batches are saved
        p = _cli(killed, toml)
        t0 = time.time()
        while len(list((killed / report.CHUNKS).glob("batch-*.npz"))) < at and p.poll() is None:
            assert time.time() - t0 < 600
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        p.wait()
        assert not report.is_complete(killed)
    p = subprocess.run(
        [sys.executable, "-m", "sims", "study", str(killed)], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert report.is_complete(killed) and not (killed / report.CHUNKS).exists()
    a, b = (table.read(f / "results.parquet" if table.has_parquet() else f / "results.csv") for f in (whole, killed))
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)
    sa, sb = (json.loads((f / "summary.json").read_text()) for f in (whole, killed))
    for s in (sa, sb):
        s.pop("timing"), s.pop("date")
    assert sa == sb and sa["event"]["runs"] == 4096
