"""Read and write MF-Tyre / ADAMS ``.tir`` tire property files, strictly and faithfully.

Format (MF-Tyre, MFeval, ADAMS PAC2002)::

    [SECTION]                 $ comment
    NAME = value              $ inline comment
    NAME = 'string'
    NAME =                    (blank value: "not set", the key takes its default)
    ! comment line            $---- comment line
    {header}                  (a table inside [SHAPE], then rows of numbers)

Loading rules of :func:`load_tir` (each violation raises :class:`TirError`, a ``ValueError``,
naming the file, the line and the key):

1. Only regular files are opened (a FIFO, device or directory is refused *before* opening for
   reading, so nothing blocks), of at most ``max_bytes`` (1 MiB) and 20 000 lines.  UTF-8 with or without a
   byte-order mark; other bytes are read as Latin-1; NUL bytes are refused.
2. Every line is a blank/comment line, a ``[SECTION]`` header, a ``KEY = value`` entry or a
   table line of a table section; a misbracketed header (``{DIMENSION}``) is an error.
3. A key appears once per file (any section); a model coefficient sits in its own section.
4. ``[UNITS]`` is honoured: LENGTH, FORCE, MASS, TIME, PRESSURE in a known unit are
   converted to SI (meter/mm/cm/km/inch, newton/kN, kg/g/tonne, second/ms/minute/hour,
   pascal/kPa/MPa/bar/psi); a unit of an entry whose dimension jaxtire does not know is
   refused, and so is an ANGLE other than radian (MF coefficients are per radian).
5. Every number is finite once stored in the params dtype (``1e39`` is refused in float32)
   and lies in its plausibility range (:mod:`jaxtire.bounds`, one table; ``bounds=`` overrides
   it per key for exotic tires).
6. The keys of :data:`jaxtire.bounds.REQUIRED` (the MF 5.2 core set and LONGVL, VXLOW; MF 6.x adds PKY4-7, PEY5, NOMPRES)
   must be present; other coefficients take the
   MFeval defaults, listed in ``params.meta.defaults_used`` and in a ``UserWarning``.
7. The dialect: ``FITTYP`` when present (61/62: MF 6.1/6.2; 5, 6, 21, 52: MF 5.2 / PAC2002);
   without it ``PROPERTY_FILE_FORMAT`` (``'PAC2002'``, ``'MF_05'``, ...) and then the
   coefficient set: MF 6.x-only keys such as ``PKY4`` or ``PPX1`` mean MF 6.x, MF 6.2 where one of the
   MF 6.2-only vertical keys (:data:`MF62_ONLY_KEYS`: ``Q_FCY2``, ``Q_CAM1-3``, ``Q_FYS1-3``) is
   non-zero, else MF 6.1; a warning names the version assumed and why.  ``[TIRE_CONDITIONS]``
   ``IP`` / ``IP_NOM`` give ``INFLPRES`` / ``NOMPRES``.  ``[SHAPE]`` tables are kept.
8. The tire is evaluated on a small grid incl. ``Fz = 0`` (:data:`jaxtire.bounds.SANITY_LOADS`):
   forces finite, ``|F| <= 5 Fz``, ISO-W signs (``check_forces=False`` skips this).

The params' static ``meta`` is a :class:`TirMeta`: the ``(section, key, raw text)`` triples of
the non-coefficient entries plus the whole document, so :func:`save_tir` reproduces the file
line for line, writing only changed values (in place, keeping the inline comment) and only
keys the user changed.  Params built without a file are written as a complete canonical file.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from pathlib import Path
from typing import cast

import jax
import numpy as np

from jaxtire import bounds as _bounds
from jaxtire.limits import OutOfRangeWarning
from jaxtire.mf61 import mf_forces
from jaxtire.params import COEFFICIENT_SECTION, FITTYP_MF52, FITTYP_MF61, KNOWN_TIR_KEYS, MFParams, make_params
from jaxtire.tir_format import TirDocument, TirError, TirLine, parse_document, parse_number
from jaxtire.validation import ValidationError, check_finite, check_int, check_range, read_regular_file

__all__ = [
    "TirError",
    "TirMeta",
    "load_tir",
    "save_tir",
    "read_document",
    "data_path",
    "default_tire",
    "MAX_BYTES",
    "SECTION_ORDER",
    "UNIT_FACTORS",
]

#: Largest file :func:`load_tir` reads (real files are 10-40 kB).
MAX_BYTES = 1024 * 1024

#: Section order of a canonical file written without a source document.
SECTION_ORDER = (
    "MDI_HEADER",
    "UNITS",
    "MODEL",
    "DIMENSION",
    "OPERATING_CONDITIONS",
    "INERTIA",
    "VERTICAL",
    "STRUCTURAL",
    "CONTACT_PATCH",
    "INFLATION_PRESSURE_RANGE",
    "VERTICAL_FORCE_RANGE",
    "LONG_SLIP_RANGE",
    "SLIP_ANGLE_RANGE",
    "INCLINATION_ANGLE_RANGE",
    "SCALING_COEFFICIENTS",
    "LONGITUDINAL_COEFFICIENTS",
    "OVERTURNING_COEFFICIENTS",
    "LATERAL_COEFFICIENTS",
    "ROLLING_COEFFICIENTS",
    "ALIGNING_COEFFICIENTS",
    "TURNSLIP_COEFFICIENTS",
)

#: [UNITS] quantity -> unit name (lower case) -> factor to SI.
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "LENGTH": {
        "meter": 1.0,
        "meters": 1.0,
        "metre": 1.0,
        "m": 1.0,
        "mm": 1e-3,
        "millimeter": 1e-3,
        "millimetre": 1e-3,
        "cm": 1e-2,
        "centimeter": 1e-2,
        "km": 1e3,
        "kilometer": 1e3,
        "inch": 0.0254,
        "in": 0.0254,
        "foot": 0.3048,
        "ft": 0.3048,
    },
    "FORCE": {
        "newton": 1.0,
        "n": 1.0,
        "kn": 1e3,
        "kilonewton": 1e3,
        "kilo_newton": 1e3,
        "lbf": 4.4482216152605,
        "pound_force": 4.4482216152605,
    },
    "ANGLE": {"radian": 1.0, "radians": 1.0, "rad": 1.0},
    "MASS": {
        "kg": 1.0,
        "kilogram": 1.0,
        "g": 1e-3,
        "gram": 1e-3,
        "tonne": 1e3,
        "ton": 1e3,
        "lbm": 0.45359237,
        "pound_mass": 0.45359237,
    },
    "TIME": {
        "second": 1.0,
        "seconds": 1.0,
        "sec": 1.0,
        "s": 1.0,
        "millisecond": 1e-3,
        "ms": 1e-3,
        "minute": 60.0,
        "min": 60.0,
        "hour": 3600.0,
        "h": 3600.0,
    },
    "PRESSURE": {
        "pascal": 1.0,
        "pa": 1.0,
        "kpa": 1e3,
        "kilopascal": 1e3,
        "mpa": 1e6,
        "bar": 1e5,
        "psi": 6894.757293168361,
        "n/m2": 1.0,
        "n/m^2": 1.0,
    },
}
_ANGLE_UNITS_REFUSED = ("degree", "degrees", "deg")

# Dimensions (exponents of LENGTH, FORCE, MASS, TIME, PRESSURE) of entries that have one.
# Every other MF coefficient is dimensionless in these quantities (loads enter as Fz/Fz0,
# moments as Fz R0, speeds as V/LONGVL), so only these convert.  Angle-valued entries
# (ALPMIN, CAMMAX, ...) are listed with no L/F/M/T dimension.
_L, _F, _M, _T, _P = range(5)


def _dim(**e) -> tuple[int, int, int, int, int]:
    return tuple(e.get(k, 0) for k in ("L", "F", "M", "T", "P"))


_NONE = _dim()
DIMENSIONS: dict[str, tuple[int, ...]] = {
    "FNOMIN": _dim(F=1),
    "FZMIN": _dim(F=1),
    "FZMAX": _dim(F=1),
    "UNLOADED_RADIUS": _dim(L=1),
    "WIDTH": _dim(L=1),
    "RIM_RADIUS": _dim(L=1),
    "RIM_WIDTH": _dim(L=1),
    "BOTTOMING_RADIUS": _dim(L=1),
    "BOTTOM_OFFST": _dim(L=1),
    "ROAD_INCREMENT": _dim(L=1),
    "LONGVL": _dim(L=1, T=-1),
    "VXLOW": _dim(L=1, T=-1),
    "NOMPRES": _dim(P=1),
    "INFLPRES": _dim(P=1),
    "PRESMIN": _dim(P=1),
    "PRESMAX": _dim(P=1),
    "IP": _dim(P=1),
    "IP_NOM": _dim(P=1),
    "MASS": _dim(M=1),
    "BELT_MASS": _dim(M=1),
    "MBELT": _dim(M=1),
    "IXX": _dim(M=1, L=2),
    "IYY": _dim(M=1, L=2),
    "BELT_IXX": _dim(M=1, L=2),
    "BELT_IYY": _dim(M=1, L=2),
    "VERTICAL_STIFFNESS": _dim(F=1, L=-1),
    "LONGITUDINAL_STIFFNESS": _dim(F=1, L=-1),
    "LATERAL_STIFFNESS": _dim(F=1, L=-1),
    "BOTTOM_STIFF": _dim(F=1, L=-1),
    "VERTICAL_DAMPING": _dim(F=1, L=-1, T=1),
    "YAW_STIFFNESS": _dim(F=1, L=1),
    "GRAVITY": _dim(L=1, T=-2),
    "HMAX_LOCAL": _dim(T=1),
    "TIME_SWITCH_INTEG": _dim(T=1),
    "FREQ_LONG": _dim(T=-1),
    "FREQ_LAT": _dim(T=-1),
    "FREQ_YAW": _dim(T=-1),
    "FREQ_WINDUP": _dim(T=-1),
    **{
        k: _NONE
        for k in (
            "ALPMIN",
            "ALPMAX",
            "CAMMIN",
            "CAMMAX",
            "KPUMIN",
            "KPUMAX",
            "FILE_VERSION",
            "USE_MODE",
            "N_TIRE_STATES",
            "USER_SUB_ID",
            "ROAD_DIRECTION",
            "ASPECT_RATIO",
            "SWITCH_INTEG",
            "FITTYP",
        )
    },
}

#: Sections a coefficient may also sit in besides its home section (files in circulation).
ALT_SECTIONS: dict[str, tuple[str, ...]] = {
    "LONGVL": ("MODEL",),
    "VXLOW": ("MODEL",),
    "INFLPRES": ("OPERATING_CONDITIONS", "TIRE_CONDITIONS"),
    "NOMPRES": ("OPERATING_CONDITIONS", "TIRE_CONDITIONS"),
    "FNOMIN": ("VERTICAL",),
    "UNLOADED_RADIUS": ("DIMENSION",),
}
#: Keys whose value is text (quoted or not); every other key jaxtire knows must be a number.
STRING_KEYS = frozenset(
    {
        "FILE_TYPE",
        "FILE_FORMAT",
        "TYRESIDE",
        "PROPERTY_FILE_FORMAT",
        "FUNCTION_NAME",
        "BELT_DYNAMICS",
        "CONTACT_MODEL",
        "FE_METHOD",
        "LOCAL_SOLVER",
        "LOCAL_SOLVER_HP",
    }
)

#: Home section of the non-coefficient keys of MF-Tyre / MFeval / PAC2002 files (each sits in
#: exactly this section in every real file we have); a known key elsewhere is an error.
META_SECTIONS: dict[str, str] = {
    k: sec
    for sec, keys in {
        "MDI_HEADER": "FILE_FORMAT FILE_TYPE FILE_VERSION",
        "MODEL": "BELT_DYNAMICS CONTACT_MODEL FE_METHOD FITTYP FUNCTION_NAME HMAX_LOCAL LOCAL_SOLVER LOCAL_SOLVER_HP "
        "N_TIRE_STATES PROPERTY_FILE_FORMAT ROAD_DIRECTION ROAD_INCREMENT SWITCH_INTEG TIME_SWITCH_INTEG "
        "TYRESIDE USER_SUB_ID USE_MODE",
        "DIMENSION": "ASPECT_RATIO BOTTOMING_RADIUS RIM_RADIUS RIM_WIDTH WIDTH",
        "INERTIA": "BELT_IXX BELT_IYY BELT_MASS GRAVITY IXX IYY MASS",
        "VERTICAL": "BOTTOM_OFFST BOTTOM_STIFF BREFF DREFF DYNAMIC_DAMPING DYNAMIC_STIFFNESS FREFF MC_CONTOUR_A "
        "MC_CONTOUR_B PFZ1 Q_CAM Q_CAM1 Q_CAM2 Q_CAM3 Q_FCX Q_FCY Q_FCY2 Q_FYS1 Q_FYS2 Q_FYS3 Q_FZ2 Q_RE0 "
        "Q_V1 Q_V2 VERTICAL_DAMPING VERTICAL_STIFFNESS",
        "STRUCTURAL": "DAMP_LAT DAMP_LONG DAMP_RESIDUAL DAMP_VLOW DAMP_WINDUP DAMP_YAW FREQ_LAT FREQ_LONG FREQ_WINDUP "
        "FREQ_YAW LATERAL_STIFFNESS LONGITUDINAL_STIFFNESS PCFX1 PCFX2 PCFX3 PCFY1 PCFY2 PCFY3 PCMZ1 "
        "Q_BVT Q_BVX YAW_STIFFNESS",
        "CONTACT_PATCH": "ELLIPS_HEIGHT ELLIPS_LENGTH ELLIPS_MAX_STEP ELLIPS_NLENGTH ELLIPS_NWIDTH ELLIPS_ORDER "
        "ELLIPS_SHIFT ENV_C1 ENV_C2 Q_RA1 Q_RA2 Q_RB1 Q_RB2",
        "INFLATION_PRESSURE_RANGE": "PRESMAX PRESMIN",
        "VERTICAL_FORCE_RANGE": "FZMAX FZMIN",
        "LONG_SLIP_RANGE": "KPUMAX KPUMIN",
        "SLIP_ANGLE_RANGE": "ALPMAX ALPMIN",
        "INCLINATION_ANGLE_RANGE": "CAMMAX CAMMIN",
        "SCALING_COEFFICIENTS": "LCZ LGYR LIP LKG LSGAL LSGKP",
        "LONGITUDINAL_COEFFICIENTS": "PTX1 PTX2 PTX3 PTX4",
        "LATERAL_COEFFICIENTS": "PTY1 PTY2 PTY3",
        "OVERTURNING_COEFFICIENTS": "QPX1",
        "ALIGNING_COEFFICIENTS": "MBELT QPZ1 QPZ2 QTZ1",
        "TIRE_CONDITIONS": "IP IP_NOM",
        "TURNSLIP_COEFFICIENTS": "PDXP1 PDXP2 PDXP3 PDYP1 PDYP2 PDYP3 PDYP4 PECP1 PECP2 PHYP1 PHYP2 PHYP3 PHYP4 "
        "PKYP1 QBRP1 QCRP1 QCRP2 QDRP1 QDTP1",
    }.items()
    for k in keys.split()
}
#: [TIRE_CONDITIONS] keys of PAC2002 files -> the coefficient they give.
ALIASES = {"IP": "INFLPRES", "IP_NOM": "NOMPRES"}

#: PROPERTY_FILE_FORMAT values that mean MF 5.2 / PAC2002 equations.
PAC2002_FORMATS = ("PAC2002", "MF_05", "MF05", "MF52", "MF_52", "PAC_TIME", "PAC2002_TIME")
#: Keys only MF 6.1 / 6.2 define (their presence without FITTYP means MF 6.1).
MF6_ONLY_KEYS = frozenset(
    {
        "PKY4",
        "PKY5",
        "PKY6",
        "PKY7",
        "PEY5",
        "PPX1",
        "PPX2",
        "PPX3",
        "PPX4",
        "PPY1",
        "PPY2",
        "PPY3",
        "PPY4",
        "PPY5",
        "PPZ1",
        "PPZ2",
        "PPMX1",
        "QSX12",
        "QSX13",
        "QSX14",
        "NOMPRES",
        "INFLPRES",
        "LKYC",
        "LKZC",
    }
)
#: MF 6.x-only coefficients the PAC2002 equations lack, with the value that means "absent".
PAC2002_UNUSED = {
    "PKY4": 2.0,
    "PKY5": 0.0,
    "PKY6": 0.0,
    "PKY7": 0.0,
    "PEY5": 0.0,
    "PPZ1": 0.0,
    "PPZ2": 0.0,
    "PPMX1": 0.0,
    "LKYC": 1.0,
    "LKZC": 1.0,
}
# Defaults not worth a warning: coefficients the dialect's equations do not have (MF 5.2-only camber
# scalings in MF 6.x, MF 6.x-only terms in PAC2002) and LMUV (speed decay, rarely in files; 0 = none).
_QUIET_MF6 = frozenset({"LGAX", "LGAY", "LGAZ", "PHY3", "LMUV"})
_QUIET_MF52 = MF6_ONLY_KEYS | {
    "LMUV",
    "RBX3",
    "RBY4",
    "QSX4",
    "QSX5",
    "QSX6",
    "QSX7",
    "QSX8",
    "QSX9",
    "QSX10",
    "QSX11",
    "QSY5",
    "QSY6",
    "QSY7",
    "QSY8",
    "QDZ10",
    "QDZ11",
    "LMP",
}
#: Sections whose keys are optional model extensions (vertical model, structure, contact patch,
#: turn slip, validity ranges, dimensions): their MFeval defaults are recorded in
#: ``meta.defaults_used`` but not warned about, as most published files omit some of them.
_QUIET_SECTIONS = frozenset(
    {
        "VERTICAL",
        "STRUCTURAL",
        "CONTACT_PATCH",
        "TURNSLIP_COEFFICIENTS",
        "DIMENSION",
        "INFLATION_PRESSURE_RANGE",
        "VERTICAL_FORCE_RANGE",
        "LONG_SLIP_RANGE",
        "SLIP_ANGLE_RANGE",
        "INCLINATION_ANGLE_RANGE",
    }
)
_QUIET_OPTIONAL = frozenset({"LSGKP", "LSGAL", "PTX1", "PTX2", "PTX3", "PTY1", "PTY2"})
#: FITTYP assigned to a PAC2002 / MF 5.2 file that has none (MFeval: 6 and 21 are MF 5.2).
PAC2002_FITTYP = 6


class TirMeta(tuple):
    """Static metadata of params loaded from a file: the ``(section, key, raw)`` triples (the tuple
    itself, as :attr:`MFParams.meta` always was) plus the file's document model.

    Attributes: ``document`` (:class:`~jaxtire.tir_format.TirDocument`), ``origin`` (coefficient ->
    (line index, factor to SI)), ``loaded`` (coefficient -> value as loaded, for change detection),
    ``defaults_used`` (coefficients the file lacked), ``dialect`` (e.g. ``"MF 6.2"``, ``"PAC2002"``),
    ``fittyp_declared`` (``FITTYP`` in the file or ``None``).  Equality and hash are the triples'.
    """

    document: TirDocument | None
    origin: dict[str, tuple[int, float]]
    loaded: dict[str, float]
    defaults_used: tuple[str, ...]
    dialect: str
    fittyp_declared: int | None

    def __new__(
        cls, triples=(), document=None, origin=(), loaded=(), defaults_used=(), dialect="", fittyp_declared=None
    ):
        self = super().__new__(cls, triples)
        self.document = document
        self.origin = dict(origin)
        self.loaded = dict(loaded)
        self.defaults_used = tuple(defaults_used)
        self.dialect = dialect
        self.fittyp_declared = fittyp_declared
        return self

    def __reduce__(self):
        return (
            TirMeta,
            (
                tuple(self),
                self.document,
                tuple(self.origin.items()),
                tuple(self.loaded.items()),
                self.defaults_used,
                self.dialect,
                self.fittyp_declared,
            ),
        )


# ----------------------------------------------------------------------------- reading


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    """The file's bytes; non-regular files and files over ``max_bytes`` are refused before reading."""
    return read_regular_file(path, max_bytes, "a .tir file", TirError)


def read_document(path, *, max_bytes: int = MAX_BYTES) -> TirDocument:
    """Read and classify every line of a ``.tir`` file (no value checks; see :func:`load_tir`)."""
    path = Path(path)
    data = _read_bytes(path, max_bytes)
    if b"\x00" in data:
        raise TirError(f"{path}: contains NUL bytes; not a text .tir file")
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text, enc = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, enc = data.decode("latin-1"), "latin-1"
    return parse_document(text, source=str(path), bom=bom, encoding=enc)


def _unquote(raw: str):
    if raw[:1] in ("'", '"'):
        return raw[1:-1]
    return None


def _err(path, ln, msg):
    return TirError(
        f"{path}, line {ln.lineno}, {ln.key or ''}{' in [' + ln.section + ']' if ln.section else ''}: {msg}"
    )


def _fmt(x, dtype) -> str:
    """Shortest decimal text that reads back to ``x`` in ``dtype``."""
    # a numpy scalar of ``dtype`` (not a Python float), so the shortest text is that dtype's
    v = cast(np.floating, np.asarray(x, dtype=dtype)[()])
    if v == 0:
        return "0"
    if 1e-4 <= abs(v) < 1e8:
        return np.format_float_positional(v, unique=True, trim="-")
    return np.format_float_scientific(v, unique=True, trim="-")


def _units(path, doc: TirDocument) -> dict[str, float]:
    """[UNITS] quantity -> factor to SI (missing quantities are SI)."""
    factors = {}
    for ln in doc.entries():
        if ln.section != "UNITS":
            continue
        name = _unquote(ln.value_text)
        if name is None:
            name = ln.value_text
        if ln.value_text == "":
            continue
        if parse_number(name) is not None:
            raise _err(path, ln, f"a unit must be a name such as 'meter', got {ln.value_text}")
        unit = name.strip().lower()
        if ln.key == "ANGLE" and unit in _ANGLE_UNITS_REFUSED:
            raise _err(
                path,
                ln,
                f"ANGLE unit {ln.value_text} is not supported: MF coefficients are defined per "
                f"radian; convert the file to ANGLE = 'radian'",
            )
        if ln.key not in UNIT_FACTORS:
            raise _err(path, ln, f"unit quantity {ln.key} is not supported (known: {', '.join(UNIT_FACTORS)})")
        table = UNIT_FACTORS[ln.key]
        if unit not in table:
            raise _err(path, ln, f"{ln.key} unit {ln.value_text} is not supported; known: {', '.join(sorted(table))}")
        factors[ln.key] = table[unit]
    return factors


def _si_factor(key: str, factors: dict[str, float]):
    """Factor from file units to SI for ``key``, or ``None`` if its dimension is unknown and units are not SI."""
    dim = DIMENSIONS.get(key)
    if dim is None:
        if key in COEFFICIENT_SECTION or key in KNOWN_TIR_KEYS:
            return 1.0  # MF / MF-Swift coefficients are normalised (by Fz0, R0, LONGVL): dimensionless
        nonsi = any(abs(f - 1.0) > 0 for q, f in factors.items() if q != "ANGLE")
        return None if nonsi else 1.0
    f = 1.0
    for q, e in zip(("LENGTH", "FORCE", "MASS", "TIME", "PRESSURE"), dim, strict=True):
        if e:
            f *= factors.get(q, 1.0) ** e
    return f


#: Keys only MF 6.2 uses (the vertical force's lateral-force, camber and combined terms): a file without FITTYP
#: that sets any of them non-zero is MF 6.2 (an MF 6.1 evaluation would ignore them).
MF62_ONLY_KEYS = ("Q_FCY2", "Q_CAM1", "Q_CAM2", "Q_CAM3", "Q_FYS1", "Q_FYS2", "Q_FYS3")


def _nonzero_entry(ln) -> bool:
    try:
        v = parse_number(ln.value_text)
    except (TypeError, ValueError):
        return False  # unreadable: the value check reports it
    return v is not None and v != 0.0


def _detect_fittyp(path, entries: dict, doc) -> tuple[int, str, int | None]:
    """(fittyp, dialect name, declared FITTYP or None)."""
    allowed = FITTYP_MF61 + FITTYP_MF52
    if "FITTYP" in entries:
        ln = entries["FITTYP"]
        if ln.section != "MODEL":
            raise _err(path, ln, f"FITTYP belongs in [MODEL], found in [{ln.section}]")
        try:
            if parse_number(ln.value_text) is None:  # float() alone would take "6_1" or " nan"
                raise ValidationError("not a number")
            v = check_int("FITTYP", parse_number(ln.value_text), source=str(path))
        except ValidationError:
            raise _err(path, ln, f"FITTYP must be one of {allowed}, got {ln.value_text!r}") from None
        if v not in allowed:
            raise _err(
                path,
                ln,
                f"FITTYP = {v} is not supported; allowed {allowed} (61/62: MF 6.1/6.2; 5, 6, 21, 52: MF 5.2 / PAC2002)",
            )
        name = {61: "MF 6.1", 62: "MF 6.2"}.get(v, "MF 5.2 / PAC2002")
        return v, name, v
    pff = entries.get("PROPERTY_FILE_FORMAT")
    fmt = (_unquote(pff.value_text) or pff.value_text).strip().upper() if pff is not None else ""
    if fmt in PAC2002_FORMATS:
        return PAC2002_FITTYP, "PAC2002", None
    if pff is not None and fmt and fmt not in ("USER", "MF_61", "MF61", "MF_62", "MF62", "MF-TYRE", "MFTYRE"):
        raise _err(
            path,
            pff,
            f"PROPERTY_FILE_FORMAT {pff.value_text} without FITTYP is not a Magic Formula "
            f"dialect jaxtire evaluates (PAC2002, MF 5.2, MF 6.1, MF 6.2)",
        )
    if any(k in MF6_ONLY_KEYS for k in entries):
        set62 = [k for k in MF62_ONLY_KEYS if k in entries and _nonzero_entry(entries[k])]
        if set62:
            why = f"it sets the MF 6.2-only vertical keys {', '.join(set62)}"
            fittyp, name = 62, "MF 6.2"
        else:
            why = f"it has MF 6.x keys and none of the MF 6.2-only keys ({', '.join(MF62_ONLY_KEYS)}) is non-zero"
            fittyp, name = 61, "MF 6.1"
        warnings.warn(f"{path}: no FITTYP; read as {name} (FITTYP {fittyp}) because {why}", UserWarning, stacklevel=3)
        return fittyp, f"{name} (no FITTYP; from the coefficient set)", None
    raise TirError(
        f"{path}: no FITTYP and no PROPERTY_FILE_FORMAT, and the coefficient set is not MF 6.x; "
        f"add FITTYP (61/62 for MF 6.1/6.2, 6 for MF 5.2 / PAC2002)"
    )


def load_tir(path, *, dtype=None, bounds=None, check_forces: bool = True, max_bytes: int = MAX_BYTES) -> MFParams:
    """Load a ``.tir`` file into validated :class:`~jaxtire.params.MFParams` (rules: module docstring).

    Args:
      path: the file.
      dtype: leaf dtype (default float32, float64 under ``jax_enable_x64``); values must be finite in it.
      bounds: per-key overrides of :data:`jaxtire.bounds.BOUNDS`, ``{"PDX1": (0.0, 8.0)}``; ``None`` as a
        range lifts the check for that key.
      check_forces: evaluate the tire on a small grid incl. ``Fz = 0`` and refuse NaN/inf, ``|F| > 5 Fz``
        or the wrong ISO-W sign.
      max_bytes: size limit.

    Returns:
      params whose ``meta`` is a :class:`TirMeta` (document, defaults used, dialect); every
      dimensional value converted to SI ([m], [N], [kg], [s], [Pa]; angles [rad]) from the file's
      ``[UNITS]``, coefficients dimensionless as in the file; scalar leaves of ``dtype``.

    Raises:
      TirError: naming the file, line, key, value and allowed range.
    """
    path = Path(path)
    # the dtype the leaves will really have (float64 without jax_enable_x64 is stored as float32)
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(dtype or np.float64))
    doc = read_document(path, max_bytes=max_bytes)
    lines = doc.lines
    index = {id(ln): i for i, ln in enumerate(lines)}
    entries: dict[str, TirLine] = {}
    for ln in doc.entries():
        if ln.section == "UNITS":
            continue  # [UNITS] names quantities (MASS, TIME), not values; its own namespace
        if ln.key in entries:
            first = entries[ln.key]
            raise _err(path, ln, f"duplicate key {ln.key} (first on line {first.lineno} in [{first.section}])")
        entries[ln.key] = ln
    if not entries:
        raise TirError(f"{path}: no entries; not a tire property file")
    factors = _units(path, doc)
    fittyp, dialect, declared = _detect_fittyp(path, entries, doc)

    values: dict[str, float] = {}
    origin: dict[str, tuple[int, float]] = {}
    triples = []
    for ln in doc.lines:
        if ln.kind == "table":
            triples.append((ln.section, "", ln.text.split("$", 1)[0].strip()))
            continue
        if ln.kind != "entry" or ln.section == "UNITS" or ln.key == "FITTYP" or ln.key is None:
            continue  # (an entry line always has a key; the last test narrows the type)
        raw = ln.value_text
        if raw == "":
            continue  # blank value: not set
        key: str = ln.key
        home = META_SECTIONS.get(key)
        if home is not None and ln.section != home:
            raise _err(path, ln, f"{key} belongs in [{home}], found in [{ln.section}]")
        target = ALIASES.get(key) if ln.section == "TIRE_CONDITIONS" else None
        coef = target or (key if key in COEFFICIENT_SECTION else None)
        num = parse_number(raw)
        if coef is None:
            if num is None:
                if key in KNOWN_TIR_KEYS and key not in STRING_KEYS:
                    raise _err(path, ln, f"{key} must be a number, got {raw!r}")
                triples.append((ln.section, key, raw))
                continue
        elif num is None:
            raise _err(path, ln, f"{key} must be a number, got {raw!r}")
        if coef is not None and target is None:
            home = COEFFICIENT_SECTION[key]
            if ln.section != home and ln.section not in ALT_SECTIONS.get(key, ()):
                raise _err(path, ln, f"{key} belongs in [{home}], found in [{ln.section}]")
        if coef is not None and target is not None and target in entries:
            raise _err(path, ln, f"{key} gives {target}, which the file also sets on line {entries[target].lineno}")
        factor = _si_factor(key, factors)
        if factor is None:
            raise _err(
                path,
                ln,
                f"the unit of {key} is not known to jaxtire, so it cannot be converted from the "
                f"file's [UNITS] ({', '.join(f'{q}' for q, f in factors.items() if f != 1.0)} not SI)",
            )
        v = num * factor
        try:
            check_finite(key, v, source=f"{path}, line {ln.lineno}", dtype=dtype)
        except ValidationError as e:
            raise TirError(str(e) + f" (in [{ln.section}])") from None
        rng = _bounds.bound_for(coef or key, coef is not None, bounds)
        if rng is not None:
            try:
                check_range(key, v, rng[0], rng[1], source=f"{path}, line {ln.lineno}", dtype=dtype)
            except ValidationError as e:
                raise TirError(
                    f"{e} (file text {raw!r} in [{ln.section}]{'; SI after [UNITS]' if factor != 1.0 else ''}"
                    f"); if this exotic tire really has it, pass bounds={{'{coef or key}': (lo, hi)}} "
                    f"to load_tir"
                ) from None
        stored = float(np.asarray(v, dtype=dtype))
        if v != 0 and stored == 0 and (coef or key) in _bounds.BOUNDS and _bounds.BOUNDS[coef or key][0] > 0:
            raise _err(path, ln, f"{key} = {raw} underflows to 0 in {dtype.name}")
        if coef is not None:
            values[coef] = v
            origin[coef] = (index[id(ln)], factor)
        else:
            plain = factor == 1.0 and "d" not in raw.lower()  # Python's float() reads it as written
            triples.append((ln.section, key, raw if plain else repr(v)))

    if fittyp in FITTYP_MF52:
        extra = [k for k in PAC2002_UNUSED if values.get(k, PAC2002_UNUSED[k]) != PAC2002_UNUSED[k]]
        if extra:
            ln = doc.lines[origin[extra[0]][0]]
            raise _err(
                path,
                ln,
                f"{extra[0]} = {ln.value_text} has no term in the MF 5.2 / PAC2002 equations this "
                f"{dialect} file declares; it cannot be evaluated faithfully (set FITTYP = 61/62 "
                f"if the file is MF 6.x)",
            )
    if fittyp in FITTYP_MF61 and "PKY5" in values and "PKY2" in values:
        g2 = _bounds.CAMBER_LIMIT**2
        if values["PKY2"] + values["PKY5"] * g2 <= 0:
            ln = doc.lines[origin["PKY5"][0]]
            raise _err(
                path,
                ln,
                f"PKY2 + PKY5 gamma^2 (the load at peak Kya) must stay > 0 for |gamma| <= "
                f"{_bounds.CAMBER_LIMIT} rad; PKY2 = {values['PKY2']}, PKY5 = {values['PKY5']}",
            )
    required = _bounds.REQUIRED + (_bounds.REQUIRED_MF6 if fittyp in FITTYP_MF61 else ())
    missing = [k for k in required if k not in values]
    if missing:
        shown = ", ".join(missing[:15]) + (f" and {len(missing) - 15} more" if len(missing) > 15 else "")
        raise TirError(
            f"{path}: required key(s) missing or blank: {shown} "
            f"({dialect}; see jaxtire.bounds.REQUIRED for why each is needed)"
        )
    try:
        params = make_params(values, fittyp=fittyp, meta=tuple(triples), dtype=dtype, source=str(path))
    except ValueError as e:
        raise TirError(f"{path}: {e}") from None
    present = set(values) | {k for _, k, _ in triples if k}  # (make_params may take keys from meta)
    defaults_used = tuple(k for k in params.coef if k not in present)
    loaded = {k: np.asarray(v, dtype=np.float64).copy() for k, v in params.coef.items()}
    meta = TirMeta(
        params.meta,
        document=doc,
        origin=origin,
        loaded=loaded,
        defaults_used=defaults_used,
        dialect=dialect,
        fittyp_declared=declared,
    )
    params = dataclasses.replace(params, meta=meta)
    if check_forces:
        _check_forces(path, params)
    unknown = sorted({k for _, k, _ in triples if k and k not in KNOWN_TIR_KEYS})
    if unknown:
        warnings.warn(
            f"{path}: keys not defined by MF-Tyre/PAC2002 kept but unused: {', '.join(unknown)}",
            UserWarning,
            stacklevel=2,
        )
    quiet = _QUIET_MF6 if fittyp in FITTYP_MF61 else _QUIET_MF52
    used = [
        k
        for k in defaults_used
        if k not in quiet
        and COEFFICIENT_SECTION.get(k) not in _QUIET_SECTIONS
        and k not in _QUIET_OPTIONAL
        and (k != "INFLPRES" or "NOMPRES" not in values)
    ]
    if used:
        shown = ", ".join(used[:12]) + (f" and {len(used) - 12} more" if len(used) > 12 else "")
        warnings.warn(
            f"{path}: {len(used)} coefficient(s) not in the file take MFeval defaults: {shown} "
            f"(params.meta.defaults_used)",
            UserWarning,
            stacklevel=2,
        )
    return params


# ----------------------------------------------------------------------------- force check


_KAPPA = np.array([-1.0, -0.3, -0.1, -0.03, 0.0, 0.03, 0.1, 0.3, 1.0])
_ALPHA = np.array([-0.5, -0.2, -0.08, -0.03, 0.0, 0.03, 0.08, 0.2, 0.5])
_GAMMA = np.array([0.0, -0.2, -0.1, 0.1, 0.2])


def _grid(params: MFParams):
    """``(finite, fx, fy, fz)``: the combined-slip forces [N] on the check grid, axes (kappa, alpha, gamma, load).

    Evaluated by :func:`jaxtire.mf61.mf_forces` itself in NumPy float64 (params with NumPy leaves: the one set of
    equations runs on the host, :mod:`jaxtire._xp`), so loading traces and compiles nothing (a JAX evaluation
    costs a 1-2 s compile per process); the grid leaves the file's validity ranges on purpose, so the
    evaluation's out-of-range warning (and NumPy's overflow warnings, for the NaN/inf this check refuses) are
    silenced.  ``finite``: every force and moment (Fx, Fy, Mz, Mx, My) finite.
    """
    host = dataclasses.replace(params, coef={k: np.asarray(v, np.float64) for k, v in params.coef.items()})
    fz = host.FNOMIN * np.asarray(_bounds.SANITY_LOADS, np.float64)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", OutOfRangeWarning)
        out = mf_forces(
            host,
            _KAPPA[:, None, None, None],
            _ALPHA[None, :, None, None],
            _GAMMA[None, None, :, None],
            fz[None, None, None, :],
            combined=True,
        )
    finite = all(bool(np.isfinite(leaf).all()) for leaf in (out.fx, out.fy, out.mz, out.mx, out.my))
    return finite, out.fx, out.fy, fz


def _check_forces(path, params: MFParams) -> None:
    """Refuse a tire whose forces on the sanity grid are NaN/inf, too large or of the wrong ISO-W sign.

    One combined-slip evaluation in NumPy float64 (:func:`_grid`: no compile); the sign checks use its
    pure-slip slices (alpha = 0 for Fx, kappa = 0 for Fy, gamma = 0), where the combined-slip
    weights are 1.
    """
    family = 61 if params.fittyp in FITTYP_MF61 else PAC2002_FITTYP
    probe = dataclasses.replace(params, fittyp=family, meta=())
    finite, cfx, cfy, fz = _grid(probe)
    if not finite:
        raise TirError(
            f"{path}: the coefficients give NaN or inf forces/moments on the check grid "
            f"(Fz = {', '.join(f'{f:g}' for f in _bounds.SANITY_LOADS)} x FNOMIN, |kappa| <= 1, "
            f"|alpha| <= 0.5 rad, |gamma| <= 0.2 rad)"
        )
    lim = _bounds.FORCE_LIMIT
    fnom = float(fz[3])
    tol = 1e-3 * fnom
    for name, f in (("Fx", cfx), ("Fy", cfy)):
        if np.any(np.abs(f) > lim * fz + tol):
            raise TirError(
                f"{path}: |{name}| reaches {np.max(np.abs(f)):.4g} N, more than {lim:g} Fz: implausible coefficients"
            )
    i0a, i0k, i0g = int(np.argmin(np.abs(_ALPHA))), int(np.argmin(np.abs(_KAPPA))), 0
    fx = cfx[:, i0a, i0g, :]
    fy = cfy[i0k, :, i0g, :]
    ok_load = (fz >= 0.5 * fnom) & (fz <= 2.0 * fnom)
    sx = np.abs(_KAPPA) >= 0.1
    sy = np.abs(_ALPHA) >= 0.08
    if (np.sign(fx[sx][:, ok_load]) != np.sign(_KAPPA[sx])[:, None]).any():
        raise TirError(
            f"{path}: Fx has the wrong ISO-W sign (must follow the slip ratio) at |kappa| >= 0.1: "
            f"check PKX1, PDX1, PHX*, PVX*"
        )
    # with camber |gamma| <= 0.1 rad the slip angle still rules at |alpha| >= 0.2 rad
    ig = [i for i, g in enumerate(_GAMMA) if abs(g) <= 0.1 + 1e-12]
    big = np.abs(_ALPHA) >= 0.2
    fyg = cfy[i0k][big][:, ig][..., ok_load]
    wrong_cambered = (np.sign(fyg) != -np.sign(_ALPHA[big])[:, None, None]).any()
    if wrong_cambered or (np.sign(fy[sy][:, ok_load]) != -np.sign(_ALPHA[sy])[:, None]).any():
        raise TirError(
            f"{path}: Fy has the wrong ISO-W sign (must oppose the slip angle) at |alpha| >= 0.08 rad: "
            f"check PKY1 (< 0), PDY1, PHY*, PVY*"
        )


# ----------------------------------------------------------------------------- writing


def _coef_changes(params: MFParams, meta: TirMeta):
    """(changed line index -> new text, section -> inserted lines) for a params loaded from a file."""
    changes: dict[int, str] = {}
    inserts: dict[str, list[str]] = {}
    doc = meta.document
    if doc is None:  # callers pass only metas that came from a file
        raise ValueError("params without a source document: nothing to update in place")
    entries = {ln.key: i for i, ln in enumerate(doc.lines) if ln.kind == "entry"}
    for k, v in params.coef.items():
        a = np.asarray(v)
        if a.ndim != 0:
            raise ValueError(f"save_tir writes one tire; {k} has batch shape {a.shape}")
        old = meta.loaded.get(k)
        if old is not None and float(a) == float(np.asarray(old, dtype=a.dtype)):
            continue
        if k in meta.origin:
            i, factor = meta.origin[k]
            changes[i] = _fmt(float(a) / factor, np.float64) if factor != 1.0 else _fmt(a, a.dtype)
        elif k in entries and doc.lines[entries[k]].value_text == "":
            changes[entries[k]] = _fmt(a, a.dtype)
        else:
            sec = COEFFICIENT_SECTION.get(k, "MODEL")
            inserts.setdefault(sec, []).append(f"{k:<24} = {_fmt(a, a.dtype)}")
    if params.fittyp != (meta.fittyp_declared if meta.fittyp_declared is not None else _implied(meta)):
        if "FITTYP" in entries:
            changes[entries["FITTYP"]] = str(params.fittyp)
        else:
            inserts.setdefault("MODEL", []).insert(0, f"{'FITTYP':<24} = {params.fittyp}")
    return changes, inserts


def _implied(meta: TirMeta):
    return PAC2002_FITTYP if meta.dialect == "PAC2002" else 61


_TEMPLATE: dict[str, tuple[tuple[str, str], ...]] = {
    "MDI_HEADER": (("FILE_TYPE", "'tir'"), ("FILE_VERSION", "3.0"), ("FILE_FORMAT", "'ASCII'")),
    "UNITS": (
        ("LENGTH", "'meter'"),
        ("FORCE", "'newton'"),
        ("ANGLE", "'radians'"),
        ("MASS", "'kg'"),
        ("TIME", "'second'"),
    ),
    "MODEL": (("TYRESIDE", "'LEFT'"),),
    "DIMENSION": (("WIDTH", "0.205"), ("ASPECT_RATIO", "0.6"), ("RIM_RADIUS", "0.1905"), ("RIM_WIDTH", "0.152")),
    "INERTIA": (
        ("MASS", "9.3"),
        ("IXX", "0.391"),
        ("IYY", "0.736"),
        ("BELT_MASS", "7"),
        ("BELT_IXX", "0.34"),
        ("BELT_IYY", "0.6"),
        ("GRAVITY", "-9.81"),
    ),
    "VERTICAL": (
        ("VERTICAL_STIFFNESS", "200000"),
        ("VERTICAL_DAMPING", "50"),
        ("BREFF", "8.4"),
        ("DREFF", "0.27"),
        ("FREFF", "0.07"),
    ),
    "INFLATION_PRESSURE_RANGE": (("PRESMIN", "{PRESMIN}"), ("PRESMAX", "{PRESMAX}")),
    "VERTICAL_FORCE_RANGE": (("FZMIN", "{FZMIN}"), ("FZMAX", "{FZMAX}")),
    "LONG_SLIP_RANGE": (("KPUMIN", "-1.5"), ("KPUMAX", "1.5")),
    "SLIP_ANGLE_RANGE": (("ALPMIN", "-1.5708"), ("ALPMAX", "1.5708")),
    "INCLINATION_ANGLE_RANGE": (("CAMMIN", "-0.2618"), ("CAMMAX", "0.2618")),
}


def _canonical(params: MFParams, header: str | None) -> bytes:
    """A complete, well-formed .tir file for params built without a source file."""
    coef = {}
    for k, v in params.coef.items():
        a = np.asarray(v)
        if a.ndim != 0:
            raise ValueError(f"save_tir writes one tire; {k} has batch shape {a.shape}")
        coef[k] = a
    fz0 = float(coef["FNOMIN"])
    nom = float(coef["NOMPRES"])
    fill = {
        "PRESMIN": _fmt(0.5 * nom, np.float64),
        "PRESMAX": _fmt(1.5 * nom, np.float64),
        "FZMIN": "0",
        "FZMAX": _fmt(2.0 * fz0, np.float64),
    }
    given = {k: (s, raw) for s, k, raw in params.meta if k}
    body: dict[str, list[str]] = {s: [] for s in SECTION_ORDER}
    written = set()

    def add(sec, key, raw, note=""):
        body.setdefault(sec, []).append(f"{key:<24} = {raw}" + (f"{'':4}$ {note}" if note else ""))
        written.add(key)

    for sec, pairs in _TEMPLATE.items():
        if sec == "MODEL":
            add("MODEL", "FITTYP", str(params.fittyp), "Magic Formula version number")
            if params.fittyp in FITTYP_MF52:
                add("MODEL", "PROPERTY_FILE_FORMAT", "'PAC2002'")
        for key, raw in pairs:
            if key in coef:
                continue
            if key in given:
                add(sec, key, given[key][1])
            else:
                add(
                    sec,
                    key,
                    raw.format(**fill),
                    "jaxtire template value, not from data" if sec not in ("MDI_HEADER", "UNITS") else "",
                )
    for k, a in coef.items():
        if params.fittyp in FITTYP_MF52 and k in PAC2002_UNUSED:
            continue  # not a PAC2002 coefficient: the equations ignore it and a PAC2002 file has none
        add(COEFFICIENT_SECTION[k], k, _fmt(a, a.dtype))
    for sec, k, raw in params.meta:
        if k and k not in written:
            add(sec, k, raw)
        elif not k:
            body.setdefault(sec, []).append(raw)
    out = [
        "$" + "-" * 70 + "jaxtire",
        f"$ written by jaxtire.save_tir: {header or 'params built without a source file'}",
        f"$ FITTYP {params.fittyp}; SI units; coefficients not set by the user hold MFeval defaults",
    ]
    order = list(SECTION_ORDER) + [s for s in body if s not in SECTION_ORDER]
    for sec in order:
        if body.get(sec):
            out.append("$" + "-" * 64 + sec.lower())
            out.append(f"[{sec}]")
            out.extend(body[sec])
    return ("\n".join(out) + "\n").encode("utf-8")


def render_tir(params: MFParams, header: str | None = None) -> bytes:
    """The bytes :func:`save_tir` writes (the source document with changed values, or a canonical file)."""
    meta = params.meta
    if isinstance(meta, TirMeta) and meta.document is not None:
        changes, inserts = _coef_changes(params, meta)
        doc = meta.document
        if header:
            first = doc.lines[0].eol if doc.lines else "\n"
            pre = "".join(f"$ {h}{first or chr(10)}" for h in header.splitlines()).encode(doc.encoding)
            return _prefix(doc.render(changes, inserts), pre, doc.bom)
        return doc.render(changes, inserts)
    return _canonical(params, header)


def _prefix(data: bytes, pre: bytes, bom: bool) -> bytes:
    if bom:
        return data[:3] + pre + data[3:]
    return pre + data


def save_tir(params: MFParams, path, *, header: str | None = None) -> None:
    """Write one tire (not a batch) to ``path``, atomically.

    Params loaded from a file are written as that file with only the changed values replaced (in
    place, inline comments kept), keys the file lacked added only if their value changed.
    ``header`` (optional) adds ``$`` comment lines at the top.  Other params give a complete
    canonical file (every section, inertia and validity ranges from a documented template).
    """
    data = render_tir(params, header)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def data_path(name: str = "TNO_car205_60R15.tir") -> Path:
    """Path of a ``.tir`` file bundled with jaxtire (default: the TNO 205/60 R15 MF 6.2 car tire)."""
    return Path(__file__).parent / "data" / name


def default_tire(*, dtype=None) -> MFParams:
    """The bundled default tire: TNO 205/60 R15 passenger-car tire, MF-Tyre 6.2 (FITTYP 62)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_tir(data_path(), dtype=dtype, check_forces=False)  # covered by tests/jaxtire/test_tir.py
