"""``python -m sims tune``: tune the ABS and lane-change controllers (:mod:`sims.studies.tuning`).

Argument parsing and printing only.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jaxtire.surfaces import surface_id
from sims.cli._checks import OneLineParser, check_float, check_int, check_seed
from sims.cli._tire import add_tire_arguments, tire_from_args, tire_label
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
from sims.vehicles import presets


def main(argv=None) -> int:
    ap = OneLineParser(
        prog="python -m sims tune",
        description="Tune the ABS (and optionally a lane-change) controller by grad "
        "through fleet rollouts; prints untuned vs tuned on held-out seeds.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--vehicles", type=int, default=6, help="fleet size per iteration")
    ap.add_argument("--iters", type=int, default=40, help="Adam iterations")
    ap.add_argument("--lr", type=float, default=0.1, help="Adam learning rate (unconstrained gains)")
    ap.add_argument("--seed", type=int, default=0, help="training seed")
    ap.add_argument("--heldout", type=int, default=3, help="number of held-out seeds (1001, 1002, ...)")
    ap.add_argument("--preset", default="hatchback")
    add_tire_arguments(ap)
    ap.add_argument("--dt", type=float, default=0.01, help="step [s]")
    ap.add_argument("--surfaces", default=",".join(BRAKING_SURFACES), help="ABS training/evaluation surfaces")
    ap.add_argument("--lateral", action="store_true", help="also tune the lane-change path follower")
    ap.add_argument("--lateral-only", action="store_true", help="only tune the lane-change path follower")
    args = ap.parse_args(argv)
    check_seed(ap, args.seed)
    check_int(ap, "--vehicles", args.vehicles, 1, 1_000_000)
    check_int(ap, "--iters", args.iters, 1, 10_000_000)
    check_int(ap, "--heldout", args.heldout, 1, 1000)
    check_float(ap, "--lr", args.lr, 0.0, 10.0, lo_incl=False)
    check_float(ap, "--dt", args.dt, 0.0, 0.05, lo_incl=False)
    tire = tire_from_args(ap, args)
    if args.vehicles < 1 or args.iters < 1 or args.heldout < 1:
        ap.error("--vehicles, --iters and --heldout must be >= 1")
    if not 0.0 < args.dt <= 0.05:
        ap.error("--dt must be in (0, 0.05] s")
    try:
        surfaces = tuple(s.strip() for s in args.surfaces.split(",") if s.strip())
        for s in surfaces:
            surface_id(s)
        presets.check_name(args.preset)
    except ValueError as e:
        ap.error(str(e))
    seeds = tuple(1001 + i for i in range(args.heldout))
    if not args.lateral_only:
        abs_setup = BrakingSetup(preset=args.preset, tire=tire, dt=args.dt, surfaces=surfaces)
        print(
            f"ABS tuning: {args.preset}, {tire_label(args)} tires, {args.vehicles} vehicles x {args.iters} iterations, "
            f"surfaces {', '.join(surfaces)}, v0 U{abs_setup.speed} m/s, dt {args.dt} s, horizon {abs_setup.horizon} s"
        )
        res = tune_abs(
            abs_setup,
            n_vehicles=args.vehicles,
            n_iter=args.iters,
            lr=args.lr,
            seed=args.seed,
            heldout_seeds=seeds,
            verbose=True,
        )
        print(res.report)
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
    if args.lateral or args.lateral_only:
        lane_setup = LaneSetup(preset=args.preset, tire=tire, dt=args.dt)
        print(
            f"\nlane-change tuning: {args.vehicles} vehicles x {args.iters} iterations, surfaces "
            f"{', '.join(lane_setup.surfaces)}, v0 U{lane_setup.speed} m/s, {lane_setup.width} m over {lane_setup.length} m"
        )
        res = tune_lateral(
            lane_setup,
            n_vehicles=args.vehicles,
            n_iter=args.iters,
            lr=args.lr,
            seed=args.seed,
            heldout_seeds=seeds,
            verbose=True,
        )
        print(res.report)
        before = evaluate_lateral(lane_gains(), lane_setup, seeds, args.vehicles)
        after = evaluate_lateral(res.gains, lane_setup, seeds, args.vehicles)
        print("held-out rms lateral error [m] / rms steer rate [rad/s], untuned -> tuned")
        for s in seeds:
            print(
                f"  seed {s}: {before[s][0].mean():.4f} / {before[s][1].mean():.4f} -> "
                f"{after[s][0].mean():.4f} / {after[s][1].mean():.4f}"
            )
    return 0
