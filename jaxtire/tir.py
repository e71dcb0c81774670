"""Read and write TYDEX-style ``.tir`` Magic Formula property files.

Format (MF-Tyre / ADAMS property file)::

    [SECTION]
    NAME = value        $ comment
    NAME = 'string'     $ comment
    ! comment line      $---- comment line

Sections are in brackets, one ``NAME = value`` per line, ``$`` starts a
trailing comment, strings are single- or double-quoted, and a section may
hold a table (a ``{header}`` line followed by rows of numbers).  Units must
be SI (``[UNITS]`` meter / newton / radian(s) / kg / second).

:func:`load_tir` parses a file into :class:`~jaxtire.params.MFParams`;
coefficients the file omits take the MF defaults (zero, scaling factors one),
entries that are not model coefficients are kept verbatim as static metadata,
and keys no MF-Tyre / PAC2002 file defines are kept and reported with a
``UserWarning``.  A malformed line raises :class:`TirError` naming the file,
the line number and the text.  :func:`save_tir` writes a file that loads back
to identical values (shortest round-trip decimal for the leaves' dtype).
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from jaxtire.params import COEFFICIENT_NAMES, COEFFICIENT_SECTION, MFParams, make_params

_SECTION = re.compile(r"^\[\s*([A-Za-z0-9_]+)\s*\]\s*(?:\$.*)?$")
_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eEdD][+-]?\d+)?$")

_UNITS = {
    "LENGTH": ("meter", "m", "metre"),
    "FORCE": ("newton", "n"),
    "ANGLE": ("radian", "radians", "rad"),
    "MASS": ("kg", "kilogram"),
    "TIME": ("second", "sec", "s"),
}

#: Section order used when writing.
SECTION_ORDER = (
    "MDI_HEADER", "UNITS", "MODEL", "DIMENSION", "OPERATING_CONDITIONS", "INERTIA", "VERTICAL",
    "STRUCTURAL", "CONTACT_PATCH", "INFLATION_PRESSURE_RANGE", "VERTICAL_FORCE_RANGE",
    "LONG_SLIP_RANGE", "SLIP_ANGLE_RANGE", "INCLINATION_ANGLE_RANGE", "SCALING_COEFFICIENTS",
    "LONGITUDINAL_COEFFICIENTS", "OVERTURNING_COEFFICIENTS", "LATERAL_COEFFICIENTS",
    "ROLLING_COEFFICIENTS", "ALIGNING_COEFFICIENTS", "TURNSLIP_COEFFICIENTS",
)


class TirError(ValueError):
    """A ``.tir`` file could not be read: the message names the file, line and text."""


def _parse_value(rest: str):
    """Split ``value $comment`` into (raw value text, python value or None for a string)."""
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        q = rest[0]
        end = rest.find(q, 1)
        if end < 0:
            return None
        tail = rest[end + 1 :].strip()
        if tail and not tail.startswith("$"):
            return None
        return rest[: end + 1], rest[1:end]
    token = rest.split("$", 1)[0].strip()
    if not token or " " in token or "\t" in token:
        return None
    if _NUMBER.match(token):
        return token, float(token.replace("d", "e").replace("D", "e"))
    return token, token


def read_entries(path) -> list[tuple[int, str, str, str, object]]:
    """Parse a ``.tir`` file into ``(line number, section, key, raw text, value)`` records.

    Table lines (``{header}`` and numeric rows) have ``key == ""``.  Raises
    :class:`TirError` on the first malformed line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise TirError(f"{path}: cannot read: {e}") from None
    section = None
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s[0] in "$!#":
            continue
        m = _SECTION.match(s)
        if m:
            section = m.group(1).upper()
            continue
        m = _ENTRY.match(s)
        if m and section is not None:
            parsed = _parse_value(m.group(2))
            if parsed is None:
                raise TirError(f"{path}, line {lineno}: malformed value in line {line.strip()!r}")
            records.append((lineno, section, m.group(1).upper(), parsed[0], parsed[1]))
            continue
        body = s.split("$", 1)[0].strip()
        if section is not None and body.startswith("{") and body.endswith("}"):
            records.append((lineno, section, "", body, None))
            continue
        if section is not None and body and all(_NUMBER.match(t) for t in body.split()):
            records.append((lineno, section, "", body, None))
            continue
        where = "before any [SECTION]" if section is None else f"in [{section}]"
        raise TirError(f"{path}, line {lineno}: cannot parse line {where}: {line.strip()!r}")
    return records


def load_tir(path, *, dtype=None) -> MFParams:
    """Load a ``.tir`` file into validated :class:`MFParams` (float32 unless x64 or ``dtype`` says otherwise)."""
    path = Path(path)
    records = read_entries(path)
    values: dict[str, float] = {}
    meta = []
    seen: dict[tuple[str, str], int] = {}
    fittyp = 61
    for lineno, section, key, raw, value in records:
        if key:
            if (section, key) in seen:
                raise TirError(f"{path}, line {lineno}: duplicate key {key} in [{section}] "
                               f"(first on line {seen[section, key]})")
            seen[section, key] = lineno
        if key in COEFFICIENT_SECTION:
            if not isinstance(value, float):
                raise TirError(f"{path}, line {lineno}: {key} must be a number, got {raw!r}")
            values[key] = value
            continue
        if key == "FITTYP":
            if not isinstance(value, float) or value != int(value):
                raise TirError(f"{path}, line {lineno}: FITTYP must be an integer, got {raw!r}")
            fittyp = int(value)
            continue
        if section == "UNITS" and key in _UNITS:
            unit = str(value).strip().lower()
            if unit not in _UNITS[key]:
                raise TirError(f"{path}, line {lineno}: {key} unit {raw} is not supported; use {_UNITS[key][0]!r} (SI)")
        meta.append((section, key, raw))
    try:
        params = make_params(values, fittyp=fittyp, meta=tuple(meta), dtype=dtype, source=str(path))
    except ValueError as e:
        raise TirError(str(e)) from None
    unknown = params.unknown_keys()
    if unknown:
        warnings.warn(f"{path}: keys not defined by MF-Tyre/PAC2002 kept but unused: {', '.join(unknown)}",
                      UserWarning, stacklevel=2)
    return params


def _fmt(v) -> str:
    a = np.asarray(v)
    if a.ndim != 0:
        raise ValueError(f"save_tir writes one tire; got a batched coefficient of shape {a.shape}")
    x = a[()]
    if x == 0:
        return "0"
    if 1e-4 <= abs(x) < 1e8:
        return np.format_float_positional(x, unique=True, trim="-")
    return np.format_float_scientific(x, unique=True, trim="-")


def save_tir(params: MFParams, path) -> None:
    """Write ``params`` (one tire, not a batch) to ``path`` as a ``.tir`` file that loads back identically."""
    by_section: dict[str, list[str]] = {}
    for section, key, raw in params.meta:
        line = raw if not key else f"{key:<24} = {raw}"
        by_section.setdefault(section, []).append(line)
    model = by_section.setdefault("MODEL", [])
    model.insert(0, f"{'FITTYP':<24} = {params.fittyp}")
    by_section.setdefault("MDI_HEADER", []).extend(
        [] if any(k == "FILE_TYPE" for _, k, _ in params.meta) else ["FILE_TYPE                = 'tir'",
                                                                      "FILE_VERSION             = 3.0",
                                                                      "FILE_FORMAT              = 'ASCII'"])
    if not any(s == "UNITS" for s, _, _ in params.meta):
        by_section["UNITS"] = [f"{k:<24} = '{u[0]}'" for k, u in _UNITS.items()]
    for name in COEFFICIENT_NAMES:
        by_section.setdefault(COEFFICIENT_SECTION[name], []).append(f"{name:<24} = {_fmt(params.coef[name])}")
    order = list(SECTION_ORDER) + [s for s in by_section if s not in SECTION_ORDER]
    out = ["$ written by jaxtire.save_tir"]
    for section in order:
        if section in by_section:
            out.append(f"[{section}]")
            out.extend(by_section[section])
    tmp = Path(str(path) + ".tmp")
    tmp.write_text("\n".join(out) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def data_path(name: str = "TNO_car205_60R15.tir") -> Path:
    """Path of a ``.tir`` file bundled with jaxtire (default: the TNO 205/60 R15 MF 6.2 car tire)."""
    return Path(__file__).parent / "data" / name


def default_tire(*, dtype=None) -> MFParams:
    """The bundled default tire: TNO 205/60 R15 passenger-car tire, MF-Tyre 6.2 (FITTYP 62)."""
    return load_tir(data_path(), dtype=dtype)
