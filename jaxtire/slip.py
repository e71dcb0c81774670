"""Slip kinematics with low-speed regularisation (ISO 8855 / TYDEX W-axis system).

Axes: x forward along the wheel heading, y to the left, z up.  ``vx``, ``vy``
are the wheel-centre velocity components in the wheel (heading) frame [m/s],
``omega`` the spin rate [rad/s] (positive when rolling forward), ``r`` the
effective rolling radius [m].

Slip ratio (practical slip, positive when driving)::

    kappa = (omega r - vx) / max(|vx|, v_reg)

Slip angle (positive when the contact slides to the left, so the MF lateral
force, with its negative ``PKY1``, is negative)::

    alpha = atan(vy / max(|vx|, v_reg))

``max(|vx|, v_reg)`` is replaced by a smooth maximum,
``sqrt(vx^2 + v_reg^2)``, so both quantities and their gradients stay finite
and smooth at standstill (``vx = 0``, ``omega = 0``).  Above a few ``v_reg`` the
difference to the exact ``|vx|`` is below ``0.5 (v_reg / vx)^2``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtire._math import atan

#: Default regularisation speed [m/s].
V_REG = 0.5


def regularised_speed(vx, v_reg=V_REG):
    """Smooth ``max(|vx|, v_reg)``: ``sqrt(vx^2 + v_reg^2)`` [m/s]."""
    return jnp.sqrt(vx * vx + v_reg * v_reg)


def slip_ratio(omega, r, vx, v_reg=V_REG):
    """Longitudinal slip ratio ``kappa = (omega r - vx) / max(|vx|, v_reg)`` [-]; -1 is lock-up when driving forward."""
    return (omega * r - vx) / regularised_speed(vx, v_reg)


def slip_angle(vx, vy, v_reg=V_REG):
    """Slip angle ``alpha = atan(vy / max(|vx|, v_reg))`` [rad], in (-pi/2, pi/2).

    The denominator is the smooth ``sqrt(vx^2 + v_reg^2) >= v_reg > 0``, so this is ``atan`` of a
    finite ratio (equal to ``arctan2(vy, sqrt(vx^2 + v_reg^2))``); in float32 it is the fused
    polynomial :func:`jaxtire._math.atan` (XLA:CPU's ``arctan2`` is a scalar libm call, ~17 ns per
    element, four per vehicle step), in float64 ``jnp.arctan``.
    """
    return atan(vy / regularised_speed(vx, v_reg))


def slip_velocity(omega, r, vx, vy):
    """Contact-patch slip velocity ``(vsx, vsy) = (vx - omega r, vy)`` [m/s]."""
    return vx - omega * r, vy
