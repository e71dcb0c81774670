"""Command line of :mod:`jaxtire.fit`::

    python -m jaxtire.fit [--data A.tdx B.tdx ... | --data table.csv] [--tir START.tir] --out fitted.tir

Shows a tqdm progress bar over the stages and writes ``fitted.tir`` (the start file, or jaxtire's
documented template, with the fitted coefficients, the data's validity ranges and a header comment),
``fitted_residuals.json`` / ``.csv``, ``fitted_coefficients.csv`` and ``fitted_fit.png``
(:mod:`jaxtire.fit.outputs`).  Arguments are checked before anything is compiled: a bad path or
file ends with one line on stderr and exit status 2.
Without ``--data`` it fits synthetic data of the bundled TNO 205/60 R15 tire (1 % noise) from a
generic start and reports the error against the true curves and cornering stiffness.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from jaxtire.fit.api import fit, fit_many, generic_tire, perturbed_tires, synthetic_data
from jaxtire.fit.data import load_cases, load_files, save_csv
from jaxtire.fit.loop import compiler_options
from jaxtire.fit.outputs import fit_header, plot_sheet, sweep_blocks, write_tables
from jaxtire.fit.reports import rmse_tables
from jaxtire.tir import data_path, default_tire, load_tir, save_tir
from jaxtire.tire import linear_stiffness

__all__ = ["main"]


def _kya_errors(fitted, true, loads) -> np.ndarray:
    """Relative error of the cornering stiffness of ``fitted`` against ``true`` at each load [N]."""
    ky = jax.jit(lambda p, fz: linear_stiffness(p, fz)[1], compiler_options=compiler_options(True))
    with jax.enable_x64(True):
        kf = np.asarray(ky(fitted.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
        kt = np.asarray(ky(true.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
    return kf / kt - 1.0


def _fail(msg: str) -> int:
    print(f"python -m jaxtire.fit: error: {msg}", file=sys.stderr)
    return 2


def _check_args(args) -> str | None:
    """One-line description of the first bad argument, before anything is compiled (None if fine)."""
    for p in args.data or ():
        if not Path(p).is_file():
            return f"--data {p}: no such file"
    if args.tir and not Path(args.tir).is_file():
        return f"--tir {args.tir}: no such file"
    out_dir = Path(args.out).resolve().parent
    if not out_dir.is_dir():
        return f"--out {args.out}: directory {out_dir} does not exist"
    if args.iters is not None and args.iters < 1:
        return f"--iters must be >= 1, got {args.iters}"
    if args.noise < 0:
        return f"--noise must be >= 0, got {args.noise}"
    if args.many < 0:
        return f"--many must be >= 0, got {args.many}"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m jaxtire.fit", description="Fit MF 6.1 coefficients to tire data.")
    ap.add_argument(
        "--data",
        nargs="+",
        metavar="FILE",
        help="measurement files, one per sweep or one table: TYDEX .tdx or CSV with columns "
        "kappa,alpha,gamma,fz and any of fx,fy,mz (detected by extension, else content). "
        "Default: synthetic data from the bundled TNO 205/60R15 tire with 1%% noise",
    )
    ap.add_argument(
        "--tir",
        help="start .tir (default: a generic passenger tire with the data's median load; "
        "written from jaxtire's documented template)",
    )
    ap.add_argument(
        "--out",
        default="fitted.tir",
        help="fitted .tir to write (default fitted.tir); the residual "
        "tables OUT_residuals.json/.csv, OUT_coefficients.csv and the sheet OUT_fit.png go next to it",
    )
    ap.add_argument("--no-plot", action="store_true", help="do not write the plot sheet")
    ap.add_argument(
        "--many",
        type=int,
        default=0,
        metavar="N",
        help="also fit N synthetic tires (coefficients scaled +-10%%) in one vmapped program",
    )
    ap.add_argument(
        "--iters", type=int, default=None, help="optimiser iterations per stage (default 150 for lbfgs, 1000 for adam)"
    )
    ap.add_argument("--method", choices=("lbfgs", "adam"), default="lbfgs", help="optimiser of the single fit")
    ap.add_argument("--many-method", choices=("lbfgs", "adam"), default="adam", help="optimiser of the fleet fit")
    ap.add_argument("--many-iters", type=int, default=None, help="iterations per stage of the fleet fit")
    ap.add_argument("--noise", type=float, default=0.01, help="synthetic noise relative to peak (default 0.01)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-data", metavar="CSV", help="write the (synthetic) data used to CSV")
    args = ap.parse_args(argv)
    bad = _check_args(args)
    if bad:
        return _fail(bad)

    true = None
    try:
        if args.data:
            data, sweeps = load_files(args.data)
            sources = [Path(p).name for p in args.data]
            print(f"data: {data.n_rows} rows from {len(args.data)} file(s)")
        else:
            true = default_tire()
            data = synthetic_data(true, noise=args.noise, seed=args.seed)
            sweeps = sweep_blocks(data)
            sources = [f"synthetic data of {data_path().name} ({100 * args.noise:g}% noise, seed {args.seed})"]
            print(f"synthetic data: {data.n_rows} rows from the bundled tire (noise {100 * args.noise:g}% of peak)")
        start = load_tir(args.tir) if args.tir else None
    except (OSError, ValueError) as e:
        return _fail(str(e).splitlines()[0])
    if args.save_data:
        save_csv(data, args.save_data)
    if start is None:
        start = generic_tire(like=true) if true is not None else generic_tire(fnomin=float(np.median(data.fz)))

    bar = tqdm(total=None, desc="fit", unit="stage", file=sys.stderr, leave=True)

    def progress(name, i, n):
        bar.total = n
        bar.n = i
        bar.set_postfix_str(name)
        bar.refresh()

    try:
        result = fit(data, start, n_iter=args.iters, method=args.method, progress=progress)
    except ValueError as e:
        bar.close()
        return _fail(str(e).splitlines()[0])
    bar.n = bar.total or 0
    bar.set_postfix_str("done")
    bar.close()
    print(result.report)
    if true is not None:
        clean = synthetic_data(true, noise=0.0)
        with jax.enable_x64(True):
            rmse, peak, _, _ = rmse_tables(result.params, clean, tuple(result.report.rmse))
        print(
            "RMSE vs the true (noise-free) curves: "
            + ", ".join(f"{c} {100 * rmse[c] / peak[c]:.3f}%" for c in rmse)
            + " of peak"
        )
        loads = load_cases(data.fz)[0]
        err = _kya_errors(result.params, true, loads)
        cells = [f"{ld:.0f} N {100 * e:+.3f}%" for ld, e in zip(loads, err, strict=True)]
        print("Kya error vs the true tire: " + ", ".join(cells))
    header = fit_header(result.report, sources)
    meta = result.params.meta
    has_doc = getattr(meta, "document", None) is not None
    save_tir(result.params, args.out, header="\n".join(header) if has_doc else "\n$ ".join(header))
    print(f"wrote {args.out}")
    stem = Path(args.out).with_suffix("")
    for p in write_tables(result.report, stem, sources):
        print(f"wrote {p}")
    if not args.no_plot:
        png = plot_sheet(result.params, data, sweeps, stem.with_name(stem.name + "_fit.png"))
        print(f"wrote {png}")

    if args.many:
        base = true if true is not None else result.params
        tires = perturbed_tires(base, args.many, seed=args.seed + 1)
        fleet_data = synthetic_data(tires, noise=args.noise, seed=args.seed + 2)
        fleet = fit_many(fleet_data, start, n_iter=args.many_iters, method=args.many_method)
        print(fleet.report)
        print(
            f"time per tire: {1e3 * fleet.report.seconds_per_tire:.2f} ms "
            f"(+ {fleet.report.compile_seconds:.1f} s compile for the whole fleet)"
        )
    return 0
