"""RL baselines: the project's PPO with the tuned defaults on race tasks, then the evaluation over fixed seeds.

    python -m benchmarks.rl                                           # RaceOval, RaceMonza, RaceNorisring
    python -m benchmarks.rl --envs jaxtire/RaceOval-v0 --steps 5000000 --out runs/bench

Per environment: ``python -m sims rl train`` (the same :func:`sims.studies.rl.train`, tuned defaults unless
``--steps``), then ``rl eval`` over ``--episodes`` (100) fixed seeds.  Prints one markdown row per environment
(env steps, wall time, final training return, lap rate, crash rate, mean and best lap, the QSS lap of the same car
and the ratio) and writes every figure with the machine to ``<out>/baselines.json``.  Not a test: the Monza run
takes most of an hour on two CPU cores (figures: ``docs/getting-started/rl.md``, ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import json
import os

from sims.studies import rl

ENVS = ("jaxtire/RaceOval-v0", "jaxtire/RaceMonza-v0", "jaxtire/RaceNorisring-v0")


def row(s: dict) -> str:
    """One markdown table row of a training + evaluation summary."""

    def f(x, fmt="{:.1f}"):
        return "-" if x is None else fmt.format(x)

    return (
        f"| `{s['env']}` | {s['steps'] / 1e6:.0f} M | {s['train_wall_s'] / 60:.1f} min | {f(s['final_return'], '{:.2f}')} "
        f"| {100 * s['lap_rate']:.0f} % | {100 * s['crash_rate']:.0f} % | {f(s['mean_lap_time_s'])} s "
        f"| {f(s['best_lap_time_s'])} s | {f(s['qss_lap_time_s'])} s | {f(s['lap_time_ratio'], '{:.3f}')} |"
    )


HEADER = (
    "| env | env steps | train wall | final return | lap rate | crash rate | mean lap | best lap | QSS lap | mean / QSS |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", nargs="+", default=list(ENVS))
    ap.add_argument("--steps", type=int, default=None, help="env steps (default: each task's tuned budget)")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/baselines")
    args = ap.parse_args(argv)
    results = []
    for env in args.envs:
        out = os.path.join(args.out, env.split("/")[-1])
        s = rl.train(env, out, steps=args.steps, seed=args.seed, eval_episodes=args.episodes, verbose=True)
        s["steps"] = json.load(open(os.path.join(out, "config.json")))["ppo"]["total_steps"]
        results.append(s)
        print(row(s), flush=True)
    print(HEADER)
    for s in results:
        print(row(s))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "baselines.json"), "w") as f:
        json.dump({"machine": rl.machine(), "results": results}, f, indent=1)
    return results


if __name__ == "__main__":
    main()
