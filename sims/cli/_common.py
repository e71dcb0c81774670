"""What the CLIs share beyond the argument checks (:mod:`sims.cli._checks`): the result writers
(:func:`write_table`: csv or parquet; :func:`write_json`), the progress bar on stderr (:class:`Progress`)
and the arguments and checks of the two studies (``identify``, ``tune``)."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sims.cli._checks import check_float, check_int, check_seed
from sims.cli._tire import add_tire_arguments, tire_from_args
from sims.vehicles import presets


def write_table(path: Path, columns: dict, fmt: str = "csv") -> Path:
    """Write ``columns`` (name -> equal-length sequence) as a table at ``path`` with the suffix of ``fmt``
    (``"csv"``: floats with 6 significant digits; ``"parquet"``: needs pyarrow); returns the path written."""
    path = Path(path)
    if fmt == "parquet":
        import pyarrow as pa  # optional dependency, only for --format parquet
        import pyarrow.parquet as pq

        path = path.with_suffix(".parquet")
        pq.write_table(pa.table({k: list(v) for k, v in columns.items()}), path)
        return path
    path = path.with_suffix(".csv")
    names = list(columns)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for row in zip(*(columns[k] for k in names), strict=False):
            w.writerow([f"{v:.6g}" if isinstance(v, float) else v for v in row])
    return path


def _plain(x):
    """``x`` with numpy scalars and arrays as Python numbers and lists, non-finite floats as ``None``."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def write_json(path: Path, obj: dict) -> Path:
    """Write ``obj`` as indented JSON at ``path`` (numpy values as plain numbers, NaN/inf as ``null``)."""
    path = Path(path)
    path.write_text(json.dumps(_plain(obj), indent=2) + "\n")
    return path


def rows_to_columns(rows: list[dict]) -> dict:
    """``[{name: value}, ...]`` (same keys in every row) -> ``{name: [value, ...]}`` for :func:`write_table`."""
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


class Progress:
    """A tqdm bar on stderr (or a no-op when not ``enabled``): ``update(n)``, ``close()``."""

    def __init__(self, total, desc, enabled, unit="step"):
        self.bar = None
        if enabled:
            self.bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)

    def update(self, n):
        if self.bar is not None:
            self.bar.update(n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def add_study_arguments(ap: argparse.ArgumentParser, *, iters: int, lr: float, dt: float) -> None:
    """The arguments ``identify`` and ``tune`` share: ``--preset``, the tire (``--tir`` / ``--tire``),
    ``--iters``, ``--lr``, ``--dt``, ``--seed``, the outputs ``--json PATH`` and ``--csv PATH`` and
    ``--no-progress``."""
    ap.add_argument("--preset", default="hatchback")
    add_tire_arguments(ap)
    ap.add_argument("--iters", type=int, default=iters, help="Adam iterations")
    ap.add_argument("--lr", type=float, default=lr, help="Adam learning rate (unconstrained parameters)")
    ap.add_argument("--dt", type=float, default=dt, help="step [s]")
    ap.add_argument("--seed", type=int, default=0, help="PRNG seed")
    ap.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")
    ap.add_argument("--csv", metavar="PATH", help="also write the result table as CSV to PATH (suffix .csv)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (stderr)")


def check_study_arguments(ap: argparse.ArgumentParser, args, *, dt_max: float):
    """Check what :func:`add_study_arguments` added (``ap.error`` on a bad value, before anything is built)
    and that the output files can be written; returns the tire (:func:`sims.cli._tire.tire_from_args`)."""
    check_seed(ap, args.seed)
    check_int(ap, "--iters", args.iters, 1, 10_000_000)
    check_float(ap, "--lr", args.lr, 0.0, 10.0, lo_incl=False)
    check_float(ap, "--dt", args.dt, 0.0, dt_max, lo_incl=False)
    for flag, path in (("--json", args.json), ("--csv", args.csv)):
        if path is not None and not Path(path).parent.is_dir():
            ap.error(f"{flag} {path}: the folder {Path(path).parent} does not exist")
    try:
        presets.check_name(args.preset)
    except ValueError as e:
        ap.error(str(e))
    return tire_from_args(ap, args)


def study_progress(args, total: int, desc: str) -> Progress:
    """The progress bar of a study's ``total`` iterations (off with ``--no-progress``)."""
    return Progress(total, desc, not args.no_progress, unit="iter")


def write_study_outputs(args, summary: dict, rows: list[dict]) -> list[Path]:
    """``--json``: ``summary`` (with ``rows``); ``--csv``: ``rows`` as a table; returns the paths written
    (each also printed as ``wrote PATH``)."""
    paths = []
    if args.json:
        paths.append(write_json(Path(args.json), {**summary, "rows": rows}))
    if args.csv:
        paths.append(write_table(Path(args.csv), rows_to_columns(rows), "csv"))
    for p in paths:
        print(f"wrote {p}")
    return paths
