"""Gymnasium ids of the sims.envs tasks and their registration; imports gymnasium only (nothing of JAX).

``import sims`` (or ``import sims.envs``) calls :func:`register`, so with gymnasium installed (the ``rl``
extra) these work straight away::

    import gymnasium, sims
    env = gymnasium.make("jaxtire/Braking-v0")                       # sims.envs.gymnasium.JaxEnv
    venv = gymnasium.make_vec("jaxtire/Braking-v0", num_envs=256)     # sims.envs.gymnasium.JaxVectorEnv
    env = gymnasium.make("sims:jaxtire/RaceOval-v0")                  # the "module:id" form, no import needed

Keywords of ``make`` / ``make_vec`` go to the constructors (``render_mode="rgb_array"``,
``autoreset_mode="same_step"``, ``params=...``, ``privileged=True``, ...).  Without gymnasium,
:func:`register` does nothing and returns ``False``.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError:  # the rl extra is not installed: nothing to register
    gymnasium = None  # type: ignore[assignment]  # the module or None; callers test `is None`

from sims.envs.names import CIRCUIT_NAMES, ENV_IDS, MAX_EPISODE_STEPS, NAMESPACE

#: gymnasium id -> the name sims.envs.make takes (the same id: one name per environment, sims.envs.names).
GYM_IDS = {gym_id: gym_id for gym_id in ENV_IDS}
__all__ = ["CIRCUIT_NAMES", "GYM_IDS", "NAMESPACE", "register"]

ENTRY_POINT = "sims.envs.gymnasium:JaxEnv"
VECTOR_ENTRY_POINT = "sims.envs.gymnasium:JaxVectorEnv"


def register(ids: dict | None = None) -> bool:
    """Register ``ids`` (gymnasium id -> sims.envs name; default :data:`GYM_IDS`) with gymnasium, for
    ``gymnasium.make`` (:class:`~sims.envs.gymnasium.JaxEnv`) and ``gymnasium.make_vec``
    (:class:`~sims.envs.gymnasium.JaxVectorEnv`), with ``max_episode_steps`` the env's default time limit
    (:data:`~sims.envs.names.MAX_EPISODE_STEPS`).  Idempotent; ``False`` when gymnasium is absent."""
    if gymnasium is None:
        return False
    for gym_id, name in (GYM_IDS if ids is None else ids).items():
        if gym_id not in gymnasium.registry:
            gymnasium.register(
                id=gym_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs={"env": name},
                max_episode_steps=MAX_EPISODE_STEPS.get(name),
            )
    return True
