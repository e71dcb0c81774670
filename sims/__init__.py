"""sims: vehicle models, lax.scan rollouts, fleets, scenarios, studies and RL environments built on jaxtire.

Layout (imports flow one way: ``cli`` -> ``scenarios``/``studies``/``envs`` -> ``run`` ->
``vehicles``/``drivers`` -> ``jaxtire``)::

    vehicles/    models, parameters, presets, integrators, the quasi-steady lap solver (qss)
    drivers.py   every driver
    roads/       road profiles, surfaces along a road, real circuits, race lines
    run/         one private scan core; rollout, fleet, chunked, longrun, sharding, distributed
    scenarios/   the manoeuvre catalogue (braking, ISO lane change, sine with dwell, lap, ...)
    studies/     study files, designs, statistics, rare events, reports; identification, tuning
    envs/        RL environments
    cli/         argument parsing and printing (``python -m sims``)

The modules that moved in 0.2 (``sims.rollout`` -> ``sims.run.rollout``, ...) no longer import under their
old names: CHANGELOG.md's migration table ("Removed: the 0.2 module aliases") gives each new name.
"""

from __future__ import annotations

import sims.envs  # noqa: F401  registers the gymnasium ids (jaxtire/Braking-v0, ...); loads gymnasium only

#: The public parts (sub-packages and the drivers module); each holds its own ``__all__``.
__all__ = ["cli", "drivers", "envs", "roads", "run", "scenarios", "studies", "vehicles"]
