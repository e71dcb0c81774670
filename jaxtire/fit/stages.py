"""Fitting stages: which coefficients each stage frees, on which rows and channels, within which bounds.

MF 6.1 stages (:data:`STAGES`), staged like the MF-Tool / MFeval fitting workflow; every stage
fits only its own subset of coefficients, all others held fixed::

    "Fx0"       PCX1 PDX1 PDX2 PEX1-4 PKX1-3 PHX1-2 PVX1-2        pure longitudinal rows, Fx
    "Fy0"       PCY1 PDY1-2 PEY1-3 PKY1 PKY2 PKY4 PHY1-2 PVY1-2   pure lateral rows, Fy
    "Mz0"       QBZ1-3 QBZ9 QBZ10 QCZ1 QDZ1 QDZ2 QDZ6 QDZ7 QEZ1-4 QHZ1-2
                                                                   pure lateral rows, Mz (given the fitted Fy)
    "combined"  RBX1-2 RCX1 REX1-2 RHX1 RBY1-3 RCY1 REY1-2 RHY1-2 RVY1 RVY2 RVY4-6
                                                                   combined rows, Fx and Fy
    "Mz"        SSZ1 SSZ2 and the "Mz0" coefficients again         pure lateral and combined rows, Mz
                                                                   (the s Fx arm, given the fitted Fx and
                                                                   Fy; pure Mz refined jointly)

The table is built from :data:`MF_LAYOUT` (each stage's coefficient families, e.g. ``"PDX"``) over
the coefficient names of :mod:`jaxtire.params`, so each coefficient is named in one place.  When the
data has camber (``max |gamma| > 1e-3 rad``) the camber terms (:data:`CAMBER_TERMS`) join their stage
(``PDX3``; ``PDY3 PEY4 PEY5 PKY3 PKY5 PKY6 PKY7 PVY3 PVY4``; ``QBZ4 QBZ5 QDZ3 QDZ4 QDZ8-11 QEZ5
QHZ3 QHZ4``; ``RBX3 RBY4 RVY3``; ``SSZ3 SSZ4``).  Pressure (``PP*``) terms are not fitted (one
pressure per data set).  A PAC2002 / MF 5.2 start never frees the coefficients its equations do
not have (:data:`jaxtire.tir.PAC2002_UNUSED`, e.g. ``PKY4-7``).  A channel with no measured
(finite) value on a stage's rows drops out of that stage; a stage left with no channel is skipped
and its coefficients stay as in the start (the fit report lists it in ``skipped``).
The simple model has the stages :data:`SIMPLE_STAGES`.  Each model's table
is found by :func:`jaxtire.tire.model_name` (:data:`MODEL_TABLES`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxtire.bounds import range_table
from jaxtire.fit.data import CAMBER_TOL, MeasurementSet, row_masks
from jaxtire.params import COEFFICIENT_NAMES, FITTYP_MF52
from jaxtire.tir import PAC2002_UNUSED
from jaxtire.tire import get_coefficient, model_name

__all__ = [
    "CAMBER_TERMS",
    "CHANNELS",
    "DEFAULT_BOUNDS",
    "MF_LAYOUT",
    "MODEL_TABLES",
    "NOT_FITTED",
    "SIMPLE_BOUNDS",
    "SIMPLE_STAGES",
    "STAGES",
    "Stage",
    "fit_coefficients",
    "model_tables",
    "plan",
    "stage_bounds",
    "stage_coefficients",
]


#: Default (lower, upper) bounds of every fittable coefficient: physical ranges wide enough for the
#: MF 6.1 files in ``shared/tir`` (e.g. RBY4 = 1747 in MagicFormula61_Parameters.tir).
DEFAULT_BOUNDS: dict[str, tuple[float, float]] = range_table(
    """
    # shapes C, peaks D, stiffnesses K, curvatures E (E <= 1) of the one-signed factors
    1       2.5     PCX1
    0.8     2.5     PCY1
    0.3     2.5     RCX1 RCY1
    0.1     4       PDX1 PDY1
    1       200     PKX1
    -200    -0.1    PKY1                        # negative in ISO-W
    0.1     20      PKY2
    1       3       PKY4
    -10     1       PEX1 PEY1 REX1 REY1
    0.1     50      QBZ1
    0.5     100     QCZ1
    0.001   1       QDZ1
    -50     1       QEZ1
    0.1     100     RBX1 RBY1
    # either sign: shifts, load, camber and slip dependences, symmetric about zero
    -0.05   0.05    PHX1 PHX2 PHY1 PHY2 QHZ1 QHZ2 RHX1
    -0.1    0.1     RBY3 RHY1 RHY2
    -0.2    0.2     PVX1 PVX2 PVY1 PVY2 QDZ6 QDZ7
    -0.99   0.99    PEX4
    -1      1       PDX2 PDY2 PEY3 QDZ2 RVY1 RVY2 SSZ1 SSZ2     # SSZ*: the s Fx arm of Mz, in R0
    -2      2       QHZ3 QHZ4
    -5      5       PKX3 PKY3 PVY3 PVY4 QDZ8 QDZ9 QDZ10 QEZ4 RVY5
    -10     10      PEX2 PEX3 PEY2 PKY6 PKY7 REX2 REY2 RVY3 SSZ3 SSZ4
    -20     20      QBZ2 QBZ3 QBZ4 QBZ5 QDZ3
    -50     50      PDX3 PDY3 PEY4 PKY5 QBZ10 QDZ4 QDZ11 QEZ2 QEZ3
    -100    100     PKX2 QEZ5 RBX2 RBY2
    -200    200     RVY6
    -500    500     PEY5 QBZ9 RVY4
    -5000   5000    RBX3 RBY4
    """
)


class Stage(NamedTuple):
    """One fitting stage: its free coefficients, the channels of its loss and the model it evaluates."""

    name: str
    coefs: tuple[str, ...]
    channels: tuple[str, ...]
    combined: bool


#: Camber terms of the MF 6.1 equations (their effect vanishes at zero camber): they join their stage
#: only when the data has camber.
CAMBER_TERMS: frozenset[str] = frozenset(
    "PDX3 PDY3 PEY4 PEY5 PKY3 PKY5 PKY6 PKY7 PVY3 PVY4 QBZ4 QBZ5 QDZ3 QDZ4 QDZ8 QDZ9 QDZ10 QDZ11 QEZ5 QHZ3 QHZ4 "
    "RBX3 RBY4 RVY3 SSZ3 SSZ4".split()
)
#: Members of a stage's families that no stage fits: ``PHY3``, the MF 5.2 camber shift of Fy (no MF 6.1 term).
NOT_FITTED: frozenset[str] = frozenset({"PHY3"})

#: MF 6.1 stage layout: name -> (coefficient families, families whose camber terms join, channels, combined
#: model?).  A family is a coefficient name less its number (``"PDX"``: ``PDX1 PDX2 PDX3``); the stage frees
#: its families' members in family order, each family in :data:`jaxtire.params.COEFFICIENT_NAMES` order.
MF_LAYOUT: dict[str, tuple[str, str, tuple[str, ...], bool]] = {
    "Fx0": ("PCX PDX PEX PKX PHX PVX", "PDX", ("Fx0",), False),
    "Fy0": ("PCY PDY PEY PKY PHY PVY", "PDY PEY PKY PVY", ("Fy0",), False),
    "Mz0": ("QBZ QCZ QDZ QEZ QHZ", "QBZ QDZ QEZ QHZ", ("Mz0",), False),
    "combined": ("RBX RCX REX RHX RBY RCY REY RHY RVY", "RBX RBY RVY", ("Fx", "Fy"), True),
    # the s Fx arm with the pure Mz refined jointly (its camber terms stay as fitted in "Mz0")
    "Mz": ("SSZ QBZ QCZ QDZ QEZ QHZ", "SSZ", ("Mz0", "Mz"), True),
}


def _members(family: str) -> tuple[str, ...]:
    """The coefficients of ``family`` (``"PDX"`` -> ``PDX1 PDX2 PDX3``; not the turn-slip ``PDXP1``)."""
    return tuple(
        k for k in COEFFICIENT_NAMES if k.startswith(family) and k[len(family) :].isdigit() and k not in NOT_FITTED
    )


def _mf_stage(families: str, camber_families: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(coefficients, camber coefficients) of the families in ``families``."""
    keys = [k for f in families.split() for k in _members(f)]
    camber = [k for f in camber_families.split() for k in _members(f) if k in CAMBER_TERMS]
    return tuple(k for k in keys if k not in CAMBER_TERMS), tuple(camber)


#: name -> (coefficients, camber coefficients, channels, combined model?), built from :data:`MF_LAYOUT`.
STAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    name: (*_mf_stage(families, camber), channels, combined)
    for name, (families, camber, channels, combined) in MF_LAYOUT.items()
}

#: channel -> (measured column, rows it uses).
CHANNELS: dict[str, tuple[str, str]] = {
    "Fx0": ("fx", "pure_long"),
    "Fy0": ("fy", "pure_lat"),
    "Mz0": ("mz", "pure_lat"),
    "Fx": ("fx", "combined"),
    "Fy": ("fy", "combined"),
    "Mz": ("mz", "combined"),
}

#: Stages of the simple B, C, D, E model (:mod:`jaxtire.simple`), same layout as :data:`STAGES`.
SIMPLE_STAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    "pure": (("Bx", "Cx", "Dx", "Ex", "By", "Cy", "Dy", "Ey", "k_load"), ("c_gamma",), ("Fx0", "Fy0"), False),
    "Mz0": (("trail",), (), ("Mz0",), False),
    "combined": (("slide_ratio", "beta"), (), ("Fx", "Fy"), True),
}

#: Default bounds of the simple model's fitted fields.
SIMPLE_BOUNDS: dict[str, tuple[float, float]] = range_table(
    """
    0.5     60      Bx By
    0.5     2       Cx Cy
    0.1     4       Dx Dy
    -10     1       Ex Ey
    0       0.95    k_load
    -5      5       c_gamma
    0       0.2     trail
    0.05    1       slide_ratio
    0.1     100     beta
    """
)


#: model name (:func:`jaxtire.tire.model_name`) -> (stage table, default bounds).
MODEL_TABLES: dict[str, tuple[dict, dict]] = {"mf": (STAGES, DEFAULT_BOUNDS), "simple": (SIMPLE_STAGES, SIMPLE_BOUNDS)}


def model_tables(params) -> tuple[dict, dict]:
    """(stages, default bounds) of the tire model ``params`` belongs to (``TypeError`` for no tire)."""
    name = model_name(params)
    if name not in MODEL_TABLES:
        raise TypeError(f"fit: no fitting stages for the {name!r} tire model")
    return MODEL_TABLES[name]


def stage_coefficients(name: str, camber: bool = False, model: str = "mf") -> tuple[str, ...]:
    """The coefficients stage ``name`` fits by default (with the camber terms when ``camber``);
    ``model`` is ``"mf"`` (:data:`STAGES`) or ``"simple"`` (:data:`SIMPLE_STAGES`)."""
    base, cam, _, _ = MODEL_TABLES[model][0][name]
    return base + (cam if camber else ())


def fit_coefficients(stages: dict) -> tuple[str, ...]:
    """Every coefficient a stage table can fit (the keys :func:`jaxtire.fit.fit` accepts in ``coefs`` and ``bounds``)."""
    return tuple(k for s in stages for k in stages[s][0] + stages[s][1])


def stage_bounds(bounds_t: tuple, stage: Stage) -> tuple:
    """The ``(name, (lower, upper))`` pairs of ``stage``'s free coefficients, from the plan's bounds."""
    bd = dict(bounds_t)
    return tuple((k, bd[k]) for k in stage.coefs)


def plan(data: MeasurementSet, start, stages, coefs, bounds) -> tuple[tuple[Stage, ...], tuple]:
    """Static plan ``(stages, bounds)``: the stages of ``start``'s model that have rows in ``data``, their
    free coefficients (``coefs`` overrides per stage), and the ``(name, (lower, upper))`` bounds used
    (``bounds`` overrides the defaults).  Raises ``ValueError`` for unknown stages or coefficients, no
    usable rows, or a start value outside its bounds."""
    model = model_name(start)
    table, default_bounds = model_tables(start)
    fittable = fit_coefficients(table)
    masks = row_masks(np.asarray(data.kappa), np.asarray(data.alpha), np)
    finite = {c: np.isfinite(np.asarray(getattr(data, c))) for c in ("fx", "fy", "mz")}
    unused = set(PAC2002_UNUSED) if model == "mf" and int(getattr(start, "fittyp", 61)) in FITTYP_MF52 else set()
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
    stages_out = []
    for name in stages:
        if name not in table:
            raise ValueError(f"stages: unknown stage {name!r}; stages are {list(table)}")
        _, _, channels, combined = table[name]
        channels = tuple(c for c in channels if (masks[CHANNELS[c][1]] & finite[CHANNELS[c][0]]).any())
        if not channels:
            continue  # no measured rows for this stage: its coefficients stay as started
        free = tuple(k for k in coefs.get(name, stage_coefficients(name, camber, model)) if k not in unused)
        for k in free:
            if k not in fittable:
                raise ValueError(f"coefs[{name!r}]: {k!r} is not a fittable coefficient; choose from {fittable}")
        if free:
            stages_out.append(Stage(name, free, channels, combined))
    if not stages_out:
        raise ValueError("fit: no stage has data rows (need pure longitudinal, pure lateral or combined rows)")
    used = sorted({k for s in stages_out for k in s.coefs})
    for k in used:
        lo, hi = bd[k]
        v = np.asarray(get_coefficient(start, k), dtype=np.float64)
        if np.any(v < lo) or np.any(v > hi):
            raise ValueError(
                f"start value {k} = {v.ravel()[0]:g} is outside its bounds [{lo:g}, {hi:g}]; "
                f"pass bounds={{{k!r}: (lower, upper)}} or another start"
            )
    bounds_t = tuple((k, (float(bd[k][0]), float(bd[k][1]))) for k in used)
    return tuple(stages_out), bounds_t
