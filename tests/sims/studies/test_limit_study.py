"""Issue 37 item 2: the limit search from a study file: per vehicle of the design the highest ISO 3888-2
entry speed that passes, equal to :func:`sims.scenarios.limit.limit_search` on the same fleet, bracketed
within ``tol``, with percentile intervals in the summary; the CLI runs the file; bad ``[limit]`` tables
are one-line errors."""

import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims import studies
from sims.scenarios.limit import limit_search
from sims.studies import study as sm
from tests.sims.conftest import FAST

STUDY = dict(
    name="limit",
    scenario="iso3888_2",
    runs=4,
    seed=1,
    limit={"low": 12.0, "high": 22.0, "tol": 0.2},
    vary=[{"path": "vehicle.tire_scale.mu_y", "by": "factor", "dist": "uniform", "low": 0.75, "high": 0.95}],
)


def test_limit_study_equals_the_limit_search(tmp_path):
    st = sm.Study.from_dict(STUDY)
    res = studies.run(st, folder=tmp_path / "lim", compiler_options=FAST)
    lo, hi = np.asarray(res.columns["limit"]), np.asarray(res.columns["limit_fail"])
    assert np.all(np.isfinite(lo)) and np.all(hi - lo <= 0.2 + 1e-9) and np.all(hi > lo)
    # the same search, by hand, on the same four vehicles
    scenario, _, draws, _ = sm._prepare(st)
    params, settings = sm._inputs(st, scenario, sm._vehicle(st), draws.columns, 4)
    ref = limit_search(scenario, params, 12.0, 22.0, settings={k: v for k, v in settings.items() if k != "speed"},
                       tol=0.2, compiler_options=FAST)  # fmt: skip
    np.testing.assert_array_equal(lo, ref.passed_value)
    np.testing.assert_array_equal(hi, ref.failed_value)
    s = res.summary
    assert s["metrics"]["limit"]["unit"] == "m/s" and "p50" in s["statistics"]["limit"]["percentiles"]
    assert "limit" in (tmp_path / "lim" / "study.toml").read_text()
    # the report's limit-search section: the range searched and the limit's median with its interval
    page = (tmp_path / "lim" / "report.html").read_text()
    assert "<h2>Limit search: the highest speed each vehicle passed</h2>" in page
    assert "Searched 12 to 22 m/s (43 to 79 km/h) by bisection to 0.2 m/s" in page
    p50 = s["statistics"]["limit"]["percentiles"]["p50"]["value"]
    assert f"p50 {p50:.4g} m/s ({p50 * 3.6:.1f} km/h)" in page
    assert "0 vehicle(s) failed already at 12 m/s" in page


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ({"low": 12.0}, "high = None must be a finite number"),
        ({"low": 22.0, "high": 12.0}, "must be below high"),
        ({"setting": "sped", "low": 1.0, "high": 2.0}, "'sped' is not a setting"),
        ({"low": 12.0, "high": 22.0, "tol": 20.0}, "tol"),
        ({"low": 12.0, "high": 22.0, "step": 1}, "unknown key(s) ['step']"),
    ],
)
def test_bad_limit_tables(limit, message):
    with pytest.raises(ValidationError) as info:
        sm.check(sm.Study.from_dict({**STUDY, "limit": limit}))
    assert message in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValidationError, match="cannot also be fixed or varied"):
        sm.check(sm.Study.from_dict({**STUDY, "settings": {"speed": 15.0}}))
