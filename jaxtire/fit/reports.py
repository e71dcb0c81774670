"""Reports of a fit: per-stage losses, per-channel and per-load RMSE, timings (printable tables)."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit.data import COLUMNS, MeasurementSet, load_cases, row_masks
from jaxtire.fit.loop import dual_jit
from jaxtire.fit.objectives import predict_jit
from jaxtire.fit.stages import CHANNELS
from jaxtire.tire import model_name, tire_forces

__all__ = [
    "PEAK_SEARCH_MAX",
    "PEAK_SEARCH_STEPS",
    "FitReport",
    "FitResult",
    "FleetReport",
    "FleetResult",
    "StageReport",
    "converged_at",
    "extrapolated_peaks",
    "peak_slips",
    "rmse_tables",
]


@dataclasses.dataclass(frozen=True)
class StageReport:
    """One stage of a fit: free coefficients, iterations run, loss before and after."""

    name: str
    coefs: tuple[str, ...]
    iterations: int
    loss_start: float
    loss_final: float
    converged_at: int  # first iteration whose loss is within 1e-4 (relative) of the final loss


@dataclasses.dataclass(frozen=True)
class FitReport:
    """Result of :func:`jaxtire.fit.fit`: per-channel and per-load RMSE against the data, coefficients, losses."""

    stages: tuple[StageReport, ...]
    coefficients: dict[str, tuple[float, float]]  # name -> (start, fitted)
    rmse: dict[str, float]  # channel -> RMSE [N] / [N m] over that channel's rows
    peak: dict[str, float]  # channel -> max |measured|
    rmse_by_load: dict[str, dict[float, float]]  # channel -> {load case centre [N]: RMSE}
    n_rows: dict[str, int]
    iterations: int
    final_loss: float  # sum of the stages' final losses
    seconds: float
    method: str
    skipped: tuple[str, ...] = ()  # stages without measured rows: their coefficients stay as started
    absent: tuple[str, ...] = ()  # measured columns (fx, fy, mz) with no value at all
    ranges: str = ""  # how the fit evaluated the validity ranges (widened to the data's, or inside the start's)
    extrapolated: str = ""  # pure-slip peaks of the fitted tire past the data's sweeps (extrapolated_peaks)

    @property
    def rel_rmse(self) -> dict[str, float]:
        """RMSE relative to the channel's peak measured value."""
        return {c: self.rmse[c] / self.peak[c] for c in self.rmse}

    def __str__(self) -> str:
        lines = [
            f"jaxtire fit ({self.method}, {self.iterations} iterations, {self.seconds:.2f} s, "
            f"final loss {self.final_loss:.4g})"
        ]
        if self.absent:
            lines.append(f"  not in the data: {', '.join(self.absent)}")
        if self.ranges:
            lines.append(f"  validity ranges: {self.ranges}")
        if self.skipped:
            lines.append(
                f"  not fitted (no measured rows; coefficients left as in the start): {', '.join(self.skipped)}"
            )
        if self.extrapolated:
            lines.append(f"  peaks past the data: {self.extrapolated}")
        lines.append(f"  {'stage':<9} {'coefs':>5} {'iters':>6} {'conv@':>6} {'loss start':>12} {'loss final':>12}")
        for s in self.stages:
            lines.append(
                f"  {s.name:<9} {len(s.coefs):5d} {s.iterations:6d} {s.converged_at:6d} "
                f"{s.loss_start:12.4e} {s.loss_final:12.4e}"
            )
        loads = sorted({ld for per in self.rmse_by_load.values() for ld in per})
        head = "".join(f"{f'{ld:.0f} N':>10}" for ld in loads)
        lines.append(f"  {'channel':<8} {'rows':>5} {'peak':>9} {'RMSE':>9} {'RMSE/pk':>8}   by load:{head}")
        for c in self.rmse:
            per = self.rmse_by_load[c]
            cells = "".join(f"{per[ld]:10.2f}" if ld in per else f"{'-':>10}" for ld in loads)
            lines.append(
                f"  {c:<8} {self.n_rows[c]:5d} {self.peak[c]:9.1f} {self.rmse[c]:9.2f} "
                f"{100 * self.rel_rmse[c]:7.3f}%            {cells}"
            )
        lines.append("  coefficients (start -> fitted):")
        items = list(self.coefficients.items())
        w = max([6] + [len(k) for k in self.coefficients])
        for i in range(0, len(items), 3):
            lines.append("   " + "".join(f" {k:>{w}} {a:11.5g} -> {b:<11.5g}" for k, (a, b) in items[i : i + 3]))
        return "\n".join(lines)


class FitResult(NamedTuple):
    params: Any  # MFParams or SimpleParams, float64 leaves
    report: FitReport


@dataclasses.dataclass(frozen=True)
class FleetReport:
    """Result of :func:`jaxtire.fit.fit_many`: per-tire losses and RMSE arrays plus timing."""

    n_tires: int
    rmse: dict[str, np.ndarray]  # channel -> (n_tires,) RMSE [N] / [N m]
    peak: dict[str, np.ndarray]  # channel -> (n_tires,) max |measured|
    final_loss: np.ndarray  # (n_tires,) sum of stage losses
    iterations: int
    compile_seconds: float
    seconds: float  # run time of the compiled program (all tires)
    method: str

    @property
    def seconds_per_tire(self) -> float:
        return self.seconds / self.n_tires

    @property
    def rel_rmse(self) -> dict[str, np.ndarray]:
        return {c: self.rmse[c] / self.peak[c] for c in self.rmse}

    def __str__(self) -> str:
        lines = [
            f"jaxtire fleet fit: {self.n_tires} tires in one vmapped program ({self.method}, "
            f"{self.iterations} iterations/tire)",
            f"  compile {self.compile_seconds:.2f} s, run {self.seconds:.2f} s = "
            f"{1e3 * self.seconds_per_tire:.2f} ms per tire",
            f"  {'channel':<8} {'median RMSE/pk':>15} {'p95 RMSE/pk':>12} {'max RMSE/pk':>12}",
        ]
        for c, r in self.rel_rmse.items():
            lines.append(
                f"  {c:<8} {100 * np.median(r):14.3f}% {100 * np.percentile(r, 95):11.3f}% {100 * np.max(r):11.3f}%"
            )
        lines.append(f"  final loss: median {np.median(self.final_loss):.4g}, max {np.max(self.final_loss):.4g}")
        return "\n".join(lines)


class FleetResult(NamedTuple):
    params: Any  # batched MFParams or SimpleParams: leading axis = tire
    report: FleetReport


def converged_at(hist: np.ndarray, final: float, rtol: float = 1e-4) -> int:
    """First iteration (1-based) whose loss is within ``rtol`` of the final loss."""
    ok = np.asarray(hist) <= final * (1.0 + rtol) + 1e-300
    idx = np.flatnonzero(ok)
    return int(idx[0]) + 1 if idx.size else len(ok)


def rmse_tables(params, data: MeasurementSet, channels, fast_compile: bool = True) -> tuple[dict, dict, dict, dict]:
    """``(rmse, peak, rmse_by_load, n_rows)`` per channel of ``params`` against ``data`` (see :class:`FitReport`)."""
    d = {c: jnp.asarray(getattr(data, c)) for c in COLUMNS}
    predict = predict_jit(fast_compile)
    preds = {comb: {k: np.asarray(v) for k, v in predict(params, d, comb).items()} for comb in (False, True)}
    masks = row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    centres, case = load_cases(data.fz)
    rmse, peak, by_load, n_rows = {}, {}, {}, {}
    for ch in channels:
        col, rows = CHANNELS[ch]
        meas = np.asarray(getattr(data, col))
        m = masks[rows] & np.isfinite(meas)
        if not m.any():
            continue
        res = preds[rows == "combined"][col] - meas
        rmse[ch] = float(np.sqrt(np.mean(res[m] ** 2)))
        peak[ch] = float(np.max(np.abs(np.asarray(getattr(data, col))[m])))
        n_rows[ch] = int(m.sum())
        by_load[ch] = {
            float(round(centres[k])): float(np.sqrt(np.mean(res[m & (case == k)] ** 2)))
            for k in range(len(centres))
            if (m & (case == k)).any()
        }
    return rmse, peak, by_load, n_rows


# ---------------------------------------------------------------------------------------------
# Where the pure-slip curves peak
# ---------------------------------------------------------------------------------------------

#: The peak search of :func:`peak_slips`: slips ``0 ... PEAK_SEARCH_MAX`` (|kappa| [-], |alpha| [rad]) on each side
#: in ``PEAK_SEARCH_STEPS`` equal steps (0.0025).
PEAK_SEARCH_MAX = 1.0
PEAK_SEARCH_STEPS = 400


def _peak_slip_pair(params, fz, gamma):
    """``(kappa_pk, alpha_pk)`` of one tire at the loads ``fz`` [N] (1-D), see :func:`peak_slips`."""
    s = jnp.linspace(0.0, PEAK_SEARCH_MAX, PEAK_SEARCH_STEPS + 1)
    slip = jnp.concatenate([s, -s])[None, :]
    zero, load = jnp.zeros_like(slip), jnp.asarray(fz)[:, None]
    ranges_off = {"limits": "off"} if model_name(params) == "mf" else {}
    fx = tire_forces(params, slip, zero, gamma, load, combined=False, **ranges_off).fx
    fy = tire_forces(params, zero, slip, gamma, load, combined=False, **ranges_off).fy

    def at_peak(f):  # |slip| of the largest |f| on each side at each load; the largest of these
        return jnp.max(s[jnp.argmax(jnp.abs(f).reshape(f.shape[0], 2, s.size), axis=-1)])

    return at_peak(fx), at_peak(fy)


def _peak_slips(params, fz, gamma, batched: bool):
    return jax.vmap(_peak_slip_pair, (0, 0, None))(params, fz, gamma) if batched else _peak_slip_pair(params, fz, gamma)


_peak_slips_jit = dual_jit(_peak_slips, static_argnames=("batched",))


def peak_slips(params, fz, gamma: float = 0.0) -> tuple[float, float]:
    """``(kappa_pk, alpha_pk)``: the slips at which the pure-slip curves of ``params`` peak.

    ``kappa_pk`` [-] is the largest ``|kappa|`` at which ``|Fx0(kappa)|`` is largest, and ``alpha_pk`` [rad] the
    largest ``|alpha|`` at which ``|Fy0(alpha)|`` is, over both slip signs and the loads ``fz`` [N] (shape
    ``(loads,)``, or ``(tires, loads)`` for a batch of tires: then over every tire too), at camber ``gamma`` [rad].
    Slips on a grid ``0 ... PEAK_SEARCH_MAX`` (step ``PEAK_SEARCH_MAX / PEAK_SEARCH_STEPS``); a curve still rising
    at its end gives ``PEAK_SEARCH_MAX``.  MF curves are evaluated without their validity ranges
    (``limits="off"``: the model's own peak, not the clamp at ``ALPMAX``)."""
    with jax.enable_x64(True):
        p = jax.tree.map(lambda x: jnp.asarray(x, jnp.float64), params)
        f = jnp.asarray(np.asarray(fz, dtype=np.float64))
        k, a = _peak_slips_jit(True)(p, f, float(gamma), batched=f.ndim == 2)
        return float(jnp.max(k)), float(jnp.max(a))


def extrapolated_peaks(params, data: MeasurementSet) -> str:
    """A note naming the pure-slip peaks of ``params`` that lie past the data's sweeps (``""`` when none does).

    For ``Fx0`` (``Fy0``): the peak slip ``|kappa|`` (``|alpha|`` [rad]) of :func:`peak_slips` at the data's load
    cases, camber 0, against the largest one measured on the pure longitudinal (lateral) rows with ``fx`` (``fy``).
    A peak more than one search step past the data is extrapolated: the data do not measure that friction
    (``mu_x = max |Fx0| / Fz``, ``mu_y = max |Fy0| / Fz``), and a fitted file whose ranges are the data's clamps the
    slip before it."""
    centres, _ = load_cases(data.fz)
    peaks = dict(zip(("kappa", "alpha"), peak_slips(params, centres), strict=True))
    masks = row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    notes = []
    for ch, slip, unit, mu in (("Fx0", "kappa", "", "mu_x"), ("Fy0", "alpha", " rad", "mu_y")):
        col, rows = CHANNELS[ch]
        m = masks[rows] & np.isfinite(np.asarray(getattr(data, col)))
        if not m.any():
            continue
        end = float(np.max(np.abs(np.asarray(getattr(data, slip))[m])))
        if peaks[slip] > end + PEAK_SEARCH_MAX / PEAK_SEARCH_STEPS:
            notes.append(
                f"{ch} peaks at |{slip}| = {peaks[slip]:.3g}{unit}, past the data's {end:.3g}{unit} ({mu} extrapolated)"
            )
    return "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------
