"""What a fit leaves on disk: the ``.tir`` header comment, residual tables (JSON, CSV) and a plot sheet.

* :func:`fit_header` -- the ``$`` comment lines :func:`jaxtire.save_tir` puts on top of a fitted
  file: stages and coefficients fitted, stages left as started, the data files, and the RMSE per
  channel (absolute and relative to the channel's peak |measured|).
* :func:`write_tables` -- ``<stem>_residuals.json`` (everything), ``<stem>_residuals.csv``
  (``channel, load_N, rows, rmse, peak, rel_rmse``; ``load_N = all`` for the whole channel) and
  ``<stem>_coefficients.csv`` (``name, start, fitted``).
* :func:`plot_sheet` -- one row per sweep (file, or block of rows), one column per measured channel:
  data (dots) vs fitted model (line) against the swept slip, matplotlib Agg, PNG.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit.data import COLUMNS, MEASURED, MeasurementSet, load_cases, row_masks
from jaxtire.fit.objectives import predict_jit
from jaxtire.fit.reports import FitReport

__all__ = ["fit_header", "plot_sheet", "sweep_blocks", "write_tables"]

_UNIT = {"fx": "N", "fy": "N", "mz": "N m"}


def fit_header(report: FitReport, sources) -> list[str]:
    """Header comment lines (no ``$``) describing a fit: what was fitted, from which data, residuals."""
    lines = [f"jaxtire.fit: {report.method}, {report.iterations} iterations, {report.seconds:.1f} s"]
    for s in report.stages:
        lines.append(f"  fitted stage {s.name}: {' '.join(s.coefs)}")
    if report.skipped:
        lines.append(f"  not fitted (no measured rows, left as in the start file): {', '.join(report.skipped)}")
    if report.absent:
        lines.append(f"  channels absent from the data: {', '.join(report.absent)}")
    src = list(sources)
    shown = ", ".join(src[:8]) + (f" and {len(src) - 8} more" if len(src) > 8 else "")
    lines.append(f"  data: {shown} ({sum(report.n_rows.values())} channel rows)")
    lines.append(
        "  RMSE: "
        + ", ".join(f"{c} {report.rmse[c]:.4g} ({100 * report.rel_rmse[c]:.2f}% of peak)" for c in report.rmse)
    )
    lines.append(f"  validity ranges: {report.ranges or 'FZMIN..CAMMAX set from the data'}")
    if report.extrapolated:
        lines.append(f"  peaks past the data: {report.extrapolated}")
    return lines


def write_tables(report: FitReport, stem, sources) -> list[Path]:
    """Write the residual tables next to ``stem`` (a path without suffix); returns the paths written."""
    stem = Path(stem)
    doc = {
        "method": report.method,
        "iterations": report.iterations,
        "seconds": report.seconds,
        "data": list(sources),
        "stages": [
            {"name": s.name, "coefficients": list(s.coefs), "loss_start": s.loss_start, "loss_final": s.loss_final}
            for s in report.stages
        ],
        "skipped_stages": list(report.skipped),
        "absent_channels": list(report.absent),
        "extrapolated_peaks": report.extrapolated,
        "residuals": {
            c: {
                "rows": report.n_rows[c],
                "rmse": report.rmse[c],
                "peak": report.peak[c],
                "rel_rmse": report.rel_rmse[c],
                "rmse_by_load": {f"{ld:.0f}": v for ld, v in report.rmse_by_load[c].items()},
            }
            for c in report.rmse
        },
        "coefficients": {k: {"start": a, "fitted": b} for k, (a, b) in report.coefficients.items()},
    }
    pj = stem.with_name(stem.name + "_residuals.json")
    pj.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    pc = stem.with_name(stem.name + "_residuals.csv")
    with pc.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("channel", "load_N", "rows", "rmse", "peak", "rel_rmse"))
        for c in report.rmse:
            w.writerow(
                (c, "all", report.n_rows[c], repr(report.rmse[c]), repr(report.peak[c]), repr(report.rel_rmse[c]))
            )
            for ld, v in report.rmse_by_load[c].items():
                w.writerow((c, f"{ld:.0f}", "", repr(v), "", ""))
    pk = stem.with_name(stem.name + "_coefficients.csv")
    with pk.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("name", "start", "fitted"))
        for k, (a, b) in report.coefficients.items():
            w.writerow((k, repr(a), repr(b)))
    return [pj, pc, pk]


def sweep_blocks(data: MeasurementSet, block: int | None = None) -> tuple[tuple[str, int, int], ...]:
    """Sweeps of data without file boundaries: blocks of ``block`` rows, or runs of constant load and
    row type (pure longitudinal / pure lateral / combined at one slip angle)."""
    n = data.n_rows
    if block:
        return tuple((f"rows {i}-{min(i + block, n) - 1}", i, min(i + block, n)) for i in range(0, n, block))
    _, case = load_cases(data.fz)
    m = row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    kind = np.where(m["pure_long"], 0, np.where(m["pure_lat"], 1, 2))
    key = np.stack([case, kind, np.where(kind == 2, np.round(np.asarray(data.alpha), 4), 0.0)], axis=1)
    cut = np.flatnonzero(np.any(key[1:] != key[:-1], axis=1)) + 1
    edges = np.concatenate([[0], cut, [n]])
    return tuple((f"rows {a}-{b - 1}", int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True))


def plot_sheet(params, data: MeasurementSet, sweeps, path, *, max_sweeps: int = 24) -> Path:
    """PNG sheet: per sweep (row) and measured channel (column), data vs the fitted model (combined
    slip model at the data's operating points; at zero slip of the other kind it is the pure curve)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    chans = [c for c in MEASURED if np.isfinite(np.asarray(getattr(data, c))).any()]
    with jax.enable_x64(True):
        d = {c: jnp.asarray(np.asarray(getattr(data, c)), jnp.float64) for c in COLUMNS}
        pred = {k: np.asarray(v) for k, v in predict_jit(True)(params.astype(jnp.float64), d, True).items()}
    sweeps = list(sweeps)[:max_sweeps]
    fig, axes = plt.subplots(len(sweeps), len(chans), figsize=(3.6 * len(chans), 2.4 * len(sweeps)), squeeze=False)
    for r, (name, a, b) in enumerate(sweeps):
        kap, alp = np.asarray(data.kappa)[a:b], np.asarray(data.alpha)[a:b]
        if np.ptp(kap) >= np.ptp(alp):
            x, xl = kap, "kappa [-]"
        else:
            x, xl = np.degrees(alp), "alpha [deg]"
        order = np.argsort(x)
        fz = float(np.mean(np.asarray(data.fz)[a:b]))
        for j, c in enumerate(chans):
            ax = axes[r, j]
            y = np.asarray(getattr(data, c))[a:b]
            ok = np.isfinite(y)
            if ok.any():
                ax.plot(x[ok], y[ok], ".", ms=3, color="0.4", label="data")
            ax.plot(x[order], pred[c][a:b][order], "-", color="C0", lw=1.2, label="fit")
            ax.set_title(f"{name}  Fz {fz:.0f} N", fontsize=7)
            ax.set_xlabel(xl, fontsize=7)
            ax.set_ylabel(f"{c} [{_UNIT[c]}]", fontsize=7)
            ax.tick_params(labelsize=6)
            ax.grid(True, lw=0.3)
            if r == 0 and j == 0:
                ax.legend(fontsize=6)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
