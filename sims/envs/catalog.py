"""The tasks by name: :data:`REGISTRY` and :func:`make` (re-exported as ``sims.envs.make``).

Names are the Gymnasium ids of :mod:`sims.envs.names` (``"jaxtire/Braking-v0"``, ...); the old short names
(``"braking"``, ...) still work with a ``DeprecationWarning``."""

from __future__ import annotations

from sims.envs.base import Environment
from sims.envs.braking import Braking
from sims.envs.drift import Drift
from sims.envs.names import env_id
from sims.envs.race import Race
from sims.roads.circuits import CIRCUITS

#: id -> (class, constructor keywords)
REGISTRY = {
    "jaxtire/Braking-v0": (Braking, {}),
    "jaxtire/Drift-v0": (Drift, {}),
    "jaxtire/RaceOval-v0": (Race, {"track": "oval"}),
    "jaxtire/RaceTwisty-v0": (Race, {"track": "twisty"}),
    # the shipped circuits (sims.roads.circuits.CIRCUITS): jaxtire/RaceMonza-v0, jaxtire/RaceSpa-v0, ...
    **{f"jaxtire/Race{c}-v0": (Race, {"track": c}) for c in CIRCUITS},
}


def make(name: str, **kwargs) -> Environment:
    """The environment ``name`` (:data:`REGISTRY`: ``"jaxtire/Braking-v0"``, ``"jaxtire/Drift-v0"``,
    ``"jaxtire/RaceOval-v0"``, ``"jaxtire/RaceTwisty-v0"``, ``"jaxtire/RaceMonza-v0"`` and the other shipped
    circuits; the short names ``"braking"``, ... warn); keywords go to the constructor (``substeps=10``,
    ``privileged=False``, ``model="double_track"`` or ``"full"``, and for the race ``track=`` a built-in name or a
    :class:`~sims.roads.circuits.Track`)."""
    cls, kw = REGISTRY[env_id(name)]
    return cls(**{**kw, **kwargs})


def registered() -> tuple:
    """The ids accepted by :func:`make` (the deprecated short names are accepted too)."""
    return tuple(REGISTRY)
