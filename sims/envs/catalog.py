"""The tasks by name: :data:`REGISTRY` and :func:`make` (re-exported as ``sims.envs.make``)."""

from __future__ import annotations

from sims.envs.base import Environment
from sims.envs.braking import Braking
from sims.envs.drift import Drift
from sims.envs.race import Race
from sims.roads.circuits import CIRCUITS

#: name -> (class, constructor keywords)
REGISTRY = {
    "braking": (Braking, {}),
    "drift": (Drift, {}),
    "race-oval": (Race, {"track": "oval"}),
    "race-twisty": (Race, {"track": "twisty"}),
    # the shipped circuits (sims.roads.circuits.CIRCUITS): race-monza, race-spa, ...
    **{f"race-{c.lower()}": (Race, {"track": c}) for c in CIRCUITS},
}


def make(name: str, **kwargs) -> Environment:
    """The environment ``name`` (:data:`REGISTRY`: ``"braking"``, ``"drift"``, ``"race-oval"``,
    ``"race-twisty"``, ``"race-monza"`` and the other shipped circuits); keywords go to the constructor (``substeps=10``, ``privileged=False``, and for
    the race ``track=`` a built-in name or a :class:`~sims.roads.circuits.Track`)."""
    try:
        cls, kw = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown environment {name!r}; allowed: {', '.join(REGISTRY)}") from None
    return cls(**{**kw, **kwargs})


def registered() -> tuple:
    """Names accepted by :func:`make`."""
    return tuple(REGISTRY)
