"""Numerically safe elementwise helpers shared by every tire equation.

All helpers follow the *safe-where* pattern: the argument of a function that
would be singular (``sqrt(0)``, ``x / 0``, ``x ** q`` at 0) is first replaced by
a harmless value on the masked branch, so neither the value nor the gradient
of the discarded branch can produce NaN or inf.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Small positive number used to regularise denominators (same role as MFeval's eps).
EPS = 1e-6


def safe_div(num, den, eps: float = EPS):
    """``num / den`` with ``|den|`` kept away from zero, keeping the sign of ``den``.

    ``den`` is replaced by ``den + eps * sign(den)`` (``+eps`` where ``den == 0``).
    """
    sgn = jnp.where(den >= 0, 1.0, -1.0).astype(jnp.result_type(den))
    return num / (den + eps * sgn)


def safe_sqrt(x, tiny: float = 1e-20):
    """``sqrt(x)`` for ``x >= 0`` whose gradient is finite (zero) at ``x == 0``."""
    pos = x > tiny
    xs = jnp.where(pos, x, 1.0)
    return jnp.where(pos, jnp.sqrt(xs), 0.0)


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
    return jax.lax.rsqrt(1.0 + x * x)
