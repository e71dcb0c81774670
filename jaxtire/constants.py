"""Physical constants and angle conventions used across jaxtire and sims (written once).

``GRAVITY`` is standard gravity [m/s^2] (ISO 80000-3, 9.80665 rounded as vehicle
codes use it: 9.81). Angles are radians; :func:`wrap_angle` maps any angle to the
half-open interval ``[-pi, pi)``, the one convention of the project.
"""

from __future__ import annotations

import jax.numpy as jnp

GRAVITY = 9.81
"""Gravitational acceleration [m/s^2]."""


def wrap_angle(a):
    """``a`` [rad] wrapped to ``[-pi, pi)``; differentiable (slope 1) away from the cut."""
    return jnp.mod(a + jnp.pi, 2.0 * jnp.pi) - jnp.pi
