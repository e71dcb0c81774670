"""``python -m jaxtire [TIR_FILE]``: summary of a tire's pure-slip curves (default: the bundled tire)."""

from __future__ import annotations

import argparse

import jax
import numpy as np

from jaxtire.tir import TirError, data_path, load_tir
from jaxtire.tire import linear_stiffness, model_label, nominal_load, tire_forces, unloaded_radius


def summary(params, loads=None) -> str:
    """A text table of the pure-slip curves at several loads, in ISO-W signs (as plots and docs).

    Peaks are taken on the positive-slip side at every load, so the sign convention never
    changes from one row to the next: ``Fx peak`` is the largest Fx for kappa >= 0 (positive,
    driving), ``Fy peak`` the extreme Fy for alpha >= 0 (negative in ISO-W: a positive slip
    angle pushes the tire to the right), ``Mz peak`` the extreme Mz for alpha >= 0 (positive
    self-aligning moment).  ``Kya`` is dFy/dalpha at alpha = 0 (negative in ISO-W) in N/deg,
    ``Kxk`` dFx/dkappa at kappa = 0 in N per unit slip.

    Evaluated on the host in NumPy float64 (the params' leaves and the slips as NumPy arrays: the MF
    equations run in NumPy, nothing is compiled; :mod:`jaxtire._xp`).
    """
    params = jax.tree.map(lambda x: np.asarray(x, np.float64), params)
    fz0 = float(nominal_load(params))
    loads = loads or [0.5 * fz0, fz0, 1.5 * fz0, 2.0 * fz0]
    kappa = np.linspace(0.0, 0.5, 1001)
    alpha = np.linspace(0.0, 0.35, 1001)
    rows = [
        "ISO-W signs; peaks on the positive-slip side (kappa >= 0, alpha >= 0)",
        f"{'Fz [N]':>8} {'Fx peak [N]':>12} {'kappa@pk':>9} {'Kxk [N]':>10} {'Fy peak [N]':>12} "
        f"{'alpha@pk[deg]':>14} {'Kya [N/deg]':>12} {'Mz peak [Nm]':>13}",
    ]
    for fz in loads:
        fx = np.asarray(tire_forces(params, kappa, 0.0, 0.0, fz, combined=False).fx)
        o = tire_forces(params, 0.0, alpha, 0.0, fz, combined=False)
        kx, ky = (float(k) for k in linear_stiffness(params, fz))
        fy, mz = np.asarray(o.fy), np.asarray(o.mz)
        i, j, m = int(np.argmax(fx)), int(np.argmax(np.abs(fy))), int(np.argmax(np.abs(mz)))
        kya = -ky * np.pi / 180.0  # ISO-W: a positive slip angle gives a negative Fy
        rows.append(
            f"{fz:8.0f} {fx[i]:12.1f} {float(kappa[i]):9.3f} {kx:10.0f} "
            f"{fy[j]:12.1f} {np.degrees(float(alpha[j])):14.2f} {kya:12.1f} {mz[m]:13.1f}"
        )
    return "\n".join(rows)


def main(argv=None) -> None:
    """``python -m jaxtire [file.tir]``: print the tire's pure-slip summary (peaks [N], slips, stiffnesses)."""
    ap = argparse.ArgumentParser(prog="python -m jaxtire", description=__doc__)
    ap.add_argument("tir", nargs="?", default=str(data_path()), help="a .tir file (default: bundled TNO 205/60R15)")
    args = ap.parse_args(argv)
    try:
        p = load_tir(args.tir)
    except TirError as e:  # one line, no traceback, exit status 1
        raise SystemExit(f"python -m jaxtire: {e}") from None
    print(
        f"{args.tir}  ({model_label(p)}, nominal load {float(nominal_load(p)):.0f} N, "
        f"R0 {float(unloaded_radius(p)):.4f} m)"
    )
    print(summary(p))


if __name__ == "__main__":
    main()
