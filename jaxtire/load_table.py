"""Multi-curve load table: Magic Formula presets at discrete loads, interpolated in load.

A table holds ``n`` curve presets ``(B_i, C_i, D_i, E_i)`` measured (or tuned)
at loads ``Fz_1 < ... < Fz_n`` [N].  At a load ``Fz`` the two nearest slices
``i, i+1`` (``Fz_i <= Fz <= Fz_{i+1}``) are evaluated and blended linearly::

    F_i(x) = D_i sin(C_i atan(B_i x - E_i (B_i x - atan(B_i x))))      (magic_formula)
    t      = clip((Fz - Fz_i) / (Fz_{i+1} - Fz_i), 0, 1)
    F(x)   = lerp(F_i(x), F_{i+1}(x), t) = F_i(x) + t (F_{i+1}(x) - F_i(x))

(with the static flag ``direct=True``, ``F_i`` is the direct variant
:func:`jaxtire.magic_formula.magic_formula_direct` of the TLabVehiclePhysics
``MultiPacejka`` table).  Outside ``[Fz_1, Fz_n]`` the result is clamped to the
end slice: ``F(x) = F_1(x)`` below ``Fz_1`` and ``F_n(x)`` above ``Fz_n``.  So
``F`` equals each slice exactly at its load, is linear in ``Fz`` between two
loads (kinks at the loads) and continuous everywhere.

Units: ``x`` is the caller's slip ([-] or [rad]); ``D_i`` (and the result) are
in the caller's force units, i.e. ``D_i`` is the peak force of slice ``i`` [N]
(store friction coefficients instead and multiply the result by ``Fz``
yourself for a normalised table).  Signs are the curve's: odd in ``x``, so
apply the ISO-W sign of the lateral force (``Fy = -F(alpha)``) at the call site.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._pytree import ValidatedReplace
from jaxtire.magic_formula import magic_formula, magic_formula_direct
from jaxtire.validation import ValidationError, check_fields, check_range

#: Allowed ranges of the curve coefficients: name -> (low, high, low inclusive, high inclusive).
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "B": (0.0, math.inf, False, False),
    "C": (0.0, 2.0, False, True),
    "D": (0.0, math.inf, True, False),
    "E": (-math.inf, 1.0, False, True),
}


@dataclasses.dataclass(frozen=True)
class LoadTable(ValidatedReplace):
    """A stack of curve presets (build with :func:`make_load_table`).

    ``replace(**changes)``: the shared semantics of :mod:`jaxtire._pytree`.

    ``fz``, ``B``, ``C``, ``D``, ``E``: array leaves of shape ``(n,)`` (slice axis
    leading; stack tables on a new leading axis and ``vmap`` for a batch).
    ``direct`` (static) picks :func:`magic_formula_direct` over :func:`magic_formula`.
    """

    fz: jax.Array
    B: jax.Array
    C: jax.Array
    D: jax.Array
    E: jax.Array
    direct: bool = False

    _STATIC = ("direct",)

    def _make(self, values: dict, dtype) -> LoadTable:
        return make_load_table(**values, dtype=dtype)


jax.tree_util.register_dataclass(LoadTable, data_fields=["fz", "B", "C", "D", "E"], meta_fields=["direct"])


def make_load_table(fz, B, C, D, E, *, direct: bool = False, dtype=None) -> LoadTable:
    """Validated :class:`LoadTable` from loads ``fz`` [N] and per-slice ``B, C, D, E``.

    ``fz`` must be a 1-D sequence of finite, strictly increasing loads >= 0 (at
    least one); each of ``B, C, D, E`` a scalar (shared by every slice) or a
    sequence of the same length.  Raises :class:`~jaxtire.validation.ValidationError` (a
    ``ValueError``) naming the field otherwise (also for ``B <= 0``, ``C`` outside (0, 2],
    ``D < 0``, ``E > 1`` (:data:`RANGES`), a value that overflows or underflows ``dtype``, or a
    non-floating ``dtype``: :func:`~jaxtire.validation.check_fields`).
    """
    src = "LoadTable"
    # one field at a time (the one-value-per-load rule below names a bad column better than a broadcast error)
    dtype = check_fields({"fz": fz}, {"fz": (0.0, math.inf, True, False)}, source=src, dtype=dtype)
    loads = check_range("fz", fz, 0.0, math.inf, True, False, source=src, dtype=dtype)
    if loads.ndim != 1 or loads.size < 1:
        raise ValidationError(f"{src}: fz must be a 1-D sequence of at least one load, got shape {loads.shape}")
    steps = np.diff(loads)
    if (steps <= 0).any():
        i = int(np.argmax(steps <= 0))
        raise ValidationError(
            f"{src}: fz must be strictly increasing; fz[{i}] = {loads[i]} >= fz[{i + 1}] = {loads[i + 1]}"
        )
    n = loads.size
    cols = {}
    for name, v in zip("BCDE", (B, C, D, E), strict=False):
        check_fields({name: v}, RANGES, source=src, dtype=dtype)
        arr = check_range(name, v, *RANGES[name], source=src, dtype=dtype)
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise ValidationError(
                f"{src}: {name} must be a scalar or have one value per load ({n}), got shape {arr.shape}"
            )
        cols[name] = arr
    if not isinstance(direct, bool):
        raise ValidationError(f"{src}: direct = {direct!r} must be a Python bool (a static flag)")
    b, c, d, e = (jnp.asarray(cols[k], dtype) for k in "BCDE")
    return LoadTable(jnp.asarray(loads, dtype), b, c, d, e, direct=direct)


SLIP_SAT = 1e6


def _curve(table: LoadTable, x, i):
    f = magic_formula_direct if table.direct else magic_formula
    return f(x, table.B[i], table.C[i], table.D[i], table.E[i])


def load_table_force(table: LoadTable, x, fz):
    """``lerp(F_low(x), F_high(x), t)`` between the two slices around ``fz`` [N], clamped outside.

    ``x`` and ``fz`` broadcast against each other; the result has their
    broadcast shape.  Pure and differentiable in ``x``, ``fz`` and every leaf.  ``x`` saturates at
    ``+-SLIP_SAT`` (1e6), so every finite input gives a finite output in float32 and float64.
    """
    x, fz = jnp.asarray(x), jnp.asarray(fz)
    x = jnp.clip(x, -SLIP_SAT, SLIP_SAT)  # saturated (the curve is flat long before): no inf - inf
    loads = table.fz
    n = loads.shape[0]
    if n == 1:
        return jnp.broadcast_to(_curve(table, x, 0), jnp.broadcast_shapes(x.shape, fz.shape))
    i = jnp.clip(jnp.searchsorted(loads, fz, side="right") - 1, 0, n - 2)
    lo, hi = loads[i], loads[i + 1]
    t = jnp.clip((fz - lo) / (hi - lo), 0.0, 1.0)
    f_lo = _curve(table, x, i)
    f_hi = _curve(table, x, i + 1)
    return f_lo + t * (f_hi - f_lo)
