"""``python -m sims study STUDY.toml``: run a Monte Carlo study file (:mod:`sims.studies`) and write its run
folder (resolved study file, results table, ``summary.json``, plots, ``report.html``); ``python -m sims study
replay FOLDER --row N`` replays one row with every channel recorded (:mod:`sims.studies.replay`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxtire.validation import ValidationError
from sims.cli._checks import OneLineParser


def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m sims study",
        description="Run a Monte Carlo study file and write its run folder: the resolved study file, the results "
        "table, summary.json, the plots and report.html (docs/studies.md).",
    )
    ap.add_argument("file", help="the study file (TOML; see docs/studies.md), or an unfinished run folder to resume")
    ap.add_argument("--out", default="studies", help="parent folder of the run folder (default: studies)")
    ap.add_argument("--folder", default=None, help="exactly this run folder instead of <out>/<name>-<seed>-<time>")
    ap.add_argument("--format", default="auto", choices=("auto", "parquet", "csv"), help="results table format")
    ap.add_argument("--devices", type=int, default=None, help="local devices to use (default: all)")
    ap.add_argument("--fast-compile", action="store_true", help="XLA options that compile about 2x faster")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars (stderr) for the study's phases")
    return ap


def _replay_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m sims study replay",
        description="Re-simulate one row of a finished run folder with every channel recorded: its metrics "
        "bitwise the table's, its time histories (channels.csv / .parquet) and a plot sheet (sheet.png).",
    )
    ap.add_argument("folder", help="a finished run folder (with study.toml, summary.json and the results)")
    ap.add_argument("--row", type=int, required=True, help="the row's 'run' value in the results table")
    ap.add_argument("--out", default=None, help="where to write (default: <folder>/replays/row-<N>)")
    ap.add_argument("--format", default="auto", choices=("auto", "parquet", "csv"), help="channels table format")
    return ap


def replay_main(argv) -> int:
    """``python -m sims study replay FOLDER --row N``: replay, write, print the comparison; exit status."""
    ap = _replay_parser()
    args = ap.parse_args(argv)
    from sims.studies import replay  # after parsing: --help answers without importing JAX

    try:
        rep = replay.replay(args.folder, args.row)
        out = Path(args.out) if args.out else Path(args.folder) / "replays" / f"row-{args.row}"
        rep = replay.write(rep, out, args.format)
    except (ValidationError, KeyError) as e:
        sys.stderr.write(f"{ap.prog}: error: {e}\n")
        return 2
    print(f"row {rep.row}: {', '.join(f'{p} = {v:.6g}' for p, v in rep.factors.items())}")
    for m, v in rep.metrics.items():
        print(f"  {m} = {v:.9g}" + ("" if m not in rep.mismatch else f"  (table: {rep.mismatch[m][0]:.9g})"))
    print(
        f"metrics {'bitwise equal to' if rep.same else 'DIFFER from'} the table; {len(rep.channels)} channels -> {out}"
    )
    return 0 if rep.same else 1


def main(argv=None) -> int:
    """Parse ``argv``, run the study, print where its folder is and the headline numbers; exit status
    (``replay`` as the first argument: :func:`replay_main`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["replay"]:
        return replay_main(argv[1:])
    ap = _parser()
    args = ap.parse_args(argv)
    from sims import studies  # after parsing: --help answers without importing JAX
    from sims.run.spec import fast_compile_options  # (the same)
    from sims.studies import report  # (the same)

    folder = args.folder
    if folder is None and Path(args.file).is_dir():
        folder = args.file  # a run folder: resume it
    try:
        opts = fast_compile_options() if args.fast_compile else None
        study = studies.as_study(args.file)
        studies.check(study)
        folder = report.start_folder(study, out=args.out, folder=folder)
        print(f"run folder {folder} (if stopped, resume with: {ap.prog} {folder})", flush=True)
        res = studies.run(
            study,
            folder=folder,
            fmt=args.format,
            devices=args.devices,
            compiler_options=opts,
            progress=not args.no_progress,
        )
    except (ValidationError, KeyError) as e:
        sys.stderr.write(f"{ap.prog}: error: {e}\n")
        return 2
    print(f"study {res.study.name!r}: {res.summary['runs']} runs -> {res.folder}")
    crit = res.summary.get("criteria") or {}
    if crit.get("criteria"):
        print(f"verdict: {crit['verdict'].upper()}")
        for c in crit["criteria"]:
            print(
                f"  {c['verdict']:9s} {c['text']}: {c['estimate']:.4g} [{c['low']:.4g}, {c['high']:.4g}] ({c['note']})"
            )
    ev = res.summary.get("event")
    if ev:
        print(
            f"  P[{ev['when']}] = {ev['p']:.4g} [{ev['low']:.4g}, {ev['high']:.4g}] ({ev['method']}, "
            f"{ev['runs']} runs, relative half-width {ev['half_width']:.3g})"
        )
    for m, d in res.summary["statistics"].items():
        if d["kind"] == "flag":
            print(f"  {m}: rate {d['rate']:.4g} [{d['low']:.4g}, {d['high']:.4g}]")
        else:
            p = {k: round(v["value"], 4) for k, v in d["percentiles"].items()}
            print(f"  {m}: mean {d['mean']:.4g} +- {d['sem']:.2g}  {json.dumps(p)}")
    return 0
