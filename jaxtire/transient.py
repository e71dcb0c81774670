"""Tyre transients: relaxation lengths and the first-order contact-slip lag.

Relaxation lengths [m], as the file's version defines them:

* MF 6.1 / 6.2 (Pacejka 2012 §4.3 / Besselink et al. 2010, eqs. 17-19)::

      Cx = LONGITUDINAL_STIFFNESS (1 + PCFX1 dfz + PCFX2 dfz^2)(1 + PCFX3 dpi)     [N/m]
      Cy = LATERAL_STIFFNESS      (1 + PCFY1 dfz + PCFY2 dfz^2)(1 + PCFY3 dpi)
      sigma_kappa = |Kxk / Cx|,   sigma_alpha = |Kya / Cy|

  with the slip stiffnesses ``Kxk`` [N] and ``Kya`` [N/rad] of :mod:`jaxtire.mf61` at the same
  load, camber and pressure.
* MF 5.2 / PAC2002 (FITTYP 5, 6, 21, 52)::

      sigma_kappa = (PTX1 + PTX2 dfz) exp(-PTX3 dfz) LSGKP R0 Fz / Fz0
      sigma_alpha = PTY1 sin(2 atan(Fz / (PTY2 Fz0'))) (1 - PKY3 |gamma|) R0 LFZO LSGAL

Contact-slip lag (Pacejka 2012 §7.2, the first-order "stretched string" model): the vehicle
keeps the lagged slips in its state, ``ContactSlip(kappa, tan_alpha)`` (the lateral state is
``tan(alpha')``, the ratio the lag acts on), and integrates::

      sigma_kappa d kappa'/dt     + |Vx| kappa'     = -Vsx     (-> kappa' = -Vsx/|Vx| = kappa)
      sigma_alpha d tan(alpha')/dt + |Vx| tan(alpha') =  Vsy    (-> tan(alpha') = Vsy/|Vx| = tan(alpha))

with the slip velocities of :func:`jaxtire.slip.slip_velocity` (``Vsx = Vx - omega Re``,
``Vsy = Vy``).  At standstill the lag integrates the slip velocity (the carcass deflection
``sigma kappa'``), so the force builds up like a spring instead of chattering between the
signs of a ratio of small speeds.  The forces then come from
``mf_forces(params, state.kappa, atan(state.tan_alpha), ...)``; steady state is the same call
with the steady slips.  ``sigma`` is floored at :data:`SIGMA_MIN` so the lag stays finite at
zero load.

Typical vehicle step (explicit Euler; any integrator works on the pure derivative)::

    sk, sa = relaxation_lengths(params, fz, gamma)
    d = contact_slip_rates(state, vx, vsx, vsy, sk, sa)
    state = ContactSlip(state.kappa + dt * d.kappa, state.tan_alpha + dt * d.tan_alpha)
    out = mf_forces(params, *lagged_slips(state), gamma, fz, vx)

Stability of explicit Euler needs ``dt < 2 sigma / |Vx|``; :func:`relax_exact` gives the
exact one-step solution for constant inputs (stable for any ``dt``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxtire._math import atan
from jaxtire.mf61 import _common, _fx0, _fy0
from jaxtire.params import MFParams
from jaxtire.tire import model_name

#: Smallest relaxation length used by the lag equations [m] (zero load gives sigma = 0).
SIGMA_MIN = 1e-3


def carcass_stiffness(params: MFParams, fz, pressure=None):
    """Overall longitudinal and lateral carcass stiffness ``(Cx, Cy)`` [N/m] at load ``fz`` [N]."""
    p = params
    fz = jnp.maximum(jnp.asarray(fz), 0.0)
    fz0p = p.FNOMIN * p.LFZO
    dfz = (fz - fz0p) / fz0p
    dpi = ((p.INFLPRES if pressure is None else jnp.asarray(pressure)) - p.NOMPRES) / p.NOMPRES
    cx = p.LONGITUDINAL_STIFFNESS * (1.0 + p.PCFX1 * dfz + p.PCFX2 * dfz**2) * (1.0 + p.PCFX3 * dpi)
    cy = p.LATERAL_STIFFNESS * (1.0 + p.PCFY1 * dfz + p.PCFY2 * dfz**2) * (1.0 + p.PCFY3 * dpi)
    return cx, cy


#: Carcass stiffness per unit load ``(Cx / Fz, Cy / Fz)`` [1/m] of a tire model without carcass data (the
#: simple model): the bundled TNO 205/60 R15 file's ``LONGITUDINAL_STIFFNESS`` and ``LATERAL_STIFFNESS``
#: (381.9 and 157.6 kN/m) at its ``FNOMIN`` (4 kN).  With the simple model's ``K = B C D Fz`` this makes
#: the relaxation lengths ``sigma = B C D / (C / Fz)`` independent of the load (~0.2 m and ~0.4 m).
CARCASS_PER_LOAD = (95.5, 39.4)


def contact_stiffness(tire, fz):
    """Carcass stiffness ``(Cx, Cy)`` [N/m] of any tire of :mod:`jaxtire.tire` at load ``fz`` [N].

    MF (6.1 / 6.2 / 5.2): :func:`carcass_stiffness` (the file's ``LONGITUDINAL_STIFFNESS``,
    ``LATERAL_STIFFNESS`` with their ``PCF*`` load terms, or the MF-Tyre defaults 400 / 150 kN/m);
    other models: :data:`CARCASS_PER_LOAD` times ``max(fz, 1 N)``.  The one place that sets the
    contact spring of the vehicle's transient tire (:mod:`sims.vehicles.core`), where the relaxation
    lengths are ``sigma = K / C`` with the tire's slip stiffnesses ``K`` (so at standstill the tire is
    exactly this spring)."""
    if model_name(tire) == "mf":
        return carcass_stiffness(tire, fz)
    fz = jnp.maximum(jnp.asarray(fz), 1.0)
    return CARCASS_PER_LOAD[0] * fz, CARCASS_PER_LOAD[1] * fz


def relaxation_lengths(params: MFParams, fz, gamma=0.0, pressure=None):
    """Relaxation lengths ``(sigma_kappa, sigma_alpha)`` [m] at load ``fz`` [N], camber ``gamma`` [rad].

    MF 6.1 / 6.2: ``|Kxk / Cx|``, ``|Kya / Cy|``; MF 5.2: the ``PTX*`` / ``PTY*`` forms (module docstring).
    """
    p = params
    fz = jnp.maximum(jnp.asarray(fz), 0.0)
    gamma = jnp.asarray(gamma)
    if p.is_mf52:
        fz0p = p.FNOMIN * p.LFZO
        dfz = (fz - fz0p) / fz0p
        r0 = p.UNLOADED_RADIUS
        sk = (p.PTX1 + p.PTX2 * dfz) * jnp.exp(-p.PTX3 * dfz) * p.LSGKP * r0 * fz / p.FNOMIN
        sa = (
            p.PTY1 * jnp.sin(2.0 * atan(fz / (p.PTY2 * fz0p))) * (1.0 - p.PKY3 * jnp.abs(gamma)) * r0 * p.LFZO * p.LSGAL
        )
        return sk, sa
    pres = None if pressure is None else jnp.asarray(pressure)
    c = _common(p, fz, gamma, None, 1.0, 0.0, pres)
    kxk = _fx0(p, c, 0.0).kxk
    kya = _fy0(p, c, 0.0, c.gs).kya
    cx, cy = carcass_stiffness(p, fz, pressure)
    return jnp.abs(kxk / cx), jnp.abs(kya / cy)


class ContactSlip(NamedTuple):
    """Lagged contact slips kept in a vehicle's state: ``kappa'`` [-] and ``tan(alpha')`` [-]."""

    kappa: jax.Array
    tan_alpha: jax.Array


def contact_slip_rates(state: ContactSlip, vx, vsx, vsy, sigma_kappa, sigma_alpha) -> ContactSlip:
    """Time derivatives of the lagged slips [1/s]::

        d kappa'/dt     = (-Vsx - |Vx| kappa')     / sigma_kappa
        d tan(alpha')/dt = ( Vsy - |Vx| tan(alpha')) / sigma_alpha

    ``vx`` [m/s] forward speed of the wheel centre, ``vsx = vx - omega Re`` and ``vsy = vy`` [m/s]
    the slip velocities, ``sigma_*`` [m] from :func:`relaxation_lengths` (floored at :data:`SIGMA_MIN`).
    """
    avx = jnp.abs(vx)
    sk = jnp.maximum(sigma_kappa, SIGMA_MIN)
    sa = jnp.maximum(sigma_alpha, SIGMA_MIN)
    return ContactSlip((-vsx - avx * state.kappa) / sk, (vsy - avx * state.tan_alpha) / sa)


def relax_factors(speed, sigma, dt):
    """Decay ``e`` [-] and gain ``G`` [s] of the exact one-step solution of the deflection lag.

    For ``du/dt = V_s - |V| u / sigma`` (``u`` [m] the contact deflection, ``V_s`` [m/s] the slip velocity
    driving it, ``speed`` ``V`` [m/s], ``sigma`` [m] floored at :data:`SIGMA_MIN`) with constant inputs over
    ``dt`` [s]::

        u(t + dt) = e u(t) + G V_s,    e = exp(-x),   G = sigma (1 - e) / |V| = dt (1 - e) / x,   x = |V| dt / sigma

    ``G`` is written with ``expm1`` and a series below ``x = 1e-4`` so that at ``V = 0`` it is ``dt`` (pure
    integration of the slip velocity: the carcass spring) with a finite gradient.  ``G / sigma`` is the
    sensitivity of the new lagged slip to the slip velocity (``-> 1 / |V|`` as ``sigma -> 0``).
    """
    s = jnp.maximum(sigma, SIGMA_MIN)
    x = jnp.abs(speed) * dt / s
    em1 = jnp.expm1(-x)  # finite, with a finite gradient, for every x >= 0
    small = x < 1e-4
    phi = jnp.where(small, 1.0 - 0.5 * x, -em1 / jnp.where(small, 1.0, x))  # (1 - exp(-x)) / x
    return 1.0 + em1, dt * phi


def relax_exact(state: ContactSlip, vx, vsx, vsy, sigma_kappa, sigma_alpha, dt) -> ContactSlip:
    """The lag equations solved exactly over ``dt`` [s] with constant inputs (stable for any step).

    ``x(t + dt) = x_ss + (x - x_ss) exp(-|Vx| dt / sigma)``, written with ``expm1`` so that at
    ``Vx = 0`` it becomes the pure integration ``x + dt * rate`` (:func:`relax_factors`).
    """
    out = []
    for x, drive, sigma in ((state.kappa, -vsx, sigma_kappa), (state.tan_alpha, vsy, sigma_alpha)):
        e, gain = relax_factors(vx, sigma, dt)
        out.append(e * x + gain * drive / jnp.maximum(sigma, SIGMA_MIN))
    return ContactSlip(*out)


def lagged_slips(state: ContactSlip):
    """``(kappa', alpha')`` [-, rad] to pass to :func:`jaxtire.mf61.mf_forces`."""
    return state.kappa, atan(state.tan_alpha)


def steady_slips(vx, vsx, vsy, v_reg: float = 0.0) -> ContactSlip:
    """The steady state of the lag: ``kappa = -Vsx / |Vx|``, ``tan(alpha) = Vsy / |Vx|``.

    ``|Vx|`` is floored at ``v_reg`` [m/s]; all inputs in m/s, any broadcastable shapes.
    """
    avx = jnp.maximum(jnp.abs(vx), v_reg) if v_reg else jnp.abs(vx)
    return ContactSlip(-vsx / avx, vsy / avx)
