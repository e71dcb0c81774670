"""Numerically safe elementwise helpers shared by every tire equation.

All helpers follow the *safe-where* pattern: the argument of a function that
would be singular (``sqrt(0)``, ``x / 0``, ``x ** q`` at 0) is first replaced by
a harmless value on the masked branch, so neither the value nor the gradient
of the discarded branch can produce NaN or inf.

In float32 the reciprocal, square root, inverse square root and exponential used here are
:func:`recip`, :func:`sqrt`, :func:`rsqrt` and :func:`exp`: sequences of multiplies, adds, compares
and integer bit operations (a bit-trick first guess and Newton steps) instead of XLA's ``divide``,
``sqrt``, ``rsqrt`` and ``exp``.  They are as accurate (within 1 ulp; ``recip`` and ``sqrt`` within
0.5005 ulp, i.e. correctly rounded but for rare ties), and XLA:CPU treats them as *cheap*: its loop
fusion recomputes a cheap value in every loop that reads it, but writes an expensive one (a float
divide, root or exponential) to memory whenever two loops read it, which splits a tire evaluation
into many loops (``benchmarks/PERF_NOTES.md``, "Cheap-op divides and roots").  Other dtypes
(float64 with ``jax_enable_x64``) use the ``jnp`` / ``lax`` operations unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

#: Small positive number used to regularise denominators (same role as MFeval's eps).
EPS = 1e-6


def f32_variant(jnp_fn, f32_fn, doc: str):
    """``jnp_fn`` as a ``custom_jvp`` function that evaluates ``f32_fn`` on float32 arrays (other dtypes: ``jnp_fn``).

    The dtype is read at trace time, so float64 programs contain ``jnp_fn`` only.  Attach the derivative
    with ``@fn.defjvp``.
    """

    def fn(x):
        x = jnp.asarray(x)
        return f32_fn(x) if x.dtype == jnp.float32 else jnp_fn(x)

    fn.__name__ = fn.__qualname__ = jnp_fn.__name__
    fn.__doc__ = doc
    return jax.custom_jvp(fn)


def _bits(x):
    return lax.bitcast_convert_type(x, jnp.int32)


def _from_bits(i):
    return lax.bitcast_convert_type(i, jnp.float32)


_TINY32 = np.float32(2.0**-125)  # below: scaled up by 2^24 first (the bit-trick guess needs a normal number)
_HUGE32 = np.float32(2.0**124)  # above: 1/x is scaled down by 2^-4 first (for the same reason)


def _recip_f32(x):
    """``1/x`` in float32: guess ``bits(1/a) ~ 0x7EF311C3 - bits(a)``, two Newton steps ``y (2 - a y)``, and a last
    residual step ``y + y (1 - a y)`` (0.5005 ulp measured); ``+-0`` -> ``+-inf``, ``+-inf`` -> ``+-0``, NaN -> NaN."""
    a = jnp.abs(x)
    s = jnp.where(a < _TINY32, np.float32(2.0**24), jnp.where(a > _HUGE32, np.float32(2.0**-4), np.float32(1.0)))
    a_s = a * s
    y = _from_bits(jnp.int32(0x7EF311C3) - _bits(a_s))
    y = y * (2.0 - a_s * y)
    y = y * (2.0 - a_s * y)
    y = (y + y * (1.0 - a_s * y)) * s
    y = jnp.where(a == 0.0, np.float32(np.inf), jnp.where(a == np.inf, np.float32(0.0), y))
    return jnp.copysign(y, x)


def _rsqrt_f32(x):
    """``1/sqrt(x)`` in float32: guess ``0x5F375A86 - bits(x)/2``, two Newton steps ``y (3/2 - x y^2 / 2)`` and a
    residual step (below 1 ulp); ``0`` -> ``inf``, ``inf`` -> ``0``, ``x < 0`` / NaN -> NaN."""
    tiny = x < _TINY32
    s = jnp.where(tiny, np.float32(2.0**24), np.float32(1.0))
    x_s = x * s
    y = _from_bits(jnp.int32(0x5F375A86) - (_bits(x_s) >> 1))
    h = 0.5 * x_s
    y = y * (1.5 - h * y * y)
    y = y * (1.5 - h * y * y)
    y = y + y * (0.5 - h * y * y)
    y = y * jnp.where(tiny, np.float32(2.0**12), np.float32(1.0))
    y = jnp.where(x == 0.0, np.float32(np.inf), jnp.where(x == np.inf, np.float32(0.0), y))
    return jnp.where(x < 0.0, np.float32(np.nan), y)


def _sqrt_f32(x):
    """``sqrt(x)`` in float32: ``s = x rsqrt(x)`` and one Heron step ``s + (x - s^2) rsqrt(x) / 2`` (0.5005 ulp
    measured); ``0`` -> ``0``, ``inf`` -> ``inf``, ``x < 0`` / NaN -> NaN."""
    y = _rsqrt_f32(x)
    s = x * y
    s = s + (x - s * s) * (0.5 * y)
    return jnp.where((x == 0.0) | (x == np.inf), x, s)


# Cephes expf (S. L. Moshier): exp(x) = 2^k exp(r), r = x - k ln 2 (ln 2 in two parts), |r| <= ln(2)/2.
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.12194440e-4)
_EXP_COEFFS = tuple(
    np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
)


def _pow2(k):
    """``2^k`` for int32 ``k`` in ``[-126, 127]``."""
    return _from_bits((k + 127) << 23)


def _exp_f32(x):
    """``exp(x)`` in float32 (Cephes ``expf``); overflow -> ``inf``, large negative -> ``0``, NaN -> NaN."""
    x = jnp.clip(x, np.float32(-104.0), np.float32(89.0))
    k = jnp.round(x * _LOG2E)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _EXP_COEFFS[0]
    for c in _EXP_COEFFS[1:]:
        p = p * r + c
    e = p * (r * r) + r + 1.0
    ki = k.astype(jnp.int32)
    k1 = ki >> 1
    return e * _pow2(k1) * _pow2(ki - k1)


recip = f32_variant(
    jnp.reciprocal, _recip_f32, "``1/x``: cheap-op Newton iteration in float32 (0.5005 ulp), ``jnp.reciprocal`` otherwise."
)
rsqrt = f32_variant(lax.rsqrt, _rsqrt_f32, "``1/sqrt(x)``: cheap-op Newton iteration in float32 (< 1 ulp), ``lax.rsqrt`` otherwise.")
sqrt = f32_variant(jnp.sqrt, _sqrt_f32, "``sqrt(x)``: ``x rsqrt(x)`` + a Heron step in float32 (0.5005 ulp), ``jnp.sqrt`` otherwise.")
exp = f32_variant(jnp.exp, _exp_f32, "``exp(x)``: range reduction + polynomial (Cephes ``expf``) in float32, ``jnp.exp`` otherwise.")


@recip.defjvp
def _recip_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    r = recip(x)
    return r, -(r * r) * dx


@rsqrt.defjvp
def _rsqrt_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    r = rsqrt(x)
    return r, (-0.5 * r * r * r) * dx


@sqrt.defjvp
def _sqrt_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return sqrt(x), (0.5 * rsqrt(x)) * dx


@exp.defjvp
def _exp_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    e = exp(x)
    return e, e * dx


def safe_div(num, den, eps: float = EPS):
    """``num / den`` with ``|den|`` kept away from zero, keeping the sign of ``den``.

    ``den`` is replaced by ``den + eps * sign(den)`` (``+eps`` where ``den == 0``).
    """
    den = jnp.asarray(den, jnp.result_type(num, den))
    sgn = jnp.where(den >= 0, 1.0, -1.0).astype(den.dtype)
    return num * recip(den + eps * sgn)


def safe_sqrt(x, tiny: float = 1e-20):
    """``sqrt(x)`` for ``x >= 0`` whose gradient is finite (zero) at ``x == 0``."""
    pos = x > tiny
    xs = jnp.where(pos, x, 1.0)
    return jnp.where(pos, sqrt(xs), 0.0)


def safe_norm(x, y):
    """Euclidean norm ``sqrt(x^2 + y^2)`` with a zero gradient at the origin."""
    return safe_sqrt(x * x + y * y)


def safe_pow(x, q, tiny: float = 1e-12):
    """``x ** q`` for ``x >= 0``; returns 0 (and a finite gradient) for ``x <= tiny``."""
    pos = x > tiny
    xs = jnp.where(pos, x, 1.0)
    return jnp.where(pos, xs**q, 0.0)


def smooth_sign(x, width):
    """Linear-ramp sign: ``clip(x / width, -1, 1)``; continuous, zero at ``x == 0``."""
    return jnp.clip(x / width, -1.0, 1.0)


def sign_nonzero(x):
    """``sign(x)`` but +1 at ``x == 0`` (used where MF needs a sign that is never 0)."""
    return jnp.where(x >= 0, 1.0, -1.0).astype(jnp.result_type(x))


def cos_atan(x):
    """``cos(atan(x)) = 1 / sqrt(1 + x^2)``, exact identity without the two transcendental calls."""
    return rsqrt(1.0 + x * x)


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


@jax.custom_jvp
def atan(x):
    """``arctan(x)``; in float32 a fused-friendly polynomial (a few ulp), in float64 ``jnp.arctan``.

    XLA's CPU ``atan`` goes through a general ``atan2`` that does not vectorise well inside
    large fusions; this range-reduced polynomial (``atan(x) = pi/2 - atan(1/x)`` for ``|x| > 1``)
    keeps the Magic Formula loops vectorised.  The derivative is the exact ``1 / (1 + x^2)``.
    """
    x = jnp.asarray(x)
    if x.dtype != jnp.float32:
        return jnp.arctan(x)
    t = jnp.abs(x)
    big = t > 1.0
    z = jnp.where(big, recip(jnp.maximum(t, 1.0)), t)
    z2 = z * z
    p = jnp.float32(_ATAN_COEFFS[-1])
    for c in _ATAN_COEFFS[-2::-1]:
        p = p * z2 + jnp.float32(c)
    r = p * z
    r = jnp.where(big, jnp.float32(np.pi / 2) - r, r)
    return jnp.copysign(r, x)


@atan.defjvp
def _atan_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return atan(x), dx * recip(1.0 + x * x)
