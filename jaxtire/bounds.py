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
  ========================== ==============================================================

  The first rows are what no equation can do without (a default of 0 is no tire: zero
  stiffness, zero friction).  The core set is what every published file carries (all six
  real files in ``shared/tir`` hold every one); a file that lacks one was truncated or
  damaged, and a default standing in for it would be silent garbage.  Optional, taking the
  MFeval defaults: scaling factors ``L*`` (1), ``LONGVL``, ``VXLOW``, pressure terms ``PP*``
  and ``NOMPRES``/``INFLPRES``, the MF 6.x extensions (``QSX4-14``, ``QSY5-8``, ``RBX3``,
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
    QHZ1 QHZ2 QHZ3 QHZ4 SSZ1 SSZ2 SSZ3 SSZ4""".split()
)
#: Keys an MF 6.1 / 6.2 file must hold besides :data:`REQUIRED`.
REQUIRED_MF6: tuple[str, ...] = ("PKY4", "PKY5", "PKY6", "PKY7", "PEY5")

#: Range of model coefficients not listed in :data:`BOUNDS` (real files reach |x| ~ 3.3e3).
GENERIC_COEFFICIENT: tuple[float, float] = (-1e5, 1e5)
#: Range of other numeric entries not listed (stiffnesses reach 1e6-1e7 N/m).
GENERIC_NUMBER: tuple[float, float] = (-1e12, 1e12)

#: Scaling factors: the coefficient set's SCALING_COEFFICIENTS section (one source: jaxtire.params) less
#: LFZO and LMUV, which have their own ranges below, plus scaling keys a file may carry that the model
#: does not use (kept as raw entries).
_SCALING = tuple(
    k for k, sec in COEFFICIENT_SECTION.items() if sec == "SCALING_COEFFICIENTS" and k not in ("LFZO", "LMUV")
) + ("LCZ", "LGYR", "LCMZ", "LIP", "LKG")

#: key -> (lo, hi): the plausibility table (SI units, both ends allowed).
BOUNDS: dict[str, tuple[float, float]] = {
    # base quantities
    "FNOMIN": (10.0, 1e6),  # N: a kart tire ~300 N, a mining tire ~5e5 N
    "UNLOADED_RADIUS": (0.01, 5.0),  # m
    "LONGVL": (0.1, 300.0),  # m/s (divides the speed terms)
    "VXLOW": (1e-3, 100.0),  # m/s (divides the low-speed fade)
    "NOMPRES": (1e3, 1e8),  # Pa (divides dpi)
    "INFLPRES": (0.0, 1e8),  # Pa
    "IP": (0.0, 1e8),
    "IP_NOM": (1e3, 1e8),
    # scaling factors: non-negative; LFZO divides every load ratio
    "LFZO": (1e-3, 100.0),
    **{k: (0.0, 100.0) for k in _SCALING},
    "LMUV": (0.0, 100.0),
    # longitudinal: C > 0, friction 0..5, stiffness > 0, small shifts
    "PCX1": (0.05, 10.0),
    "PDX1": (1e-3, 5.0),
    "PDX2": (-5.0, 5.0),
    "PKX1": (1e-3, 1e3),
    "PKX2": (-1e3, 1e3),
    "PKX3": (-10.0, 10.0),
    "PEX1": (-100.0, 1.0),
    "PHX1": (-1.0, 1.0),
    "PHX2": (-1.0, 1.0),
    "PVX1": (-1.0, 1.0),
    "PVX2": (-1.0, 1.0),
    # lateral: PKY1 < 0 in ISO-W (Kya negative), PKY2 > 0 (divides), PKY4 > 0
    "PCY1": (0.05, 10.0),
    "PDY1": (1e-3, 5.0),
    "PDY2": (-5.0, 5.0),
    "PEY1": (-100.0, 1.0),
    "PKY1": (-1e3, -1e-3),
    "PKY2": (1e-3, 1e3),
    "PKY4": (1e-3, 10.0),
    "PHY1": (-1.0, 1.0),
    "PHY2": (-1.0, 1.0),
    "PVY1": (-1.0, 1.0),
    "PVY2": (-1.0, 1.0),
    # aligning: trail stiffness, shape and peak
    "QBZ1": (-1e3, 1e3),
    "QCZ1": (1e-3, 100.0),
    "QDZ1": (-10.0, 10.0),
    # geometry, inertia, validity ranges (other numeric entries)
    "WIDTH": (1e-3, 5.0),
    "ASPECT_RATIO": (0.0, 5.0),
    "RIM_RADIUS": (1e-3, 5.0),
    "RIM_WIDTH": (1e-3, 5.0),
    "MASS": (0.0, 1e4),
    "IXX": (0.0, 1e4),
    "IYY": (0.0, 1e4),
    "VERTICAL_STIFFNESS": (0.0, 1e10),
    "VERTICAL_DAMPING": (0.0, 1e8),
    "BOTTOM_STIFF": (0.0, 1e10),
    "BOTTOM_OFFST": (-1.0, 1.0),  # N/m, m
    "LONGITUDINAL_STIFFNESS": (0.0, 1e10),
    "LATERAL_STIFFNESS": (0.0, 1e10),  # N/m (carcass)
    "YAW_STIFFNESS": (0.0, 1e10),
    "FZMIN": (0.0, 1e7),
    "FZMAX": (0.0, 1e7),
    "PRESMIN": (0.0, 1e8),
    "PRESMAX": (0.0, 1e8),
    "KPUMIN": (-10.0, 0.0),
    "KPUMAX": (0.0, 10.0),
    "ALPMIN": (-math.pi / 2 - 1e-3, 0.0),
    "ALPMAX": (0.0, math.pi / 2 + 1e-3),
    "CAMMIN": (-math.pi / 2, 0.0),
    "CAMMAX": (0.0, math.pi / 2),
    "FILE_VERSION": (0.0, 100.0),
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
