"""Command line of :mod:`jaxtire.fit`::

    python -m jaxtire.fit [--data CSV] [--tir START.tir] --out fitted.tir [--many N]

Without ``--data`` it fits synthetic data of the bundled TNO 205/60 R15 tire (1 % noise) from a
generic start and reports the error against the true curves and cornering stiffness.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit.api import fit, fit_many, generic_tire, perturbed_tires, synthetic_data
from jaxtire.fit.data import load_cases, load_csv, save_csv
from jaxtire.fit.loop import compiler_options
from jaxtire.fit.reports import rmse_tables
from jaxtire.tir import default_tire, load_tir, save_tir
from jaxtire.tire import linear_stiffness

__all__ = ["main"]


def _kya_errors(fitted, true, loads) -> np.ndarray:
    """Relative error of the cornering stiffness of ``fitted`` against ``true`` at each load [N]."""
    ky = jax.jit(lambda p, fz: linear_stiffness(p, fz)[1], compiler_options=compiler_options(True))
    with jax.enable_x64(True):
        kf = np.asarray(ky(fitted.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
        kt = np.asarray(ky(true.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
    return kf / kt - 1.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m jaxtire.fit", description="Fit MF 6.1 coefficients to tire data.")
    ap.add_argument("--data", help="CSV with columns kappa,alpha,gamma,fz,fx,fy,mz (default: synthetic data "
                                   "from the bundled TNO 205/60R15 tire with 1%% noise)")
    ap.add_argument("--tir", help="start .tir (default: a generic passenger tire with the data tire's FNOMIN, R0)")
    ap.add_argument("--out", default="fitted.tir", help="fitted .tir to write (default fitted.tir)")
    ap.add_argument("--many", type=int, default=0, metavar="N",
                    help="also fit N synthetic tires (coefficients scaled +-10%%) in one vmapped program")
    ap.add_argument("--iters", type=int, default=None,
                    help="optimiser iterations per stage (default 150 for lbfgs, 1000 for adam)")
    ap.add_argument("--method", choices=("lbfgs", "adam"), default="lbfgs", help="optimiser of the single fit")
    ap.add_argument("--many-method", choices=("lbfgs", "adam"), default="adam", help="optimiser of the fleet fit")
    ap.add_argument("--many-iters", type=int, default=None, help="iterations per stage of the fleet fit")
    ap.add_argument("--noise", type=float, default=0.01, help="synthetic noise relative to peak (default 0.01)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-data", metavar="CSV", help="write the (synthetic) data used to CSV")
    args = ap.parse_args(argv)

    true = None
    if args.data:
        data = load_csv(args.data)
    else:
        true = default_tire()
        data = synthetic_data(true, noise=args.noise, seed=args.seed)
        print(f"synthetic data: {data.n_rows} rows from the bundled tire (noise {100 * args.noise:g}% of peak)")
    if args.save_data:
        save_csv(data, args.save_data)
    if args.tir:
        start = load_tir(args.tir)
    elif true is not None:
        start = generic_tire(like=true)
    else:
        start = generic_tire(fnomin=float(np.median(data.fz)))
    result = fit(data, start, n_iter=args.iters, method=args.method)
    print(result.report)
    if true is not None:
        clean = synthetic_data(true, noise=0.0)
        with jax.enable_x64(True):
            rmse, peak, _, _ = rmse_tables(result.params, clean, tuple(result.report.rmse))
        print("RMSE vs the true (noise-free) curves: "
              + ", ".join(f"{c} {100 * rmse[c] / peak[c]:.3f}%" for c in rmse) + " of peak")
        loads = load_cases(data.fz)[0]
        err = _kya_errors(result.params, true, loads)
        print("Kya error vs the true tire: " + ", ".join(f"{ld:.0f} N {100 * e:+.3f}%" for ld, e in zip(loads, err)))
    save_tir(result.params, args.out)
    print(f"wrote {args.out}")

    if args.many:
        base = true if true is not None else result.params
        tires = perturbed_tires(base, args.many, seed=args.seed + 1)
        fleet_data = synthetic_data(tires, noise=args.noise, seed=args.seed + 2)
        fleet = fit_many(fleet_data, start, n_iter=args.many_iters, method=args.many_method)
        print(fleet.report)
        print(f"time per tire: {1e3 * fleet.report.seconds_per_tire:.2f} ms "
              f"(+ {fleet.report.compile_seconds:.1f} s compile for the whole fleet)")
    return 0
