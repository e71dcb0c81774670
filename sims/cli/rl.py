"""``python -m sims rl train|eval``: train the project's PPO on an environment and evaluate a saved policy
(:mod:`sims.studies.rl`).  Argument parsing and printing only.

::

    python -m sims rl train --env jaxtire/RaceMonza-v0 --seed 0 --out runs/monza   # tuned defaults
    python -m sims rl eval runs/monza --episodes 100 [--json]
"""

from __future__ import annotations

import argparse
import json
import os

from sims.cli._checks import OneLineParser, check_int, check_out_dir, check_seed
from sims.envs.names import ENV_IDS


def _print_eval(s: dict) -> None:
    def t(x):
        return "-" if x is None else f"{x:.2f} s"

    print(f"{s['env']}: {s['episodes']} episodes from the line (seeds {s['seed']}..{s['seed'] + s['episodes'] - 1})")
    print(f"  laps completed  {s['laps_completed']} ({100 * s['lap_rate']:.0f} %)")
    print(f"  crash rate      {100 * s['crash_rate']:.0f} %")
    print(f"  lap time        mean {t(s['mean_lap_time_s'])}, best {t(s['best_lap_time_s'])}")
    if s.get("qss_lap_time_s") is not None:
        ratio = s.get("lap_time_ratio")
        print(f"  QSS lap         {t(s['qss_lap_time_s'])}" + (f" (mean lap / QSS {ratio:.3f})" if ratio else ""))
    print(f"  mean return     {s['mean_return']:.3f}, progress {s['mean_progress_m']:.0f} m")


def _parser(command: str, description: str) -> OneLineParser:
    return OneLineParser(
        prog=f"python -m sims rl {command}",
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )


def train_main(argv) -> int:
    # imported on use: `python -m sims rl --help` and the argument checks need no JAX
    from sims.envs.ppo import config_for

    ap = _parser(
        "train",
        "Train the project's PPO (tuned defaults per task, docs/getting-started/rl.md) and write a run "
        "folder: policy.npz, config.json, curve.csv, curve.png, history.json, eval.json.",
    )
    ap.add_argument(
        "--env",
        default="jaxtire/RaceOval-v0",
        choices=list(ENV_IDS),
        metavar="ID",
        help=f"environment id ({', '.join(ENV_IDS)})",
    )
    ap.add_argument("--steps", type=int, default=None, help="environment steps (default: the task's tuned budget)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="run folder (default runs/<env>-seed<seed>)")
    ap.add_argument("--num-envs", type=int, default=None, help="parallel environments (default: tuned)")
    ap.add_argument("--lr", type=float, default=None, help="initial learning rate (default: tuned)")
    ap.add_argument("--gamma", type=float, default=None, help="discount (default: tuned)")
    ap.add_argument("--ent-coef", type=float, default=None, help="entropy bonus (default: tuned)")
    ap.add_argument("--eval-episodes", type=int, default=100, help="episodes of the final evaluation (0: none)")
    ap.add_argument("--checkpoint-every", type=int, default=20, help="updates between saved policies")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    check_seed(ap, args.seed)
    if args.steps is not None:
        check_int(ap, "--steps", args.steps, 1, 10**11)
    if args.num_envs is not None:
        check_int(ap, "--num-envs", args.num_envs, 1, 1 << 20)
    if args.gamma is not None and not 0.0 < args.gamma <= 1.0:
        ap.error(f"--gamma {args.gamma} is outside the allowed range (0, 1]")
    if args.lr is not None and not 0.0 < args.lr <= 1.0:
        ap.error(f"--lr {args.lr} is outside the allowed range (0, 1]")
    if args.ent_coef is not None and not 0.0 <= args.ent_coef <= 1.0:
        ap.error(f"--ent-coef {args.ent_coef} is outside the allowed range [0, 1]")
    check_int(ap, "--eval-episodes", args.eval_episodes, 0, 1 << 20)
    check_int(ap, "--checkpoint-every", args.checkpoint_every, 0, 1 << 30)
    out = args.out or os.path.join("runs", f"{args.env.split('/')[-1]}-seed{args.seed}")
    check_out_dir(ap, out)
    from sims.studies import rl as rl_runs  # imported after the checks: a bad flag answers without loading JAX

    tuned = dict(num_envs=args.num_envs, lr=args.lr, gamma=args.gamma, ent_coef=args.ent_coef)
    cfg = config_for(args.env, total_steps=args.steps, **tuned)
    print(
        f"[rl train] {args.env}: {cfg.total_steps:,} steps, {cfg.num_envs} envs x {cfg.num_steps} steps, "
        f"lr {cfg.lr:g}, gamma {cfg.gamma:g}, seed {args.seed} -> {out}",
        flush=True,
    )
    s = rl_runs.train(
        args.env,
        out,
        steps=args.steps,
        seed=args.seed,
        eval_episodes=args.eval_episodes,
        checkpoint_every=args.checkpoint_every,
        progress=not args.no_progress,
        **tuned,
    )
    print(f"[rl train] {s['train_wall_s']:.0f} s; policy, config and learning curve in {out}")
    if args.eval_episodes:
        _print_eval(s)
    return 0


def eval_main(argv) -> int:
    ap = _parser(
        "eval",
        "Evaluate a saved policy (its mean action) over fixed seeds: laps completed, crash rate, "
        "mean and best lap time against the QSS lap of the same car.",
    )
    ap.add_argument("run", help="run folder of `python -m sims rl train` (policy.npz, config.json)")
    ap.add_argument("--episodes", type=int, default=100, help="episodes (seeds SEED .. SEED + K - 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args(argv)
    check_int(ap, "--episodes", args.episodes, 1, 1 << 20)
    check_seed(ap, args.seed)
    for name in ("policy.npz", "config.json"):
        if not os.path.isfile(os.path.join(args.run, name)):
            ap.error(f"{args.run}: no {name} (not a run folder of `python -m sims rl train`)")
    from sims.studies import rl as rl_runs  # imported after the checks: a bad flag answers without loading JAX

    s = rl_runs.evaluate_run(args.run, episodes=args.episodes, seed=args.seed)
    if args.json:
        print(json.dumps(s))
    else:
        _print_eval(s)
    return 0


COMMANDS = {"train": train_main, "eval": eval_main}


def main(argv=None) -> int:
    argv = list(argv or [])
    if not argv or argv[0] not in COMMANDS:
        ap = OneLineParser(prog="python -m sims rl", description="RL: train | eval")
        ap.add_argument("command", choices=list(COMMANDS))
        ap.parse_args(argv[:1])
    return COMMANDS[argv[0]](argv[1:])
