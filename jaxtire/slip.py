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
from jaxtire._trig import sin

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


def turn_slip(yaw_rate, vx, vy=0.0, v_reg=V_REG):
    """Turn slip ``phi_t = -psi_dot / Vc`` [1/m] of a wheel whose heading turns at ``yaw_rate`` [rad/s].

    ``Vc = sqrt(vx^2 + vy^2)`` is the contact-centre speed [m/s], floored smoothly as
    ``sqrt(vx^2 + vy^2 + v_reg^2)`` so the ratio stays finite at standstill.  This is the ``phi``
    input of :func:`jaxtire.mf61.mf_forces` (Pacejka 2012 eq. 4.75; MFeval's ``phit``): for a
    wheel rolling forward along a path of curvature ``1/R`` to the left (ISO: ``psi_dot > 0``),
    ``phi_t = -1/R``.
    """
    return -yaw_rate / jnp.sqrt(vx * vx + vy * vy + v_reg * v_reg)


def spin(phi_t, omega, gamma, vc, eps_gamma):
    """Spin ``phi = -(1/Vc)(psi_dot - (1 - eps_gamma) Omega sin(gamma))``.

    Equivalently ``phi = phi_t + (1 - eps_gamma) Omega sin(gamma) / Vc``.

    ``phi_t`` [1/m] turn slip, ``omega`` wheel spin rate [rad/s], ``gamma`` camber [rad], ``vc``
    contact speed [m/s] (nonzero), ``eps_gamma`` the camber reduction factor (Pacejka 2012 eq. 4.76).
    """
    return phi_t + (1.0 - eps_gamma) * omega * sin(gamma) / vc
