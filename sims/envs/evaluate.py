"""Evaluation of a policy over fixed seeds: laps completed, crash rate, lap times (the RL front end's ``eval``).

::

    from sims.envs.evaluate import evaluate
    result = evaluate(env, params, act, net, episodes=100)  # act(net, obs) -> action, batched and pure
    result.summary()                                        # {"episodes", "lap_rate", "crash_rate", ...}

Episode ``i`` of an evaluation is drawn with ``jax.random.fold_in(jax.random.key(seed), i)``, so the same
``(seed, episodes)`` gives the same starts for every policy.  A race episode starts *at the line*
(``random_start = False``, the env's speed range and start noise) and ends at the first completed lap, a crash
(off track, spin, stall, non-finite state) or the time limit: ``max_steps``, else ``LAP_LIMIT`` (1.5) times the
reference lap ``qss_lap_time_s`` when given (:func:`sims.studies.rl.qss_lap_time`: the QSS lap of the same car),
else a lap at ``SLOW_LAP_SPEED`` (5 m/s).  Other tasks run their own episode to its end.  No automatic reset: each
environment plays exactly one episode.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sims.envs.base import dtype_of

#: evaluation episodes by default (the seeds ``0 .. EPISODES - 1`` under ``seed``)
EPISODES = 100
#: time limit of an evaluation lap, in QSS laps of the same car
LAP_LIMIT = 1.5
#: without a reference lap, the time limit is a lap at this speed [m/s]
SLOW_LAP_SPEED = 5.0


class Evaluation(NamedTuple):
    """Per-episode results (numpy arrays of shape ``(episodes,)``): ``episode_return``, ``length`` [steps],
    ``progress`` [m], ``lap_completed`` (bool), ``crashed`` (bool: off track, spin or non-finite), ``lap_time`` [s]
    (NaN where no lap was completed), ``mean_speed`` [m/s]; and ``qss_lap_time_s`` [s] (the reference lap given to
    :func:`evaluate`, NaN without one)."""

    episode_return: np.ndarray
    length: np.ndarray
    progress: np.ndarray
    lap_completed: np.ndarray
    crashed: np.ndarray
    lap_time: np.ndarray
    mean_speed: np.ndarray
    qss_lap_time_s: float

    def summary(self) -> dict:
        """One JSON-able dict: ``episodes``, ``lap_rate`` (share of episodes that completed a lap),
        ``laps_completed``, ``crash_rate``, ``mean_lap_time_s`` / ``best_lap_time_s`` (over completed laps; None if
        none), ``qss_lap_time_s``, ``lap_time_ratio`` (mean lap / QSS lap), ``mean_return``, ``mean_progress_m``."""
        laps = self.lap_time[self.lap_completed]
        f = lambda x: None if x is None or not np.isfinite(x) else float(x)  # noqa: E731
        mean_lap = float(np.mean(laps)) if laps.size else None
        return {
            "episodes": int(self.length.size),
            "lap_rate": float(np.mean(self.lap_completed)),
            "laps_completed": int(np.sum(self.lap_completed)),
            "crash_rate": float(np.mean(self.crashed)),
            "mean_lap_time_s": f(mean_lap),
            "best_lap_time_s": f(float(np.min(laps)) if laps.size else None),
            "qss_lap_time_s": f(self.qss_lap_time_s),
            "lap_time_ratio": f(mean_lap / self.qss_lap_time_s if mean_lap is not None else None),
            "mean_return": float(np.mean(self.episode_return)),
            "mean_progress_m": float(np.mean(self.progress)),
        }


def eval_params(env, params=None, max_steps: int | None = None, qss_lap_time_s: float = math.nan):
    """The params of an evaluation: a race starts at the line and gets ``max_steps``, else ``LAP_LIMIT``
    reference laps ``qss_lap_time_s`` [s], else a lap at ``SLOW_LAP_SPEED``; other tasks keep their limit unless
    ``max_steps`` is given."""
    params = env.default_params if params is None else params
    if hasattr(params, "track"):
        if max_steps is None:
            limit = LAP_LIMIT * qss_lap_time_s if math.isfinite(qss_lap_time_s) else None
            limit = float(params.track.length) / SLOW_LAP_SPEED if limit is None else limit
            max_steps = int(math.ceil(limit / float(params.dt)))
        params = params._replace(random_start=jnp.asarray(False))
    if max_steps is not None:
        params = params._replace(max_steps=jnp.asarray(int(max_steps), jnp.int32))
    return params


@functools.lru_cache(maxsize=16)
def _runner(env, act, chunk: int):
    """Jitted ``run(key, net, state, obs, live, acc, params)``: ``chunk`` steps of every environment without
    reset; finished environments are frozen.  ``act`` None: the zero action (``env.num_actions`` zeros)."""
    step = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))

    def run(key, net, state, obs, live, acc, params):
        def body(carry, k):
            state, obs, live, acc = carry
            zeros = jnp.zeros(obs.shape[:-1] + (env.num_actions,), obs.dtype)
            action = zeros if act is None else act(net, obs).astype(obs.dtype)
            n = obs.shape[0]
            obs2, st2, reward, term, info = step(jax.random.split(k, n), state, action, params)
            lap = (info["laps"] >= 1) if "laps" in info else jnp.zeros_like(term)
            trunc = st2.t >= params.max_steps
            done = term | lap | trunc
            upd = lambda a, b: jnp.where(live.reshape(live.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
            state = jax.tree.map(upd, st2, state)
            obs = upd(obs2, obs)
            speed = info.get("speed", jnp.zeros_like(reward))
            new = {
                "ret": acc["ret"] + jnp.where(live, reward, 0.0),
                "len": acc["len"] + live.astype(jnp.int32),
                "progress": jnp.where(live, info.get("progress", acc["progress"]), acc["progress"]),
                "lap": acc["lap"] | (live & lap),
                "crash": acc["crash"] | (live & term & ~lap),
                "lap_time": jnp.where(live & lap, info.get("lap_time", acc["lap_time"]), acc["lap_time"]),
                "dist": acc["dist"] + jnp.where(live, jnp.abs(speed), 0.0),
            }
            return (state, obs, live & ~done, new), None

        (state, obs, live, acc), _ = jax.lax.scan(body, (state, obs, live, acc), jax.random.split(key, chunk))
        return state, obs, live, acc

    return jax.jit(run)


def evaluate(
    env,
    params=None,
    act=None,
    net=None,
    *,
    episodes: int = EPISODES,
    seed: int = 0,
    max_steps: int | None = None,
    qss_lap_time_s: float = math.nan,
    chunk: int = 256,
) -> Evaluation:
    """Play ``episodes`` episodes of ``env`` with the policy ``act(net, obs) -> action`` (pure and jit-able, on a
    batch of observations; ``net`` its parameters, a pytree; e.g. :func:`sims.envs.ppo.mean_action` and a trained
    network) from the fixed seeds of the module docstring; returns the :class:`Evaluation`.  Without ``act``, the
    zero action.  ``params``: the env params (default ``env.default_params``), turned into evaluation params by
    :func:`eval_params` (``max_steps`` overrides the time limit).  ``qss_lap_time_s``: the reference lap [s]
    reported with the result (and setting the time limit; :func:`sims.studies.rl.qss_lap_time`).  ``act`` should be
    a module-level function: the compiled evaluation is cached per ``(env, act)``."""
    if episodes < 1:
        raise ValueError(f"episodes = {episodes!r} must be >= 1")
    params = eval_params(env, params, max_steps, qss_lap_time_s)
    dtype = dtype_of(params)
    base = jax.random.key(seed)
    keys = jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.arange(episodes))
    obs, state = jax.jit(jax.vmap(env.reset_env, in_axes=(0, None)))(keys, params)
    live = jnp.ones((episodes,), bool)
    zero = jnp.zeros((episodes,), dtype)
    acc = {
        "ret": zero,
        "len": jnp.zeros((episodes,), jnp.int32),
        "progress": zero,
        "lap": jnp.zeros((episodes,), bool),
        "crash": jnp.zeros((episodes,), bool),
        "lap_time": jnp.full((episodes,), jnp.nan, dtype),
        "dist": zero,
    }
    run = _runner(env, act, int(chunk))
    key = jax.random.fold_in(base, 1 << 30)
    limit = int(params.max_steps)
    for i in range(max(1, math.ceil(limit / chunk))):
        state, obs, live, acc = run(jax.random.fold_in(key, i), net, state, obs, live, acc, params)
        if not bool(jnp.any(live)):
            break
    a = {k: np.asarray(v) for k, v in acc.items()}
    length = a["len"]
    return Evaluation(
        episode_return=a["ret"].astype(np.float64),
        length=length,
        progress=a["progress"].astype(np.float64),
        lap_completed=a["lap"],
        crashed=a["crash"],
        lap_time=np.where(a["lap"], a["lap_time"], np.nan).astype(np.float64),
        mean_speed=(a["dist"] / np.maximum(length, 1)).astype(np.float64),
        qss_lap_time_s=float(qss_lap_time_s),
    )
