"""Everything MFeval outputs for one operating point, in one call: :func:`evaluate`.

``jaxtire.evaluate(params, kappa, alpha, gamma, fz, ...)`` runs the steady-state forces of
:func:`jaxtire.mf61.mf_forces` (same options: turn slip ``phi``, ``side``, ``pressure``,
``omega``, ``limits``, ``convention``, ``surface``) and adds the vertical model
(:mod:`jaxtire.vertical`), the relaxation lengths (:mod:`jaxtire.transient`) and the
intermediate quantities MFeval reports.  The result is a :class:`TireEvaluation`, a pytree of
arrays shaped like the broadcast inputs.

Correspondence to MFeval's 30 output columns (MFeval gives the full patch length ``2a`` and
width ``2b``; jaxtire the half values ``a`` and ``b``, as the book)::

    1-6   Fx Fy Fz Mx My Mz      fx fy fz mx my mz
    7-12  kappa alpha gamma phit Vx P   the inputs (the caller has them); pressure used: pressure
    13    Re                     re                (effective rolling radius)
    14    rho                    deflection
    15    2a                     2 * a
    16    t                      t                 (pneumatic trail)
    17-18 mux muy                mux muy
    19    omega                  omega
    20    Rl                     rl                (loaded radius)
    21    2b                     2 * b
    22    Mzr                    mzr               (residual torque)
    23-25 Cx Cy Cz               cx cy cz
    26    Kya                    kya
    27-28 sigmax sigmay          sigma_kappa sigma_alpha
    29    instKya                (a finite difference of fy; jax.grad of fy w.r.t. alpha)
    30    Kxk                    kxk

Loads for each channel follow MFeval: the radii and the contact patch use the load as given
(no FZMAX saturation), the forces and relaxation lengths the saturated one under
``limits="clamp"``.  When ``omega`` is not given it is found as MFeval does, from
``omega = Vx (1 + kappa) / Re(omega)`` (four fixed-point steps from ``Vx / R0``; ``Vx``
defaults to ``LONGVL``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxtire import transient, vertical
from jaxtire.limits import LimitFlags
from jaxtire.mf61 import _Options, _solve
from jaxtire.params import MFParams


class TireEvaluation(NamedTuple):
    """One operating point as MFeval reports it; SI units, TYDEX / ISO-W axes."""

    fx: jax.Array  # [N]
    fy: jax.Array  # [N]
    fz: jax.Array  # [N] the load given (>= 0)
    mx: jax.Array  # [N m]
    my: jax.Array  # [N m]
    mz: jax.Array  # [N m]
    re: jax.Array  # effective rolling radius [m]
    rl: jax.Array  # loaded radius [m]
    deflection: jax.Array  # rho = R_omega - Rl [m]
    a: jax.Array  # contact patch half length [m]
    b: jax.Array  # contact patch half width [m]
    sigma_kappa: jax.Array  # longitudinal relaxation length [m]
    sigma_alpha: jax.Array  # lateral relaxation length [m]
    t: jax.Array  # pneumatic trail [m]
    mzr: jax.Array  # residual torque [N m]
    mux: jax.Array  # peak friction coefficients [-]
    muy: jax.Array
    kxk: jax.Array  # longitudinal slip stiffness dFx/dkappa [N]
    kya: jax.Array  # cornering stiffness dFy/dalpha [N/rad]
    cx: jax.Array  # carcass stiffnesses [N/m]
    cy: jax.Array
    cz: jax.Array  # vertical stiffness Fz / rho [N/m]
    omega: jax.Array  # wheel spin rate used [rad/s]
    pressure: jax.Array  # inflation pressure used [Pa]
    out_of_range: LimitFlags  # which inputs lay outside the file's validity ranges


def evaluate(params: MFParams, kappa, alpha, gamma=0.0, fz=None, *, vx=None, surface=None, **options) -> TireEvaluation:
    """Forces, moments, radii, contact patch, relaxation lengths and slip stiffnesses of an MF tyre.

    Arguments as :func:`jaxtire.mf61.mf_forces` (``kappa`` [-], ``alpha`` [rad], ``gamma`` [rad],
    ``fz`` [N], ``vx`` [m/s], ``surface``); keyword ``options`` also as there: ``phi`` [1/m], ``side``
    +1/-1, ``pressure`` [Pa], ``omega`` [rad/s], ``limits``, ``convention``, ``combined``.
    Returns a :class:`TireEvaluation`.
    """
    p = params
    opts = _Options(**options)
    sol = _solve(p, kappa, alpha, gamma, fz, vx, surface, opts)
    f = sol.forces
    v = p.LONGVL if vx is None else jnp.asarray(vx)
    if opts.omega is None:
        k_raw = jnp.asarray(kappa)
        w = v / p.UNLOADED_RADIUS
        for _ in range(4):
            w = v * (1.0 + k_raw) / vertical.effective_rolling_radius(p, sol.fz, w, sol.pressure)
    else:
        w = jnp.asarray(opts.omega)
    re = vertical.effective_rolling_radius(p, sol.fz, w, sol.pressure)
    fy_tyre = sol.mirror * f.fy  # force in the measured tyre's frame
    rho = vertical.deflection(p, sol.fz, w, sol.gamma, f.fx, fy_tyre, sol.pressure)
    rl = vertical.free_radius(p, w) - rho
    a, b = vertical.contact_patch(p, sol.fz, sol.pressure)
    sk, sa = transient.relaxation_lengths(p, sol.fz_used, sol.gamma, sol.pressure)
    cx, cy = transient.carcass_stiffness(p, sol.fz_used, sol.pressure)
    cz = sol.fz / jnp.where(rho > 0.0, rho, 1.0)
    shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in (f.fx, re, rl, a, sk)))
    b_ = lambda x: jnp.broadcast_to(x, shape)
    return TireEvaluation(
        b_(f.fx),
        b_(f.fy),
        b_(sol.fz),
        b_(f.mx),
        b_(f.my),
        b_(f.mz),
        b_(re),
        b_(rl),
        b_(rho),
        b_(a),
        b_(b),
        b_(sk),
        b_(sa),
        b_(sol.t),
        b_(sol.mirror * sol.mzr),
        b_(f.mux),
        b_(f.muy),
        b_(sol.kxk),
        b_(sol.kya),
        b_(cx),
        b_(cy),
        b_(cz),
        b_(w),
        b_(sol.pressure),
        LimitFlags(*(b_(x) for x in sol.flags)),
    )
