"""MF 6.1 / 6.2 vertical model: free and loaded radius, vertical force, effective rolling radius, contact patch.

Equations as published for MF-Tyre 6.1 / 6.2 (Pacejka 2012, Appendix 3, eqs. A3.1-A3.10,
Besselink et al. 2010, and the forms MFeval evaluates); SI units: radii and deflections [m],
forces [N], ``omega`` the wheel spin rate [rad/s], ``pressure`` [Pa] (``None``: the file's
``INFLPRES``), ``gamma`` [rad].  Every function is elementwise: arrays broadcast, and a
batched :class:`~jaxtire.params.MFParams` works under ``vmap``.

With ``R0 = UNLOADED_RADIUS``, ``V0 = LONGVL``, ``Fz0 = FNOMIN``, ``Cz0 = VERTICAL_STIFFNESS``,
``dpi = (p - NOMPRES) / NOMPRES``::

    free radius       R_omega = R0 (Q_RE0 + Q_V1 (omega R0 / V0)^2)
    Q_FZ1             the file's value, or sqrt((Cz0 R0 / Fz0)^2 - 4 Q_FZ2) when it is 0
    MF 6.1 force      Fz = (1 + Q_V2 |omega| R0/V0 - (Q_FCX Fx/Fz0)^2 - (Q_FCY Fy/Fz0)^2)
                           (1 + PFZ1 dpi) (Q_FZ1 rho/R0 + Q_FZ2 (rho/R0)^2) Fz0
    MF 6.2 force      rho_z = rho + rho_gamma (camber deflection, Q_CAM1..3, WIDTH, ASPECT_RATIO),
                      Fy term ((rho_z/R0)^Q_FCY2 Q_FCY (Fy - S_Fyg)/Fz0)^2,
                      S_Fyg = (Q_FYS1 + Q_FYS2 Rl/R_omega + Q_FYS3 (Rl/R_omega)^2) gamma
    bottoming         Fz = max(Fz_MF, BOTTOM_STIFF (RIM_RADIUS + BOTTOM_OFFST - Rl))  (off when
                      BOTTOM_STIFF or RIM_RADIUS is 0)
    loaded radius     Rl = R_omega - rho, rho the deflection at which the force equals fz
                      (MF 6.1: the quadratic solved in closed form; MF 6.2: Newton on the implicit
                      relation, 8 fixed iterations from the 6.1 solution, differentiable)
    eff. rolling r.   Re = R_omega - (Fz0 / Cz) (DREFF atan(BREFF Fz/Fz0) + FREFF Fz/Fz0),
                      Cz = Cz0 (1 + PFZ1 dpi)
    contact patch     a = R0 (Q_RA2 Fz/(Cz R0) + Q_RA1 sqrt(Fz/(Cz R0)))      (half length)
                      b = WIDTH (Q_RB2 Fz/(Cz R0) + Q_RB1 (Fz/(Cz R0))^(1/3))   (half width)
                      MF 5.2: a = R0 (Q_A2 Fz/Fz0 + Q_A1 sqrt(Fz/Fz0)), b = WIDTH / 2, with
                      Q_A1, Q_A2 from log10(R0 Cz0 / Fz0) when the file gives neither;
                      Fz capped at the load that bottoms the tyre, (R0 - RIM_RADIUS - BOTTOM_OFFST) Cz.

These take the load as given: the validity range ``FZMIN``/``FZMAX`` does not apply to the
radii (MFeval's rule).  Loads below zero are treated as zero.  ``free_radius`` and
``effective_rolling_radius`` (the radii :func:`jaxtire.mf61.mf_forces` uses) run in NumPy for NumPy
params and inputs (:mod:`jaxtire._xp`), the others in JAX.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtire._math import atan, safe_div, safe_pow, safe_sqrt
from jaxtire._xp import namespace
from jaxtire.params import MFParams

#: Newton iterations of the MF 6.2 loaded-radius solve (static: unrolled, differentiable).
NEWTON_ITERATIONS = 8


def _dpi(p: MFParams, pressure, xp=jnp):
    pres = p.INFLPRES if pressure is None else xp.asarray(pressure)
    return (pres - p.NOMPRES) / p.NOMPRES


def _q_fz1(p: MFParams):
    derived = safe_sqrt(jnp.maximum((p.VERTICAL_STIFFNESS * p.UNLOADED_RADIUS / p.FNOMIN) ** 2 - 4.0 * p.Q_FZ2, 0.0))
    return jnp.where(p.Q_FZ1 != 0.0, p.Q_FZ1, derived)


def free_radius(params: MFParams, omega):
    """Free (unloaded, spinning) radius ``R_omega = R0 (Q_RE0 + Q_V1 (omega R0 / V0)^2)`` [m]."""
    p = params
    w = namespace(p, omega).asarray(omega) * p.UNLOADED_RADIUS / p.LONGVL
    return p.UNLOADED_RADIUS * (p.Q_RE0 + p.Q_V1 * w * w)


def _vertical_stiffness(p: MFParams, pressure, xp=jnp):
    return p.VERTICAL_STIFFNESS * (1.0 + p.PFZ1 * _dpi(p, pressure, xp))


def _bottoming(p: MFParams, fz_mf, rl):
    fz_b = p.BOTTOM_STIFF * (p.RIM_RADIUS + p.BOTTOM_OFFST - rl)
    on = (p.BOTTOM_STIFF > 0.0) & (p.RIM_RADIUS > 0.0)
    return jnp.where(on, jnp.maximum(fz_mf, fz_b), fz_mf)


def _force_62(p: MFParams, rho, r_omega, omega, gamma, fx, fy, dpi):
    """MF 6.2 load-deflection relation at free-rolling deflection ``rho`` (without bottoming)."""
    r0, fz0 = p.UNLOADED_RADIUS, p.FNOMIN
    rl = r_omega - rho
    ratio = rl / r_omega
    sfyg = (p.Q_FYS1 + p.Q_FYS2 * ratio + p.Q_FYS3 * ratio**2) * gamma
    rtw = (1.075 - 0.5 * p.ASPECT_RATIO) * p.WIDTH
    den = p.Q_CAM1 * r_omega + p.Q_CAM2 * r_omega**2
    has_cam = den != 0.0
    cam_ratio = (p.Q_CAM1 * rl + p.Q_CAM2 * rl**2) / jnp.where(has_cam, den, 1.0)
    rho_zfr = jnp.maximum(rho, 0.0)
    rho_g = cam_ratio**2 * (rtw / 8.0) * jnp.abs(jnp.tan(gamma)) - p.Q_CAM3 * rho_zfr * jnp.abs(gamma)
    rho_g = jnp.where(has_cam, rho_g, 0.0)
    rho_z = jnp.maximum(rho_zfr + rho_g, 1e-12)
    x = rho_z / r0
    fy_term = safe_pow(x, p.Q_FCY2) * p.Q_FCY * (fy - sfyg) / fz0
    fcorr = (1.0 + p.Q_V2 * (r0 / p.LONGVL) * jnp.abs(omega) - (p.Q_FCX * fx / fz0) ** 2 - fy_term**2) * (
        1.0 + p.PFZ1 * dpi
    )
    return fcorr * (_q_fz1(p) * x + p.Q_FZ2 * x * x) * fz0


def _fcorr_61(p: MFParams, omega, fx, fy, dpi):
    r0, fz0 = p.UNLOADED_RADIUS, p.FNOMIN
    return (1.0 + p.Q_V2 * (r0 / p.LONGVL) * jnp.abs(omega) - (p.Q_FCX * fx / fz0) ** 2 - (p.Q_FCY * fy / fz0) ** 2) * (
        1.0 + p.PFZ1 * dpi
    )


def vertical_force(params: MFParams, deflection, omega, gamma=0.0, fx=0.0, fy=0.0, pressure=None):
    """Vertical force ``Fz`` [N] at tyre deflection ``deflection = R_omega - Rl`` [m] (>= 0; 0 N when not in contact).

    MF 6.1 (and 5.2) files: the quadratic load-deflection relation with speed, in-plane force and
    pressure corrections; MF 6.2 (FITTYP 62): plus the camber deflection and the ``Q_FCY2``,
    ``Q_FYS*`` lateral-force terms.  Bottoming (``BOTTOM_STIFF``, ``BOTTOM_OFFST``, ``RIM_RADIUS``)
    takes over when the rim gets close to the road.
    """
    p = params
    rho = jnp.asarray(deflection)
    omega, gamma, fx, fy = (jnp.asarray(v) for v in (omega, gamma, fx, fy))
    dpi = _dpi(p, pressure)
    r_omega = free_radius(p, omega)
    if p.is_mf62:
        fz = _force_62(p, rho, r_omega, omega, gamma, fx, fy, dpi)
    else:
        x = jnp.maximum(rho, 0.0) / p.UNLOADED_RADIUS
        fz = _fcorr_61(p, omega, fx, fy, dpi) * (_q_fz1(p) * x + p.Q_FZ2 * x * x) * p.FNOMIN
    fz = _bottoming(p, fz, r_omega - rho)
    return jnp.where(rho > 0.0, jnp.maximum(fz, 0.0), 0.0)


def _deflection_61(p: MFParams, fz, omega, fx, fy, dpi):
    """Closed-form root of ``Q_FZ2 x^2 + Q_FZ1 x = Fz / (fcorr Fz0)``, ``x = rho / R0`` (stable for Q_FZ2 = 0)."""
    c = jnp.maximum(fz / jnp.maximum(_fcorr_61(p, omega, fx, fy, dpi) * p.FNOMIN, 1e-9), 0.0)
    q1 = _q_fz1(p)
    x = 2.0 * c / jnp.maximum(q1 + safe_sqrt(q1 * q1 + 4.0 * p.Q_FZ2 * c), 1e-12)
    return x * p.UNLOADED_RADIUS


def deflection(params: MFParams, fz, omega, gamma=0.0, fx=0.0, fy=0.0, pressure=None, iterations=NEWTON_ITERATIONS):
    """Tyre deflection ``rho = R_omega - Rl`` [m] that carries the load ``fz`` (inverse of :func:`vertical_force`).

    MF 6.2: ``iterations`` Newton steps from the MF 6.1 closed form; 0 is exact at zero camber and zero
    in-plane forces (where the two relations coincide) and costs one closed form."""
    p = params
    fz = jnp.maximum(jnp.asarray(fz), 0.0)
    omega, gamma, fx, fy = (jnp.asarray(v) for v in (omega, gamma, fx, fy))
    dpi = _dpi(p, pressure)
    rho = _deflection_61(p, fz, omega, fx, fy, dpi)
    r_omega = free_radius(p, omega)
    if p.is_mf62:

        def resid(r):
            return _force_62(p, r, r_omega, omega, gamma, fx, fy, dpi) - fz

        for _ in range(iterations):
            f, df = jax.jvp(resid, (rho,), (jnp.ones_like(rho),))
            rho = jnp.maximum(rho - safe_div(f, df), 0.0)
    # bottoming: the rim carries the load where the bottoming spring is stiffer than the tyre
    rl_b = p.RIM_RADIUS + p.BOTTOM_OFFST - fz / jnp.where(p.BOTTOM_STIFF > 0.0, p.BOTTOM_STIFF, 1.0)
    on = (p.BOTTOM_STIFF > 0.0) & (p.RIM_RADIUS > 0.0)
    rho = jnp.where(on, jnp.minimum(rho, r_omega - rl_b), rho)
    return jnp.where(fz > 0.0, rho, 0.0)


def loaded_radius(params: MFParams, fz, omega, gamma=0.0, fx=0.0, fy=0.0, pressure=None):
    """Loaded radius ``Rl = R_omega - rho`` [m]: wheel centre to road under load ``fz`` [N]."""
    return free_radius(params, omega) - deflection(params, fz, omega, gamma, fx, fy, pressure)


def effective_rolling_radius(params: MFParams, fz, omega, pressure=None):
    """Effective rolling radius ``Re = R_omega - (Fz0/Cz)(DREFF atan(BREFF Fz/Fz0) + FREFF Fz/Fz0)`` [m]."""
    p = params
    xp = namespace(p, fz, omega, pressure)
    fzn = xp.maximum(xp.asarray(fz), 0.0) / p.FNOMIN
    cz = _vertical_stiffness(p, pressure, xp)
    return free_radius(p, omega) - (p.FNOMIN / cz) * (p.DREFF * atan(p.BREFF * fzn) + p.FREFF * fzn)


def contact_patch(params: MFParams, fz, pressure=None):
    """Contact patch half length ``a`` and half width ``b`` [m] at load ``fz`` [N]; returns ``(a, b)``."""
    p = params
    r0 = p.UNLOADED_RADIUS
    fz = jnp.maximum(jnp.asarray(fz), 0.0)
    cz = _vertical_stiffness(p, pressure)
    cap = (r0 - p.RIM_RADIUS - p.BOTTOM_OFFST) * cz
    fz = jnp.where((p.RIM_RADIUS > 0.0) & (cap > 0.0), jnp.minimum(fz, cap), fz)
    if p.is_mf52:
        y = jnp.log10(r0 * p.VERTICAL_STIFFNESS / p.FNOMIN)
        qa1_d = -0.0388 * y**3 + 0.2509 * y**2 - 0.6283 * y + 0.6279
        derive = (p.Q_A1 == 0.0) & (p.Q_A2 == 0.0)
        qa1 = jnp.where(derive, qa1_d, p.Q_A1)
        qa2 = jnp.where(derive, 1.693 * qa1_d**2, p.Q_A2)
        n = fz / p.FNOMIN
        a = r0 * (qa2 * n + qa1 * safe_sqrt(n))
        b = jnp.broadcast_to(p.WIDTH / 2.0, jnp.shape(a))
        return a, b
    n = fz / (cz * r0)
    a = r0 * (p.Q_RA2 * n + p.Q_RA1 * safe_sqrt(n))
    b = p.WIDTH * (p.Q_RB2 * n + p.Q_RB1 * safe_pow(n, 1.0 / 3.0))
    return a, b


__all__ = [
    "NEWTON_ITERATIONS",
    "contact_patch",
    "deflection",
    "effective_rolling_radius",
    "free_radius",
    "loaded_radius",
    "vertical_force",
]
