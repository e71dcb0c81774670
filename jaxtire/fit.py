"""Fit Magic Formula (and simple B, C, D, E) tire coefficients to measured force data.

Quick use::

    import jaxtire
    from jaxtire.fit import fit, generic_tire, load_csv
    result = fit(load_csv("data.csv"), generic_tire(fnomin=4000.0, unloaded_radius=0.31))
    print(result.report); jaxtire.save_tir(result.params, "fitted.tir")

MF 6.1 stages, staged like the MF-Tool / MFeval fitting workflow; every stage fits only its
own subset of coefficients, all others held fixed::

    "Fx0"       PCX1 PDX1 PDX2 PEX1-4 PKX1-3 PHX1-2 PVX1-2        pure longitudinal rows, Fx
    "Fy0"       PCY1 PDY1-2 PEY1-3 PKY1 PKY2 PKY4 PHY1-2 PVY1-2   pure lateral rows, Fy
    "Mz0"       QBZ1-3 QBZ9 QBZ10 QCZ1 QDZ1 QDZ2 QDZ6 QDZ7 QEZ1-4 QHZ1-2
                                                                   pure lateral rows, Mz (given the fitted Fy)
    "combined"  RBX1-2 RCX1 REX1-2 RHX1 RBY1-3 RCY1 REY1-2 RHY1-2 RVY1 RVY2 RVY4-6
                                                                   combined rows, Fx and Fy

When the data has camber (``max |gamma| > 1e-3 rad``) the camber terms join
their stage (``PDX3``; ``PDY3 PEY4 PEY5 PKY3 PKY5 PKY6 PKY7 PVY3 PVY4``;
``QBZ4 QBZ5 QDZ3 QDZ4 QDZ8-11 QEZ5 QHZ3 QHZ4``; ``RBX3 RBY4 RVY3``).  Pressure
(``PP*``) and the combined-slip Mz arm (``SSZ*``) are never fitted.

The simple model (:func:`fit_simple`, a :class:`~jaxtire.simple.SimpleParams` start) has the
stages ``"pure"`` (``Bx Cx Dx Ex By Cy Dy Ey k_load`` from pure-slip Fx and Fy, ``c_gamma`` with
camber), ``"Mz0"`` (``trail``) and ``"combined"`` (``slide_ratio beta``), see :data:`SIMPLE_STAGES`.

Row selection: a row is *pure longitudinal* when ``|alpha| <= 1e-3 rad``,
*pure lateral* when ``|kappa| <= 1e-3``, *combined* otherwise.

Loss of one stage (the weighted, peak-normalised mean squared error)::

    L = sum_channels  sum_i w_i (F_model,i - F_meas,i)^2 / peak_c^2  /  sum_i w_i

over the rows ``i`` of that channel, ``peak_c = max |F_meas|`` over those rows and
``w_i`` the weight of the row's load case (``load_weights``; by default every
row weighs 1).  Load cases are the clusters of ``fz`` (sorted loads split where
consecutive values differ by more than 2 % of the largest load).

Bounds: each free coefficient ``x`` is optimised through an unconstrained
variable ``u`` (see :func:`from_unconstrained`)::

    lower, upper finite:  x = lower + (upper - lower) * sigmoid(u)
    only lower finite:    x = lower + scale * softplus(u)
    only upper finite:    x = upper - scale * softplus(-u)
    neither:              x = scale * u

(each increasing in ``u``), so every iterate respects the bounds (:data:`DEFAULT_BOUNDS`,
:data:`SIMPLE_BOUNDS`, overridable; ``scale`` is 1).  A start value on a two-sided bound is
moved inside by 1e-6 of the range; one outside raises ``ValueError``.

Optimiser: ``optax.lbfgs`` (zoom line search; default of :func:`fit`, 150 iterations per
stage) or ``optax.adam`` (default of :func:`fit_many`, learning rate 0.02, 1000 iterations per
stage) for a fixed number of iterations inside ``lax.scan`` (no data-dependent Python control
flow), in float64 (``jax.enable_x64`` only inside the entry points, restored on exit).  The
best iterate seen is returned.  Each stage is one compiled program (the free coefficients enter
through ``coefs -> params.replace(**coefs)``, so gradients reach only them);
:func:`fit_many` runs the same programs ``vmap``-ed over a fleet.  A single fit is
compile-bound (about 4 stages x 3-5 s on a 2-core CPU), so on CPU it compiles with
:data:`FAST_COMPILE_OPTIONS`.

CLI::

    python -m jaxtire.fit [--data CSV] [--tir START.tir] --out fitted.tir [--many N]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import math
import time
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxtire.mf61 import cornering_stiffness, mf_forces
from jaxtire.params import MFParams
from jaxtire.simple import SimpleParams, default_simple_params, simple_forces
from jaxtire.tir import default_tire, load_tir, save_tir

__all__ = [
    "COLUMNS", "DEFAULT_BOUNDS", "SIMPLE_BOUNDS", "SIMPLE_STAGES", "STAGES", "FitReport", "FitResult",
    "FleetReport", "FleetResult", "MeasurementSet", "StageReport", "fit", "fit_many", "fit_simple",
    "from_unconstrained", "generic_tire", "load_cases", "load_csv", "main", "measurement_set",
    "perturbed_tires", "save_csv", "stage_coefficients", "synthetic_data", "to_unconstrained",
]

COLUMNS = ("kappa", "alpha", "gamma", "fz", "fx", "fy", "mz")
PURE_TOL_ALPHA = 1e-3  # [rad] |alpha| below this: pure longitudinal row
PURE_TOL_KAPPA = 1e-3  # [-]   |kappa| below this: pure lateral row
CAMBER_TOL = 1e-3  # [rad] data with max |gamma| above this fits the camber terms


# ---------------------------------------------------------------------------------------------
# Measurement data
# ---------------------------------------------------------------------------------------------


class MeasurementSet(NamedTuple):
    """Measured steady-state tire data, one row per operating point (1-D float64 arrays, SI, ISO-W).

    ``kappa`` [-], ``alpha`` [rad], ``gamma`` [rad], ``fz`` [N] > 0, ``fx``, ``fy`` [N], ``mz`` [N m].
    A fleet for :func:`fit_many` stacks tires on a leading axis (2-D arrays, same rows per tire).
    """

    kappa: np.ndarray
    alpha: np.ndarray
    gamma: np.ndarray
    fz: np.ndarray
    fx: np.ndarray
    fy: np.ndarray
    mz: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(np.shape(self.kappa)[-1])


def measurement_set(kappa, alpha, gamma, fz, fx, fy, mz, *, batched: bool = False,
                    _lines=None) -> MeasurementSet:
    """Validated :class:`MeasurementSet`; scalars broadcast to the common length.

    Raises ``ValueError`` naming the column (and rows) for: zero rows, arrays of
    different lengths, NaN / inf values, ``fz <= 0`` (wrong sign or lifted
    wheel), ``|alpha|`` or ``|gamma| >= pi/2`` (degrees passed as radians).
    ``batched=True`` accepts 2-D ``(tires, rows)`` arrays for :func:`fit_many`.
    """
    cols = dict(zip(COLUMNS, (kappa, alpha, gamma, fz, fx, fy, mz)))
    arrays = {}
    for name, v in cols.items():
        try:
            arrays[name] = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"measurements: column {name!r} is not numeric: {e}") from None
    want_nd = 2 if batched else 1
    shaped = {n: a for n, a in arrays.items() if a.ndim > 0}
    if not shaped:
        raise ValueError("measurements: every column is a scalar; need arrays of rows")
    for n, a in shaped.items():
        if a.ndim != want_nd:
            raise ValueError(f"measurements: column {n!r} has {a.ndim} dimensions, expected {want_nd}"
                             + (" (tires, rows)" if batched else " (rows)"))
    ref_name, ref = next(iter(shaped.items()))
    for n, a in shaped.items():
        if a.shape != ref.shape:
            raise ValueError(f"measurements: column {n!r} has shape {a.shape} but {ref_name!r} has "
                             f"{ref.shape}; all columns need the same number of rows")
    if ref.shape[-1] == 0 or (batched and ref.shape[0] == 0):
        raise ValueError(f"measurements: no rows (column {ref_name!r} has shape {ref.shape})")
    arrays = {n: np.broadcast_to(a, ref.shape).copy() for n, a in arrays.items()}

    def rows_of(mask) -> str:
        idx = np.argwhere(mask)
        if _lines is not None:  # from load_csv: name the file's line numbers
            shown = ", ".join(str(int(_lines[int(i[0])])) for i in idx[:5])
            word = "line"
        else:
            shown = ", ".join(str(tuple(int(j) for j in i) if batched else int(i[0])) for i in idx[:5])
            word = "row"
        more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
        return f"{word}{'s' if len(idx) > 1 else ''} {shown}{more}"

    for n, a in arrays.items():
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"measurements: column {n!r} has NaN/inf at {rows_of(bad)}; drop or fill those rows")
    bad = arrays["fz"] <= 0
    if bad.any():
        raise ValueError(f"measurements: column 'fz' must be > 0 N (ISO-W, compression positive); got "
                         f"{arrays['fz'][bad].ravel()[0]:g} at {rows_of(bad)} (flip the sign of SAE data, "
                         f"drop lifted-wheel rows)")
    for n in ("alpha", "gamma"):
        bad = np.abs(arrays[n]) >= np.pi / 2
        if bad.any():
            raise ValueError(f"measurements: column {n!r} must be in radians with |{n}| < pi/2; got "
                             f"{arrays[n][bad].ravel()[0]:g} at {rows_of(bad)} (degrees?)")
    return MeasurementSet(**arrays)


def load_csv(path) -> MeasurementSet:
    """Read a CSV table with a header naming at least the :data:`COLUMNS` (any order, extra columns ignored).

    Raises ``ValueError`` naming the file, line and column for a missing column, a non-numeric
    cell, or a bad value (as :func:`measurement_set`; ``nan`` cells are bad values).
    """
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip().lower() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty file, expected a header with columns {', '.join(COLUMNS)}") from None
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; header is {header}")
        idx = [header.index(c) for c in COLUMNS]
        rows, lines = [], []
        for lineno, rec in enumerate(reader, start=2):
            if not rec or all(not s.strip() for s in rec):
                continue
            vals = []
            for c, j in zip(COLUMNS, idx):
                cell = rec[j].strip() if j < len(rec) else ""
                try:
                    vals.append(float(cell))
                except ValueError:
                    raise ValueError(f"{path}: line {lineno}, column {c!r}: {cell!r} is not a number") from None
            rows.append(vals)
            lines.append(lineno)
    data = np.asarray(rows, dtype=np.float64).reshape(-1, len(COLUMNS))
    try:
        return measurement_set(*data.T, _lines=lines)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def save_csv(data: MeasurementSet, path) -> None:
    """Write a (1-D) :class:`MeasurementSet` as a CSV table readable by :func:`load_csv`."""
    arr = np.stack([np.asarray(getattr(data, c), dtype=np.float64) for c in COLUMNS], axis=1)
    if arr.ndim != 2:
        raise ValueError("save_csv writes one tire; got batched measurements")
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for row in arr:
            w.writerow([repr(float(x)) for x in row])


def load_cases(fz, rel_gap: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    """Cluster loads into load cases: ``(centres [N], index of each row's case)``.

    Sorted loads start a new case where two consecutive values differ by more
    than ``rel_gap`` times the largest load.
    """
    fz = np.asarray(fz, dtype=np.float64).ravel()
    order = np.argsort(fz)
    s = fz[order]
    new = np.concatenate([[True], np.diff(s) > rel_gap * np.max(np.abs(s))])
    case_sorted = np.cumsum(new) - 1
    case = np.empty_like(case_sorted)
    case[order] = case_sorted
    centres = np.array([fz[case == k].mean() for k in range(case_sorted[-1] + 1)])
    return centres, case


def _row_weights(fz, load_weights) -> np.ndarray:
    """Per-row weight from ``load_weights``: None (1), "equal" (each load case weighs the same in total),
    a mapping ``{load [N]: weight}`` (nearest case centre) or a callable ``w(fz)``."""
    fz = np.asarray(fz, dtype=np.float64)
    if load_weights is None:
        return np.ones_like(fz)
    if callable(load_weights):
        w = np.broadcast_to(np.asarray(load_weights(fz), dtype=np.float64), fz.shape).copy()
    else:
        centres, case = load_cases(fz)
        if isinstance(load_weights, str):
            if load_weights != "equal":
                raise ValueError(f"load_weights: unknown mode {load_weights!r}; "
                                 f"use None, 'equal', a dict or a callable")
            counts = np.bincount(case)
            w = (len(fz) / len(centres)) / counts[case]
        else:
            keys = np.asarray(list(load_weights.keys()), dtype=np.float64)
            vals = np.asarray(list(load_weights.values()), dtype=np.float64)
            if keys.size == 0:
                raise ValueError("load_weights: empty mapping")
            nearest = np.argmin(np.abs(centres[:, None] - keys[None, :]), axis=1)
            w = vals[nearest][case]
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError("load_weights: weights must be finite, >= 0 and not all zero")
    return w


# ---------------------------------------------------------------------------------------------
# Bounds transform
# ---------------------------------------------------------------------------------------------


def _softplus_inv(y):
    y = jnp.maximum(y, 1e-12)
    return y + jnp.log(-jnp.expm1(-y))


def _bound_masks(lower, upper):
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    lof, hif = np.isfinite(lo), np.isfinite(hi)
    if np.any(lof & hif & ~(hi > lo)):
        raise ValueError(f"bounds: upper {upper} must exceed lower {lower}")
    return np.where(lof, lo, 0.0), np.where(hif, hi, 0.0), lof, hif


def from_unconstrained(u, lower=-math.inf, upper=math.inf, scale=1.0):
    """Map unconstrained ``u`` into ``[lower, upper]`` (module doc): scaled sigmoid when both bounds are
    finite, ``lower + scale softplus(u)`` / ``upper - scale softplus(-u)`` when one is, ``scale u`` when
    none is; increasing in ``u``.  Bounds are concrete floats or arrays (elementwise), ``u`` may be traced."""
    lo, hi, lof, hif = _bound_masks(lower, upper)
    two = lo + (hi - lo) * jax.nn.sigmoid(u)
    return jnp.where(lof & hif, two, jnp.where(lof, lo + scale * jax.nn.softplus(u),
                                              jnp.where(hif, hi - scale * jax.nn.softplus(-u), scale * u)))


def to_unconstrained(x, lower=-math.inf, upper=math.inf, scale=1.0):
    """Inverse of :func:`from_unconstrained`; a value on (or past) a bound is moved 1e-6 of the range
    (two-sided) or 1e-12 scale (one-sided) inside."""
    lo, hi, lof, hif = _bound_masks(lower, upper)
    x = jnp.asarray(x)
    eps = 1e-6
    t = jnp.clip((x - lo) / np.where(lof & hif, hi - lo, 1.0), eps, 1.0 - eps)
    two = jnp.log(t) - jnp.log1p(-t)
    return jnp.where(lof & hif, two, jnp.where(lof, _softplus_inv((x - lo) / scale),
                                              jnp.where(hif, -_softplus_inv((hi - x) / scale), x / scale)))


#: Default (lower, upper) bounds of every fittable coefficient: physical ranges wide enough for the
#: MF 6.1 files in ``shared/tir`` (e.g. RBY4 = 1747 in MagicFormula61_Parameters.tir).
DEFAULT_BOUNDS: dict[str, tuple[float, float]] = {
    # pure longitudinal
    "PCX1": (1.0, 2.5), "PDX1": (0.1, 4.0), "PDX2": (-1.0, 1.0), "PDX3": (-50.0, 50.0),
    "PEX1": (-10.0, 1.0), "PEX2": (-10.0, 10.0), "PEX3": (-10.0, 10.0), "PEX4": (-0.99, 0.99),
    "PKX1": (1.0, 200.0), "PKX2": (-100.0, 100.0), "PKX3": (-5.0, 5.0),
    "PHX1": (-0.05, 0.05), "PHX2": (-0.05, 0.05), "PVX1": (-0.2, 0.2), "PVX2": (-0.2, 0.2),
    # pure lateral
    "PCY1": (0.8, 2.5), "PDY1": (0.1, 4.0), "PDY2": (-1.0, 1.0), "PDY3": (-50.0, 50.0),
    "PEY1": (-10.0, 1.0), "PEY2": (-10.0, 10.0), "PEY3": (-1.0, 1.0), "PEY4": (-50.0, 50.0),
    "PEY5": (-500.0, 500.0), "PKY1": (-200.0, -0.1), "PKY2": (0.1, 20.0), "PKY3": (-5.0, 5.0),
    "PKY4": (1.0, 3.0), "PKY5": (-50.0, 50.0), "PKY6": (-10.0, 10.0), "PKY7": (-10.0, 10.0),
    "PHY1": (-0.05, 0.05), "PHY2": (-0.05, 0.05), "PVY1": (-0.2, 0.2), "PVY2": (-0.2, 0.2),
    "PVY3": (-5.0, 5.0), "PVY4": (-5.0, 5.0),
    # aligning torque
    "QBZ1": (0.1, 50.0), "QBZ2": (-20.0, 20.0), "QBZ3": (-20.0, 20.0), "QBZ4": (-20.0, 20.0),
    "QBZ5": (-20.0, 20.0), "QBZ9": (-500.0, 500.0), "QBZ10": (-50.0, 50.0), "QCZ1": (0.5, 2.5),
    "QDZ1": (0.001, 1.0), "QDZ2": (-1.0, 1.0), "QDZ3": (-20.0, 20.0), "QDZ4": (-50.0, 50.0),
    "QDZ6": (-0.2, 0.2), "QDZ7": (-0.2, 0.2), "QDZ8": (-5.0, 5.0), "QDZ9": (-5.0, 5.0),
    "QDZ10": (-5.0, 5.0), "QDZ11": (-5.0, 5.0), "QEZ1": (-50.0, 1.0), "QEZ2": (-50.0, 50.0),
    "QEZ3": (-50.0, 50.0), "QEZ4": (-5.0, 5.0), "QEZ5": (-10.0, 10.0),
    "QHZ1": (-0.05, 0.05), "QHZ2": (-0.05, 0.05), "QHZ3": (-2.0, 2.0), "QHZ4": (-2.0, 2.0),
    # combined slip
    "RBX1": (0.1, 100.0), "RBX2": (-100.0, 100.0), "RBX3": (-5000.0, 5000.0), "RCX1": (0.3, 2.5),
    "REX1": (-10.0, 1.0), "REX2": (-10.0, 10.0), "RHX1": (-0.05, 0.05),
    "RBY1": (0.1, 100.0), "RBY2": (-100.0, 100.0), "RBY3": (-0.1, 0.1), "RBY4": (-5000.0, 5000.0),
    "RCY1": (0.3, 2.5), "REY1": (-10.0, 1.0), "REY2": (-10.0, 10.0), "RHY1": (-0.1, 0.1),
    "RHY2": (-0.1, 0.1), "RVY1": (-1.0, 1.0), "RVY2": (-1.0, 1.0), "RVY3": (-10.0, 10.0),
    "RVY4": (-500.0, 500.0), "RVY5": (-5.0, 5.0), "RVY6": (-200.0, 200.0),
}


# ---------------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------------


class Stage(NamedTuple):
    """One fitting stage: its free coefficients, the channels of its loss and the model it evaluates."""

    name: str
    coefs: tuple[str, ...]
    channels: tuple[str, ...]
    combined: bool


#: name -> (coefficients, camber coefficients, channels, combined model?).
STAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    "Fx0": (("PCX1", "PDX1", "PDX2", "PEX1", "PEX2", "PEX3", "PEX4", "PKX1", "PKX2", "PKX3",
             "PHX1", "PHX2", "PVX1", "PVX2"), ("PDX3",), ("Fx0",), False),
    "Fy0": (("PCY1", "PDY1", "PDY2", "PEY1", "PEY2", "PEY3", "PKY1", "PKY2", "PKY4",
             "PHY1", "PHY2", "PVY1", "PVY2"),
            ("PDY3", "PEY4", "PEY5", "PKY3", "PKY5", "PKY6", "PKY7", "PVY3", "PVY4"), ("Fy0",), False),
    "Mz0": (("QBZ1", "QBZ2", "QBZ3", "QBZ9", "QBZ10", "QCZ1", "QDZ1", "QDZ2", "QDZ6", "QDZ7",
             "QEZ1", "QEZ2", "QEZ3", "QEZ4", "QHZ1", "QHZ2"),
            ("QBZ4", "QBZ5", "QDZ3", "QDZ4", "QDZ8", "QDZ9", "QDZ10", "QDZ11", "QEZ5", "QHZ3", "QHZ4"),
            ("Mz0",), False),
    "combined": (("RBX1", "RBX2", "RCX1", "REX1", "REX2", "RHX1", "RBY1", "RBY2", "RBY3", "RCY1",
                  "REY1", "REY2", "RHY1", "RHY2", "RVY1", "RVY2", "RVY4", "RVY5", "RVY6"),
                 ("RBX3", "RBY4", "RVY3"), ("Fx", "Fy"), True),
}

#: channel -> (measured column, rows it uses).
CHANNELS: dict[str, tuple[str, str]] = {
    "Fx0": ("fx", "pure_long"), "Fy0": ("fy", "pure_lat"), "Mz0": ("mz", "pure_lat"),
    "Fx": ("fx", "combined"), "Fy": ("fy", "combined"),
}


#: XLA CPU options that cut the compile time of a stage about 3x for about 2x slower iterations:
#: the right trade for one tire (compile-bound), not for a big fleet (run-bound).
FAST_COMPILE_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


def _jit_pair(fun, **kw):
    """``(plain jit, fast-compiling jit)`` of ``fun``; the fast one is used on CPU only."""
    return jax.jit(fun, **kw), jax.jit(fun, compiler_options=FAST_COMPILE_OPTIONS, **kw)


_FAST_OK = [True]  # cleared once this jaxlib rejects FAST_COMPILE_OPTIONS


def _rejected(e: Exception) -> bool:
    """The XLA flags are not a stable API: an unknown-option error means "use the plain jit"."""
    if "compile option" in str(e):
        _FAST_OK[0] = False
        return True
    return False


class _FastOrPlain:
    """Calls (or AOT-lowers) the fast-compiling jit, falling back to the plain one if rejected."""

    def __init__(self, plain, quick):
        self.plain, self.quick = plain, quick

    def __call__(self, *a, **k):
        try:
            return self.quick(*a, **k)
        except Exception as e:  # noqa: BLE001 - anything but the option error is re-raised
            if not _rejected(e):
                raise
            return self.plain(*a, **k)

    def lower(self, *a, **k):
        outer = self

        class _Lowered:
            @staticmethod
            def compile():
                try:
                    return outer.quick.lower(*a, **k).compile()
                except Exception as e:  # noqa: BLE001
                    if not _rejected(e):
                        raise
                    return outer.plain.lower(*a, **k).compile()

        return _Lowered()


def _pick(pair, fast: bool = True):
    """The fast-compiling jit of ``pair`` on CPU (with fallback), else the plain one."""
    if fast and _FAST_OK[0] and jax.default_backend() == "cpu":
        return _FastOrPlain(*pair)
    return pair[0]


_predict_jits = _jit_pair(lambda params, d, combined: _predict(params, d, combined), static_argnums=2)

#: Stages of the simple B, C, D, E model (:mod:`jaxtire.simple`), same layout as :data:`STAGES`.
SIMPLE_STAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    "pure": (("Bx", "Cx", "Dx", "Ex", "By", "Cy", "Dy", "Ey", "k_load"), ("c_gamma",), ("Fx0", "Fy0"), False),
    "Mz0": (("trail",), (), ("Mz0",), False),
    "combined": (("slide_ratio", "beta"), (), ("Fx", "Fy"), True),
}

#: Default bounds of the simple model's fitted fields.
SIMPLE_BOUNDS: dict[str, tuple[float, float]] = {
    "Bx": (0.5, 60.0), "Cx": (0.5, 2.0), "Dx": (0.1, 4.0), "Ex": (-10.0, 1.0),
    "By": (0.5, 60.0), "Cy": (0.5, 2.0), "Dy": (0.1, 4.0), "Ey": (-10.0, 1.0),
    "k_load": (0.0, 0.95), "c_gamma": (-5.0, 5.0), "trail": (0.0, 0.2),
    "slide_ratio": (0.05, 1.0), "beta": (0.1, 100.0),
}


def _tables(params) -> tuple[dict, dict]:
    """(stages, default bounds) of the model ``params`` belongs to."""
    if isinstance(params, SimpleParams):
        return SIMPLE_STAGES, SIMPLE_BOUNDS
    if isinstance(params, MFParams):
        return STAGES, DEFAULT_BOUNDS
    raise TypeError(f"fit: start must be MFParams or SimpleParams, got {type(params).__name__}")


def _get(params, name: str):
    return params.coef[name] if isinstance(params, MFParams) else getattr(params, name)


def _replace(params, changes: dict):
    # SimpleParams.replace validates eagerly; inside jit use the plain dataclass replace.
    return params.replace(**changes) if isinstance(params, MFParams) else dataclasses.replace(params, **changes)


def stage_coefficients(name: str, camber: bool = False, model: str = "mf") -> tuple[str, ...]:
    """The coefficients stage ``name`` fits by default (with the camber terms when ``camber``);
    ``model`` is ``"mf"`` (:data:`STAGES`) or ``"simple"`` (:data:`SIMPLE_STAGES`)."""
    base, cam, _, _ = (SIMPLE_STAGES if model == "simple" else STAGES)[name]
    return base + (cam if camber else ())


def _row_masks(kappa, alpha, xp=jnp):
    pure_long = xp.abs(alpha) <= PURE_TOL_ALPHA
    pure_lat = xp.abs(kappa) <= PURE_TOL_KAPPA
    return {"pure_long": pure_long, "pure_lat": pure_lat, "combined": ~(pure_long | pure_lat)}


def _predict(params, d: dict, combined: bool) -> dict:
    if isinstance(params, SimpleParams):  # one model for pure and combined slip
        out = simple_forces(params, d["kappa"], d["alpha"], d["gamma"], d["fz"])
    else:
        out = mf_forces(params, d["kappa"], d["alpha"], d["gamma"], d["fz"], combined=combined)
    return {"fx": out.fx, "fy": out.fy, "mz": out.mz}


def _fit_coefs(stages: dict) -> tuple[str, ...]:
    """Every coefficient a stage table can fit (the keys :func:`fit` accepts in ``coefs`` and ``bounds``)."""
    return tuple(k for s in stages for k in stages[s][0] + stages[s][1])


def _stage_loss(params: MFParams, d: dict, stage: Stage):
    """Weighted peak-normalised MSE summed over the stage's channels (module doc)."""
    pred = _predict(params, d, stage.combined)
    masks = _row_masks(d["kappa"], d["alpha"])
    loss = 0.0
    for ch in stage.channels:
        col, rows = CHANNELS[ch]
        w = jnp.where(masks[rows], d["w"], 0.0)
        peak = jnp.max(jnp.where(masks[rows], jnp.abs(d[col]), 0.0))
        r = (pred[col] - d[col]) / jnp.where(peak > 0, peak, 1.0)
        loss = loss + jnp.sum(w * r * r) / jnp.maximum(jnp.sum(w), 1e-300)
    return loss


def _minimise(loss_fn: Callable, u0, n_iter: int, method: str, learning_rate: float):
    """Fixed-iteration optax minimisation in ``lax.scan``; returns (best u, loss history, best loss)."""
    if method == "lbfgs":
        opt = optax.lbfgs(memory_size=20, linesearch=optax.scale_by_zoom_linesearch(max_linesearch_steps=20))
        value_and_grad = optax.value_and_grad_from_state(loss_fn)
    elif method == "adam":
        opt = optax.adam(learning_rate)
        value_and_grad = jax.value_and_grad(loss_fn)
    else:
        raise ValueError(f"method must be 'lbfgs' or 'adam', got {method!r}")

    def step(carry, _):
        u, state, best_u, best = carry
        if method != "adam":
            value, grad = value_and_grad(u, state=state)
            updates, new_state = opt.update(grad, state, u, value=value, grad=grad, value_fn=loss_fn)
        else:
            value, grad = value_and_grad(u)
            updates, new_state = opt.update(grad, state, u)
        new_u = optax.apply_updates(u, updates)
        improved = jnp.isfinite(value) & (value < best)
        best = jnp.where(improved, value, best)
        best_u = jnp.where(improved, u, best_u)
        new_u = jnp.where(jnp.all(jnp.isfinite(new_u)), new_u, best_u)  # never step into NaN
        return (new_u, new_state, best_u, best), value

    state0 = opt.init(u0)
    (u, _, best_u, best), hist = jax.lax.scan(step, (u0, state0, u0, jnp.asarray(jnp.inf, u0.dtype)),
                                              None, length=n_iter)
    last = loss_fn(u)
    take_last = jnp.isfinite(last) & (last < best)
    return jnp.where(take_last, u, best_u), hist, jnp.where(take_last, last, best)


def _stage_program(params: MFParams, d: dict, *, stage: Stage, bounds: tuple, n_iter: int, method: str,
                   learning_rate: float):
    """One fitting stage as a pure function of arrays (jit / vmap friendly).

    The free coefficients enter through ``coefs -> params.replace(**coefs)`` (everything else is
    taken from ``params`` as a constant), so gradients flow only to ``stage.coefs``; the optimiser
    works on their unconstrained vector ``u`` (bounds transform in the module doc)."""
    bd = dict(bounds)
    lo = np.array([bd[k][0] for k in stage.coefs])
    hi = np.array([bd[k][1] for k in stage.coefs])

    def unpack(u):
        x = from_unconstrained(u, lo, hi)
        return _replace(params, {k: x[i] for i, k in enumerate(stage.coefs)})

    def loss_fn(u):
        return _stage_loss(unpack(u), d, stage)

    u0 = to_unconstrained(jnp.stack([_get(params, k) for k in stage.coefs]), lo, hi)
    loss0 = loss_fn(u0)
    u, hist, final = _minimise(loss_fn, u0, n_iter, method, learning_rate)
    return unpack(u), loss0, final, hist


_stage_jits = _jit_pair(_stage_program, static_argnames=("stage", "bounds", "n_iter", "method", "learning_rate"))


def _fleet_program(params, d: dict, *, plan: tuple, bounds: tuple, n_iter: int, method: str,
                   learning_rate: float):
    """Every stage of ``plan`` in sequence, ``vmap``-ed over the leading (tire) axis: one program."""
    def one(p, dd):
        finals = []
        for stage in plan:
            p, _, final, _ = _stage_program(p, dd, stage=stage, bounds=_stage_bounds(bounds, stage), n_iter=n_iter,
                                            method=method, learning_rate=learning_rate)
            finals.append(final)
        return p, jnp.stack(finals)

    return jax.vmap(one)(params, d)


_fleet_jits = _jit_pair(_fleet_program, static_argnames=("plan", "bounds", "n_iter", "method", "learning_rate"))


def _stage_runner(fast_compile: bool):
    return _pick(_stage_jits, fast_compile)


def _stage_bounds(bounds_t: tuple, stage: Stage) -> tuple:
    bd = dict(bounds_t)
    return tuple((k, bd[k]) for k in stage.coefs)


# ---------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------


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
    """Result of :func:`fit`: per-channel and per-load RMSE against the data, coefficients, losses."""

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

    @property
    def rel_rmse(self) -> dict[str, float]:
        """RMSE relative to the channel's peak measured value."""
        return {c: self.rmse[c] / self.peak[c] for c in self.rmse}

    def __str__(self) -> str:
        lines = [f"jaxtire fit ({self.method}, {self.iterations} iterations, {self.seconds:.2f} s, "
                 f"final loss {self.final_loss:.4g})"]
        lines.append(f"  {'stage':<9} {'coefs':>5} {'iters':>6} {'conv@':>6} {'loss start':>12} {'loss final':>12}")
        for s in self.stages:
            lines.append(f"  {s.name:<9} {len(s.coefs):5d} {s.iterations:6d} {s.converged_at:6d} "
                         f"{s.loss_start:12.4e} {s.loss_final:12.4e}")
        loads = sorted({ld for per in self.rmse_by_load.values() for ld in per})
        head = "".join(f"{f'{ld:.0f} N':>10}" for ld in loads)
        lines.append(f"  {'channel':<8} {'rows':>5} {'peak':>9} {'RMSE':>9} {'RMSE/pk':>8}   by load:{head}")
        for c in self.rmse:
            per = self.rmse_by_load[c]
            cells = "".join(f"{per[ld]:10.2f}" if ld in per else f"{'-':>10}" for ld in loads)
            lines.append(f"  {c:<8} {self.n_rows[c]:5d} {self.peak[c]:9.1f} {self.rmse[c]:9.2f} "
                         f"{100 * self.rel_rmse[c]:7.3f}%            {cells}")
        lines.append("  coefficients (start -> fitted):")
        items = list(self.coefficients.items())
        w = max([6] + [len(k) for k in self.coefficients])
        for i in range(0, len(items), 3):
            lines.append("   " + "".join(f" {k:>{w}} {a:11.5g} -> {b:<11.5g}" for k, (a, b) in items[i:i + 3]))
        return "\n".join(lines)


class FitResult(NamedTuple):
    params: Any  # MFParams or SimpleParams, float64 leaves
    report: FitReport


@dataclasses.dataclass(frozen=True)
class FleetReport:
    """Result of :func:`fit_many`: per-tire losses and RMSE arrays plus timing."""

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
        lines = [f"jaxtire fleet fit: {self.n_tires} tires in one vmapped program ({self.method}, "
                 f"{self.iterations} iterations/tire)",
                 f"  compile {self.compile_seconds:.2f} s, run {self.seconds:.2f} s = "
                 f"{1e3 * self.seconds_per_tire:.2f} ms per tire",
                 f"  {'channel':<8} {'median RMSE/pk':>15} {'p95 RMSE/pk':>12} {'max RMSE/pk':>12}"]
        for c, r in self.rel_rmse.items():
            lines.append(f"  {c:<8} {100 * np.median(r):14.3f}% {100 * np.percentile(r, 95):11.3f}% "
                         f"{100 * np.max(r):11.3f}%")
        lines.append(f"  final loss: median {np.median(self.final_loss):.4g}, max {np.max(self.final_loss):.4g}")
        return "\n".join(lines)


class FleetResult(NamedTuple):
    params: Any  # batched MFParams or SimpleParams: leading axis = tire
    report: FleetReport


def _converged_at(hist: np.ndarray, final: float, rtol: float = 1e-4) -> int:
    """First iteration (1-based) whose loss is within ``rtol`` of the final loss."""
    ok = np.asarray(hist) <= final * (1.0 + rtol) + 1e-300
    idx = np.flatnonzero(ok)
    return int(idx[0]) + 1 if idx.size else len(ok)


def _rmse_tables(params: MFParams, data: MeasurementSet, channels) -> tuple[dict, dict, dict, dict]:
    d = {c: jnp.asarray(getattr(data, c)) for c in COLUMNS}
    predict = _pick(_predict_jits)
    preds = {comb: {k: np.asarray(v) for k, v in predict(params, d, comb).items()} for comb in (False, True)}
    masks = _row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    centres, case = load_cases(data.fz)
    rmse, peak, by_load, n_rows = {}, {}, {}, {}
    for ch in channels:
        col, rows = CHANNELS[ch]
        m = masks[rows]
        if not m.any():
            continue
        res = preds[rows == "combined"][col] - np.asarray(getattr(data, col))
        rmse[ch] = float(np.sqrt(np.mean(res[m] ** 2)))
        peak[ch] = float(np.max(np.abs(np.asarray(getattr(data, col))[m])))
        n_rows[ch] = int(m.sum())
        by_load[ch] = {float(round(centres[k])): float(np.sqrt(np.mean(res[m & (case == k)] ** 2)))
                       for k in range(len(centres)) if (m & (case == k)).any()}
    return rmse, peak, by_load, n_rows


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _plan(data: MeasurementSet, start, stages, coefs, bounds):
    """Static plan: the stages that have rows, their free coefficients, and the bounds used."""
    table, default_bounds = _tables(start)
    model = "simple" if table is SIMPLE_STAGES else "mf"
    fittable = _fit_coefs(table)
    masks = _row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    camber = bool(np.max(np.abs(np.asarray(data.gamma))) > CAMBER_TOL)
    stages = tuple(table) if stages is None else tuple(stages)
    coefs = dict(coefs or {})
    unknown = set(coefs) - set(table)
    if unknown:
        raise ValueError(f"coefs: unknown stage(s) {sorted(unknown)}; stages are {list(table)}")
    bad = set(bounds or {}) - set(fittable)
    if bad:
        raise ValueError(f"bounds: {sorted(bad)} are not fittable coefficients; choose from {fittable}")
    bd = {**default_bounds, **dict(bounds or {})}
    plan = []
    for name in stages:
        if name not in table:
            raise ValueError(f"stages: unknown stage {name!r}; stages are {list(table)}")
        _, _, channels, combined = table[name]
        if not any(masks[CHANNELS[c][1]].any() for c in channels):
            continue  # no data rows for this stage
        free = tuple(coefs.get(name, stage_coefficients(name, camber, model)))
        for k in free:
            if k not in fittable:
                raise ValueError(f"coefs[{name!r}]: {k!r} is not a fittable coefficient; choose from {fittable}")
        if free:
            plan.append(Stage(name, free, channels, combined))
    if not plan:
        raise ValueError("fit: no stage has data rows (need pure longitudinal, pure lateral or combined rows)")
    used = sorted({k for s in plan for k in s.coefs})
    for k in used:
        lo, hi = bd[k]
        v = np.asarray(_get(start, k), dtype=np.float64)
        if np.any(v < lo) or np.any(v > hi):
            raise ValueError(f"start value {k} = {v.ravel()[0]:g} is outside its bounds [{lo:g}, {hi:g}]; "
                             f"pass bounds={{{k!r}: (lower, upper)}} or another start")
    bounds_t = tuple((k, (float(bd[k][0]), float(bd[k][1]))) for k in used)
    return tuple(plan), bounds_t


def _to_float64(params):
    """``params`` with float64 leaves; float32 leaves go through their shortest decimal form, so a
    value read as 0.3135 stays 0.3135 (not 0.31349998...) in the fitted ``.tir``."""
    def up(x):
        a = np.asarray(x)
        if a.dtype == np.float32:
            a = np.array([float(str(v)) for v in a.ravel()], dtype=np.float64).reshape(a.shape)
        return jnp.asarray(a, jnp.float64)

    return jax.tree.map(up, params)


def _default_iters(n_iter, method: str) -> int:
    if method not in ("lbfgs", "adam"):
        raise ValueError(f"method must be 'lbfgs' or 'adam', got {method!r}")
    n = (150 if method == "lbfgs" else 1000) if n_iter is None else int(n_iter)
    if n < 1:
        raise ValueError(f"n_iter must be >= 1, got {n}")
    return n


def _device_data(data: MeasurementSet, w) -> dict:
    d = {c: jnp.asarray(np.asarray(getattr(data, c)), jnp.float64) for c in COLUMNS}
    d["w"] = jnp.asarray(w, jnp.float64)
    return d


def fit(data: MeasurementSet, start: MFParams | SimpleParams | None = None, *,
        stages: Sequence[str] | None = None,
        coefs: Mapping[str, Sequence[str]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        load_weights: Any = None, n_iter: int | None = None, method: str = "lbfgs",
        learning_rate: float = 0.02, fast_compile: bool = True) -> FitResult:
    """Fit the coefficients of ``start`` to ``data`` in stages; returns ``FitResult(params, report)``.

    Args:
      data: a :class:`MeasurementSet` (validated again here).
      start: starting :class:`MFParams` (MF 6.1, default :func:`generic_tire` at the data's median
        load; ``FNOMIN``, ``UNLOADED_RADIUS`` and every coefficient outside the stages are kept) or
        :class:`~jaxtire.simple.SimpleParams` (the simple model, stages :data:`SIMPLE_STAGES`).
      stages: stage names in order (default: all stages of the model; a stage without rows is skipped).
      coefs: per-stage override of the free coefficients, e.g. ``{"Fy0": ("PDY1", "PKY1")}``.
      bounds: per-coefficient ``(lower, upper)`` overriding :data:`DEFAULT_BOUNDS` /
        :data:`SIMPLE_BOUNDS` (``±inf`` for one- or un-bounded, see :func:`from_unconstrained`).
      load_weights: None, ``"equal"``, ``{load [N]: weight}`` or callable ``w(fz)``; see the module doc.
      n_iter: optimiser iterations per stage (fixed; default 150 for L-BFGS, 1000 for Adam).
      method: ``"lbfgs"`` (optax L-BFGS, zoom line search) or ``"adam"`` (``learning_rate``).
      fast_compile: compile with :data:`FAST_COMPILE_OPTIONS` on CPU (compile ~3x faster, run ~2x slower).

    The fitted params have float64 leaves; x64 is enabled only inside this call.
    """
    data = measurement_set(*data)
    if start is None:
        start = generic_tire(fnomin=float(np.median(data.fz)))
    n_iter = _default_iters(n_iter, method)
    w = _row_weights(data.fz, load_weights)
    plan, bounds_t = _plan(data, start, stages, coefs, bounds)
    with jax.enable_x64(True):
        params = _to_float64(start)
        d = _device_data(data, w)
        runner = _stage_runner(fast_compile)
        t0 = time.perf_counter()
        l0, lf, hist = [], [], []
        for stage in plan:
            params, a, b, h = runner(params, d, stage=stage, bounds=_stage_bounds(bounds_t, stage),
                                     n_iter=int(n_iter), method=method, learning_rate=float(learning_rate))
            l0.append(float(a))
            lf.append(float(b))
            hist.append(np.asarray(h))
        seconds = time.perf_counter() - t0
        channels = tuple(c for s in plan for c in s.channels)
        rmse, peak, by_load, n_rows = _rmse_tables(params, data, channels)
    stage_reports = tuple(StageReport(s.name, s.coefs, int(n_iter), l0[i], lf[i], _converged_at(hist[i], lf[i]))
                          for i, s in enumerate(plan))
    coef_vals = {k: (float(_get(start, k)), float(_get(params, k))) for s in plan for k in s.coefs}
    report = FitReport(stage_reports, coef_vals, rmse, peak, by_load, n_rows, int(n_iter) * len(plan),
                       float(sum(lf)), seconds, method)
    return FitResult(params, report)


def fit_simple(data: MeasurementSet, start: SimpleParams | None = None, **kwargs) -> FitResult:
    """Fit the simple B, C, D, E model (:mod:`jaxtire.simple`) to ``data``: :func:`fit` with a
    :class:`~jaxtire.simple.SimpleParams` start (default: its passenger-car defaults with ``fz0``
    the data's median load).  Stages :data:`SIMPLE_STAGES`: ``"pure"`` (both curves and the load
    sensitivity from pure-slip Fx and Fy, plus ``c_gamma`` with camber), ``"Mz0"`` (``trail``),
    ``"combined"`` (``slide_ratio``, ``beta`` of the friction-ellipse breakaway)."""
    data = measurement_set(*data)
    if start is None:
        start = dataclasses.replace(default_simple_params(), fz0=jnp.asarray(float(np.median(data.fz))))
    return fit(data, start, **kwargs)


def fit_many(data: MeasurementSet, start: MFParams | SimpleParams | None = None, *,
             stages: Sequence[str] | None = None,
             coefs: Mapping[str, Sequence[str]] | None = None,
             bounds: Mapping[str, tuple[float, float]] | None = None,
             load_weights: Any = None, n_iter: int | None = None, method: str = "adam",
             learning_rate: float = 0.02, fast_compile: bool = False) -> FleetResult:
    """Fit a fleet in one compiled program (all stages, ``vmap``-ed): tire ``i`` is fitted to row ``i`` of ``data``.

    ``data`` leaves have shape ``(n_tires, n_rows)``; ``start`` is one tire (shared start) or a
    batch with leading axis ``n_tires``.  Same options and staging as :func:`fit`; the plan
    (which stages run, which coefficients are free) is decided from the whole fleet.  Returns
    ``FleetResult(params, report)`` with batched float64 params; the report times compilation and
    running separately.  Defaults differ from :func:`fit`: ``method="adam"`` (a fixed amount of work
    per iteration, no data-dependent line-search loops, so every lane does the same arithmetic as
    a single fit) and ``fast_compile=False`` (a fleet is run-bound).
    """
    data = measurement_set(*data, batched=True)
    n = data.kappa.shape[0]
    if start is None:
        start = generic_tire(fnomin=float(np.median(data.fz)))
    n_iter = _default_iters(n_iter, method)
    w = np.stack([_row_weights(data.fz[i], load_weights) for i in range(n)])
    flat = MeasurementSet(*(np.asarray(getattr(data, c)).ravel() for c in COLUMNS))
    plan, bounds_t = _plan(flat, start, stages, coefs, bounds)
    with jax.enable_x64(True):
        params = jax.tree.map(lambda x: jnp.broadcast_to(x, (n,) + jnp.shape(x)[1:] if jnp.ndim(x) else (n,)),
                              _to_float64(start))
        d = _device_data(data, w)
        static = dict(plan=plan, bounds=bounds_t, n_iter=int(n_iter), method=method,
                      learning_rate=float(learning_rate))
        t0 = time.perf_counter()
        compiled = _pick(_fleet_jits, fast_compile).lower(params, d, **static).compile()
        t1 = time.perf_counter()
        params, lf = compiled(params, d)
        jax.block_until_ready(params)
        compile_s, run_s = t1 - t0, time.perf_counter() - t1
        channels = tuple(c for s in plan for c in s.channels)
        rm, pk = _pick(_jit_pair(jax.vmap(functools.partial(_fleet_rmse, channels=channels))))(params, d)
        rm, pk, lf = np.asarray(rm), np.asarray(pk), np.asarray(lf)
    report = FleetReport(n, {c: rm[:, i] for i, c in enumerate(channels)},
                         {c: pk[:, i] for i, c in enumerate(channels)}, lf.sum(axis=1),
                         int(n_iter) * len(plan), compile_s, run_s, method)
    return FleetResult(params, report)


def _fleet_rmse(params, d, channels):
    masks = _row_masks(d["kappa"], d["alpha"])
    rm, pk = [], []
    preds = {comb: _predict(params, d, comb) for comb in (False, True)}
    for ch in channels:
        col, rows = CHANNELS[ch]
        m = masks[rows]
        res = jnp.where(m, preds[rows == "combined"][col] - d[col], 0.0)
        rm.append(jnp.sqrt(jnp.sum(res**2) / jnp.maximum(jnp.sum(m), 1)))
        pk.append(jnp.max(jnp.where(m, jnp.abs(d[col]), 0.0)))
    return jnp.stack(rm), jnp.stack(pk)


# ---------------------------------------------------------------------------------------------
# Start values and synthetic data
# ---------------------------------------------------------------------------------------------

#: Round-number coefficients of a generic passenger-car tire (a neutral start, not any real tire).
GENERIC_COEFFICIENTS: dict[str, float] = {
    "PCX1": 1.65, "PDX1": 1.2, "PDX2": -0.1, "PEX1": 0.3, "PKX1": 25.0,
    "PCY1": 1.4, "PDY1": 1.0, "PDY2": -0.1, "PEY1": -0.5, "PKY1": -20.0, "PKY2": 2.0, "PKY4": 2.0,
    "PKY6": -1.0,
    "QBZ1": 10.0, "QBZ9": 10.0, "QCZ1": 1.2, "QDZ1": 0.1, "QEZ1": -1.0,
    "RBX1": 10.0, "RBX2": 8.0, "RCX1": 1.0, "RBY1": 8.0, "RBY2": 5.0, "RCY1": 1.0,
    "RVY1": 0.01, "RVY4": 10.0, "RVY5": 1.9, "RVY6": 10.0,
}


def generic_tire(fnomin: float = 4000.0, unloaded_radius: float = 0.3, *, like: MFParams | None = None) -> MFParams:
    """A neutral starting tire: :data:`GENERIC_COEFFICIENTS`, every other fitted coefficient 0.

    ``like`` (e.g. the measured tire's file) supplies ``FNOMIN``, ``UNLOADED_RADIUS``,
    pressures, speeds, scaling factors, FITTYP, metadata and all coefficients no stage fits;
    otherwise ``fnomin`` and ``unloaded_radius`` are used with the MF defaults.
    """
    from jaxtire.params import make_params

    fitted = {k for s in STAGES for k in stage_coefficients(s, camber=True)}
    if like is None:
        base = make_params({"FNOMIN": fnomin, "UNLOADED_RADIUS": unloaded_radius}, fittyp=61)
    else:
        base = like
    changes = {k: jnp.asarray(GENERIC_COEFFICIENTS.get(k, 0.0), jnp.result_type(base.coef[k])) for k in fitted}
    return base.replace(**changes)


def synthetic_data(params: MFParams, *, loads: Sequence[float] | None = None, n_slip: int = 50,
                   kappa_max: float = 0.3, alpha_max: float = 0.3,
                   combined_alpha: Sequence[float] = (0.05, 0.12), gamma: float = 0.0,
                   noise: float = 0.01, seed: int = 0) -> MeasurementSet:
    """Noisy measurements from ``params`` (MF: combined-slip model; or the simple model; ``vx`` nominal).

    Per load: a pure kappa sweep (``|kappa| <= kappa_max``), a pure alpha sweep (``|alpha| <= alpha_max``
    rad) and a kappa sweep at each ``combined_alpha`` [rad], ``n_slip`` points each; gaussian noise of
    ``noise`` times the peak |value| of each channel at that load.  ``loads`` [N] default to
    0.5, 1, 1.5 and 2 x ``FNOMIN`` (simple model: ``fz0``).  ``params`` may be batched (leading tire
    axis): the result then has ``(tires, rows)`` arrays for :func:`fit_many`.
    """
    fz0_name = "fz0" if isinstance(params, SimpleParams) else "FNOMIN"
    batched = np.ndim(_get(params, fz0_name)) > 0
    kap = np.linspace(-kappa_max, kappa_max, n_slip)
    alp = np.linspace(-alpha_max, alpha_max, n_slip)
    k_rows, a_rows = [kap, np.zeros(n_slip)], [np.zeros(n_slip), alp]
    for a in combined_alpha:
        k_rows.append(kap)
        a_rows.append(np.full(n_slip, a))
    per_load = len(k_rows) * n_slip
    n_loads = 4 if loads is None else len(loads)
    kappa = np.tile(np.concatenate(k_rows), n_loads)
    alpha = np.tile(np.concatenate(a_rows), n_loads)
    case = np.repeat(np.arange(n_loads), per_load)
    with jax.enable_x64(True):
        def clean(p):
            if loads is None:
                fz = jnp.asarray(np.array([0.5, 1.0, 1.5, 2.0])[case]) * _get(p, fz0_name)
            else:
                fz = jnp.asarray(np.asarray(loads, dtype=np.float64)[case])
            d = {"kappa": jnp.asarray(kappa), "alpha": jnp.asarray(alpha), "gamma": jnp.full(kappa.shape, gamma),
                 "fz": fz}
            o = _predict(p, d, True)
            return fz, o["fx"], o["fy"], o["mz"]

        p = params.astype(jnp.float64)
        fz, fx, fy, mz = (np.array(x) for x in _pick(_jit_pair(jax.vmap(clean) if batched else clean))(p))
    rng = np.random.default_rng(seed)
    for f in (fx, fy, mz):
        for j in range(n_loads):
            m = case == j
            pk = np.max(np.abs(f[..., m]), axis=-1, keepdims=True)
            f[..., m] += noise * pk * rng.standard_normal(f[..., m].shape)
    b = lambda x: np.broadcast_to(x, fz.shape).copy()  # noqa: E731
    return measurement_set(b(kappa), b(alpha), b(np.full_like(kappa, gamma)), fz, fx, fy, mz, batched=batched)


def perturbed_tires(params, n: int, *, spread: float = 0.1, seed: int = 0):
    """A batch of ``n`` synthetic tires: every non-zero fittable coefficient of ``params`` (MF or
    simple) scaled by an independent factor uniform in ``[1 - spread, 1 + spread]``, clipped into
    the default bounds; everything else repeated."""
    table, bd = _tables(params)
    fittable = set(_fit_coefs(table))
    rng = np.random.default_rng(seed)
    names = list(params.coef) if isinstance(params, MFParams) else [f.name for f in dataclasses.fields(params)
                                                                     if f.name != "ellipse"]
    out = {}
    for k in names:
        v = np.asarray(_get(params, k), dtype=np.float64)
        if k in fittable and v != 0:
            out[k] = np.clip(v * rng.uniform(1 - spread, 1 + spread, n), *bd[k])
        else:
            out[k] = np.full(n, v)
        out[k] = jnp.asarray(out[k], jnp.result_type(_get(params, k)))
    if isinstance(params, MFParams):
        return dataclasses.replace(params, coef=out)
    return dataclasses.replace(params, **out)


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def _kya_errors(fitted: MFParams, true: MFParams, loads) -> np.ndarray:
    kya = _pick(_jit_pair(cornering_stiffness))
    with jax.enable_x64(True):
        kf = np.asarray(kya(fitted.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
        kt = np.asarray(kya(true.astype(jnp.float64), jnp.asarray(loads, jnp.float64)))
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
            rmse, peak, _, _ = _rmse_tables(result.params, clean, tuple(result.report.rmse))
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


if __name__ == "__main__":
    raise SystemExit(main())
