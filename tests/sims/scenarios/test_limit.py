"""The limit search: the highest ISO 3888-1 entry speed per vehicle, bracketed by a pass and a fail."""

import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.run.fleet import make_fleet
from sims.scenarios.base import run_scenario
from sims.scenarios.limit import limit_search
from sims.vehicles import presets
from tests.sims.conftest import FAST

KW = dict(compiler_options=FAST, chunk_steps=500)


@pytest.fixture(scope="module")
def fleet():
    """The nominal hatchback and one on tires with 20 % less friction."""
    f = make_fleet(presets.get("hatchback"), 2)
    ch = f.chassis
    mu = np.array([1.0, 0.8], np.float32)
    scale = lambda ts: ts._replace(mu_x=ts.mu_x * mu, mu_y=ts.mu_y * mu)  # noqa: E731
    return f._replace(
        chassis=ch._replace(tire_scale_front=scale(ch.tire_scale_front), tire_scale_rear=scale(ch.tire_scale_rear))
    )


def test_limit_speed_is_bracketed_by_a_pass_below_and_a_fail_above(fleet):
    tol = 2.0 / 3.6
    res = limit_search("iso3888_1", fleet, 60 / 3.6, 110 / 3.6, tol=tol, **KW)
    lo, hi = res.passed_value, res.failed_value
    assert np.all(np.isfinite(lo) & np.isfinite(hi)) and np.all((hi > lo) & (hi - lo <= tol + 1e-9))
    assert res.runs <= 2 + int(np.ceil(np.log2((50 / 3.6) / tol)))  # one fleet run per bisection step
    assert 80 / 3.6 <= lo[0] and lo[1] < lo[0]  # the nominal car passes 80 km/h; less grip, a lower limit
    # re-run at the bracket: a pass just below, a fail just above, for every vehicle
    below, _ = run_scenario("iso3888_1", fleet, {"speed": lo}, **KW)
    above, _ = run_scenario("iso3888_1", fleet, {"speed": hi}, **KW)
    assert below["passed"].tolist() == [1.0, 1.0] and above["passed"].tolist() == [0.0, 0.0]


def test_limit_search_rejects_bad_brackets(fleet):
    with pytest.raises(ValidationError, match="low > high"):
        limit_search("iso3888_1", fleet, 30.0, 20.0)
    with pytest.raises(ValidationError, match="km/h"):
        limit_search("iso3888_1", fleet, 60.0, 110.0)
    with pytest.raises(ValidationError, match="not a setting"):
        limit_search("iso3888_1", fleet, 1.0, 2.0, setting="sped")
