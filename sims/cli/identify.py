"""``python -m sims identify``: identify vehicle parameters from a synthetic log (:mod:`sims.studies.identify`).

Argument parsing and printing only.
"""

from __future__ import annotations

import argparse
import dataclasses

from sims.cli._checks import OneLineParser, check_float, check_int
from sims.cli._common import add_study_arguments, check_study_arguments, study_progress, write_study_outputs
from sims.cli._tire import tire_label
from sims.studies.identify import example_truth, identify, synthetic_log
from sims.vehicles import presets


def main(argv=None) -> int:
    ap = OneLineParser(
        prog="python -m sims identify",
        description="Identify vehicle parameters from a synthetic log by grad through windowed lax.scan rollouts.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_study_arguments(ap, iters=150, lr=0.1, dt=0.01)
    ap.add_argument("--steps", type=int, default=600, help="log length in steps")
    ap.add_argument("--window", type=int, default=50, help="steps per truncated-backprop window")
    ap.add_argument("--restart", default="log", choices=("log", "chain"))
    ap.add_argument("--noise", type=float, default=0.005, help="log noise x channel RMS")
    ap.add_argument("--no-loads", action="store_true", help="log without wheel loads")
    args = ap.parse_args(argv)
    tire = check_study_arguments(ap, args, dt_max=0.1)
    check_int(ap, "--steps", args.steps, 1, 10_000_000)
    check_int(ap, "--window", args.window, 1, 10_000_000)
    check_float(ap, "--noise", args.noise, 0.0, 1.0)
    if args.steps < args.window:
        ap.error("need --steps >= --window")
    base = presets.get(args.preset, tire=tire)
    truth = example_truth(base)
    log = synthetic_log(
        truth, n_steps=args.steps, dt=args.dt, noise=args.noise, seed=args.seed, with_loads=not args.no_loads
    )
    print(
        f"synthetic log: {args.preset}, {tire_label(args)} tires, {log.n_steps} steps x {args.dt} s, noise "
        f"{100 * args.noise:g} % of RMS, loads {'no' if args.no_loads else 'yes'}; start = the preset"
    )
    bar = study_progress(args, args.iters, "identify")
    study = dict(window=args.window, restart=args.restart, n_iter=args.iters, lr=args.lr)
    res = identify(log, base, true=truth, verbose=True, progress=bar, **study)
    bar.close()
    rep = res.report
    print(rep)
    err = rep.rel_error
    if err is None:  # identify was given true=truth, so the report has errors
        raise RuntimeError("identify: report has no true parameters to compare with")
    print(f"max |error| {100 * max(abs(e) for e in err.values()):.3f} %")
    rows = [
        dict(parameter=k, start=a, identified=b, true=rep.true[k] if rep.true else None, rel_error=err[k])
        for k, (a, b) in rep.parameters.items()
    ]
    summary = dict(command="identify", preset=args.preset, tire=tire_label(args), report=dataclasses.asdict(rep))
    write_study_outputs(args, summary, rows)
    return 0
