"""The manoeuvre catalogue (:mod:`~sims.scenarios.catalog`) on the scenario protocol
(:mod:`~sims.scenarios.base`): :mod:`~sims.scenarios.braking` (incl. the CLI's Monte Carlo),
:mod:`~sims.scenarios.skidpad`, :mod:`~sims.scenarios.step_steer`, ...

Importing the package registers every catalogue scenario, so ``run_scenario("braking", ...)`` finds it."""

from sims.scenarios import catalog as catalog

__all__ = [
    "acceleration",
    "base",
    "braking",
    "catalog",
    "lane_change",
    "lap",
    "limit",
    "sine_dwell",
    "skidpad",
    "step_steer",
]
