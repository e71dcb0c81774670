"""One validation helper for every public boundary (files, constructors, CLI flags).

Every check raises :class:`ValidationError` (a ``ValueError``) whose message names the
source, the field, the offending value and the allowed range, e.g.::

    SimpleParams: Dx = -1.0 is outside the allowed range (0, 20]

Inside ``jit`` nothing here is called: traced values are skipped (see
:func:`is_concrete`); jitted code clamps as documented instead.

Ranges are written as ``(lo, hi, lo_incl, hi_incl)``; ``math.inf`` for an open end.
A value must also stay finite once stored in the target dtype (``float32`` by default),
so ``1e39`` is refused instead of becoming ``inf``.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterable
from typing import Any

import jax
import numpy as np

__all__ = [
    "ValidationError",
    "check_range",
    "check_choice",
    "check_int",
    "check_fields",
    "check_finite",
    "float_dtype",
    "is_concrete",
    "format_range",
    "read_regular_file",
]


class ValidationError(ValueError):
    """A value at a public boundary is missing, of the wrong kind or outside its allowed range."""


def format_range(lo: float, hi: float, lo_incl: bool = True, hi_incl: bool = True) -> str:
    """``[lo, hi]`` / ``(lo, hi)`` with the brackets saying which ends are allowed."""
    return f"{'[' if lo_incl else '('}{lo}, {hi}{']' if hi_incl else ')'}"


def is_concrete(x: Any) -> bool:
    """``True`` unless some leaf of the pytree ``x`` is a JAX tracer (then checks are skipped)."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(x))


def _stored_max(dtype) -> float:
    if dtype is None:
        dtype = jax.dtypes.canonicalize_dtype(np.float64)  # float64 under jax_enable_x64, else float32
    dt = np.dtype(dtype)
    return float(np.finfo(dt).max) if np.issubdtype(dt, np.floating) else math.inf


def _as_float_array(name: str, value: Any, source: str) -> np.ndarray:
    if isinstance(value, (str, bytes)) or value is None:
        raise ValidationError(f"{source}: {name} = {value!r} is not a number")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(f"{source}: {name} = {value!r} is not a number") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValidationError(f"{source}: {name} = {value!r} is not a number")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValidationError(f"{source}: {name} = {value!r} is complex, a real number is needed")
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(np.float64)


def check_finite(name: str, value: Any, source: str = "value", dtype=None) -> np.ndarray:
    """Every element finite, also once stored in ``dtype``; returns the values as float64."""
    arr = _as_float_array(name, value, source)
    big = _stored_max(dtype)
    bad = ~np.isfinite(arr) | (np.abs(arr) > big)
    if bad.any():
        v = arr[bad].ravel()[0] if arr.ndim else float(arr)
        extra = "" if not np.isfinite(v) else f" (exceeds the largest {np.dtype(dtype or np.float32).name} {big:.3g})"
        raise ValidationError(f"{source}: {name} = {v} is not finite{extra}")
    return arr


def check_range(
    name: str,
    value: Any,
    lo: float = -math.inf,
    hi: float = math.inf,
    lo_incl: bool = True,
    hi_incl: bool = True,
    source: str = "value",
    dtype=None,
    allow_inf: bool = False,
) -> np.ndarray:
    """Raise :class:`ValidationError` unless every element of ``value`` lies in the range.

    ``value`` may be a scalar or an array (every element is checked; the first bad one is
    named). Values must be finite in the stored ``dtype`` unless ``allow_inf`` and the
    range's end is infinite. Tracers are not checked. Returns the values as float64.
    """
    if not is_concrete(value):
        return np.asarray(0.0)
    arr = _as_float_array(name, value, source)
    big = _stored_max(dtype)
    fin = np.isfinite(arr) & (np.abs(arr) <= big)
    if allow_inf:
        fin |= (np.isposinf(arr) & (hi == math.inf)) | (np.isneginf(arr) & (lo == -math.inf))
    ok = fin & ((arr >= lo) if lo_incl else (arr > lo)) & ((arr <= hi) if hi_incl else (arr < hi))
    ok |= fin & np.isinf(arr)  # only reachable with allow_inf at an infinite open end
    if not ok.all():
        bad = arr[~ok].ravel()[0] if arr.ndim else float(arr)
        if not np.isfinite(bad) or abs(bad) > big:
            raise ValidationError(
                f"{source}: {name} = {bad} is not finite (allowed range {format_range(lo, hi, lo_incl, hi_incl)})"
            )
        raise ValidationError(
            f"{source}: {name} = {bad} is outside the allowed range {format_range(lo, hi, lo_incl, hi_incl)}"
        )
    return arr


def float_dtype(dtype, source: str = "value") -> np.dtype:
    """The storage dtype of a constructor: ``dtype`` or the default float (float32, float64 under x64).

    A non-floating ``dtype`` (``int32``, ``bool``) raises :class:`ValidationError` naming it: it would
    truncate the values (a friction coefficient 0.65 stored as 0)."""
    dt = np.dtype(jax.dtypes.canonicalize_dtype(np.float64) if dtype is None else dtype)
    if not np.issubdtype(dt, np.floating):
        raise ValidationError(
            f"{source}: dtype = {dt.name} must be a floating dtype (float32 or float64); values such as 0.65 "
            "would be truncated"
        )
    return dt


def _shape(name: str, v: Any, values: Any, source: str) -> tuple:
    """``np.shape(v)``; a ragged nested list is refused naming the field and the shape the others expect."""
    try:
        return tuple(np.shape(v))
    except ValueError:
        pass
    others = []
    for o in values.values():
        try:
            others.append(tuple(np.shape(o)))
        except ValueError:  # this field, or another ragged one
            continue
    try:
        want = np.broadcast_shapes(*others)
    except ValueError:
        want = ()
    expect = f"shape {want} (the other fields' batch shape) or ()" if want else "a scalar or one rectangular array"
    raise ValidationError(f"{source}: {name} is a ragged nested list (rows of different lengths); expected {expect}")


def check_fields(values: Any, ranges: Any = None, *, source: str = "value", dtype=None) -> np.dtype:
    """The one check of every constructor of a parameter pytree; returns the storage dtype.

    ``values``: ``{field: scalar or array}``; ``ranges``: ``{field: (lo, hi[, lo_incl, hi_incl])}`` (fields
    without one are only checked finite).  Raises :class:`ValidationError` naming the field for

    * a non-floating ``dtype`` (:func:`float_dtype`);
    * a value outside its range or not finite once stored in the dtype (:func:`check_range`);
    * a non-zero value that underflows to 0 once stored (``|x|`` below the dtype's smallest normal number,
      ``1.18e-38`` in float32, ``2.2e-308`` in float64: XLA flushes subnormals to zero), e.g. a nominal
      load of ``1e-46`` that would divide by zero later;
    * batch shapes that do not broadcast with each other (naming the fields and their shapes).

    Traced values (inside ``jit``) are skipped, their shapes still checked."""
    dt = float_dtype(dtype, source)
    tiny = float(np.finfo(dt).tiny)
    shapes: dict[str, tuple] = {}
    for name, v in values.items():
        shapes[name] = _shape(name, v, values, source)
        if not is_concrete(v):
            continue
        rng = (ranges or {}).get(name)
        if rng:
            lo, hi, lo_incl, hi_incl = (*rng, True, True)[:4]
            arr = check_range(name, v, lo, hi, lo_incl, hi_incl, source=source, dtype=dt)
        else:
            arr = check_finite(name, v, source, dt)
        small = (arr != 0.0) & (np.abs(arr) < tiny)
        if np.any(small):
            bad = arr[small].ravel()[0] if arr.ndim else float(arr)
            raise ValidationError(
                f"{source}: {name} = {bad} underflows to 0 in {dt.name} (smallest normal {tiny:.3g}); "
                "use a value of normal size or float64"
            )
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        batched = ", ".join(f"{k} {v}" for k, v in shapes.items() if v)
        raise ValidationError(f"{source}: batch shapes do not broadcast: {batched}") from None
    return dt


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, source: str = "value") -> int:
    """A Python integer (or integral number) in ``[lo, hi]``; returns it as ``int``."""
    if isinstance(value, bool) or value is None:
        raise ValidationError(f"{source}: {name} = {value!r} is not an integer")
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(f"{source}: {name} = {value!r} is not an integer") from None
    if not math.isfinite(f) or f != int(f):
        raise ValidationError(f"{source}: {name} = {value!r} is not an integer")
    iv = int(value) if isinstance(value, int) else int(f)
    if (lo is not None and iv < lo) or (hi is not None and iv > hi):
        raise ValidationError(
            f"{source}: {name} = {iv} is outside the allowed range "
            f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
        )
    return iv


def check_choice(name: str, value: Any, choices: Iterable[Any], source: str = "value") -> Any:
    """``value`` must be one of ``choices``; returns it."""
    choices = tuple(choices)
    if value not in choices:
        raise ValidationError(f"{source}: {name} = {value!r} is not one of {', '.join(map(repr, choices))}")
    return value


def read_regular_file(path, max_bytes: int, what: str = "the file", error: type[ValueError] = ValidationError) -> bytes:
    """The bytes of ``path``, refusing before reading anything that could hang or exhaust memory.

    A directory, FIFO, device or other non-regular file, a file over ``max_bytes`` (checked before and while
    reading) and any OS error raise ``error`` (a ``ValueError`` subclass, default
    :class:`ValidationError`) naming the path; ``what`` names the expected kind (``"a .tir file"``).
    The file is opened non-blocking and re-checked after opening (it may be replaced in between).
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:  # ValueError: embedded NUL in the path
        raise error(f"{path!s}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a directory"
            if stat.S_ISDIR(st.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a device"
            if (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode))
            else "not a regular file"
        )
        raise error(f"{path}: is {kind}; {what} must be a regular file")
    if st.st_size > max_bytes:
        raise error(f"{path}: {st.st_size} bytes is larger than the {max_bytes}-byte limit of {what}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise error(f"{path}: cannot open: {e.strerror or e}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between stat and open
            raise error(f"{path}: is not a regular file")
        chunks, total = [], 0
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
            total += len(b)
            if total > max_bytes:
                raise error(f"{path}: larger than the {max_bytes}-byte limit of {what}")
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)
