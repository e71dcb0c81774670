"""``python -m sims identify``: identify vehicle parameters from a synthetic log (:mod:`sims.studies.identify`).

Argument parsing and printing only.
"""

from __future__ import annotations

import argparse

from sims.cli._checks import OneLineParser, check_float, check_int, check_seed
from sims.cli._tire import add_tire_arguments, tire_from_args, tire_label
from sims.studies.identify import example_truth, identify, synthetic_log
from sims.vehicles import presets


def main(argv=None) -> int:
    ap = OneLineParser(
        prog="python -m sims identify",
        description="Identify vehicle parameters from a synthetic log by grad through windowed lax.scan rollouts.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--preset", default="hatchback")
    add_tire_arguments(ap)
    ap.add_argument("--steps", type=int, default=600, help="log length in steps")
    ap.add_argument("--dt", type=float, default=0.01, help="log step [s]")
    ap.add_argument("--window", type=int, default=50, help="steps per truncated-backprop window")
    ap.add_argument("--restart", default="log", choices=("log", "chain"))
    ap.add_argument("--iters", type=int, default=150, help="Adam iterations")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--noise", type=float, default=0.005, help="log noise x channel RMS")
    ap.add_argument("--no-loads", action="store_true", help="log without wheel loads")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_seed(ap, args.seed)
    check_int(ap, "--steps", args.steps, 1, 10_000_000)
    check_int(ap, "--window", args.window, 1, 10_000_000)
    check_int(ap, "--iters", args.iters, 1, 10_000_000)
    check_float(ap, "--dt", args.dt, 0.0, 0.1, lo_incl=False)
    check_float(ap, "--lr", args.lr, 0.0, 10.0, lo_incl=False)
    check_float(ap, "--noise", args.noise, 0.0, 1.0)
    tire = tire_from_args(ap, args)
    try:
        presets.check_name(args.preset)
    except ValueError as e:
        ap.error(str(e))
    if args.steps < args.window or args.window < 1 or args.iters < 1:
        ap.error("need --steps >= --window >= 1 and --iters >= 1")
    base = presets.get(args.preset, tire=tire)
    truth = example_truth(base)
    log = synthetic_log(
        truth, n_steps=args.steps, dt=args.dt, noise=args.noise, seed=args.seed, with_loads=not args.no_loads
    )
    print(
        f"synthetic log: {args.preset}, {tire_label(args)} tires, {log.n_steps} steps x {args.dt} s, noise "
        f"{100 * args.noise:g} % of RMS, loads {'no' if args.no_loads else 'yes'}; start = the preset"
    )
    res = identify(
        log, base, window=args.window, restart=args.restart, n_iter=args.iters, lr=args.lr, true=truth, verbose=True
    )
    print(res.report)
    err = res.report.rel_error
    if err is None:  # identify was given true=truth, so the report has errors
        raise RuntimeError("identify: report has no true parameters to compare with")
    print(f"max |error| {100 * max(abs(e) for e in err.values()):.3f} %")
    return 0
