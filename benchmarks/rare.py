"""Rare-event estimators against plain Monte Carlo on a vehicle (issue 36): runs to the same interval.

    python -m benchmarks.rare                        # 1e7 plain runs at ~1e-4, then the estimators; ~1e-6
    python -m benchmarks.rare --mc-runs 1000000 --json rare.json

The case: the hatchback braking on wet asphalt from 12 m/s with ABS (single track, 10 ms steps, stops in
~11 m), tire friction ``mu_x = mu_y`` x N(1, 0.1) and mass x U(0.9, 1.25).  Event A ``distance > 17.3`` m
(~1e-4): plain Monte Carlo of ``--mc-runs`` vehicles (the study's design, ``2^17`` per chunk) gives the
reference and its relative half-width ``h``; then cross entropy, FORM + importance sampling and subset
simulation run with ``target = h`` and a budget of ``mc-runs / ratio`` runs (50: the issue's "50x fewer")
and report the runs they needed and the half-width they reached.  Every run is a journaled study folder
under ``--out``: a killed benchmark resumes where it stopped, a finished run is read back.  Event
B ``distance > 20.5`` m (~1e-6): the three estimators with ``target = 0.2`` and a budget of 1e5 runs.  Every
figure is a :func:`sims.studies.study.run` of a study with an ``[event]`` table, as a study file would run
it.  Not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

CASE = dict(
    name="rare-wet-braking",
    scenario="braking",
    vehicle={"surface": "asphalt_wet"},
    seed=11,
    settings={"speed": 12.0},
    options={"max_time": 4.0, "dt": 0.01, "model": "single_track"},
    metrics=["distance"],
    vary=[
        {
            "path": "vehicle.tire_scale.mu_x",
            "by": "factor",
            "dist": "normal",
            "mean": 1.0,
            "sd": 0.1,
            "also": ["vehicle.tire_scale.mu_y"],
        },
        {"path": "vehicle.chassis.mass", "by": "factor", "dist": "uniform", "low": 0.9, "high": 1.25},
    ],
)
EVENT_A = "distance > 17.3"
EVENT_B = "distance > 20.5"
ESTIMATORS = (("cross_entropy", 1000), ("form", 500), ("subset", 1000))


def _run(runs: int, event: dict, folder: Path) -> dict:
    """The event summary of the case with ``runs`` and ``event``, run in ``folder`` (journaled: a killed
    benchmark resumes there; a finished folder is read back, not rerun)."""
    from sims import studies
    from sims.studies import report

    if report.is_complete(folder):
        ev = json.loads((folder / "summary.json").read_text())["event"]
        ev["wall_s"] = float("nan")
    else:
        t0 = time.perf_counter()
        st = {**CASE, "runs": runs, "chunk": min(runs, 1 << 17), "event": event}
        res = studies.run(studies.Study.from_dict(st), folder=folder, progress=False)
        ev = dict(res.summary["event"], wall_s=time.perf_counter() - t0)
    ev.pop("history", None)
    return {k: float(v) if v in ("inf", "-inf", "nan") else v for k, v in ev.items()}  # (JSON's non-finite)


def _row(name: str, ev: dict, mc_runs: int | None = None) -> str:
    ratio = f"{mc_runs / ev['runs']:.0f}x" if mc_runs else "-"
    return (
        f"| {name} | {ev['p']:.3g} | [{ev['low']:.3g}, {ev['high']:.3g}] | {ev['half_width']:.3f} | "
        f"{ev['runs']} | {ratio} | {ev['wall_s']:.0f} s |"
    )


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mc-runs", type=int, default=10_000_000, help="plain Monte Carlo runs of event A")
    ap.add_argument("--budget", type=int, default=100_000, help="runs allowed each estimator at event B")
    ap.add_argument("--ratio", type=float, default=50.0, help="event A: each estimator may spend mc-runs / ratio runs")
    ap.add_argument("--out", default="rare-runs", help="folder of the journaled runs (a rerun resumes)")
    ap.add_argument("--json", default=None, help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    from sims.run import use_host_devices

    use_host_devices()
    import jax

    out: dict = dict(machine=platform.processor() or platform.machine(), devices=jax.device_count(), a={}, b={})
    out_dir = Path(args.out)
    mc = _run(args.mc_runs, {"when": EVENT_A}, out_dir / "a-monte_carlo")
    out["a"]["monte_carlo"] = mc
    h = mc["half_width"] if math.isfinite(mc["half_width"]) else 0.3  # (no failure in a small smoke run)
    lines = [
        f"Event A: P[{EVENT_A}], plain Monte Carlo relative half-width h = {h:.3f}; estimators run to h "
        f"within mc-runs / {args.ratio:g} runs",
        "",
        "| estimator | p | 95 % interval | rel. half-width | runs | fewer runs | wall |",
        "|---|---|---|---|---|---|---|",
        _row("monte_carlo", mc),
    ]
    for name, batch in ESTIMATORS:
        budget = int(args.mc_runs / args.ratio)
        ev = _run(budget, {"when": EVENT_A, "estimator": name, "batch": batch, "target": h}, out_dir / f"a-{name}")
        out["a"][name] = ev
        lines.append(_row(name, ev, args.mc_runs))
    lines += [
        "",
        f"Event B: P[{EVENT_B}], target 0.2, budget {args.budget} runs",
        "",
        "| estimator | p | 95 % interval | rel. half-width | runs | - | wall |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, batch in ESTIMATORS:
        ev = _run(
            args.budget, {"when": EVENT_B, "estimator": name, "batch": batch, "target": 0.2}, out_dir / f"b-{name}"
        )
        out["b"][name] = ev
        lines.append(_row(name, ev))
    print("\n".join(lines))
    out["markdown"] = "\n".join(lines)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return out


if __name__ == "__main__":
    main()
