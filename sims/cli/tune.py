"""``python -m sims tune``: tune the ABS and lane-change controllers (:mod:`sims.studies.tuning`).

Argument parsing and printing only.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from jaxtire.surfaces import surface_id
from sims.cli._checks import OneLineParser, check_int
from sims.cli._common import add_study_arguments, check_study_arguments, study_progress, write_study_outputs
from sims.cli._tire import tire_label
from sims.studies.tuning import (
    BRAKING_SURFACES,
    BrakingSetup,
    LaneSetup,
    abs_gains,
    evaluate_abs,
    evaluate_lateral,
    lane_gains,
    tune_abs,
    tune_lateral,
)


def _tune(tune, setup, args, seeds, desc):
    """Run ``tune`` (:func:`tune_abs` or :func:`tune_lateral`) with the CLI's loop settings and progress bar."""
    bar = study_progress(args, args.iters, desc)
    loop = dict(n_vehicles=args.vehicles, n_iter=args.iters, lr=args.lr, seed=args.seed, heldout_seeds=seeds)
    res = tune(setup, verbose=True, progress=bar, **loop)
    bar.close()
    print(res.report)
    return res


def _rows(res, name: str) -> list[dict]:
    """The gains rows of one tuned controller ``name``."""
    return [dict(controller=name, gain=k, untuned=a, tuned=b) for k, (a, b) in res.report.gains.items()]


def _summary(res, evaluation: dict) -> dict:
    """One controller's JSON entry: its report, the tuned gains and the held-out ``evaluation`` per seed."""
    return dict(report=dataclasses.asdict(res.report), gains=res.gains, evaluation=evaluation)


def main(argv=None) -> int:
    ap = OneLineParser(
        prog="python -m sims tune",
        description="Tune the ABS (and optionally a lane-change) controller by grad "
        "through fleet rollouts; prints untuned vs tuned on held-out seeds.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_study_arguments(ap, iters=40, lr=0.1, dt=0.01)
    ap.add_argument("--vehicles", type=int, default=6, help="fleet size per iteration")
    ap.add_argument("--heldout", type=int, default=3, help="number of held-out seeds (1001, 1002, ...)")
    ap.add_argument("--surfaces", default=",".join(BRAKING_SURFACES), help="ABS training/evaluation surfaces")
    ap.add_argument("--lateral", action="store_true", help="also tune the lane-change path follower")
    ap.add_argument("--lateral-only", action="store_true", help="only tune the lane-change path follower")
    args = ap.parse_args(argv)
    tire = check_study_arguments(ap, args, dt_max=0.05)
    check_int(ap, "--vehicles", args.vehicles, 1, 1_000_000)
    check_int(ap, "--heldout", args.heldout, 1, 1000)
    try:
        surfaces = tuple(s.strip() for s in args.surfaces.split(",") if s.strip())
        for s in surfaces:
            surface_id(s)
    except ValueError as e:
        ap.error(str(e))
    seeds = tuple(1001 + i for i in range(args.heldout))
    summary: dict = dict(command="tune", preset=args.preset, tire=tire_label(args), controllers=[])
    rows: list[dict] = []
    if not args.lateral_only:
        abs_setup = BrakingSetup(preset=args.preset, tire=tire, dt=args.dt, surfaces=surfaces)
        print(
            f"ABS tuning: {args.preset}, {tire_label(args)} tires, {args.vehicles} vehicles x {args.iters} iterations, "
            f"surfaces {', '.join(surfaces)}, v0 U{abs_setup.speed} m/s, dt {args.dt} s, horizon {abs_setup.horizon} s"
        )
        res = _tune(tune_abs, abs_setup, args, seeds, "ABS tuning")
        t = time.perf_counter()
        before = evaluate_abs(abs_gains(), abs_setup, seeds, args.vehicles)
        after = evaluate_abs(res.gains, abs_setup, seeds, args.vehicles)
        print(
            f"held-out full stops (horizon {2 * abs_setup.horizon:g} s, no tail estimate; "
            f"{time.perf_counter() - t:.1f} s): mean stopping distance untuned -> tuned"
        )
        for s in seeds:
            print(
                f"  seed {s}: {before[s].mean():8.3f} m -> {after[s].mean():8.3f} m "
                f"({100 * (after[s].mean() / before[s].mean() - 1):+.2f} %), better on "
                f"{int(np.sum(after[s] < before[s]))}/{args.vehicles} vehicles"
            )
        b = np.concatenate(list(before.values())).mean()
        a = np.concatenate(list(after.values())).mean()
        print(f"  all : {b:8.3f} m -> {a:8.3f} m ({100 * (a / b - 1):+.2f} %)")
        full_stops = {s: dict(untuned=float(before[s].mean()), tuned=float(after[s].mean())) for s in seeds}
        summary["controllers"].append(_summary(res, full_stops))
        rows += _rows(res, "abs")
    if args.lateral or args.lateral_only:
        lane_setup = LaneSetup(preset=args.preset, tire=tire, dt=args.dt)
        print(
            f"\nlane-change tuning: {args.vehicles} vehicles x {args.iters} iterations, surfaces "
            f"{', '.join(lane_setup.surfaces)}, v0 U{lane_setup.speed} m/s, {lane_setup.width} m over {lane_setup.length} m"
        )
        res = _tune(tune_lateral, lane_setup, args, seeds, "lane-change tuning")
        before = evaluate_lateral(lane_gains(), lane_setup, seeds, args.vehicles)
        after = evaluate_lateral(res.gains, lane_setup, seeds, args.vehicles)
        print("held-out rms lateral error [m] / rms steer rate [rad/s], untuned -> tuned")
        for s in seeds:
            print(
                f"  seed {s}: {before[s][0].mean():.4f} / {before[s][1].mean():.4f} -> "
                f"{after[s][0].mean():.4f} / {after[s][1].mean():.4f}"
            )
        rms = {
            s: dict(
                untuned_rms_error=float(before[s][0].mean()),
                untuned_rms_steer_rate=float(before[s][1].mean()),
                tuned_rms_error=float(after[s][0].mean()),
                tuned_rms_steer_rate=float(after[s][1].mean()),
            )
            for s in seeds
        }
        summary["controllers"].append(_summary(res, rms))
        rows += _rows(res, "lane_change")
    write_study_outputs(args, summary, rows)
    return 0
