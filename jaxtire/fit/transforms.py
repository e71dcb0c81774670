"""Bounds through unconstrained variables: every iterate of an optimiser stays inside its bounds.

A bounded quantity ``x`` is optimised through an unconstrained variable ``u``::

    lower, upper finite:  x = lower + (upper - lower) * sigmoid(u)
    only lower finite:    x = lower + scale * softplus(u)
    only upper finite:    x = upper - scale * softplus(-u)
    neither:              x = scale * u

each increasing in ``u``.  :func:`to_unconstrained` inverts it, moving a value on (or past) a
bound inside by 1e-6 of the range (two-sided) or 1e-12 ``scale`` (one-sided).  :func:`pack` and
:func:`unpack` apply the pair to a mapping ``name -> value`` with ``bounds[name] = (lower, upper)``
(the form the fitting stages, vehicle identification and controller tuning use).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["from_unconstrained", "pack", "to_unconstrained", "unpack"]


def _softplus_inv(y):
    y = jnp.maximum(y, 1e-12)
    return y + jnp.log(-jnp.expm1(-y))


def _bound_masks(lower, upper):
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    lof, hif = np.isfinite(lo), np.isfinite(hi)
    if np.any(lof & hif & ~(hi > lo)):
        raise ValueError(f"bounds: upper {upper} must exceed lower {lower}")
    return np.where(lof, lo, 0.0), np.where(hif, hi, 0.0), lof, hif


def from_unconstrained(u, lower=-math.inf, upper=math.inf, scale=1.0):
    """Map unconstrained ``u`` into ``[lower, upper]`` (module docstring): scaled sigmoid when both bounds are
    finite, ``lower + scale softplus(u)`` / ``upper - scale softplus(-u)`` when one is, ``scale u`` when
    none is; increasing in ``u``.  Bounds are concrete floats or arrays (elementwise), ``u`` may be traced."""
    lo, hi, lof, hif = _bound_masks(lower, upper)
    two = lo + (hi - lo) * jax.nn.sigmoid(u)
    return jnp.where(
        lof & hif,
        two,
        jnp.where(lof, lo + scale * jax.nn.softplus(u), jnp.where(hif, hi - scale * jax.nn.softplus(-u), scale * u)),
    )


def to_unconstrained(x, lower=-math.inf, upper=math.inf, scale=1.0):
    """Inverse of :func:`from_unconstrained`; a value on (or past) a bound is moved 1e-6 of the range
    (two-sided) or 1e-12 scale (one-sided) inside."""
    lo, hi, lof, hif = _bound_masks(lower, upper)
    x = jnp.asarray(x)
    eps = 1e-6
    t = jnp.clip((x - lo) / np.where(lof & hif, hi - lo, 1.0), eps, 1.0 - eps)
    two = jnp.log(t) - jnp.log1p(-t)
    return jnp.where(
        lof & hif,
        two,
        jnp.where(lof, _softplus_inv((x - lo) / scale), jnp.where(hif, -_softplus_inv((hi - x) / scale), x / scale)),
    )


def pack(values: Mapping[str, float], bounds: Mapping[str, tuple[float, float]], dtype=None) -> dict:
    """``{name: to_unconstrained(values[name], *bounds[name])}`` as arrays of ``dtype`` (default float)."""
    dtype = dtype or jnp.result_type(float)
    return {k: jnp.asarray(to_unconstrained(v, *bounds[k]), dtype) for k, v in values.items()}


def unpack(u: Mapping[str, jax.Array], bounds: Mapping[str, tuple[float, float]]) -> dict:
    """``{name: from_unconstrained(u[name], *bounds[name])}``: the inverse of :func:`pack` (traceable)."""
    return {k: from_unconstrained(v, *bounds[k]) for k, v in u.items()}
