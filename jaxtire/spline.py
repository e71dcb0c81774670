"""Two-piece spline friction curve of game engines (Unity ``WheelFrictionCurve``).

The curve maps a slip measure ``s`` (the host's units: slip ratio, slip angle
or slip speed) to a force (the host's units, usually N).  It is odd in ``s``;
for ``s >= 0``, with ``xe, ye`` the extremum and ``xa, ya`` the asymptote knots
and ``k`` the ``stiffness`` multiplier::

    0 <= s < xe:    u = s / xe
                    F = k ye (u + u^2 - u^3)
    xe <= s:        v = min((s - xe) / (xa - xe), 1)
                    F = k (ye + (ya - ye) (3 v^2 - 2 v^3))

Both pieces are cubic Hermite segments on the unit interval, with the basis
``h00 = 2u^3 - 3u^2 + 1``, ``h10 = u^3 - 2u^2 + u``, ``h01 = -2u^3 + 3u^2``,
``h11 = u^3 - u^2``:

* first piece: ``p0 = 0``, ``p1 = ye``, tangents (per unit ``u``) ``m0 = ye``,
  ``m1 = 0``, i.e. ``F = ye (h01 + h10)``: it leaves the origin with the secant
  slope ``ye / xe``, reaches the extremum with zero slope and is monotone in
  between (``dF/du = ye (1 - u)(1 + 3u) >= 0``);
* second piece: ``p0 = ye``, ``p1 = ya``, ``m0 = m1 = 0`` (a smoothstep), zero
  slope at both knots; flat at ``ya`` beyond ``xa``.

The first-piece tangent is the one choice the Unity reference leaves open
(it fixes only the knots and the zero tangents there); ``m0 = ye`` is, to our
knowledge, the choice of the PhysX 2 tire function (``NxTireFunctionDesc``)
under the original WheelCollider.  The curve is C1 everywhere (a kink-free
force) except that its second derivative jumps at the knots.  Defaults are
Unity's: ``extremumSlip`` 1, ``extremumValue`` 20000, ``asymptoteSlip`` 2,
``asymptoteValue`` 10000, ``stiffness`` 1.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire._pytree import replace_fields
from jaxtire.validation import ValidationError, check_fields

#: Allowed ranges: field -> (low, high, low inclusive, high inclusive); also ``asymptote_slip > extremum_slip``.
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "extremum_slip": (0.0, math.inf, False, False),
    "extremum_value": (0.0, math.inf, True, False),
    "asymptote_slip": (0.0, math.inf, False, False),
    "asymptote_value": (0.0, math.inf, True, False),
    "stiffness": (0.0, math.inf, True, False),
}


class SplineParams(NamedTuple):
    """Spline friction curve parameters (a pytree; build with :func:`make_spline`).

    ``extremum_slip`` / ``asymptote_slip`` in the host's slip units,
    ``extremum_value`` / ``asymptote_value`` in force units, ``stiffness`` [-]
    multiplies both values.  Leaves may carry a leading batch axis.
    """

    extremum_slip: Any = 1.0
    extremum_value: Any = 20000.0
    asymptote_slip: Any = 2.0
    asymptote_value: Any = 10000.0
    stiffness: Any = 1.0

    def replace(self, **changes) -> SplineParams:
        """A copy with some fields changed: validated and dtype-preserving when concrete, a plain swap
        of leaves under ``jit`` (works with tracers); an unknown field raises (:mod:`jaxtire._pytree`)."""
        return replace_fields(
            self,
            changes,
            self._fields,
            lambda v: make_spline(**v, dtype=jnp.result_type(self.extremum_slip)),
            source="SplineParams",
        )


def make_spline(
    extremum_slip=1.0, extremum_value=20000.0, asymptote_slip=2.0, asymptote_value=10000.0, stiffness=1.0, *, dtype=None
) -> SplineParams:
    """Validated :class:`SplineParams` (defaults: Unity's ``WheelFrictionCurve``).

    Raises :class:`~jaxtire.validation.ValidationError` (a ``ValueError``) naming the field
    unless ``extremum_slip > 0``, ``asymptote_slip > extremum_slip``, ``extremum_value >= 0``,
    ``asymptote_value >= 0`` and ``stiffness >= 0`` (:data:`RANGES`; all finite and not underflowing in a
    floating ``dtype``, elementwise for arrays whose shapes broadcast: :func:`~jaxtire.validation.check_fields`).
    """
    src = "SplineParams"
    values = dict(
        zip(
            SplineParams._fields,
            (extremum_slip, extremum_value, asymptote_slip, asymptote_value, stiffness),
            strict=False,
        )
    )
    dtype = check_fields(values, RANGES, source=src, dtype=dtype)
    xe, xa = np.broadcast_arrays(np.asarray(extremum_slip, np.float64), np.asarray(asymptote_slip, np.float64))
    # compared as stored: 1 + 1e-9 > 1 in float64 but equal in float32 (0/0 in the second piece)
    sd = np.dtype(dtype)
    bad = ~(xa.astype(sd) > xe.astype(sd))
    if bad.any():
        i = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
        at = f" (at index {i})" if i else ""
        raise ValidationError(
            f"{src}: asymptote_slip = {xa[i]} must be > extremum_slip = {xe[i]}{at} (also once stored in {sd.name})"
        )
    return SplineParams(**{k: jnp.asarray(v, dtype) for k, v in values.items()})


def spline_curve(params: SplineParams, slip):
    """The friction force ``F(slip)`` of the two-piece Hermite spline (equations: module docstring).

    Odd in ``slip``; broadcasts ``slip`` against the parameter leaves.  Finite
    value and gradient everywhere (slope ``stiffness * extremum_value / extremum_slip`` at 0).
    """
    p = params
    s = jnp.asarray(slip)
    xe, ye, xa, ya = p.extremum_slip, p.extremum_value, p.asymptote_slip, p.asymptote_value
    u = s / xe
    first = ye * (u + u * jnp.abs(u) - u * u * u)  # odd extension of ye (u + u^2 - u^3)
    span = xa - xe  # > 0 for validated params; a degenerate span (replaced leaves) gives a step, not 0/0
    ok = span > 0
    v = jnp.where(
        ok,
        jnp.clip((jnp.abs(s) - xe) / jnp.where(ok, span, 1.0), 0.0, 1.0),
        (jnp.abs(s) > xe).astype(jnp.result_type(first)),
    )
    sign = jnp.where(s >= 0, 1.0, -1.0).astype(jnp.result_type(first))
    second = sign * (ye + (ya - ye) * v * v * (3.0 - 2.0 * v))
    return p.stiffness * jnp.where(jnp.abs(s) < xe, first, second)
