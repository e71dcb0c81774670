"""The validity ranges of an MF file: which inputs lie outside them (per point, jit-safe) and the eager warning.

A ``.tir`` file states the ranges its fit is valid for: ``FZMIN``/``FZMAX`` [N] (load), ``KPUMIN``/``KPUMAX``
[-] (slip ratio), ``ALPMIN``/``ALPMAX`` [rad] (slip angle), ``CAMMIN``/``CAMMAX`` [rad] (camber),
``PRESMIN``/``PRESMAX`` [Pa] (inflation pressure).  :func:`jaxtire.mf61.mf_forces` saturates its inputs
at them by default (``limits="clamp"``, as MFeval does), so a point outside is evaluated *at the limit*.

* :func:`limit_flags` gives per-point booleans (:class:`LimitFlags`); pure, cheap, jit- and vmap-safe.
  :func:`jaxtire.evaluate` returns them, :func:`jaxtire.tire.out_of_range` is the model-independent entry.
* :func:`range_code` packs them into one small integer per point (bits :data:`RANGE_BITS`), the form a
  vehicle records in its telemetry and a fleet report counts (:func:`describe_code`).
* :func:`warn_out_of_range`: an eager call (concrete inputs, not under ``jit``) whose inputs leave the
  ranges warns once per call with :class:`OutOfRangeWarning`, naming each input, its extreme value,
  the limit and how far beyond it lies (MFeval warns likewise).  Under ``jit`` nothing is printed.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "RANGE_BITS",
    "LimitFlags",
    "OutOfRangeWarning",
    "any_wheel",
    "describe_code",
    "limit_flags",
    "range_code",
    "range_summary",
    "warn_out_of_range",
]


class OutOfRangeWarning(UserWarning):
    """An eager tire evaluation got inputs outside the file's validity ranges."""


class LimitFlags(NamedTuple):
    """Which inputs lay outside the file's validity range (booleans, shaped like the inputs).

    Ranges: ``FZMIN``/``FZMAX``, ``KPUMIN``/``KPUMAX``, ``ALPMIN``/``ALPMAX``, ``CAMMIN``/``CAMMAX``,
    ``PRESMIN``/``PRESMAX``, checked on the tyre-frame inputs (after mirroring for ``side``).
    """

    fz_low: jax.Array
    fz_high: jax.Array
    kappa: jax.Array
    alpha: jax.Array
    gamma: jax.Array
    pressure: jax.Array


#: Bit of each range in :func:`range_code` (``load`` covers both ``FZMIN`` and ``FZMAX``).
RANGE_BITS: dict[str, int] = {"load": 1, "slip ratio": 2, "slip angle": 4, "camber": 8, "pressure": 16}

# input name, file keys, LimitFlags fields, unit: what the warning says about each range
_RANGES = (
    ("load fz", "FZMIN", "FZMAX", " N"),
    ("slip ratio kappa", "KPUMIN", "KPUMAX", ""),
    ("slip angle alpha", "ALPMIN", "ALPMAX", " rad"),
    ("camber gamma", "CAMMIN", "CAMMAX", " rad"),
    ("pressure", "PRESMIN", "PRESMAX", " Pa"),
)


def limit_flags(p, kappa, alpha, gamma, fz, pres) -> LimitFlags:
    """Per-point flags of ``kappa`` [-], ``alpha`` [rad], ``gamma`` [rad], ``fz`` [N], ``pres`` [Pa] against the
    ranges of the MF params ``p`` (strict comparisons: a value at the limit is inside)."""
    return LimitFlags(
        fz < p.FZMIN,
        fz > p.FZMAX,
        (kappa < p.KPUMIN) | (kappa > p.KPUMAX),
        (alpha < p.ALPMIN) | (alpha > p.ALPMAX),
        (gamma < p.CAMMIN) | (gamma > p.CAMMAX),
        (pres < p.PRESMIN) | (pres > p.PRESMAX),
    )


def range_code(flags: LimitFlags):
    """One ``int8`` per point: the sum of :data:`RANGE_BITS` of the ranges the point left (0: all inside)."""
    f = flags
    code = (
        (f.fz_low | f.fz_high).astype(jnp.int8) * RANGE_BITS["load"]
        + f.kappa.astype(jnp.int8) * RANGE_BITS["slip ratio"]
        + f.alpha.astype(jnp.int8) * RANGE_BITS["slip angle"]
        + f.gamma.astype(jnp.int8) * RANGE_BITS["camber"]
        + f.pressure.astype(jnp.int8) * RANGE_BITS["pressure"]
    )
    return jnp.asarray(code, jnp.int8)


def any_wheel(code):
    """Bitwise OR of ``code`` over its last axis (the wheels): one ``int8`` per vehicle (jit-safe)."""
    code = jnp.asarray(code, jnp.int8)
    out = code[..., 0]
    for i in range(1, code.shape[-1]):  # a handful of wheels: static
        out = out | code[..., i]
    return out


def describe_code(code) -> dict[str, int]:
    """``{range name: how many entries of code have its bit}`` (numpy; e.g. one OR-ed code per vehicle)."""
    c = np.asarray(code).astype(np.int64)
    return {name: int(np.count_nonzero(c & bit)) for name, bit in RANGE_BITS.items()}


def range_summary(code, what: str = "vehicles") -> str:
    """One line counting the entries of ``code`` (one per vehicle) whose tires left a validity range, and where:
    ``"tires outside their validity ranges: 3 of 64 vehicles (load 3, slip ratio 0, ...)"``."""
    c = np.asarray(code).astype(np.int64)
    per = ", ".join(f"{k} {v}" for k, v in describe_code(c).items())
    return f"tires outside their validity ranges: {int(np.count_nonzero(c))} of {c.size} {what} ({per})"


def _concrete(*xs: Any) -> bool:
    return not any(isinstance(leaf, jax.core.Tracer) for x in xs for leaf in jax.tree.leaves(x))


def warn_out_of_range(p, kappa, alpha, gamma, fz, pres, limits: str, source: str = "jaxtire MF tire") -> str | None:
    """Warn (:class:`OutOfRangeWarning`, once per call) when concrete inputs leave the ranges of ``p``.

    The message names each input outside, its most extreme value, the limit it passed and by how much,
    and what the evaluation did (``limits="clamp"``: evaluated at the limit; ``"off"``: extrapolated).
    Returns the message (``None``: nothing outside, or traced inputs, which are never checked)."""
    if not _concrete(p, kappa, alpha, gamma, fz, pres):
        return None
    vals = [np.asarray(v, dtype=np.float64) for v in (fz, kappa, alpha, gamma, pres)]
    parts = []
    for (name, kmin, kmax, unit), x in zip(_RANGES, vals, strict=True):
        lo = np.asarray(getattr(p, kmin), dtype=np.float64)
        hi = np.asarray(getattr(p, kmax), dtype=np.float64)
        below, above = np.broadcast_arrays(x - lo, x - hi)
        if np.any(below < 0):
            i = np.unravel_index(np.argmin(below), below.shape)
            xv, lv = np.broadcast_to(x, below.shape)[i], np.broadcast_to(lo, below.shape)[i]
            parts.append(f"{name} = {xv:.6g}{unit} is {-below[i]:.4g}{unit} below {kmin} = {lv:.6g}")
        if np.any(above > 0):
            i = np.unravel_index(np.argmax(above), above.shape)
            xv, hv = np.broadcast_to(x, above.shape)[i], np.broadcast_to(hi, above.shape)[i]
            parts.append(f"{name} = {xv:.6g}{unit} is {above[i]:.4g}{unit} above {kmax} = {hv:.6g}")
    if not parts:
        return None
    did = "evaluated at the limit (limits='clamp')" if limits == "clamp" else "extrapolated beyond it (limits='off')"
    msg = f"{source}: input outside the tire file's validity range, {did}: " + "; ".join(parts)
    warnings.warn(msg, OutOfRangeWarning, stacklevel=4)
    return msg
