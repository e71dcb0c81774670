"""Read and write TYDEX ``.tdx`` tire measurement files (TYDEX-Format, Release 1.3).

Reference: *TYDEX-Format: Description and Reference Manual, Release 1.3*, H.-J. Unrau
(Universitaet Karlsruhe) and J. Zamow (Porsche AG), 1997.  A file is a sequence of blocks,
each opened by a keyword line starting with ``**`` in column 1::

    **HEADER            name | description | value       (RELEASE, MEASID, SUPPLIER, DATE, ...)
    **COMMENTS          free text
    **CONSTANTS         name | description | unit | value           (test conditions)
    **MEASURCHANNELS    name | description | unit | factor | measurement offset | physical offset
    **MEASURDATA        one row per sample, one column per channel (blank separated)
    **MODEL...          model blocks (kept verbatim)
    **END

Fixed columns (1-based): name 1-10, description 11-40, unit 41-50, then value (51-) or, for
channels, conversion factor 51-60, measurement offset 61-70, physical offset 71-80.  Lines
starting with ``!`` are comments.  A channel's physical value is
``factor * (data - measurement offset) + physical offset`` in the channel's unit, which
:func:`channel` converts to SI (``deg`` -> rad, ``km/h`` -> m/s, ``kPa`` -> Pa, ``%`` -> 1, ...).
Standard channel names used here (TYDEX W-axis system, which is ISO-W: x forward, y left,
z up): ``LONGSLIP`` (kappa), ``SLIPANGL`` (alpha), ``INCLANGL`` (gamma), ``FZW``, ``FXW``,
``FYW``, ``MZW`` (aliases ``FX``, ``FY``, ``FZ``, ``MZ``).

:func:`read_tydex` parses a file into an immutable :class:`TydexFile` that keeps every
original line, so :func:`write_tydex` writes an unchanged file back byte for byte and a
changed one with the changed entries re-formatted in the fixed columns.
:func:`to_measurements` gives the arrays jaxtire.fit's ``MeasurementSet`` takes.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np

from jaxtire.validation import read_regular_file

__all__ = [
    "TydexError",
    "TydexEntry",
    "TydexChannel",
    "TydexFile",
    "read_tydex",
    "write_tydex",
    "channel",
    "to_measurements",
    "UNIT_TO_SI",
]

MAX_BYTES = 256 * 1024 * 1024
_WIDTHS = (10, 30, 10, 10, 10, 10)


class TydexError(ValueError):
    """A TYDEX file could not be read: the message names the file, line and field."""


#: SI factor -> the TYDEX unit strings (lower case) it converts: ``SI = factor * value``.
_SI_FACTORS: tuple[tuple[float, str], ...] = (
    (1.0, "- 1 rad n nm n.m m m/s rad/s pa s kg hz k"),
    (0.01, "%"),
    (math.pi / 180.0, "deg grad deg/s"),
    (1e-3, "mm ms"),
    (1e-2, "cm"),
    (1.0 / 3.6, "km/h kph"),
    (2.0 * math.pi / 60.0, "rpm 1/min"),
    (1e2, "mbar"),
    (1e3, "kn knm kpa"),
    (1e5, "bar"),
    (1e6, "mpa"),
    (6894.757293168361, "psi"),
)

#: TYDEX unit string (lower case) -> (factor, offset) so that SI = factor * value + offset: the units of
#: :data:`_SI_FACTORS` (no offset), no unit (``""``) and degrees Celsius (``degc``, ``c``: offset 273.15 K).
UNIT_TO_SI: dict[str, tuple[float, float]] = {
    "": (1.0, 0.0),
    **{unit: (factor, 0.0) for factor, units in _SI_FACTORS for unit in units.split()},
    **dict.fromkeys(("degc", "c"), (1.0, 273.15)),
}

#: jaxtire quantity -> accepted TYDEX channel names (first match wins).
CHANNEL_NAMES: dict[str, tuple[str, ...]] = {
    "kappa": ("LONGSLIP",),
    "alpha": ("SLIPANGL",),
    "gamma": ("INCLANGL",),
    "fz": ("FZW", "FZ"),
    "fx": ("FXW", "FX"),
    "fy": ("FYW", "FY"),
    "mz": ("MZW", "MZ"),
}


@dataclasses.dataclass(frozen=True)
class TydexEntry:
    """A header or constants line: ``value`` is the text (header) or the number's text (constants)."""

    name: str
    description: str = ""
    unit: str = ""
    value: str = ""
    raw: str | None = None  # the original line, None for entries made in Python


@dataclasses.dataclass(frozen=True)
class TydexChannel:
    """A measurement channel: physical value = ``factor * (data - meas_offset) + phys_offset`` [unit]."""

    name: str
    description: str = ""
    unit: str = ""
    factor: float = 1.0
    meas_offset: float = 0.0
    phys_offset: float = 0.0
    raw: str | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class TydexFile:
    """One TYDEX file: blocks in file order, header, comments, constants, channels and the data table.

    ``data`` has shape (samples, channels) and holds the numbers as written in the file (before
    factor and offsets).  ``blocks`` is the file's block order with each block's verbatim lines,
    used to write an unchanged file back identically.
    """

    header: tuple[TydexEntry, ...] = ()
    comments: tuple[str, ...] = ()
    constants: tuple[TydexEntry, ...] = ()
    channels: tuple[TydexChannel, ...] = ()
    data: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    blocks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str = ""
    _data_lines: tuple[str, ...] = ()
    _data_orig: np.ndarray | None = None

    def constant(self, name: str, si: bool = True):
        """The value of constant ``name`` (converted to SI unless ``si=False``), or ``None``."""
        for c in self.constants:
            if c.name.upper() == name.upper():
                v = float(c.value)
                return _to_si(v, c.unit, f"{self.source}: constant {c.name}") if si else v
        return None

    def header_value(self, name: str):
        for h in self.header:
            if h.name.upper() == name.upper():
                return h.value
        return None


def _to_si(v, unit: str, where: str):
    key = unit.strip().lower()
    if key not in UNIT_TO_SI:
        raise TydexError(f"{where}: unit {unit!r} is not known; known: {', '.join(sorted(k for k in UNIT_TO_SI if k))}")
    f, o = UNIT_TO_SI[key]
    return np.asarray(v, dtype=np.float64) * f + o if not isinstance(v, float) else v * f + o


def _cols(line: str, widths) -> list[str]:
    out, pos = [], 0
    for w in widths:
        out.append(line[pos : pos + w].strip())
        pos += w
    out.append(line[pos:].strip())
    return out


def _num(text: str, where: str) -> float:
    try:
        v = float(text.replace("D", "E").replace("d", "e"))
    except ValueError:
        raise TydexError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(v):
        raise TydexError(f"{where}: {text!r} is not finite")
    return v


def _read_text(path: Path, max_bytes: int) -> str:
    data = read_regular_file(path, max_bytes, "a TYDEX file", TydexError)
    if b"\x00" in data:
        raise TydexError(f"{path}: contains NUL bytes; not a text TYDEX file")
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark: the rest must be UTF-8
        try:
            return data[3:].decode("utf-8")
        except UnicodeDecodeError as e:
            raise TydexError(
                f"{path}: encoding: byte {e.start + 3} is not UTF-8 after a UTF-8 byte-order mark"
            ) from None
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_tydex(path, *, max_bytes: int = MAX_BYTES) -> TydexFile:
    """Parse a TYDEX ``.tdx`` file (see the module docstring); raises :class:`TydexError`."""
    path = Path(path)
    text = _read_text(path, max_bytes)
    lines = text.split("\n")
    blocks: list[tuple[str, list[str]]] = []
    for i, line in enumerate(lines):
        if line.startswith("**"):
            blocks.append((line, []))
        elif blocks:
            blocks[-1][1].append(line)
        elif line.strip() and not line.startswith("!"):
            raise TydexError(f"{path}, line {i + 1}: text before the first **KEYWORD: {line.strip()[:40]!r}")
        else:
            blocks.append(("", [line])) if not blocks else None
    names = [b[0][2:].strip().upper() for b in blocks]
    for need in ("HEADER", "END"):
        if need not in names:
            raise TydexError(f"{path}: no **{need} block; not a TYDEX file")
    header: list[TydexEntry] = []
    comments: list[str] = []
    constants: list[TydexEntry] = []
    channels: list[TydexChannel] = []
    rows: list[list[float]] = []
    row_lines: tuple[str, ...] = ()
    lineno = 1
    for (kw_line, body), name in zip(blocks, names, strict=True):
        lineno += 1 if kw_line else 0
        for j, line in enumerate(body):
            where = f"{path}, line {lineno + j}"
            s = line.rstrip("\r")
            if name == "COMMENTS":
                comments.append(s)
                continue
            if not s.strip() or s.lstrip().startswith("!"):
                continue
            if name == "HEADER":
                c = _cols(s, (10, 30))
                header.append(TydexEntry(c[0], c[1], "", c[2], raw=line))
            elif name == "CONSTANTS":
                c = _cols(s, (10, 30, 10))
                _num(c[3], f"{where}, constant {c[0]}")
                constants.append(TydexEntry(c[0], c[1], c[2], c[3], raw=line))
            elif name == "MEASURCHANNELS":
                c = _cols(s, _WIDTHS[:5])
                # blank factor / offset columns take the defaults 1, 0, 0 (_cols gives all six columns)
                factor, meas_offset, phys_offset = (
                    (_num(t, f"{where}, channel {c[0]}") if t else d)
                    for t, d in zip(c[3:6], (1.0, 0.0, 0.0), strict=True)
                )
                if factor == 0.0:
                    raise TydexError(f"{where}: channel {c[0]} has conversion factor 0")
                channels.append(TydexChannel(c[0], c[1], c[2], factor, meas_offset, phys_offset, raw=line))
            elif name == "MEASURDATA":
                toks = s.split()
                if len(toks) != len(channels):
                    raise TydexError(
                        f"{where}: {len(toks)} values, but **MEASURCHANNELS lists {len(channels)} channels"
                    )
                rows.append([_num(t, f"{where}, column {k + 1}") for k, t in enumerate(toks)])
        lineno += len(body)
        if name == "MEASURDATA":
            row_lines = tuple(body)
    dup = {c.name for c in channels if sum(d.name == c.name for d in channels) > 1}
    if dup:
        raise TydexError(f"{path}: channel(s) {', '.join(sorted(dup))} listed twice in **MEASURCHANNELS")
    data = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(channels))
    return TydexFile(
        tuple(header),
        tuple(comments),
        tuple(constants),
        tuple(channels),
        data,
        tuple((kw, tuple(body)) for kw, body in blocks),
        str(path),
        row_lines,
        data.copy(),
    )


def _fmt_num(v: float) -> str:
    r = repr(float(v))
    return r[:-2] if r.endswith(".0") and len(r) > 2 else r


def _line(fields, widths) -> str:
    out = "".join(f"{f:<{w}}" for f, w in zip(fields[:-1], widths, strict=True)) + fields[-1]
    return out.rstrip()


def render_tydex(t: TydexFile) -> str:
    """The text :func:`write_tydex` writes: original lines where nothing changed, fixed columns elsewhere."""
    out: list[str] = []
    blocks = t.blocks or tuple(
        (f"**{n}", ()) for n in ("HEADER", "COMMENTS", "CONSTANTS", "MEASURCHANNELS", "MEASURDATA", "END")
    )
    for kw, body in blocks:
        name = kw[2:].strip().upper()
        if kw:
            out.append(kw)
        if name == "HEADER":
            out.extend(_block_lines(body, t.header, lambda e: _line([e.name, e.description, e.value], (10, 30))))
        elif name == "COMMENTS":
            out.extend(t.comments if t.comments or not body else body)
        elif name == "CONSTANTS":
            out.extend(
                _block_lines(body, t.constants, lambda e: _line([e.name, e.description, e.unit, e.value], (10, 30, 10)))
            )
        elif name == "MEASURCHANNELS":
            out.extend(
                _block_lines(
                    body,
                    t.channels,
                    lambda c: _line(
                        [
                            c.name,
                            c.description,
                            c.unit,
                            _fmt_num(c.factor),
                            _fmt_num(c.meas_offset),
                            _fmt_num(c.phys_offset),
                        ],
                        _WIDTHS[:5],
                    ),
                )
            )
        elif name == "MEASURDATA":
            same = (
                t._data_orig is not None
                and t._data_orig.shape == np.shape(t.data)
                and np.array_equal(t._data_orig, t.data)
                and t._data_lines
            )
            if same:
                out.extend(t._data_lines)
            else:
                out.extend("".join(f"{_fmt_num(v):>{14}}" for v in row) for row in np.asarray(t.data))
                out.extend(ln for ln in body if not ln.strip())  # keep trailing blank lines
        else:
            out.extend(body)
    return "\n".join(out)


def _block_lines(body, items, fmt):
    """Original lines of a block with entries replaced where they changed (comments and blanks kept)."""
    raws = {it.raw for it in items if it.raw is not None}
    out, used = [], set()
    for ln in body:
        s = ln.rstrip("\r")
        if not s.strip() or s.lstrip().startswith("!"):
            out.append(ln)
            continue
        if ln in raws and ln not in used:
            out.append(ln)
            used.add(ln)
            continue
        # an original entry line that the caller removed or changed: replaced below
    if len(used) != len(items):
        out = [ln for ln in out if (not ln.strip()) or ln.lstrip().startswith("!")]
        trailing = []
        while out and not out[-1].strip():
            trailing.append(out.pop())
        out.extend(it.raw if it.raw is not None else fmt(it) for it in items)
        out.extend(trailing)
    return out


def write_tydex(t: TydexFile, path) -> None:
    """Write ``t`` to ``path`` (atomically); an unchanged parsed file is reproduced byte for byte."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(render_tydex(t).encode("latin-1"))
        os.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise


def channel(t: TydexFile, name: str, *, si: bool = True):
    """Physical values of channel ``name`` (``factor * (data - meas_offset) + phys_offset``).

    In SI ([m], [N], [N m], [rad], [m/s], [Pa]) by default, else in the channel's file unit;
    a float64 array of shape ``(n_samples,)``.
    """
    for k, c in enumerate(t.channels):
        if c.name.upper() == name.upper():
            with np.errstate(over="ignore", invalid="ignore"):
                v = c.factor * (np.asarray(t.data)[:, k] - c.meas_offset) + c.phys_offset
                v = _to_si(v, c.unit, f"{t.source}: channel {c.name}") if si else v
            if not np.all(np.isfinite(v)):
                raise TydexError(f"{t.source}: channel {c.name}: factor and offsets give non-finite values")
            return v
    return None


def to_measurements(t: TydexFile | str | os.PathLike):
    """The channels jaxtire.fit's ``MeasurementSet`` takes, in SI, as a dict of float64 arrays.

    Keys ``kappa, alpha, gamma, fz, fx, fy, mz``; a channel the file lacks is ``None``,
    except that ``kappa``, ``alpha``, ``gamma`` and ``fz`` fall back to a constant of the same
    name in ``**CONSTANTS`` (e.g. a constant inclination angle), broadcast to the sample count.
    """
    if not isinstance(t, TydexFile):
        t = read_tydex(t)
    n = np.shape(t.data)[0]
    out = {}
    for key, names in CHANNEL_NAMES.items():
        val = None
        for nm in names:
            val = channel(t, nm)
            if val is not None:
                break
        if val is None and key in ("kappa", "alpha", "gamma", "fz"):
            for nm in names:
                c = t.constant(nm)
                if c is not None:
                    val = np.full(n, c, dtype=np.float64)
                    break
        out[key] = None if val is None else np.asarray(val, dtype=np.float64)
    return out
