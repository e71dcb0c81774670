"""The one name of each environment (its Gymnasium id), accepted by every front end; no JAX, no gymnasium.

``jaxtire/Braking-v0``, ``jaxtire/Drift-v0``, ``jaxtire/RaceOval-v0``, ``jaxtire/RaceTwisty-v0``: the same
string goes to ``gymnasium.make``, :func:`sims.envs.make`, the gymnax adapter (:func:`sims.envs.gymnax.make`),
the SB3 ``JaxVecEnv``, the PPO trainer (``python -m sims rl train --env``, ``python -m sims.envs.ppo --task``) and
the command line.  The old
short names (``braking``, ``drift``, ``race-oval``, ``race-twisty``) still work and warn
(``DeprecationWarning``) naming the id to use.
"""

from __future__ import annotations

import warnings

#: The namespace of the ids.
NAMESPACE = "jaxtire"

#: id -> task name inside sims.envs (``Environment.name``; also the deprecated short name).
ENV_IDS: dict[str, str] = {
    f"{NAMESPACE}/Braking-v0": "braking",
    f"{NAMESPACE}/Drift-v0": "drift",
    f"{NAMESPACE}/RaceOval-v0": "race-oval",
    f"{NAMESPACE}/RaceTwisty-v0": "race-twisty",
}
#: The shipped circuits (the names of :data:`sims.roads.circuits.CIRCUITS`, written out so this module stays
#: free of JAX): ``jaxtire/RaceMonza-v0``, ``jaxtire/RaceSpa-v0``, ...
CIRCUIT_NAMES = ("Monza", "Spa", "Silverstone", "Budapest", "Norisring", "Zandvoort", "Spielberg", "IMS")
ENV_IDS.update({f"{NAMESPACE}/Race{c}-v0": f"race-{c.lower()}" for c in CIRCUIT_NAMES})
#: id -> the episode's time limit in steps (the default ``params.max_steps``; the gymnasium spec's
#: ``max_episode_steps``).  The env truncates itself at ``params.max_steps``; gymnasium's ``TimeLimit`` agrees.
MAX_EPISODE_STEPS: dict[str, int] = {env: (1000 if short.startswith("race") else 400) for env, short in ENV_IDS.items()}
#: deprecated short name -> id.
SHORT_NAMES: dict[str, str] = {short: env_id for env_id, short in ENV_IDS.items()}


def env_id(name: str) -> str:
    """The id of environment ``name`` (an id, or a deprecated short name: ``DeprecationWarning``).

    Raises ``ValueError`` listing the ids for an unknown name."""
    if name in ENV_IDS:
        return name
    if isinstance(name, str) and name in SHORT_NAMES:
        new = SHORT_NAMES[name]
        warnings.warn(
            f"environment name {name!r} is deprecated; use {new!r} (the one name every front end takes)",
            DeprecationWarning,
            stacklevel=3,
        )
        return new
    raise ValueError(f"unknown environment {name!r}; allowed: {', '.join(ENV_IDS)}")
