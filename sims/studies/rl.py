"""RL training and evaluation runs on disk: the Python side of ``python -m sims rl train`` / ``rl eval``.

::

    from sims.studies import rl
    summary = rl.train("jaxtire/RaceOval-v0", "out/oval", seed=0)   # PPO with the tuned defaults
    summary = rl.evaluate_run("out/oval", episodes=100)             # laps, crashes, lap times vs the QSS lap
    net, cfg = rl.load("out/oval")                                  # the policy (sims.envs.ppo.mean_action)

A run folder holds ``policy.npz`` (the network; rewritten atomically every ``checkpoint_every`` updates, so a
killed run keeps its last saved policy), ``config.json`` (the env id, every PPO setting, the machine, the
wall time), ``curve.csv`` (one row per update: steps, mean return of the finished training episodes,
episodes, loss, wall seconds), ``curve.png`` (the learning curve), ``history.json`` (the curve and scores) and
``eval.json`` (:func:`evaluate_run` on the final policy: :meth:`sims.envs.evaluate.Evaluation.summary`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import time

import jax
import jax.numpy as jnp

from sims.envs.catalog import make
from sims.envs.evaluate import EPISODES, evaluate
from sims.envs.names import env_id
from sims.envs.ppo import PPO, config_for, load_policy, mean_action, plot_curve, save_policy, write_results
from sims.vehicles.qss import solve_lap

EVAL_FILE = "eval.json"


@functools.lru_cache(maxsize=16)
def _qss_cached(env, dtype_name: str) -> float:
    p = env.params(jnp.dtype(dtype_name))
    return float(jax.jit(solve_lap)(p.vehicle, p.track).lap_time)


def qss_lap_time(env, params=None) -> float:
    """The quasi-steady-state lap time [s] (:func:`sims.vehicles.qss.solve_lap`, point-mass envelope) of the
    env's car on its centreline: the reference the RL lap times are judged against; NaN for a task without a
    track.  With ``params`` the lap of that car and track, else of the env's defaults (cached)."""
    if not hasattr(env.default_params, "track"):
        return math.nan
    if params is None:
        return _qss_cached(env, jnp.dtype(jnp.result_type(float)).name)
    return float(jax.jit(solve_lap)(params.vehicle, params.track).lap_time)


def machine() -> dict:
    """The hardware a figure was measured on: platform, processor, CPU count, JAX backend and devices."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
    }


def train(
    env: str,
    out,
    *,
    steps: int | None = None,
    seed: int = 0,
    eval_episodes: int = EPISODES,
    checkpoint_every: int = 20,
    progress: bool = False,
    verbose: bool = True,
    **overrides,
) -> dict:
    """Train the project's PPO (:mod:`sims.envs.ppo`, the tuned :func:`~sims.envs.ppo.config_for` settings of
    ``env`` with ``steps``, ``seed`` and ``overrides``) and write the run folder ``out`` (module docstring); then
    evaluate the final policy over ``eval_episodes`` fixed seeds (0 skips it).  Returns the evaluation summary
    (with ``train_wall_s`` and ``final_return``)."""
    env = env_id(env)
    cfg = config_for(env, total_steps=steps, seed=seed, **overrides)
    ppo = PPO(cfg, make(env))
    extra: dict = {"machine": machine()}
    ckpt = lambda net, hist: save_policy(out, net, cfg, {**extra, "updates_done": len(hist["steps"])})  # noqa: E731
    t0 = time.perf_counter()
    hist = ppo.train(
        verbose=verbose,
        log_every=max(cfg.num_updates // 40, 1),
        evaluate_initial=False,
        progress=progress,
        checkpoint=ckpt,
        checkpoint_every=checkpoint_every,
    )
    wall = time.perf_counter() - t0
    extra.update(train_wall_s=wall, updates_done=cfg.num_updates, complete=True)
    save_policy(out, ppo.net, cfg, extra)
    write_results(hist, cfg, os.path.join(out, "history"))
    os.replace(os.path.join(out, "history.csv"), os.path.join(out, "curve.csv"))
    plot_curve(hist, os.path.join(out, "curve.png"), f"PPO on {env}: {cfg.total_steps:,} steps, {wall:.0f} s")
    finite = [r for r in hist["mean_return"] if r == r]
    summary = {"env": env, "train_wall_s": wall, "final_return": finite[-1] if finite else None}
    if eval_episodes:
        summary.update(evaluate_run(out, episodes=eval_episodes))
    return summary


def load(directory):
    """``(net, cfg)`` of the run folder ``directory`` (:func:`sims.envs.ppo.load_policy`)."""
    return load_policy(directory)


def evaluate_run(directory, episodes: int = EPISODES, seed: int = 0, write: bool = True) -> dict:
    """Evaluate the policy of the run folder ``directory`` (its mean action) over ``episodes`` fixed seeds
    (:func:`sims.envs.evaluate.evaluate`); returns the summary (``episodes``, ``lap_rate``, ``crash_rate``,
    ``mean_lap_time_s``, ``best_lap_time_s``, ``qss_lap_time_s``, ...), also written to ``eval.json`` unless
    ``write`` is false."""
    net, cfg = load_policy(directory)
    env = make(cfg.task)
    t0 = time.perf_counter()
    result = evaluate(env, None, mean_action, net, episodes=episodes, seed=seed, qss_lap_time_s=qss_lap_time(env))
    summary = {"env": cfg.task, **result.summary(), "seed": seed, "eval_wall_s": time.perf_counter() - t0}
    if write:
        path = os.path.join(directory, EVAL_FILE)
        with open(path + ".tmp", "w") as f:
            json.dump(summary, f, indent=1)
        os.replace(path + ".tmp", path)
    return summary
