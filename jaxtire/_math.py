"""Numerically safe elementwise helpers shared by every tire equation.

All helpers follow the *safe-where* pattern: the argument of a function that
would be singular (``sqrt(0)``, ``x / 0``, ``x ** q`` at 0) is first replaced by
a harmless value on the masked branch, so neither the value nor the gradient
of the discarded branch can produce NaN or inf.

Every helper takes its array namespace from its arguments (:func:`jaxtire._xp.namespace`): JAX arrays
and tracers give the ``jax.numpy`` forms below, NumPy arrays the same expressions in NumPy (``atan``:
``np.arctan``, ``cos_atan``: ``1 / sqrt(1 + x^2)``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._xp import namespace

#: Small positive number used to regularise denominators (same role as MFeval's eps).
EPS = 1e-6


def safe_div(num, den, eps: float = EPS):
    """``num / den`` with ``|den|`` kept away from zero, keeping the sign of ``den``.

    ``den`` is replaced by ``den + eps * sign(den)`` (``+eps`` where ``den == 0``).  Computed as
    ``num * (1 / den')`` (within 1.5 ulp of the quotient): XLA:CPU stores the reciprocal, a function of the
    denominator only, and recomputes the cheap product where it is read (fewer operations per tire than a
    stored quotient; ``benchmarks/PERF_NOTES.md``, session 5).
    """
    xp = namespace(num, den)
    sgn = xp.where(den >= 0, 1.0, -1.0).astype(xp.result_type(den))
    return num * xp.reciprocal(den + eps * sgn)


def safe_sqrt(x, tiny: float = 1e-20):
    """``sqrt(x)`` for ``x >= 0`` whose gradient is finite (zero) at ``x == 0``."""
    xp = namespace(x)
    pos = x > tiny
    xs = xp.where(pos, x, 1.0)
    return xp.where(pos, xp.sqrt(xs), 0.0)


def safe_norm(x, y):
    """Euclidean norm ``sqrt(x^2 + y^2)`` with a zero gradient at the origin."""
    return safe_sqrt(x * x + y * y)


def safe_pow(x, q, tiny: float = 1e-12):
    """``x ** q`` for ``x >= 0``; returns 0 (and a finite gradient) for ``x <= tiny``."""
    xp = namespace(x, q)
    pos = x > tiny
    xs = xp.where(pos, x, 1.0)
    return xp.where(pos, xs**q, 0.0)


def smooth_sign(x, width):
    """Linear-ramp sign: ``clip(x / width, -1, 1)``; continuous, zero at ``x == 0``."""
    return namespace(x, width).clip(x / width, -1.0, 1.0)


def sign_nonzero(x):
    """``sign(x)`` but +1 at ``x == 0`` (used where MF needs a sign that is never 0)."""
    xp = namespace(x)
    return xp.where(x >= 0, 1.0, -1.0).astype(xp.result_type(x))


def cos_atan(x):
    """``cos(atan(x)) = 1 / sqrt(1 + x^2)``, exact identity without the two transcendental calls."""
    if namespace(x) is np:
        return 1.0 / np.sqrt(1.0 + x * x)
    return jax.lax.rsqrt(1.0 + x * x)


# Near-minimax odd polynomial for atan(z) / z = P(z^2) on [0, 1] (max error 5.8e-9, below
# float32 resolution), fitted by iteratively reweighted least squares for jaxtire.
_ATAN_COEFFS = (
    0.9999998861316876,
    -0.3333259625577528,
    0.1998589925615327,
    -0.1416119574630598,
    0.10498868646208655,
    -0.07234762456163918,
    0.039780668171439215,
    -0.014401273307624043,
    0.0024567537698796382,
)


def _estrin(w, coeffs):
    """``sum_k coeffs[k] w^k`` by Estrin's scheme: pairs ``c_2j + c_2j+1 w``, then ``w^2``, ``w^4``, ... levels.

    The same polynomial as Horner's rule with a dependency chain of ``~2 log2(len)`` operations instead of
    ``len``: the tire loops are latency-bound (``benchmarks/PERF_NOTES.md``, "Estrin"), so the shorter
    chain evaluates faster; the rounding differs from Horner's by a few float32 ulp.
    """
    terms = [jnp.float32(c) for c in coeffs]
    power = w
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] * power if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
        power = power * power
    return terms[0]


def atan(x):
    """``arctan(x)``; in float32 a fused-friendly polynomial (a few ulp), in float64 ``jnp.arctan``; NumPy input:
    ``np.arctan``.

    XLA's CPU ``atan`` goes through a general ``atan2`` that does not vectorise well inside
    large fusions; this range-reduced polynomial (``atan(x) = pi/2 - atan(1/x)`` for ``|x| > 1``)
    keeps the Magic Formula loops vectorised.  The derivative is the exact ``1 / (1 + x^2)``.
    """
    return np.arctan(x) if namespace(x) is np else _atan(x)


@jax.custom_jvp
def _atan(x):
    x = jnp.asarray(x)
    if x.dtype != jnp.float32:
        return jnp.arctan(x)
    t = jnp.abs(x)
    big = t > 1.0
    z = jnp.where(big, 1.0 / jnp.maximum(t, 1.0), t)
    r = _estrin(z * z, _ATAN_COEFFS) * z
    r = jnp.where(big, jnp.float32(np.pi / 2) - r, r)
    return jnp.copysign(r, x)


@_atan.defjvp
def _atan_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _atan(x), dx / (1.0 + x * x)


def materialise(x):
    """``x`` itself (finite values, bit for bit), computed once and stored instead of recomputed in every loop.

    XLA:CPU's loop fusion recomputes a *cheap* value (adds, multiplies, selects, the polynomial ``sin`` /
    ``atan``) inside every loop that reads it, and stores only *expensive* ones (a float divide, root,
    exponential) for the other loops to read.  A tire evaluation compiles to several loops (one per output at
    least: XLA:CPU has no multi-output loop fusion), so a polynomial of the inputs read by five loops was
    evaluated five times.  ``x / (0 x + 1)`` is ``x`` exactly for finite ``x`` (``0 x = +-0``, ``+-0 + 1 = 1``;
    XLA folds neither ``0 x`` nor a divide by a computed 1) and makes the value's root a divide, so it is
    evaluated once and read from memory.  ``+-inf`` gives NaN: use it on values that are finite by
    construction; subnormal values (below ``1.2e-38`` in float32) may be flushed to a zero of the same sign.  Derivative: the identity.  See ``benchmarks/PERF_NOTES.md``, "Cheap-op divides and roots".
    NumPy input: the same expression, on the host.
    """
    return _divide_by_one(x) if namespace(x) is np else _materialise(x)


def _divide_by_one(x):
    return x / (x * 0.0 + 1.0)


_materialise = jax.custom_jvp(_divide_by_one)


@_materialise.defjvp
def _materialise_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _materialise(x), dx
