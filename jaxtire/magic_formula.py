"""The Magic Formula curve itself (Pacejka, *Tire and Vehicle Dynamics*, 3rd ed., §4.3).

General form with shifts::

    x1 = x + Sh
    y  = D sin(C atan(B x1 - E (B x1 - atan(B x1)))) + Sv

* ``B`` stiffness factor, ``C`` shape factor, ``D`` peak value, ``E`` curvature.
* ``B C D`` is the slope at ``x1 = 0`` (the slip stiffness).
* The peak ``D + Sv`` is reached where ``C atan(...) = pi/2``.

Direct variant (the TLabVehiclePhysics / C# evaluation)::

    y = D sin(C atan(B x - E atan(B x - atan(B x))))

Both are plain elementwise functions: every argument broadcasts, so one call
evaluates a whole batch of curves, and both are smooth in every argument.
Units are those of the caller (``x`` slip in [-] or [rad], ``D`` in [N] or [-]).

In float32, ``atan``, ``sin`` and ``cos`` are the fused polynomial versions of
:mod:`jaxtire._math` / :mod:`jaxtire._trig` (a few ulp; XLA:CPU's own are scalar libm
calls); in float64 they are the ``jnp`` functions.
"""

from __future__ import annotations

from jaxtire._math import atan
from jaxtire._trig import cos, sin


def magic_formula(x, B, C, D, E, Sh=0.0, Sv=0.0):
    """General Magic Formula ``D sin(C atan(B x1 - E (B x1 - atan(B x1)))) + Sv``, ``x1 = x + Sh``.

    ``x`` and ``Sh`` in the slip's unit (kappa [-] or alpha [rad]), ``B`` in its inverse, ``C`` and
    ``E`` [-], ``D`` and ``Sv`` in the output's unit ([N] for forces, [N m] for moments).  Arrays of any
    broadcastable shapes and one float dtype; returns their broadcast shape.
    """
    bx = B * (x + Sh)
    return D * sin(C * atan(bx - E * (bx - atan(bx)))) + Sv


def magic_formula_direct(x, B, C, D, E):
    """Direct variant ``D sin(C atan(B x - E atan(B x - atan(B x))))``.

    Units and shapes as :func:`magic_formula` (``x`` slip, ``B`` its inverse, ``D`` the output's unit).
    """
    bx = B * x
    return D * sin(C * atan(bx - E * atan(bx - atan(bx))))


def peak_phase(x, B, C, E, Sh=0.0):
    """The sine's phase ``C atan(B x1 - E (B x1 - atan(B x1)))`` [rad]; ``|phase| > pi/2`` means past the peak.

    ``x``, ``Sh`` in the slip's unit, ``B`` its inverse, ``C``, ``E`` [-]; broadcast shape of the inputs.
    """
    bx = B * (x + Sh)
    return C * atan(bx - E * (bx - atan(bx)))


def cosine_weight(x, B, C, E, Sh=0.0):
    """Cosine-form weighting used by combined slip: ``cos(C atan(B x1 - E (B x1 - atan(B x1))))`` [-].

    Arguments as :func:`peak_phase`; broadcast shape of the inputs.
    """
    return cos(peak_phase(x, B, C, E, Sh))
