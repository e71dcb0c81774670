"""Vectorisable float32 ``sin``, ``cos``, ``tan``, ``atan2`` and ``pow`` for the fused tire loops.

Why: on XLA:CPU, ``sin``, ``cos``, ``tan`` and ``atan2`` lower to *scalar* libm calls (measured on
the project's 2-core AMD EPYC: ``sin`` 3.5-6.6 ns, ``cos`` 6.6 ns, ``tan`` 12 ns, ``atan2`` 11-17 ns,
``x ** q`` 3.7 ns per element, against 0.1-0.5 ns for a multiply-add, ``exp``, ``log`` or ``tanh``), so a Magic Formula
evaluation with its ~15 trigonometric calls spent most of its time in libm.  The functions here
are plain polynomial arithmetic that XLA fuses and vectorises like any ``+`` and ``*``.

Method (Cephes ``sinf`` / ``cosf``, S. L. Moshier): ``k = round(x 2/pi)``, Cody-Waite reduction
``r = x - k pi/2`` with pi/2 split in three parts (exact products for ``|k| < 2^16``), then the
Cephes minimax polynomials for ``sin`` and ``cos`` on ``[-pi/4, pi/4]`` and the quadrant
``k mod 4`` selects and signs them.  Accuracy: ``sin``, ``cos`` within 2 ulp (absolute error <= 1.2e-7), ``tan`` within 4e-7 relative, for
``|x| < 1e4`` (tested); the Magic Formula's arguments (phases ``C atan(.)``, camber, slip angle)
are all below 10.  The derivatives are exact (``sin' = cos`` etc., through ``custom_jvp``).

In float64 (``jax_enable_x64``) every function is the ``jnp`` one, so float64 results are
unchanged.  NumPy input (:func:`jaxtire._xp.namespace`) gives the ``numpy`` function: a host evaluation
traces and compiles nothing.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._math import atan
from jaxtire._math import safe_pow as _safe_pow
from jaxtire._xp import namespace

_TWO_OVER_PI = np.float32(2.0 / np.pi)
# pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 (Cephes DP1..DP3 times 2); _PIO2_1 has 8 significant bits.
_PIO2_1 = np.float32(1.5703125)
_PIO2_2 = np.float32(4.837512969970703125e-4)
_PIO2_3 = np.float32(7.54978995489188216e-8)
# Cephes sinf / cosf minimax coefficients on [-pi/4, pi/4].
_S1, _S2, _S3 = np.float32(-1.6666654611e-1), np.float32(8.3321608736e-3), np.float32(-1.9515295891e-4)
_C1, _C2, _C3 = np.float32(4.166664568298827e-2), np.float32(-1.388731625493765e-3), np.float32(2.443315711809948e-5)


def _is_f32(x) -> bool:
    return x.dtype == jnp.float32


def _reduce(x):
    """``(r, q)``: ``x = r + k pi/2`` with ``|r| <= pi/4`` and ``q = k mod 4`` (int32)."""
    k = jnp.round(x * _TWO_OVER_PI)
    r = ((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    q = k.astype(jnp.int32) & 3
    return r, q


def _sin_cos_poly(r):
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * _S3))
    c = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * _C3))
    return s, c


def _sincos_f32(x):
    r, q = _reduce(x)
    s, c = _sin_cos_poly(r)
    odd = (q & 1) == 1
    sin_v = jnp.where(odd, c, s)
    cos_v = jnp.where(odd, s, c)
    sin_v = jnp.where((q & 2) == 2, -sin_v, sin_v)
    cos_v = jnp.where(((q + 1) & 2) == 2, -cos_v, cos_v)
    return sin_v, cos_v


def _f32_poly(jnp_fn, poly):
    """``jnp_fn`` as a ``custom_jvp`` function that evaluates ``poly`` on float32 arrays (other dtypes: ``jnp_fn``)."""

    def fn(x):
        x = jnp.asarray(x)
        return poly(x) if _is_f32(x) else jnp_fn(x)

    fn.__name__ = fn.__qualname__ = jnp_fn.__name__
    return jax.custom_jvp(fn)


_sin = _f32_poly(jnp.sin, lambda x: _sincos_f32(x)[0])
_cos = _f32_poly(jnp.cos, lambda x: _sincos_f32(x)[1])
_tan = _f32_poly(jnp.tan, lambda x: operator.truediv(*_sincos_f32(x)))


def sin(x):
    """``sin(x)``: a fused-friendly polynomial in float32 (2 ulp for ``|x| < 1e4``), ``jnp.sin`` otherwise; NumPy
    input: ``np.sin``."""
    return np.sin(x) if namespace(x) is np else _sin(x)


def cos(x):
    """``cos(x)``: a fused-friendly polynomial in float32 (2 ulp for ``|x| < 1e4``), ``jnp.cos`` otherwise; NumPy
    input: ``np.cos``."""
    return np.cos(x) if namespace(x) is np else _cos(x)


def tan(x):
    """``tan(x)`` as the ratio of the polynomial ``sin`` and ``cos`` in float32, ``jnp.tan`` otherwise; NumPy input:
    ``np.tan``."""
    return np.tan(x) if namespace(x) is np else _tan(x)


def sincos(x):
    """``(sin(x), cos(x))`` sharing one range reduction (float32); ``jnp`` pair otherwise."""
    return sin(x), cos(x)


@_sin.defjvp
def _sin_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _sin(x), _cos(x) * dx


@_cos.defjvp
def _cos_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _cos(x), -_sin(x) * dx


@_tan.defjvp
def _tan_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    t = _tan(x)
    return t, (1.0 + t * t) * dx


def atan2(y, x):
    """``arctan2(y, x)`` from the polynomial :func:`jaxtire._math.atan` (float32), ``jnp.arctan2`` otherwise.

    ``atan2(y, x) = atan(y / x)`` for ``x > 0``, shifted by ``+-pi`` for ``x < 0``; ``(0, 0)`` gives 0.
    NumPy input: ``np.arctan2``.
    """
    xp = namespace(y, x)
    y, x = xp.asarray(y), xp.asarray(x)
    if xp is np or xp.result_type(y, x) != jnp.float32:
        return xp.arctan2(y, x)
    ay, ax = jnp.abs(y), jnp.abs(x)
    swap = ay > ax
    num = jnp.where(swap, ax, ay)
    den = jnp.where(swap, ay, ax)
    t = atan(num / jnp.where(den == 0, 1.0, den))  # in [0, pi/4]
    t = jnp.where(swap, np.float32(np.pi / 2) - t, t)
    t = jnp.where(x < 0, np.float32(np.pi) - t, t)
    return jnp.copysign(t, y)


def safe_pow(x, q, tiny: float = 1e-12):
    """:func:`jaxtire._math.safe_pow` (``x ** q`` for ``x > tiny``, else 0) as ``exp(q log x)`` in float32.

    XLA:CPU's ``power`` is a scalar ``powf`` call; ``exp`` and ``log`` are vectorised polynomials.  For
    ``x > 0`` the two are the same function (``x^q = e^(q ln x)``; a few ulp apart).  Other dtypes:
    :func:`jaxtire._math.safe_pow` itself (also for NumPy input).
    """

    xp = namespace(x, q)
    x = xp.asarray(x)
    if xp is np or xp.result_type(x, q) != jnp.float32:
        return _safe_pow(x, q, tiny)
    pos = x > tiny
    xs = jnp.where(pos, x, 1.0)
    return jnp.where(pos, jnp.exp(q * jnp.log(xs)), 0.0)
