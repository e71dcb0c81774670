"""The one table of what a ``.tir`` file must hold and what values are plausible.

:func:`jaxtire.tir.load_tir` checks every numeric entry of a file against this module:

* :data:`REQUIRED` -- keys without which a file does not describe a tire:

  ========================== ==============================================================
  ``FNOMIN``                 nominal load Fz0: every load dependence is ``dfz = Fz/Fz0 - 1``
  ``UNLOADED_RADIUS``        R0: scales Mz, Mx, My and the radii
  ``PCX1 PDX1 PKX1``         shape, peak friction and slip stiffness of Fx (no Fx without them)
  ``PCY1 PDY1 PKY1 PKY2``    shape, peak friction, cornering stiffness and its load of Fy
  ``QBZ1 QCZ1 QDZ1``         stiffness, shape and peak of the pneumatic trail (Mz)
  the rest of the core set   every coefficient of the MF 5.2 pure- and combined-slip
                             equations for Fx, Fy, Mz, Mx, My (Pacejka 2012, ch. 4: PCX1 ..
                             RHX1, QSX1-3, PCY1 .. RVY6, QSY1-4, QBZ1 .. SSZ4)
  ``PKY4-7 PEY5`` (MF 6.x)   Kya curvature and the MF 6.1 camber stiffness / curvature
  ``LONGVL VXLOW``           [MODEL]: the reference speed of the speed terms (rolling resistance
                             ``QSY3 |Vx|/LONGVL``, ``QSY4 (Vx/LONGVL)^4``, ``LMUV``) and the speed
                             below which forces fade; every published file states both, and a
                             default would move My with no trace in the file
  ``NOMPRES`` (MF 6.x)       [OPERATING_CONDITIONS]: the nominal pressure ``p0`` of every pressure
                             term ``dpi = (p - p0) / p0`` (MF 6.x only: MF 5.2 has no pressure model)
  ========================== ==============================================================

  The first rows are what no equation can do without (a default of 0 is no tire: zero
  stiffness, zero friction).  The core set is what every published file carries (all six
  real files in ``shared/tir`` hold every one); a file that lacks one was truncated or
  damaged, and a default standing in for it would be silent garbage.  Optional, taking the
  MFeval defaults: scaling factors ``L*`` (1), pressure terms ``PP*``, ``INFLPRES`` (``NOMPRES``,
  the tire at its nominal pressure; ``NOMPRES`` itself in MF 5.2 files), the MF 6.x extensions (``QSX4-14``, ``QSY5-8``, ``RBX3``,
  ``RBY4``, ``QDZ10-11``, ``PPMX1``), turn slip and the MF 5.2 camber scalings; the loader
  lists the defaults it used in ``params.meta.defaults_used`` and in a ``UserWarning``.

* :data:`BOUNDS` -- the plausibility range of each key, ``key -> (lo, hi)`` (both ends
  allowed; SI units after ``[UNITS]`` conversion).  Ranges are wide enough for every
  published tire we know (car, FSAE, truck/bus, the TNO and MFeval examples) and
  narrow enough to catch typos and corrupted files (``PDX1 = 100``, ``PVX1 = 1e6``,
  negative ``PKX1``, negative scaling factors, positive ``PKY1`` i.e. the wrong ISO-W sign).
  Keys not listed take :data:`GENERIC_COEFFICIENT` (model coefficients) or
  :data:`GENERIC_NUMBER` (other numeric entries).  For an exotic tire pass
  ``bounds={"PDX1": (0, 8)}`` (or ``bounds={"PDX1": None}`` to lift a check) to
  :func:`~jaxtire.tir.load_tir`; the override is explicit and per key.

After the per-key checks the loader evaluates the tire on a small grid
(:data:`SANITY_LOADS` x slips, incl. ``Fz = 0``): every force and moment finite,
``|Fx|, |Fy| <= FORCE_LIMIT * Fz``, Fx with the sign of the slip ratio and Fy against the
slip angle (ISO-W) at moderate slip and load (0.5-2 FNOMIN); a file failing this is refused too.
"""

from __future__ import annotations

import math

from jaxtire.params import COEFFICIENT_SECTION

#: The keys no equation can do without (first in error messages).
ESSENTIAL: tuple[str, ...] = (
    "FNOMIN",
    "UNLOADED_RADIUS",
    "PCX1",
    "PDX1",
    "PKX1",
    "PCY1",
    "PDY1",
    "PKY1",
    "PKY2",
    "QBZ1",
    "QCZ1",
    "QDZ1",
)
#: Keys every file must hold (all dialects): the essential keys and the MF 5.2 core set.
REQUIRED: tuple[str, ...] = ESSENTIAL + tuple(
    k
    for k in """
    PDX2 PDX3 PEX1 PEX2 PEX3 PEX4 PKX2 PKX3 PHX1 PHX2 PVX1 PVX2 RBX1 RBX2 RCX1 REX1 REX2 RHX1
    QSX1 QSX2 QSX3 PDY2 PDY3 PEY1 PEY2 PEY3 PEY4 PKY3 PHY1 PHY2 PVY1 PVY2 PVY3 PVY4
    RBY1 RBY2 RBY3 RCY1 REY1 REY2 RHY1 RHY2 RVY1 RVY2 RVY3 RVY4 RVY5 RVY6 QSY1 QSY2 QSY3 QSY4
    QBZ2 QBZ3 QBZ4 QBZ5 QBZ9 QBZ10 QDZ2 QDZ3 QDZ4 QDZ6 QDZ7 QDZ8 QDZ9 QEZ1 QEZ2 QEZ3 QEZ4 QEZ5
    QHZ1 QHZ2 QHZ3 QHZ4 SSZ1 SSZ2 SSZ3 SSZ4 LONGVL VXLOW""".split()
)
#: Keys an MF 6.1 / 6.2 file must hold besides :data:`REQUIRED`.
REQUIRED_MF6: tuple[str, ...] = ("PKY4", "PKY5", "PKY6", "PKY7", "PEY5", "NOMPRES")

#: Range of model coefficients not listed in :data:`BOUNDS` (real files reach |x| ~ 3.3e3).
GENERIC_COEFFICIENT: tuple[float, float] = (-1e5, 1e5)
#: Range of other numeric entries not listed (stiffnesses reach 1e6-1e7 N/m).
GENERIC_NUMBER: tuple[float, float] = (-1e12, 1e12)


def range_table(text: str) -> dict[str, tuple[float, float]]:
    """``{key: (lo, hi)}`` from a text table, one range a row: ``lo hi KEY [KEY ...]`` (``#`` starts a comment).

    The one way the range tables of jaxtire are written (:data:`BOUNDS`, the fit bounds of
    :mod:`jaxtire.fit.stages`): keys sharing a range share a row.  Raises ``ValueError`` for a row
    without a key, ``lo > hi`` or a key given twice.
    """
    out: dict[str, tuple[float, float]] = {}
    for row in text.splitlines():
        words = row.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 3 or float(words[0]) > float(words[1]):
            raise ValueError(f"range table row {row.strip()!r}: want 'lo hi KEY ...' with lo <= hi")
        for key in words[2:]:
            if key in out:
                raise ValueError(f"range table: {key} is given twice")
            out[key] = (float(words[0]), float(words[1]))
    return out


#: Scaling factors: the coefficient set's SCALING_COEFFICIENTS section (one source: jaxtire.params) less
#: LFZO, which has its own range, plus scaling keys a file may carry that the model does not use (kept as
#: raw entries).
_SCALING = tuple(k for k, sec in COEFFICIENT_SECTION.items() if sec == "SCALING_COEFFICIENTS" and k != "LFZO") + (
    "LCZ",
    "LGYR",
    "LCMZ",
    "LIP",
    "LKG",
)

#: key -> (lo, hi): the plausibility table (SI units, both ends allowed).
BOUNDS: dict[str, tuple[float, float]] = {
    **range_table(
        """
        # base quantities
        10      1e6     FNOMIN                  # N: a kart tire ~300 N, a mining tire ~5e5 N
        0.01    5       UNLOADED_RADIUS         # m
        0.1     300     LONGVL                  # m/s (divides the speed terms)
        1e-3    100     VXLOW                   # m/s (divides the low-speed fade)
        1e3     1e8     NOMPRES IP_NOM          # Pa (divides dpi)
        0       1e8     INFLPRES IP             # Pa
        # scaling factors: non-negative (below); LFZO divides every load ratio
        1e-3    100     LFZO
        # longitudinal: C > 0, friction 0..5, stiffness > 0, small shifts
        0.05    10      PCX1
        1e-3    5       PDX1
        -5      5       PDX2
        1e-3    1e3     PKX1
        -1e3    1e3     PKX2
        -10     10      PKX3
        -100    1       PEX1
        -1      1       PHX1 PHX2 PVX1 PVX2
        # lateral: PKY1 < 0 in ISO-W (Kya negative), PKY2 > 0 (divides), PKY4 > 0
        0.05    10      PCY1
        1e-3    5       PDY1
        -5      5       PDY2
        -100    1       PEY1
        -1e3    -1e-3   PKY1
        1e-3    1e3     PKY2
        1e-3    10      PKY4
        -1      1       PHY1 PHY2 PVY1 PVY2
        # aligning: trail stiffness, shape and peak
        -1e3    1e3     QBZ1
        1e-3    100     QCZ1
        -10     10      QDZ1
        # geometry [m], inertia [kg, kg m^2], stiffness [N/m], damping [N s/m]
        1e-3    5       WIDTH RIM_RADIUS RIM_WIDTH
        0       5       ASPECT_RATIO
        0       1e4     MASS IXX IYY
        0       1e10    VERTICAL_STIFFNESS BOTTOM_STIFF LONGITUDINAL_STIFFNESS LATERAL_STIFFNESS YAW_STIFFNESS
        0       1e8     VERTICAL_DAMPING
        -1      1       BOTTOM_OFFST
        # validity ranges [N, Pa, -]; the file version
        0       1e7     FZMIN FZMAX
        0       1e8     PRESMIN PRESMAX
        -10     0       KPUMIN
        0       10      KPUMAX
        0       100     FILE_VERSION
        """
    ),
    **{k: (0.0, 100.0) for k in _SCALING},
    # validity ranges of the angles [rad]: a quarter turn (ALP* with a margin for rounding in the files)
    "ALPMIN": (-math.pi / 2 - 1e-3, 0.0),
    "ALPMAX": (0.0, math.pi / 2 + 1e-3),
    "CAMMIN": (-math.pi / 2, 0.0),
    "CAMMAX": (0.0, math.pi / 2),
}

#: Loads of the post-load force check, as multiples of FNOMIN (0 included on purpose).
SANITY_LOADS: tuple[float, ...] = (0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0)
#: Largest camber [rad] at which inter-key rules hold (PKY2 + PKY5 gamma^2 > 0, MF 6.x).
CAMBER_LIMIT: float = 0.3
#: Largest plausible |Fx|, |Fy| per unit load (a friction coefficient of 5).
FORCE_LIMIT: float = 5.0


def bound_for(key: str, is_coefficient: bool, overrides=None):
    """The ``(lo, hi)`` range that applies to ``key`` (``None``: not checked), honouring ``overrides``."""
    if overrides and key in overrides:
        return overrides[key]
    if key in BOUNDS:
        return BOUNDS[key]
    return GENERIC_COEFFICIENT if is_coefficient else GENERIC_NUMBER
