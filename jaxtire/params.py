"""Magic Formula parameter pytree (:class:`MFParams`) and its validation.

An :class:`MFParams` holds every coefficient the MF 6.1 / 6.2 (FITTYP 61/62)
and MF 5.2 / PAC2002 (FITTYP 5, 6, 21, 52) equations of :mod:`jaxtire.mf61`
use, each as a JAX array leaf, so a leading axis batches a fleet of tires and
``jax.vmap`` / broadcasting work with no special cases.  This includes the
vertical model (``VERTICAL_STIFFNESS``, ``Q_RE0``, ``Q_V*``, ``Q_FZ*``, ``Q_FC*``,
``Q_CAM*``, ``Q_FYS*``, ``PFZ1``, ``BREFF``/``DREFF``/``FREFF``, bottoming), the
dimensions (``WIDTH``, ``ASPECT_RATIO``, ``RIM_RADIUS``, ``RIM_WIDTH``), the
structural stiffnesses of the relaxation lengths (``LONGITUDINAL_STIFFNESS``,
``LATERAL_STIFFNESS``, ``PCFX*``, ``PCFY*``; MF 5.2 ``PTX*``, ``PTY*``, ``LSGKP``,
``LSGAL``), the contact patch (``Q_RA*``, ``Q_RB*``, ``Q_A1``, ``Q_A2``), the
validity ranges (``FZMIN`` ... ``PRESMAX``) and the turn-slip coefficients.
Everything that is not a number the equations use (the file version, strings
such as ``TYRESIDE`` -- read through :attr:`MFParams.tyreside` --, the rigid-ring
and enveloping coefficients, and unknown keys) is kept in static, hashable
metadata so :func:`jaxtire.save_tir` can write it back.

Units are SI as in a TYDEX ``.tir`` file with ``[UNITS]`` meter / newton /
radians / kg / second (the only unit set this reader accepts).

Missing coefficients take the MF defaults: zero, except the scaling factors
``L*`` (one) and the few base quantities listed in :data:`BASE_DEFAULTS`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp

from jaxtire.validation import check_fields

# Coefficients the steady-state equations use, by .tir section.
MODEL_COEFFICIENTS: dict[str, tuple[str, ...]] = {
    "MODEL": ("LONGVL", "VXLOW"),
    "DIMENSION": ("UNLOADED_RADIUS", "WIDTH", "ASPECT_RATIO", "RIM_RADIUS", "RIM_WIDTH"),
    "OPERATING_CONDITIONS": ("INFLPRES", "NOMPRES"),
    "VERTICAL": (
        "FNOMIN",
        "VERTICAL_STIFFNESS",
        "VERTICAL_DAMPING",
        "BREFF",
        "DREFF",
        "FREFF",
        "Q_RE0",
        "Q_V1",
        "Q_V2",
        "Q_FZ1",
        "Q_FZ2",
        "Q_FCX",
        "Q_FCY",
        "Q_CAM",
        "PFZ1",
        "Q_FCY2",
        "Q_CAM1",
        "Q_CAM2",
        "Q_CAM3",
        "Q_FYS1",
        "Q_FYS2",
        "Q_FYS3",
        "BOTTOM_OFFST",
        "BOTTOM_STIFF",
    ),
    "STRUCTURAL": (
        "LONGITUDINAL_STIFFNESS",
        "LATERAL_STIFFNESS",
        "PCFX1",
        "PCFX2",
        "PCFX3",
        "PCFY1",
        "PCFY2",
        "PCFY3",
    ),
    "CONTACT_PATCH": ("Q_RA1", "Q_RA2", "Q_RB1", "Q_RB2", "Q_A1", "Q_A2"),
    "INFLATION_PRESSURE_RANGE": ("PRESMIN", "PRESMAX"),
    "VERTICAL_FORCE_RANGE": ("FZMIN", "FZMAX"),
    "LONG_SLIP_RANGE": ("KPUMIN", "KPUMAX"),
    "SLIP_ANGLE_RANGE": ("ALPMIN", "ALPMAX"),
    "INCLINATION_ANGLE_RANGE": ("CAMMIN", "CAMMAX"),
    "SCALING_COEFFICIENTS": (
        "LFZO",
        "LCX",
        "LMUX",
        "LEX",
        "LKX",
        "LHX",
        "LVX",
        "LCY",
        "LMUY",
        "LEY",
        "LKY",
        "LKYC",
        "LKZC",
        "LHY",
        "LVY",
        "LTR",
        "LRES",
        "LXAL",
        "LYKA",
        "LVYKA",
        "LS",
        "LMX",
        "LVMX",
        "LMY",
        "LMP",
        "LMUV",
        "LGAX",
        "LGAY",
        "LGAZ",
        "LSGKP",
        "LSGAL",
    ),
    "LONGITUDINAL_COEFFICIENTS": (
        "PCX1",
        "PDX1",
        "PDX2",
        "PDX3",
        "PEX1",
        "PEX2",
        "PEX3",
        "PEX4",
        "PKX1",
        "PKX2",
        "PKX3",
        "PHX1",
        "PHX2",
        "PVX1",
        "PVX2",
        "PPX1",
        "PPX2",
        "PPX3",
        "PPX4",
        "RBX1",
        "RBX2",
        "RBX3",
        "RCX1",
        "REX1",
        "REX2",
        "RHX1",
        "PTX1",
        "PTX2",
        "PTX3",
    ),
    "OVERTURNING_COEFFICIENTS": tuple(f"QSX{i}" for i in range(1, 15)) + ("PPMX1",),
    "LATERAL_COEFFICIENTS": (
        "PCY1",
        "PDY1",
        "PDY2",
        "PDY3",
        "PEY1",
        "PEY2",
        "PEY3",
        "PEY4",
        "PEY5",
        "PKY1",
        "PKY2",
        "PKY3",
        "PKY4",
        "PKY5",
        "PKY6",
        "PKY7",
        "PHY1",
        "PHY2",
        "PHY3",
        "PVY1",
        "PVY2",
        "PVY3",
        "PVY4",
        "PPY1",
        "PPY2",
        "PPY3",
        "PPY4",
        "PPY5",
        "RBY1",
        "RBY2",
        "RBY3",
        "RBY4",
        "RCY1",
        "REY1",
        "REY2",
        "RHY1",
        "RHY2",
        "RVY1",
        "RVY2",
        "RVY3",
        "RVY4",
        "RVY5",
        "RVY6",
        "PTY1",
        "PTY2",
    ),
    "ROLLING_COEFFICIENTS": tuple(f"QSY{i}" for i in range(1, 9)),
    "ALIGNING_COEFFICIENTS": (
        "QBZ1",
        "QBZ2",
        "QBZ3",
        "QBZ4",
        "QBZ5",
        "QBZ9",
        "QBZ10",
        "QCZ1",
        "QDZ1",
        "QDZ2",
        "QDZ3",
        "QDZ4",
        "QDZ6",
        "QDZ7",
        "QDZ8",
        "QDZ9",
        "QDZ10",
        "QDZ11",
        "QEZ1",
        "QEZ2",
        "QEZ3",
        "QEZ4",
        "QEZ5",
        "QHZ1",
        "QHZ2",
        "QHZ3",
        "QHZ4",
        "PPZ1",
        "PPZ2",
        "SSZ1",
        "SSZ2",
        "SSZ3",
        "SSZ4",
    ),
    "TURNSLIP_COEFFICIENTS": (
        "PDXP1",
        "PDXP2",
        "PDXP3",
        "PKYP1",
        "PDYP1",
        "PDYP2",
        "PDYP3",
        "PDYP4",
        "PHYP1",
        "PHYP2",
        "PHYP3",
        "PHYP4",
        "PECP1",
        "PECP2",
        "QDTP1",
        "QCRP1",
        "QCRP2",
        "QBRP1",
        "QDRP1",
    ),
}

#: name -> section for every coefficient in :class:`MFParams`.
COEFFICIENT_SECTION: dict[str, str] = {n: s for s, names in MODEL_COEFFICIENTS.items() for n in names}
COEFFICIENT_NAMES: tuple[str, ...] = tuple(COEFFICIENT_SECTION)

#: Non-zero defaults for base quantities a file may omit.
BASE_DEFAULTS: dict[str, float] = {
    "LONGVL": 16.7,
    "VXLOW": 1.0,
    "UNLOADED_RADIUS": 0.3,
    "NOMPRES": 220000.0,
    "FNOMIN": 4000.0,
    "LMUV": 0.0,  # speed decay of friction: a coefficient (MF default 0), not a unit multiplier
    # vertical / structural / contact patch: typical passenger-car values for files that omit them
    "WIDTH": 0.2,
    "ASPECT_RATIO": 0.6,
    "VERTICAL_STIFFNESS": 200000.0,
    "Q_RE0": 1.0,
    "LONGITUDINAL_STIFFNESS": 400000.0,
    "LATERAL_STIFFNESS": 150000.0,
    # validity ranges: wide (nothing is clamped) when the file omits them
    "PRESMIN": 0.0,
    "PRESMAX": 1.0e8,  # the largest plausible value (jaxtire.bounds): clamps nothing real
    "FZMIN": 0.0,
    "FZMAX": 1.0e7,
    "KPUMIN": -1.0e3,
    "KPUMAX": 1.0e3,
    "ALPMIN": -1.5707963267948966,
    "ALPMAX": 1.5707963267948966,
    "CAMMIN": -1.5707963267948966,
    "CAMMAX": 1.5707963267948966,
    # turn slip: shape factors that divide (MF-Tyre template values)
    "PHYP1": 1.0,
    "QDRP1": 1.0,
}

#: Valid ranges checked when params are built: name -> (low, high, low inclusive?).
RANGES: dict[str, tuple[float, float, bool]] = {
    "FNOMIN": (0.0, math.inf, False),
    "UNLOADED_RADIUS": (0.0, math.inf, False),
    "NOMPRES": (0.0, math.inf, False),
    "INFLPRES": (0.0, math.inf, False),
    "LONGVL": (0.0, math.inf, False),
    "VXLOW": (0.0, math.inf, False),
    "LFZO": (0.0, math.inf, False),
    "VERTICAL_STIFFNESS": (0.0, math.inf, False),
    "LONGITUDINAL_STIFFNESS": (0.0, math.inf, False),
    "LATERAL_STIFFNESS": (0.0, math.inf, False),
    "Q_RE0": (0.0, math.inf, True),  # 0 in files whose vertical model was not fitted (MFTyreLibrary)
    "FZMIN": (0.0, math.inf, True),
    "PHYP1": (0.0, math.inf, True),  # 0 where turn slip was not fitted; clamped where it divides
    "QDRP1": (0.0, math.inf, True),
}

#: FITTYP values of the supported families.
FITTYP_MF61 = (61, 62)
FITTYP_MF52 = (5, 6, 21, 52)


def default_value(name: str) -> float:
    """The MF default for coefficient ``name``: 1 for scaling factors, else 0 (or a base default)."""
    if name in BASE_DEFAULTS:
        return BASE_DEFAULTS[name]
    if COEFFICIENT_SECTION.get(name) == "SCALING_COEFFICIENTS":
        return 1.0
    return 0.0


@dataclasses.dataclass(frozen=True)
class MFParams:
    """Immutable Magic Formula parameter pytree.

    ``coef`` maps each name of :data:`COEFFICIENT_NAMES` to an array (the
    pytree leaves); attribute access ``p.PCY1`` reads it.  ``fittyp`` chooses
    the equation family (61/62: MF 6.1/6.2, 5/6/21/52: MF 5.2 / PAC2002) and,
    with ``meta`` (the file's other entries as ``(section, key, raw text)``
    triples), is static metadata.
    """

    coef: dict[str, Any]
    fittyp: int = 61
    meta: tuple = ()

    def __getattr__(self, name: str):
        coef = object.__getattribute__(self, "coef")
        try:
            return coef[name]
        except KeyError:
            raise AttributeError(f"MFParams has no coefficient {name!r}") from None

    @property
    def is_mf52(self) -> bool:
        return self.fittyp in FITTYP_MF52

    @property
    def is_mf62(self) -> bool:
        return self.fittyp == 62

    @property
    def tyreside(self) -> float:
        """Side the file was measured on, from its ``TYRESIDE`` text: +1.0 ``LEFT`` (also when absent or
        ``SYMMETRIC``), -1.0 ``RIGHT``.  Static (from ``meta``), so it costs nothing under ``jit``."""
        raw = self.meta_value("TYRESIDE", "LEFT")
        return -1.0 if str(raw).strip().strip("'\"").strip().upper() == "RIGHT" else 1.0

    def replace(self, **changes) -> MFParams:
        """A copy with some coefficients changed (no validation; see :func:`make_params`)."""
        unknown = set(changes) - set(self.coef)
        if unknown:
            raise ValueError(f"unknown coefficient(s) {sorted(unknown)}")
        return dataclasses.replace(self, coef={**self.coef, **changes})

    def astype(self, dtype) -> MFParams:
        """All coefficient leaves cast to ``dtype``."""
        return dataclasses.replace(self, coef={k: jnp.asarray(v, dtype) for k, v in self.coef.items()})

    def meta_value(self, key: str, default=None):
        """The raw text of a non-coefficient entry (e.g. ``"IYY"``, ``"TYRESIDE"``), or ``default``."""
        for _, k, v in self.meta:
            if k == key:
                return v
        return default

    def unknown_keys(self) -> tuple[str, ...]:
        """Keys of the source file that no MF-Tyre / PAC2002 file defines (kept and written back, not used)."""
        return tuple(k for _, k, _ in self.meta if k not in KNOWN_TIR_KEYS)


#: Keys an MF-Tyre 5.2 / 6.1 / 6.2 file may hold besides the model coefficients
#: (header, units, vertical, structural, contact patch, ranges, relaxation, turn slip).
KNOWN_TIR_KEYS: frozenset[str] = frozenset(
    """
FILE_TYPE FILE_VERSION FILE_FORMAT LENGTH FORCE ANGLE MASS TIME FITTYP TYRESIDE ROAD_INCREMENT
ROAD_DIRECTION PROPERTY_FILE_FORMAT FUNCTION_NAME USER_SUB_ID N_TIRE_STATES USE_MODE HMAX_LOCAL
SWITCH_INTEG TIME_SWITCH_INTEG WIDTH ASPECT_RATIO RIM_RADIUS RIM_WIDTH IXX IYY BELT_MASS BELT_IXX
BELT_IYY GRAVITY VERTICAL_STIFFNESS VERTICAL_DAMPING MC_CONTOUR_A MC_CONTOUR_B BREFF DREFF FREFF
Q_RE0 Q_V1 Q_V2 Q_FZ2 Q_FCX Q_FCY Q_CAM PFZ1 Q_FCY2 Q_CAM1 Q_CAM2 Q_CAM3 Q_FYS1 Q_FYS2 Q_FYS3
BOTTOM_OFFST BOTTOM_STIFF LONGITUDINAL_STIFFNESS LATERAL_STIFFNESS YAW_STIFFNESS FREQ_LONG FREQ_LAT
FREQ_YAW FREQ_WINDUP DAMP_LONG DAMP_LAT DAMP_YAW DAMP_WINDUP DAMP_RESIDUAL DAMP_VLOW Q_BVX Q_BVT
PCFX1 PCFX2 PCFX3 PCFY1 PCFY2 PCFY3 PCMZ1 Q_RA1 Q_RA2 Q_RB1 Q_RB2 ELLIPS_SHIFT ELLIPS_LENGTH
ELLIPS_HEIGHT ELLIPS_ORDER ELLIPS_MAX_STEP ELLIPS_NWIDTH ELLIPS_NLENGTH ENV_C1 ENV_C2 PRESMIN
PRESMAX FZMIN FZMAX KPUMIN KPUMAX ALPMIN ALPMAX CAMMIN CAMMAX LSGKP LSGAL LGYR LCMZ PTX1 PTX2 PTX3
PTY1 PTY2 QTZ1 MBELT PDXP1 PDXP2 PDXP3 PKYP1 PDYP1 PDYP2 PDYP3 PDYP4 PHYP1 PHYP2 PHYP3 PHYP4 PECP1
PECP2 QDTP1 QCRP1 QCRP2 QBRP1 QDRP1 QBZ6 QBZ7 QBZ8 QDZ5 QSX4 Q_A1 Q_A2 Q_BRE0 Q_RA3
""".split()
)

jax.tree_util.register_dataclass(MFParams, data_fields=["coef"], meta_fields=["fittyp", "meta"])


def validate(values: Mapping[str, float], source: str = "params") -> None:
    """Raise ``ValueError`` naming the field, its value and the allowed range if any value is out of range."""
    for name, v in values.items():
        try:
            fv = float(v)
        except (TypeError, ValueError):
            continue  # batched arrays are checked elementwise below
        _check_one(name, fv, source)


def _check_one(name: str, v: float, source: str) -> None:
    if not math.isfinite(v):
        raise ValueError(f"{source}: {name} = {v} is not finite")
    if name in RANGES:
        lo, hi, incl = RANGES[name]
        ok = (v >= lo if incl else v > lo) and v <= hi
        if not ok:
            lb = "[" if incl else "("
            raise ValueError(f"{source}: {name} = {v} is outside the allowed range {lb}{lo}, {hi}]")


def make_params(
    values: Mapping[str, float] | None = None, *, fittyp: int = 61, meta: tuple = (), dtype=None, source: str = "params"
) -> MFParams:
    """Build validated :class:`MFParams` from a name -> value mapping; missing names take MF defaults.

    ``INFLPRES`` defaults to ``NOMPRES`` (nominal pressure, ``dpi = 0``).
    Raises ``ValueError`` for unknown names, non-finite values (also once stored in ``dtype``: 1e39 in
    float32), values outside :data:`RANGES`, batch shapes that do not broadcast with each other and a
    non-floating ``dtype``, before building anything.  Integer inputs are stored as floats.
    """
    import numpy as np

    values = dict(values or {})
    unknown = set(values) - set(COEFFICIENT_NAMES)
    if unknown:
        raise ValueError(f"{source}: unknown coefficient(s) {sorted(unknown)}")
    if fittyp not in FITTYP_MF61 + FITTYP_MF52:
        raise ValueError(f"{source}: FITTYP = {fittyp} is not supported; allowed {FITTYP_MF61 + FITTYP_MF52}")
    # floating dtype, finite and not underflowing once stored (1e39 is inf, 1e-46 is 0 in float32), shapes broadcast
    dtype = check_fields(values, source=source, dtype=dtype)
    full = {n: values.get(n, default_value(n)) for n in COEFFICIENT_NAMES}
    if "INFLPRES" not in values:
        full["INFLPRES"] = full["NOMPRES"]
    for name, v in full.items():
        arr = np.asarray(v, dtype=np.float64)
        if arr.size == 1:
            _check_one(name, float(arr.reshape(())), source)
        else:
            bad = ~np.isfinite(arr)
            if name in RANGES:
                lo, hi, incl = RANGES[name]
                bad |= ~(((arr >= lo) if incl else (arr > lo)) & (arr <= hi))
            if bad.any():
                _check_one(name, float(arr[bad].ravel()[0]), source)
    # rounded to the dtype on the host (round to nearest, as XLA's convert): a device copy, no convert compiled
    return MFParams(
        {n: jnp.asarray(np.asarray(v, np.float64).astype(dtype), dtype) for n, v in full.items()},
        fittyp=int(fittyp),
        meta=tuple(meta),
    )


def stack(params: list[MFParams]) -> MFParams:
    """Stack tires with the same FITTYP into one batched :class:`MFParams` (leading axis = tire)."""
    if len({p.fittyp for p in params}) != 1:
        raise ValueError("stack: all tires must share one FITTYP")
    return jax.tree.map(lambda *xs: jnp.stack(xs), *params)
