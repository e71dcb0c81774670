"""Issue 36, item 1 and 3 without vehicles: failure events parsed from study files (limit states worked by
hand, errors naming the key), the standard-normal map of a study's factors against its own design, the
journal's replay and refusal, and adaptive stopping of every estimator on a linear limit state."""

import numpy as np
import pytest
from scipy import special

from jaxtire.validation import ValidationError
from sims.scenarios import catalog
from sims.studies import events, rare
from sims.studies.journal import Journal
from sims.studies.variation import Variation, draw, from_normal

BRAKING = {m.name: m for m in catalog.get("braking").metrics}
ISO = {m.name: m for m in catalog.get("iso3888_2").metrics}


def test_events_from_the_study_file():
    e = events.check_event({"when": "distance > 60"}, BRAKING)
    assert (e.metric, e.op, e.threshold, e.estimator, e.target, e.batch) == (
        "distance",
        ">",
        60.0,
        "monte_carlo",
        0,
        1000,
    )
    # g = t - m: negative past the threshold, a tiny positive at the tie of a strict inequality
    np.testing.assert_allclose(e.limit_state(np.array([61.5, 59.0])), [-1.5, 1.0])
    assert e.limit_state(np.array([60.0]))[0] == events.TIE
    assert e.failed([61.0, 60.0, 59.0]).tolist() == [True, False, False]
    ge = events.check_event({"when": "distance >= 60"}, BRAKING)
    assert ge.failed([60.0]).tolist() == [True]
    lt = events.check_event({"when": "max_yaw<0.2", "estimator": "subset", "batch": 500, "level": 0.2}, BRAKING)
    np.testing.assert_allclose(lt.limit_state(np.array([0.1, 0.3])), [-0.1, 0.1])
    # an integer metric: one cone hit fails, none does not
    assert events.check_event({"when": "cone_hits > 0"}, ISO).failed([0.0, 1.0, 3.0]).tolist() == [False, True, True]
    # flags: spun = spun > 0.5; not passed = passed < 0.5
    assert events.check_event({"when": "spun"}, BRAKING).failed([0.0, 1.0]).tolist() == [False, True]
    assert events.check_event({"when": "not passed"}, BRAKING).failed([0.0, 1.0]).tolist() == [True, False]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"when": "distanse > 60"}, "'distanse' is not a metric of the scenario"),
        ({"when": "distance >> 60"}, "is not '<metric> <op> <number>'"),
        ({"when": "distance > sixty"}, "threshold 'sixty' is not a number"),
        ({"when": "distance > inf"}, "threshold must be finite"),
        ({"when": "distance"}, "'distance' is a value; give a threshold"),
        ({"when": "not distance > 3"}, "'not' applies to a flag alone"),
        ({"when": 60}, "when = 60 must be a string"),
        ({"when": "spun", "estimator": "subset"}, "'spun' is a flag"),
        ({"when": "stop_time > 3", "estimator": "form"}, "'form' needs a smooth metric"),
        ({"when": "distance > 60", "estimator": "subset", "batch": 1005}, "multiple of 1 / level = 10"),
        ({"when": "distance > 60", "estimator": "importance"}, "estimator"),
        ({"when": "distance > 60", "target": -0.1}, "target"),
        ({"when": "distance > 60", "batch": 5}, "batch"),
        ({"when": "distance > 60", "level": 0.7}, "level"),
        ({"when": "distance > 60", "alpha": 1}, "unknown key(s) ['alpha']"),
        ("distance > 60", "must be a table"),
    ],
)
def test_bad_events_are_one_line_errors(table, message):
    with pytest.raises(ValidationError, match="Study: event") as info:
        events.check_event(table, BRAKING)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_normal_map_is_the_designs_map():
    """from_normal at Phi^-1 of a design's unit points gives that design's factors (with a copula)."""
    vs = [
        Variation("vehicle.tire_scale.mu_x", dist="normal", mean=1.0, sd=0.1, low=0.7, high=1.2),
        Variation("vehicle.chassis.mass", dist="uniform", low=0.9, high=1.2),
        Variation("vehicle.chassis.cg_height", dist="lognormal", median=1.0, sigma=0.05),
    ]
    corr = [["vehicle.tire_scale.mu_x", "vehicle.chassis.mass", -0.4]]
    d = draw(vs, 64, seed=5, correlation=())
    unit = np.stack([(d.columns[vs[1].path] - 0.9) / 0.3], 1)  # the uniform's unit values
    got = from_normal(vs[1:2], special.ndtri(unit))
    np.testing.assert_allclose(got[vs[1].path], d.columns[vs[1].path], rtol=1e-12)
    # correlated: the copula's z L^T, the same as draw's Phi(Phi^-1(u) L^T)
    rng = np.random.default_rng(0)
    z = rng.standard_normal((4000, 3))
    x = from_normal(vs, z, corr)
    r = np.corrcoef(special.ndtri(special.ndtr(z @ np.linalg.cholesky(_corr3(-0.4)).T))[:, :2].T)[0, 1]
    assert abs(np.corrcoef(x[vs[0].path], x[vs[1].path])[0, 1] - r) < 0.05
    assert x[vs[0].path].min() >= 0.7 and x[vs[0].path].max() <= 1.2
    # 5 sigma along the unbounded lognormal: its quantile exactly (no loss in the tail)
    far = from_normal(vs[2:], np.array([[5.0], [-5.0]]))[vs[2].path]
    np.testing.assert_allclose(far, np.exp([0.25, -0.25]), rtol=1e-9)
    with pytest.raises(ValidationError, match="grids"):
        from_normal([Variation("vehicle.chassis.mass", dist="grid", values=(1.0, 1.1))], z[:, :1])


def _corr3(rho):
    c = np.eye(3)
    c[0, 1] = c[1, 0] = rho
    return c


def test_the_journal_replays_and_refuses_other_inputs(tmp_path):
    calls = []

    def fn(x):
        calls.append(1)
        return {"y": x * 2.0}

    x = {"a": np.arange(5.0)}
    j = Journal(tmp_path)
    np.testing.assert_array_equal(j.call(x, lambda: fn(x["a"]))["y"], x["a"] * 2)
    j2 = Journal(tmp_path)  # a rerun: the first batch comes from its file
    np.testing.assert_array_equal(j2.call(x, lambda: fn(x["a"]))["y"], x["a"] * 2)
    assert len(calls) == 1 and (j2.replayed, j2.ran) == (1, 0)
    with pytest.raises(ValidationError, match="batch 0 was run with other inputs"):
        Journal(tmp_path).call({"a": np.arange(6.0)}, lambda: fn(np.arange(6.0)))
    (tmp_path / "batch-000000.npz").write_bytes(b"cut short")  # a damaged file is run again
    Journal(tmp_path).call(x, lambda: fn(x["a"]))
    assert len(calls) == 2


@pytest.mark.parametrize("name", ["monte_carlo", "cross_entropy", "form_importance", "subset_simulation"])
def test_adaptive_stopping_reaches_its_target(name):
    """Batches until the relative half-width is <= 0.1 (p = 1e-3, linear in 3 factors); the history grows
    in runs and ends at the target."""
    beta = float(-special.ndtri(1e-3))
    a = np.ones(3) / np.sqrt(3.0)
    g = lambda u: beta - u @ a  # noqa: E731
    fn = getattr(rare, name)
    est = fn(g, 3, n=2000 if name == "monte_carlo" else 500, seed=1, target=0.1, max_runs=2_000_000)
    runs = [h[0] for h in est.history]
    assert runs == sorted(runs) and runs[-1] == est.runs and len(runs) >= 2
    assert est.half_width <= 0.1 < (est.history[-2][3] - est.history[-2][2]) / (2 * est.history[-2][1] or 1)
    assert est.covers(1e-3) or abs(est.p / 1e-3 - 1) < 0.3
    # a budget stops it first
    short = fn(g, 3, n=2000 if name == "monte_carlo" else 500, seed=1, target=0.01, max_runs=4000)
    assert short.half_width > 0.01 and short.runs >= 4000 and short.runs < 4000 + 6000


def test_the_study_files_in_the_docs_are_valid():
    """Every TOML block of docs/studies.md: a whole study file passes every pre-run check, and so does a
    fragment ([event], criteria, [[metric]]) in a study of its scenario."""
    import re
    import tomllib
    from pathlib import Path

    from sims.studies import study as sm

    text = (Path(__file__).resolve().parents[3] / "docs" / "studies.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    for b in blocks:
        d = tomllib.loads(b)
        if "scenario" in d:
            sm.check(sm.Study.from_dict(d))
        elif "metric" in d:  # a fragment: [[metric]] tables of the ISO 3888 track
            sm.check(sm.Study.from_dict({"scenario": "iso3888_2", **d}))
        else:  # a fragment: [event] or criteria of a braking study with a random factor
            mu = {"path": "vehicle.tire_scale.mu_x", "dist": "normal", "by": "factor", "mean": 1.0, "sd": 0.1}
            base = {"scenario": "braking", "event": {"when": "distance > 60"}, "vary": [mu]}
            sm.check(sm.Study.from_dict({**base, **d}))
