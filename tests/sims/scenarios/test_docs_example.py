"""docs/scenarios.md's worked example (docs/scenario_example.py, included in the page) runs and is right."""

import functools
import runpy
from pathlib import Path

import pytest

from sims.scenarios import base, catalog
from tests.sims.conftest import FAST

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "scenario_example.py"


def test_the_page_includes_the_example():
    page = (EXAMPLE.parent / "scenarios.md").read_text()
    assert '--8<-- "docs/scenario_example.py"' in page


def test_worked_example_registers_and_runs(monkeypatch):
    # the example as written, compiled with the tests' fast XLA options
    monkeypatch.setattr(base, "run_scenario", functools.partial(base.run_scenario, compiler_options=FAST))
    ns = runpy.run_path(str(EXAMPLE))
    try:
        t = ns["metrics"]["time"]
        assert ns["metrics"]["passed"].tolist() == [1.0, 1.0]
        # a 92 kW hatchback: 0-50 km/h in about 3 s (maker's 0-100 km/h: 8.2 s), the heavier one later
        assert 2.0 < t[0] < 5.0 and t[1] > t[0]
        # the time scales about with the mass while the drive is traction- or power-limited
        assert t[1] / t[0] == pytest.approx(1.3, abs=0.25)
    finally:
        catalog.SCENARIOS.pop("acceleration_0_50", None)
