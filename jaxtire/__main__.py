"""``python -m jaxtire [TIR_FILE]``: summary of a tire's pure-slip curves (default: the bundled tire)."""

from __future__ import annotations

import argparse

import jax.numpy as jnp
import numpy as np

from jaxtire.tir import data_path, load_tir
from jaxtire.tire import linear_stiffness, model_label, nominal_load, tire_forces, unloaded_radius


def summary(params, loads=None) -> str:
    """A text table of peak Fx, peak Fy, their slips, Kxk, Kya and peak Mz at several loads (any tire model)."""
    fz0 = float(nominal_load(params))
    loads = loads or [0.5 * fz0, fz0, 1.5 * fz0, 2.0 * fz0]
    kappa = jnp.linspace(-0.5, 0.5, 2001)
    alpha = jnp.linspace(-0.35, 0.35, 2001)
    rows = [f"{'Fz [N]':>8} {'Fx peak [N]':>12} {'kappa@pk':>9} {'Kxk [N]':>10} {'Fy peak [N]':>12} "
            f"{'alpha@pk[deg]':>14} {'Kya [N/deg]':>12} {'Mz peak [Nm]':>13}"]
    for fz in loads:
        fx = np.asarray(tire_forces(params, kappa, 0.0, 0.0, fz, combined=False).fx)
        o = tire_forces(params, 0.0, alpha, 0.0, fz, combined=False)
        kx, ky = (float(k) for k in linear_stiffness(params, fz))
        fy, mz = np.asarray(o.fy), np.asarray(o.mz)
        i, j = int(np.argmax(np.abs(fx))), int(np.argmax(np.abs(fy)))
        rows.append(f"{fz:8.0f} {abs(fx[i]):12.1f} {float(kappa[i]):9.3f} {kx:10.0f} "
                    f"{abs(fy[j]):12.1f} {np.degrees(float(alpha[j])):14.2f} "
                    f"{ky * np.pi / 180:12.1f} {np.max(np.abs(mz)):13.1f}")
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m jaxtire", description=__doc__)
    ap.add_argument("tir", nargs="?", default=str(data_path()), help="a .tir file (default: bundled TNO 205/60R15)")
    args = ap.parse_args(argv)
    p = load_tir(args.tir)
    print(f"{args.tir}  ({model_label(p)}, nominal load {float(nominal_load(p)):.0f} N, "
          f"R0 {float(unloaded_radius(p)):.4f} m)")
    print(summary(p))


if __name__ == "__main__":
    main()
