"""sims: vehicle models, lax.scan rollouts, fleets, scenarios, studies and RL environments built on jaxtire.

Layout (imports flow one way: ``cli`` -> ``scenarios``/``studies``/``envs`` -> ``run`` ->
``vehicles``/``drivers`` -> ``jaxtire``)::

    vehicles/    models, parameters, presets, integrators
    drivers.py   every driver
    run/         one private scan core; rollout, fleet, chunked, longrun, sharding, distributed
    scenarios/   braking, skidpad, step steer
    studies/     identification and controller tuning
    envs/        RL environments
    cli/         argument parsing and printing (``python -m sims``)

The modules that moved in 0.2 (``sims.rollout`` -> ``sims.run.rollout``, ...; see CHANGELOG.md) still
import under their old names for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Old module name -> new module name (deprecated aliases, removed in the next release).
MOVED = {
    "sims.rollout": "sims.run.rollout",
    "sims.fleet": "sims.run.fleet",
    "sims.chunked": "sims.run.chunked",
    "sims.longrun": "sims.run.longrun",
    "sims.sharding": "sims.run.sharding",
    "sims.distributed": "sims.run.distributed",
    "sims.integrators": "sims.vehicles.integrators",
    "sims.identify": "sims.studies.identify",
    "sims.tuning": "sims.studies.tuning",
    # the QSS solver below the scenarios (issue 35); transient_lap moved to sims.scenarios.lap
    "sims.studies.laptime": "sims.vehicles.qss",
}


class _MovedLoader(importlib.abc.Loader):
    """Loads an old module name as the already-imported new module (the same module object)."""

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        pass


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, _MovedLoader())
        return None


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())

import sims.envs  # noqa: E402,F401  registers the gymnasium ids (jaxtire/Braking-v0, ...); loads gymnasium only

#: The public parts (sub-packages and the drivers module); each holds its own ``__all__``.
__all__ = ["cli", "drivers", "envs", "roads", "run", "scenarios", "studies", "vehicles"]
