"""The numerics of jaxtire's equations, published for the packages built on it (``sims``).

Safe-where helpers (:mod:`jaxtire._math`): the argument of a function that would be singular is first
replaced by a harmless value on the masked branch, so neither the value nor the gradient of the discarded
branch is NaN or inf:

========================  ==================================================================
``safe_div(n, d)``        ``n / d`` with ``|d|`` kept above ``EPS`` (the sign of ``d`` kept)
``safe_sqrt(x)``          ``sqrt(x)``, gradient 0 (not inf) at ``x = 0``
``safe_norm(x, y)``       ``sqrt(x^2 + y^2)``, gradient 0 at the origin
========================  ==================================================================

Elementary functions (:mod:`jaxtire._trig`, :func:`atan`): in float32, range-reduced polynomials that
XLA:CPU fuses and vectorises (its own ``sin``, ``cos``, ``tan``, ``atan2``, ``atan`` are scalar libm
calls: ~3x slower tire steps, ``benchmarks/RESULTS.md``), accurate to a few ulp; in float64, ``jax.numpy``'s.
``atan``, ``sin``, ``cos``, ``tan``, ``sincos`` (both at once), ``atan2``.
"""

from jaxtire._math import EPS, atan, safe_div, safe_norm, safe_sqrt
from jaxtire._trig import atan2, cos, sin, sincos, tan

__all__ = ["EPS", "atan", "atan2", "cos", "safe_div", "safe_norm", "safe_sqrt", "sin", "sincos", "tan"]
