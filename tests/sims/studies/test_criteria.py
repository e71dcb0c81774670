"""Issue 37 item 6: pass criteria decided on the 95 % intervals (pass / fail / undecided worked by hand on
a summary), their parsing errors, and the plain description of a study."""

import pytest

from jaxtire.validation import ValidationError
from sims.scenarios import catalog
from sims.studies import criteria as C
from sims.studies import study as sm

METRICS = {m.name: m for m in catalog.get("braking").metrics}
SUMMARY = {
    "runs": 256,
    "statistics": {
        "distance": {"mean": 55.0, "sem": 1.0, "percentiles": {"p50": {"value": 54.0, "low": 53.0, "high": 55.5},
                                                               "p95": {"value": 58.0, "low": 57.0, "high": 61.0}}},
        "passed": {"rate": 0.995, "low": 0.978, "high": 0.9999},
    },
    "event": {"p": 2e-5, "low": 1e-5, "high": 4e-5},
}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("p95(distance) < 62", "pass"),  # 57-61 all below
        ("p95(distance) < 56", "fail"),  # 57-61 all above
        ("p95(distance) < 60", "undecided"),  # straddles
        ("p50(distance) <= 55.5", "pass"),
        ("mean(distance) < 57", "pass"),  # 55 +- 1.96
        ("mean(distance) > 57", "fail"),
        ("rate(passed) >= 0.99", "undecided"),  # 0.978-0.9999
        ("rate(passed) > 0.95", "pass"),
        ("P < 1e-4", "pass"),
        ("P < 3e-5", "undecided"),
        ("P < 5e-6", "fail"),
    ],
)
def test_verdicts_on_the_intervals(text, verdict):
    c = C.check_criterion(text, METRICS, (50, 95), event=True)
    assert C.verdict(c, SUMMARY)["verdict"] == verdict


def test_the_studys_verdict():
    cs = [C.check_criterion(t, METRICS, (50, 95), True) for t in ("p95(distance) < 62", "P < 3e-5")]
    assert C.verdicts(cs, SUMMARY)["verdict"] == "undecided"
    cs.append(C.check_criterion("mean(distance) > 57", METRICS, (50, 95), True))
    assert C.verdicts(cs, SUMMARY)["verdict"] == "fail"
    assert C.verdicts(cs[:1], SUMMARY)["verdict"] == "pass" and C.verdicts([], SUMMARY)["verdict"] is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p95(distanse) < 60", "'distanse' is not a metric"),
        ("p99(distance) < 60", "not one of the study's percentiles"),
        ("rate(distance) > 0.5", "rate() takes a flag"),
        ("mean(passed) > 0.5", "is a flag: use rate(passed)"),
        ("P < 1e-4", "has no [event]"),
        ("distance < 60", "is not '<stat>(<metric>) <op> <number>'"),
        ("p95(distance) < sixty", "'sixty' is not a number"),
    ],
)
def test_bad_criteria(text, message):
    with pytest.raises(ValidationError) as info:
        C.check_criterion(text, METRICS, (50, 95), event=False)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_description_says_what_ran():
    st = sm.Study.from_dict(
        dict(scenario="braking", vehicle={"surface": "asphalt_wet"}, settings={"speed": 22.22}, runs=64, design="sobol",
             event={"when": "distance > 60"},
             vary=[{"path": "vehicle.tire_scale.mu_x", "dist": "normal", "by": "factor", "mean": 0.95, "sd": 0.08}])
    )  # fmt: skip
    text = C.describe(st, {"runs": 64})
    for part in ("Scenario braking", "hatchback preset", "asphalt wet", "speed = 22.22 m/s (80 km/h)",
                 "vehicle.tire_scale.mu_x (normal mean 0.95 sd 0.08, a factor", "64 runs, design sobol",
                 "Failure event: distance > 60"):  # fmt: skip
        assert part in text, (part, text)


def test_plot_captions_and_unitless_gradients():
    """The report's captions say what a plot shows (not its file name); gradients are drawn as elasticities
    ``(dm/dx) x / m`` (worked by hand: m = 2 x^2 has elasticity 2 whatever x's unit)."""
    from pathlib import Path
    from types import SimpleNamespace

    import numpy as np

    from sims.studies import report

    assert report.caption(Path("hist_distance.png")).startswith("Distribution of distance over the runs")
    assert "Sobol' indices of stop_time" in report.caption(Path("sobol_stop_time.png"))
    assert report.caption(Path("event.png")).startswith("The event's probability")
    x = np.array([1.0, 2.0, 3.0, 4.0])
    res = SimpleNamespace(columns={"x": x, "m": 2 * x * x})
    np.testing.assert_allclose(report.elasticity(res, "m", "x", 4 * x[:3]), [2.0, 2.0, 2.0])


def test_gradient_table_units():
    """The report's gradient table names each derivative's unit from the table's column units: a factor column
    is unitless, so d distance / d factor is in metres; a value column divides."""
    from sims.studies.report import _gradient_unit

    units = {"distance": "m", "spun": "-", "mass": "-", "scenario.yaw_rate0": "rad/s", "speed": "m/s", "k": "N m"}
    assert _gradient_unit(units, "distance", "mass") == "m"
    assert _gradient_unit(units, "distance", "scenario.yaw_rate0") == "m / (rad/s)"
    assert _gradient_unit(units, "spun", "k") == "1 / (N m)"
    assert _gradient_unit(units, "spun", "mass") == "-"
    assert _gradient_unit({}, "distance", "mass") == "-"
