"""Measured steady-state tire data: the :class:`MeasurementSet`, CSV in/out, load cases, row weights.

One row per operating point, SI units, ISO-W signs: ``kappa`` [-], ``alpha`` [rad], ``gamma``
[rad], ``fz`` [N] > 0, ``fx``, ``fy`` [N], ``mz`` [N m] (:data:`COLUMNS`).

Row selection (:func:`row_masks`): a row is *pure longitudinal* when ``|alpha| <= 1e-3 rad``,
*pure lateral* when ``|kappa| <= 1e-3``, *combined* otherwise.  Load cases
(:func:`load_cases`) are the clusters of ``fz`` (sorted loads split where consecutive values
differ by more than 2 % of the largest load); :func:`row_weights` weighs rows per load case.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.tydex import to_measurements
from jaxtire.validation import ValidationError, read_regular_file

__all__ = [
    "CAMBER_TOL",
    "COLUMNS",
    "MEASURED",
    "MeasurementSet",
    "PURE_TOL_ALPHA",
    "PURE_TOL_KAPPA",
    "load_cases",
    "load_csv",
    "load_files",
    "load_tydex",
    "measurement_set",
    "row_masks",
    "row_weights",
    "save_csv",
]

COLUMNS = ("kappa", "alpha", "gamma", "fz", "fx", "fy", "mz")
MEASURED = ("fx", "fy", "mz")  # measured channels; the others are operating conditions
PURE_TOL_ALPHA = 1e-3  # [rad] |alpha| below this: pure longitudinal row
PURE_TOL_KAPPA = 1e-3  # [-]   |kappa| below this: pure lateral row
CAMBER_TOL = 1e-3  # [rad] data with max |gamma| above this fits the camber terms


class MeasurementSet(NamedTuple):
    """Measured steady-state tire data, one row per operating point (1-D float64 arrays, SI, ISO-W).

    ``kappa`` [-], ``alpha`` [rad], ``gamma`` [rad], ``fz`` [N] > 0, ``fx``, ``fy`` [N], ``mz`` [N m].
    A fleet for :func:`jaxtire.fit.fit_many` stacks tires on a leading axis (2-D arrays, same rows per tire).
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


def measurement_set(
    kappa, alpha, gamma, fz, fx, fy, mz, *, batched: bool = False, allow_missing: bool = False, _lines=None
) -> MeasurementSet:
    """Validated :class:`MeasurementSet`; scalars broadcast to the common length.

    Raises ``ValueError`` naming the column (and rows) for: zero rows, arrays of
    different lengths, NaN / inf values, ``fz <= 0`` (wrong sign or lifted
    wheel), ``|alpha|`` or ``|gamma| >= pi/2`` (degrees passed as radians).
    ``batched=True`` accepts 2-D ``(tires, rows)`` arrays for :func:`jaxtire.fit.fit_many`.
    ``allow_missing=True`` accepts NaN in the measured channels ``fx``, ``fy``, ``mz``, meaning
    "not measured" (a whole column, or the rows of a file that lacks the channel); a fit leaves out
    those rows of that channel.  ``+-inf`` is always refused.
    """
    cols = dict(zip(COLUMNS, (kappa, alpha, gamma, fz, fx, fy, mz), strict=False))
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
            raise ValueError(
                f"measurements: column {n!r} has {a.ndim} dimensions, expected {want_nd}"
                + (" (tires, rows)" if batched else " (rows)")
            )
    ref_name, ref = next(iter(shaped.items()))
    for n, a in shaped.items():
        if a.shape != ref.shape:
            raise ValueError(
                f"measurements: column {n!r} has shape {a.shape} but {ref_name!r} has "
                f"{ref.shape}; all columns need the same number of rows"
            )
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
        bad = np.isinf(a) if (allow_missing and n in MEASURED) else ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"measurements: column {n!r} has NaN/inf at {rows_of(bad)}; drop or fill those rows")
    bad = arrays["fz"] <= 0
    if bad.any():
        raise ValueError(
            f"measurements: column 'fz' must be > 0 N (ISO-W, compression positive); got "
            f"{arrays['fz'][bad].ravel()[0]:g} at {rows_of(bad)} (flip the sign of SAE data, "
            f"drop lifted-wheel rows)"
        )
    for n in ("alpha", "gamma"):
        bad = np.abs(arrays[n]) >= np.pi / 2
        if bad.any():
            raise ValueError(
                f"measurements: column {n!r} must be in radians with |{n}| < pi/2; got "
                f"{arrays[n][bad].ravel()[0]:g} at {rows_of(bad)} (degrees?)"
            )
    return MeasurementSet(**arrays)


def load_csv(path) -> MeasurementSet:
    """Read a CSV table with a header naming the :data:`COLUMNS` (any order, extra columns ignored).

    The measured channels ``fx``, ``fy``, ``mz`` may be absent (any subset): an absent column is
    NaN, "not measured" (see :func:`measurement_set`'s ``allow_missing``); ``kappa``, ``alpha``,
    ``gamma`` and ``fz`` are required.  A ``nan`` cell in a present column is refused.  Raises ``ValueError`` naming the file, line and column for a missing column, a non-numeric
    cell, or a bad value (as :func:`measurement_set`; ``nan`` cells are bad values).

    The file must be UTF-8 text (ASCII is UTF-8; a leading UTF-8 byte-order mark is accepted); Latin-1,
    UTF-16 or binary content, or a path that is not a regular file, raises
    :class:`~jaxtire.validation.ValidationError` (a ``ValueError``) naming the file and the problem.
    """
    path = Path(path)
    try:
        return _parse_csv(path, io.StringIO(_read_utf8(path), newline=""))
    except csv.Error as e:
        raise ValidationError(f"{path}: not a readable CSV table: {e}") from None


def _parse_csv(path: Path, fh) -> MeasurementSet:
    """Parse the header and rows of :func:`load_csv` from the text stream ``fh``."""
    reader = csv.reader(fh)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise ValueError(f"{path}: empty file, expected a header with columns {', '.join(COLUMNS)}") from None
    missing = [c for c in COLUMNS if c not in header and c not in MEASURED]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; header is {header}")
    absent = [c for c in MEASURED if c not in header]
    if len(absent) == len(MEASURED):
        raise ValueError(f"{path}: no measured column (fx, fy or mz); header is {header}")
    idx = [header.index(c) if c in header else -1 for c in COLUMNS]
    rows, lines = [], []
    for lineno, rec in enumerate(reader, start=2):
        if not rec or all(not s.strip() for s in rec):
            continue
        vals = []
        for c, j in zip(COLUMNS, idx, strict=False):
            if j < 0:
                vals.append(0.0)  # absent channel: set to NaN after validation
                continue
            cell = rec[j].strip() if j < len(rec) else ""
            try:
                vals.append(float(cell))
            except ValueError:
                raise ValueError(f"{path}: line {lineno}, column {c!r}: {cell!r} is not a number") from None
        rows.append(vals)
        lines.append(lineno)
    data = np.asarray(rows, dtype=np.float64).reshape(-1, len(COLUMNS))
    try:
        out = measurement_set(*data.T, _lines=lines)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return out._replace(**{c: np.full(out.n_rows, np.nan) for c in absent})


#: Largest measurement CSV read [bytes].
MAX_CSV_BYTES = 1 << 30


def _read_utf8(path: Path) -> str:
    """The text of a regular file decoded as UTF-8 (``utf-8-sig``: a byte-order mark is dropped)."""
    data = read_regular_file(path, MAX_CSV_BYTES, "a measurement CSV")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data:
        kind = "UTF-16 text" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "NUL bytes (binary or UTF-16?)"
        raise ValidationError(f"{path}: encoding: contains {kind}; save the CSV as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValidationError(
            f"{path}: encoding: byte 0x{data[e.start]:02x} at offset {e.start} is not UTF-8 "
            "(Latin-1 or binary?); save the CSV as UTF-8"
        ) from None


def _is_tydex(path: Path) -> bool:
    """TYDEX by extension (``.tdx``, ``.tydex``), CSV by ``.csv``; otherwise by content (a TYDEX file
    starts, after ``!`` comments and blank lines, with a ``**`` block keyword)."""
    ext = path.suffix.lower()
    if ext in (".tdx", ".tydex"):
        return True
    if ext == ".csv" or not path.is_file():  # a FIFO or device is refused by the reader, never read here
        return False
    with path.open("r", encoding="latin-1") as fh:
        for line in fh:
            t = line.strip()
            if t and not t.startswith("!"):
                return t.startswith("**")
    return False


def load_tydex(path) -> MeasurementSet:
    """One TYDEX ``.tdx`` file (:func:`jaxtire.tydex.to_measurements`, SI) as a :class:`MeasurementSet`.

    ``FZW`` (or a constant) is required; an absent ``LONGSLIP``, ``SLIPANGL`` or ``INCLANGL``
    channel (and constant) is 0 (a pure sweep of the other slip, no camber); absent ``FXW``,
    ``FYW``, ``MZW`` are NaN ("not measured"); at least one of them is required."""

    path = Path(path)
    m = to_measurements(path)
    if m["fz"] is None:
        raise ValueError(f"{path}: no vertical load (channel or constant FZW / FZ)")
    if all(m[c] is None for c in MEASURED):
        raise ValueError(f"{path}: no measured channel (FXW, FYW or MZW)")
    n = len(m["fz"])
    cols: dict[str, Any] = {c: (np.zeros(n) if m[c] is None else m[c]) for c in COLUMNS}
    try:
        out = measurement_set(**cols)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return out._replace(**{c: np.full(n, np.nan) for c in MEASURED if m[c] is None})


def load_files(paths) -> tuple[MeasurementSet, tuple[tuple[str, int, int], ...]]:
    """Read measurement files (TYDEX or CSV, :func:`_is_tydex`; one sweep each, or a whole CSV table)
    and concatenate them: ``(data, sweeps)`` with ``sweeps`` the ``(file name, first row, end row)``
    of each file.  Channels a file lacks are NaN on its rows."""
    parts, sweeps, start = [], [], 0
    for p in paths:
        p = Path(p)
        d = load_tydex(p) if _is_tydex(p) else load_csv(p)
        parts.append(d)
        sweeps.append((p.name, start, start + d.n_rows))
        start += d.n_rows
    if not parts:
        raise ValueError("no measurement files given")
    data = MeasurementSet(*(np.concatenate([getattr(d, c) for d in parts]) for c in COLUMNS))
    return data, tuple(sweeps)


def save_csv(data: MeasurementSet, path) -> None:
    """Write a (1-D) :class:`MeasurementSet` as a CSV table readable by :func:`load_csv` (a measured
    channel that is entirely NaN, "not measured", is left out)."""
    cols = [c for c in COLUMNS if not (c in MEASURED and np.isnan(np.asarray(getattr(data, c))).all())]
    arr = np.stack([np.asarray(getattr(data, c), dtype=np.float64) for c in cols], axis=1)
    if arr.ndim != 2:
        raise ValueError("save_csv writes one tire; got batched measurements")
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
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


def row_weights(fz, load_weights) -> np.ndarray:
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
                raise ValueError(
                    f"load_weights: unknown mode {load_weights!r}; use None, 'equal', a dict or a callable"
                )
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


def row_masks(kappa, alpha, xp=jnp) -> dict:
    """Boolean masks ``{"pure_long", "pure_lat", "combined"}`` of the rows (``xp``: ``jnp`` or ``np``)."""
    pure_long = xp.abs(alpha) <= PURE_TOL_ALPHA
    pure_lat = xp.abs(kappa) <= PURE_TOL_KAPPA
    return {"pure_long": pure_long, "pure_lat": pure_lat, "combined": ~(pure_long | pure_lat)}
