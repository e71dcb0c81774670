"""The manoeuvre catalogue: every registered :class:`~sims.scenarios.base.Scenario` by name.

::

    from sims.scenarios import catalog
    sc = catalog.get("braking")                       # or catalog.SCENARIOS["braking"]
    metrics, stats = run_scenario(sc, fleet, {"speed": 80 / 3.6})
    catalog.register(MyScenario())                    # a user-written scenario (docs/scenarios.md)

A registered scenario is an instance (its static options at their defaults); another variant is
``dataclasses.replace(catalog.get("braking"), max_time=20.0)``.
"""

from __future__ import annotations

from sims.scenarios.acceleration import Acceleration, SplitMuLaunch
from sims.scenarios.base import REGISTRY, Scenario, resolve_scenario
from sims.scenarios.braking import Braking, GradeBraking, MuJumpBraking, SplitMuBraking
from sims.scenarios.lane_change import iso3888_1, iso3888_2
from sims.scenarios.lap import TransientLap
from sims.scenarios.sine_dwell import SineDwell
from sims.scenarios.skidpad import Skidpad
from sims.scenarios.step_steer import StepSteerScenario

#: name -> scenario instance (the registry of :mod:`sims.scenarios.base`).
SCENARIOS: dict[str, Scenario] = REGISTRY


def register(scenario, *, replace: bool = False) -> None:
    """Add ``scenario`` to :data:`SCENARIOS` under ``scenario.name``.

    Raises ``TypeError`` when it lacks a part of the protocol (``name``, ``settings``, ``metrics`` with a
    ``passed`` metric, ``setup``, ``evaluate``) and ``ValueError`` when the name is taken (unless
    ``replace``)."""
    missing = [a for a in ("name", "settings", "metrics", "setup", "evaluate") if not hasattr(scenario, a)]
    if missing:
        raise TypeError(f"register: {type(scenario).__name__} is not a Scenario, it lacks {missing}")
    name = scenario.name
    if not isinstance(name, str) or not name:
        raise TypeError(f"register: the scenario's name must be a non-empty string, got {name!r}")
    if "passed" not in {m.name for m in scenario.metrics}:
        raise TypeError(f"register: scenario {name!r} has no 'passed' metric (every scenario has one)")
    if name in SCENARIOS and not replace:
        raise ValueError(f"register: a scenario {name!r} is already registered (pass replace=True to replace it)")
    SCENARIOS[name] = scenario


def get(name) -> Scenario:
    """The scenario registered as ``name``; a scenario object is returned as it is.  An unknown name raises
    ``KeyError`` listing the known ones."""
    return resolve_scenario(name)


def names() -> tuple[str, ...]:
    """The registered names, sorted."""
    return tuple(sorted(SCENARIOS))


for _sc in (
    Braking(),
    SplitMuBraking(),
    GradeBraking(),
    MuJumpBraking(),
    iso3888_1(),
    iso3888_2(),
    StepSteerScenario(),
    Skidpad(),
    Acceleration(),
    SplitMuLaunch(),
    SineDwell(),
    TransientLap(),
):
    register(_sc)
