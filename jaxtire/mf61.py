"""Steady-state Magic Formula 6.1 / 6.2 (and MF 5.2 / PAC2002) tire forces and moments.

Equations: H. B. Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. (2012), §4.3.2
and Appendix 3, as implemented for MF-Tyre 6.1 files by MFeval (M. Gorroño et
al.); MF 5.2 / PAC2002 files (FITTYP 5, 6, 21, 52) use the older camber terms
(``gamma_y = gamma LGAY`` etc., ``PHY3``, ``PKY4 = 2``).  Turn slip is not
modelled (all zeta factors are 1).

Axes and signs: TYDEX / ISO-W (the convention of MFeval and of ``.tir``
files): x forward along the wheel heading, y left, z up.  ``kappa`` [-] is
positive when driving, ``alpha`` [rad] positive when the contact slides to the
left (so ``Fy`` is negative for ``alpha > 0`` with the usual ``PKY1 < 0``),
``gamma`` [rad] the inclination angle, ``fz`` [N] >= 0 the vertical load,
``vx`` [m/s] the forward speed of the wheel centre.

Pure slip (with ``dfz = (Fz - Fz0')/Fz0'``, ``Fz0' = FNOMIN LFZO``,
``dpi = (INFLPRES - NOMPRES)/NOMPRES``, ``alpha* = tan(alpha)``,
``gamma* = sin(gamma)``)::

    Fx0 = Dx sin(Cx atan(Bx kx - Ex (Bx kx - atan(Bx kx)))) + SVx,  kx = kappa + SHx
    Kxk = Fz (PKX1 + PKX2 dfz) exp(PKX3 dfz) (1 + PPX1 dpi + PPX2 dpi^2) LKX
    Fy0 = Dy sin(Cy atan(By ay - Ey (By ay - atan(By ay)))) + SVy,  ay = alpha* + SHy
    Kya = PKY1 Fz0' (1 + PPY1 dpi)(1 - PKY3 |gamma*|)
          sin(PKY4 atan(Fz / ((PKY2 + PKY5 gamma*^2)(1 + PPY2 dpi) Fz0'))) LKY

Combined slip by the weighting functions::

    Fx = Gxa Fx0,   Gxa = cos(Cxa atan(Bxa as - Exa(Bxa as - atan(Bxa as)))) / Gxa0
    Fy = Gyk Fy0 + SVyk

Aligning torque from pneumatic trail ``t`` and residual torque ``Mzr``::

    Mz = -t Fy' + Mzr + s Fx       (Fy' = the combined Fy at gamma = 0)

plus the overturning moment ``Mx`` and the rolling-resistance moment ``My``.

Low speed: below the file's ``VXLOW`` the shifts ``SHx, SVx, SHy, SVy, SVyk``,
the residual torque ``Mzr`` and ``My`` are faded to zero with
``w = (1 - cos(pi min(|vx|/VXLOW, 1))) / 2``, so a tire at standstill with
zero slip produces no force or moment (a parked car does not creep).  The
slip itself is regularised by :mod:`jaxtire.slip`.

Clamping inside ``jit`` (documented, never silent garbage): ``fz`` below zero
is treated as zero (wheel lifted off); ``|alpha|`` is limited to
``pi/2 - 0.01`` so ``tan(alpha)`` stays finite.  Called eagerly with concrete
arrays, a negative ``fz`` raises ``ValueError`` instead.

Surface: ``surface.grip`` multiplies ``LMUX`` and ``LMUY`` (peak and sliding
friction; stiffness unchanged) and ``surface.rolling_resistance`` multiplies
``LMY``.  Ploughing drag acts on the chassis: see
:func:`jaxtire.surfaces.ploughing_force`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._math import atan, cos_atan, safe_div, safe_norm, safe_sqrt
from jaxtire._trig import cos, sin, tan
from jaxtire._trig import safe_pow as _pow_pos
from jaxtire.forces import TireForces
from jaxtire.magic_formula import peak_phase
from jaxtire.params import MFParams

ALPHA_LIMIT = np.pi / 2 - 0.01
_A_MU = 10.0  # degressive friction factor of lambda_mu' (Pacejka 2012, eq. 4.E8)


class _Common(NamedTuple):
    fz: jax.Array
    fz0p: jax.Array  # scaled nominal load Fz0' [N]
    dfz: jax.Array
    dpi: jax.Array
    gx: jax.Array  # camber used by Fx
    gs: jax.Array  # gamma* (MF 6.1) or gamma_y (MF 5.2) used by Fy
    gz: jax.Array  # camber used by Mz
    lmux: jax.Array  # lambda*_mux incl. surface grip and speed decay
    lmuy: jax.Array
    lmux_p: jax.Array  # lambda'_mux
    lmuy_p: jax.Array
    w_low: jax.Array  # low-speed fade weight in [0, 1]


def _common(p: MFParams, fz, gamma, vx, grip, slip_speed) -> _Common:
    fz0p = p.FNOMIN * p.LFZO
    dfz = (fz - fz0p) / fz0p
    dpi = (p.INFLPRES - p.NOMPRES) / p.NOMPRES
    decay = 1.0 + p.LMUV * slip_speed / p.LONGVL
    lmux = p.LMUX * grip / decay
    lmuy = p.LMUY * grip / decay
    if p.is_mf52:
        gx, gs, gz = gamma * p.LGAX, gamma * p.LGAY, gamma * p.LGAZ
        lmux_p, lmuy_p = lmux, lmuy
    else:
        gx, gs, gz = gamma, sin(gamma), sin(gamma)
        lmux_p = _A_MU * lmux / (1.0 + (_A_MU - 1.0) * lmux)
        lmuy_p = _A_MU * lmuy / (1.0 + (_A_MU - 1.0) * lmuy)
    if vx is None:
        w_low = jnp.ones_like(fz)
    else:
        ratio = jnp.minimum(jnp.abs(vx) / p.VXLOW, 1.0)
        w_low = 0.5 * (1.0 - cos(np.pi * ratio))
    return _Common(fz, fz0p, dfz, dpi, gx, gs, gz, lmux, lmuy, lmux_p, lmuy_p, w_low)


class _Fx0(NamedTuple):
    fx0: jax.Array
    kxk: jax.Array
    mux: jax.Array
    phase: jax.Array
    svx: jax.Array


def _fx0(p: MFParams, c: _Common, kappa) -> _Fx0:
    """Pure longitudinal slip ``Fx0`` (Pacejka 2012, eqs. 4.E9-4.E18)."""
    cx = p.PCX1 * p.LCX
    mux = (p.PDX1 + p.PDX2 * c.dfz) * (1.0 + p.PPX3 * c.dpi + p.PPX4 * c.dpi**2) * (1.0 - p.PDX3 * c.gx**2) * c.lmux
    dx = mux * c.fz
    kxk = c.fz * (p.PKX1 + p.PKX2 * c.dfz) * jnp.exp(p.PKX3 * c.dfz) * (1.0 + p.PPX1 * c.dpi + p.PPX2 * c.dpi**2) * p.LKX
    shx = (p.PHX1 + p.PHX2 * c.dfz) * p.LHX * c.w_low
    svx = c.fz * (p.PVX1 + p.PVX2 * c.dfz) * p.LVX * c.lmux_p * c.w_low
    kx = kappa + shx
    ex = jnp.minimum((p.PEX1 + p.PEX2 * c.dfz + p.PEX3 * c.dfz**2) * (1.0 - p.PEX4 * jnp.sign(kx)) * p.LEX, 1.0)
    bx = safe_div(kxk, cx * dx)
    phase = peak_phase(kx, bx, cx, ex)
    return _Fx0(dx * sin(phase) + svx, kxk, mux, phase, svx)


class _Fy0(NamedTuple):
    fy0: jax.Array
    kya: jax.Array
    muy: jax.Array
    by: jax.Array
    cy: jax.Array
    shy: jax.Array
    svy: jax.Array
    phase: jax.Array


def _fy0(p: MFParams, c: _Common, alpha_s, gs) -> _Fy0:
    """Pure lateral slip ``Fy0`` (Pacejka 2012, eqs. 4.E19-4.E30); ``alpha_s = tan(alpha)``, ``gs`` the camber term."""
    pky4 = 2.0 if p.is_mf52 else p.PKY4
    kya = (p.PKY1 * c.fz0p * (1.0 + p.PPY1 * c.dpi) * (1.0 - p.PKY3 * jnp.abs(gs))
           * sin(pky4 * atan(c.fz / ((p.PKY2 + p.PKY5 * gs**2) * (1.0 + p.PPY2 * c.dpi) * c.fz0p))) * p.LKY)
    if p.is_mf52:
        svyg = c.fz * (p.PVY3 + p.PVY4 * c.dfz) * gs * p.LVY * c.lmuy_p
        shy_camber = p.PHY3 * gs
    else:
        kyg0 = c.fz * (p.PKY6 + p.PKY7 * c.dfz) * (1.0 + p.PPY5 * c.dpi) * p.LKYC
        svyg = c.fz * (p.PVY3 + p.PVY4 * c.dfz) * gs * p.LKYC * c.lmuy_p
        shy_camber = safe_div(kyg0 * gs - svyg, kya)
    svy = (c.fz * (p.PVY1 + p.PVY2 * c.dfz) * p.LVY * c.lmuy_p + svyg) * c.w_low
    shy = ((p.PHY1 + p.PHY2 * c.dfz) * p.LHY + shy_camber) * c.w_low
    ay = alpha_s + shy
    cy = p.PCY1 * p.LCY
    muy = (p.PDY1 + p.PDY2 * c.dfz) * (1.0 + p.PPY3 * c.dpi + p.PPY4 * c.dpi**2) * (1.0 - p.PDY3 * gs**2) * c.lmuy
    dy = muy * c.fz
    ey = jnp.minimum((p.PEY1 + p.PEY2 * c.dfz) * (1.0 + p.PEY5 * gs**2 - (p.PEY3 + p.PEY4 * gs) * jnp.sign(ay)) * p.LEY, 1.0)
    by = safe_div(kya, cy * dy)
    phase = peak_phase(ay, by, cy, ey)
    return _Fy0(dy * sin(phase) + svy, kya, muy, by, cy, shy, svy, phase)


def _gxa(p: MFParams, c: _Common, kappa, alpha_s):
    """Weighting of Fx by slip angle, ``Gxa`` (eqs. 4.E54-4.E57)."""
    bxa = (p.RBX1 + p.RBX3 * c.gs**2) * cos_atan(p.RBX2 * kappa) * p.LXAL
    cxa = p.RCX1
    exa = jnp.minimum(p.REX1 + p.REX2 * c.dfz, 1.0)
    shxa = p.RHX1
    return cos(peak_phase(alpha_s, bxa, cxa, exa, shxa)) / cos(peak_phase(shxa, bxa, cxa, exa))


def _gyk(p: MFParams, c: _Common, kappa, alpha_s, gs, muy):
    """Weighting of Fy by slip ratio ``Gyk`` and the kappa-induced side force ``SVyk`` (eqs. 4.E58-4.E67)."""
    byk = (p.RBY1 + p.RBY4 * gs**2) * cos_atan(p.RBY2 * (alpha_s - p.RBY3)) * p.LYKA
    cyk = p.RCY1
    eyk = jnp.minimum(p.REY1 + p.REY2 * c.dfz, 1.0)
    shyk = p.RHY1 + p.RHY2 * c.dfz
    gyk = cos(peak_phase(kappa, byk, cyk, eyk, shyk)) / cos(peak_phase(shyk, byk, cyk, eyk))
    dvyk = muy * c.fz * (p.RVY1 + p.RVY2 * c.dfz + p.RVY3 * gs) * cos_atan(p.RVY4 * alpha_s)
    svyk = dvyk * sin(p.RVY5 * atan(p.RVY6 * kappa)) * p.LVYKA * c.w_low
    return gyk, svyk


def _mz(p: MFParams, c: _Common, kappa, alpha, alpha_s, fy, fy_g0, fx, y: _Fy0, kxk, combined: bool):
    """Aligning torque from pneumatic trail and residual torque (eqs. 4.E31-4.E49, 4.E71-4.E78)."""
    r0 = p.UNLOADED_RADIUS
    cos_a = cos_atan(alpha_s)  # cos(alpha) for |alpha| < pi/2
    gz = c.gz
    sht = p.QHZ1 + p.QHZ2 * c.dfz + (p.QHZ3 + p.QHZ4 * c.dfz) * gz
    alpha_t = alpha_s + sht
    alpha_r = alpha_s + y.shy + safe_div(y.svy, y.kya)
    bt = (p.QBZ1 + p.QBZ2 * c.dfz + p.QBZ3 * c.dfz**2) * (1.0 + p.QBZ4 * gz + p.QBZ5 * jnp.abs(gz)) * p.LKY / c.lmuy
    ct = p.QCZ1
    if p.is_mf52:
        dt = c.fz * (p.QDZ1 + p.QDZ2 * c.dfz) * (1.0 + p.QDZ3 * gz + p.QDZ4 * gz**2) * (r0 / c.fz0p) * p.LTR
        dr = c.fz * ((p.QDZ6 + p.QDZ7 * c.dfz) * p.LRES + (p.QDZ8 + p.QDZ9 * c.dfz) * gz) * r0 * c.lmuy
    else:
        dt0 = c.fz * (r0 / c.fz0p) * (p.QDZ1 + p.QDZ2 * c.dfz) * (1.0 - p.PPZ1 * c.dpi) * p.LTR
        dt = dt0 * (1.0 + p.QDZ3 * jnp.abs(gz) + p.QDZ4 * gz**2)
        dr = c.fz * r0 * ((p.QDZ6 + p.QDZ7 * c.dfz) * p.LRES
                          + ((p.QDZ8 + p.QDZ9 * c.dfz) * (1.0 + p.PPZ2 * c.dpi)
                             + (p.QDZ10 + p.QDZ11 * c.dfz) * jnp.abs(gz)) * gz * p.LKZC) * c.lmuy
    dr = dr * cos_a * c.w_low
    br = p.QBZ9 * p.LKY / c.lmuy + p.QBZ10 * y.by * y.cy
    et = jnp.minimum((p.QEZ1 + p.QEZ2 * c.dfz + p.QEZ3 * c.dfz**2)
                     * (1.0 + (p.QEZ4 + p.QEZ5 * gz) * (2.0 / np.pi) * atan(bt * ct * alpha_t)), 1.0)
    if combined:
        ratio2 = safe_div(kxk, y.kya) ** 2 * kappa**2
        alpha_t = safe_sqrt(alpha_t**2 + ratio2) * jnp.sign(alpha_t)
        alpha_r = safe_sqrt(alpha_r**2 + ratio2) * jnp.sign(alpha_r)
    t = dt * cos(peak_phase(alpha_t, bt, ct, et)) * cos_a
    mzr = dr * cos_atan(br * alpha_r)
    mz = -t * fy_g0 + mzr
    if combined:
        s = r0 * (p.SSZ1 + p.SSZ2 * (fy / c.fz0p) + (p.SSZ3 + p.SSZ4 * c.dfz) * gz) * p.LS
        mz = mz + s * fx
    return mz


def _mx(p: MFParams, c: _Common, gamma, fy):
    """Overturning moment (MF 6.1: Pacejka 2012 eq. 4.E69; MF 5.2: the PAC2002 three-term form)."""
    r0, fz0 = p.UNLOADED_RADIUS, p.FNOMIN
    fyn, fzn = fy / fz0, c.fz / fz0
    if p.is_mf52:
        return r0 * c.fz * (p.QSX1 * p.LVMX - p.QSX2 * gamma + p.QSX3 * fyn) * p.LMX
    inner = (p.QSX1 * p.LVMX - p.QSX2 * gamma * (1.0 + p.PPMX1 * c.dpi) + p.QSX3 * fyn
             + p.QSX4 * cos(p.QSX5 * atan((p.QSX6 * fzn) ** 2))
             * sin(p.QSX7 * gamma + p.QSX8 * atan(p.QSX9 * fyn))
             + p.QSX10 * atan(p.QSX11 * fzn) * gamma)
    return r0 * c.fz * p.LMX * inner + r0 * p.LMX * (fy * (p.QSX13 + p.QSX14 * jnp.abs(gamma))
                                                     - c.fz * p.QSX12 * gamma * jnp.abs(gamma))


def _my(p: MFParams, c: _Common, gamma, fx, vx, rr_scale):
    """Rolling-resistance moment, negative when rolling forward (eq. 4.E70), faded to 0 at standstill."""
    r0, fz0, v0 = p.UNLOADED_RADIUS, p.FNOMIN, p.LONGVL
    vxn = 1.0 if vx is None else vx / v0
    direction = 1.0 if vx is None else jnp.clip(vx / p.VXLOW, -1.0, 1.0)
    poly = (p.QSY1 + p.QSY2 * fx / fz0 + p.QSY3 * jnp.abs(vxn) + p.QSY4 * vxn**4
            + (p.QSY5 + p.QSY6 * c.fz / fz0) * gamma**2)
    load = _pow_pos(c.fz / fz0, p.QSY7) * (p.INFLPRES / p.NOMPRES) ** p.QSY8
    return -r0 * fz0 * p.LMY * rr_scale * poly * load * direction


def _check_load(fz):
    if not isinstance(fz, jax.core.Tracer):
        arr = np.asarray(fz)
        if arr.size and np.nanmin(arr) < 0:
            raise ValueError(f"fz must be >= 0 N (vertical load); got min {np.nanmin(arr)}")


def mf_forces(params: MFParams, kappa, alpha, gamma=0.0, fz=None, vx=None, surface=None, *,
              combined: bool = True) -> TireForces:
    """Steady-state MF 6.1 forces and moments at the contact, TYDEX / ISO-W axes.

    Args:
      params: :class:`~jaxtire.params.MFParams` (possibly batched: leaves of any shape that broadcasts).
      kappa: longitudinal slip ratio [-], positive when driving.
      alpha: slip angle [rad], positive when the contact slides left (gives ``fy < 0``).
      gamma: inclination (camber) angle [rad].
      fz: vertical load [N] >= 0; defaults to ``FNOMIN``.
      vx: forward speed of the wheel centre [m/s]; enables the ``VXLOW`` low-speed fade and the
        speed terms of ``My``.  ``None`` evaluates at the nominal speed ``LONGVL``.
      surface: a :class:`jaxtire.surfaces.Surface` (grip scales LMUX/LMUY, rolling resistance scales LMY).
      combined: use the combined-slip weighting functions (``False``: pure-slip Fx0, Fy0, Mz0).

    Returns:
      :class:`~jaxtire.forces.TireForces` with ``fx, fy`` [N], ``mz, mx, my`` [N m], peak friction
      ``mux, muy``, ``grip_utilisation`` and ``is_sliding``.
    """
    if fz is None:
        fz = params.FNOMIN
    _check_load(fz)
    kappa, alpha, gamma, fz = (jnp.asarray(x) for x in (kappa, alpha, gamma, fz))
    fz = jnp.maximum(fz, 0.0)
    alpha = jnp.clip(alpha, -ALPHA_LIMIT, ALPHA_LIMIT)
    grip, rr_scale = (1.0, 1.0) if surface is None else (surface.grip, surface.rolling_resistance)
    alpha_s = tan(alpha)
    slip_speed = 0.0 if vx is None else jnp.abs(vx) * safe_norm(kappa, alpha_s)
    c = _common(params, fz, gamma, vx, grip, slip_speed)

    x = _fx0(params, c, kappa)
    y = _fy0(params, c, alpha_s, c.gs)
    y_g0 = _fy0(params, c, alpha_s, jnp.zeros_like(c.gs))
    if combined:
        fx = _gxa(params, c, kappa, alpha_s) * x.fx0
        gyk, svyk = _gyk(params, c, kappa, alpha_s, c.gs, y.muy)
        fy = gyk * y.fy0 + svyk
        gyk0, _ = _gyk(params, c, kappa, alpha_s, jnp.zeros_like(c.gs), y_g0.muy)
        fy_g0 = gyk0 * y_g0.fy0
    else:
        fx, fy, fy_g0 = x.fx0, y.fy0, y_g0.fy0
    mz = _mz(params, c, kappa, alpha, alpha_s, fy, fy_g0, fx, y, x.kxk, combined)
    mx = _mx(params, c, gamma, fy)
    my = _my(params, c, gamma, fx, vx, rr_scale)
    util = safe_norm(safe_div(fx, x.mux * fz), safe_div(fy, y.muy * fz))
    sliding = (jnp.abs(x.phase) > np.pi / 2) | (jnp.abs(y.phase) > np.pi / 2)
    return TireForces(fx, fy, mz, mx, my, x.mux, y.muy, util, sliding)


def cornering_stiffness(params: MFParams, fz=None, gamma=0.0, surface=None):
    """Analytic cornering stiffness ``Kya = By Cy Dy`` [N/rad] (negative with ISO-W signs)."""
    fz = params.FNOMIN if fz is None else jnp.asarray(fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, jnp.asarray(gamma), None, grip, 0.0)
    return _fy0(params, c, 0.0, c.gs).kya


def slip_stiffness(params: MFParams, fz=None, surface=None):
    """Analytic longitudinal slip stiffness ``Kxk = Bx Cx Dx`` [N] per unit slip ratio."""
    fz = params.FNOMIN if fz is None else jnp.asarray(fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, jnp.zeros_like(fz), None, grip, 0.0)
    return _fx0(params, c, 0.0).kxk


class PeakValues(NamedTuple):
    """Extreme values of the pure-slip curves [N]: ``D + SV`` and ``-D + SV`` per axis."""

    fx_max: jax.Array
    fx_min: jax.Array
    fy_max: jax.Array
    fy_min: jax.Array


def peak_values(params: MFParams, fz=None, gamma=0.0, surface=None) -> PeakValues:
    """Analytic extremes of the pure-slip Fx0 and Fy0 curves (reached where ``|C atan(...)| = pi/2``, for C > 1)."""
    fz = params.FNOMIN if fz is None else jnp.asarray(fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, jnp.asarray(gamma), None, grip, 0.0)
    x = _fx0(params, c, 0.0)
    y = _fy0(params, c, 0.0, c.gs)
    dx, dy = x.mux * fz, y.muy * fz
    return PeakValues(dx + x.svx, -dx + x.svx, dy + y.svy, -dy + y.svy)
