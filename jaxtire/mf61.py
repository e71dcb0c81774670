"""Steady-state Magic Formula 6.1 / 6.2 (and MF 5.2 / PAC2002) tire forces and moments.

Equations: H. B. Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. (2012), §4.3.2
and Appendix 3, as implemented for MF-Tyre 6.1 files by MFeval (M. Gorroño et
al.); MF 5.2 / PAC2002 files (FITTYP 5, 6, 21, 52) use the older camber terms
(``gamma_y = gamma LGAY`` etc., ``PHY3``, ``PKY4 = 2``).  Turn slip (``phi``), the tyre's
side (``side``), the validity ranges (``limits``) and MFeval's forms (``convention``) are
options of :func:`mf_forces`; see its docstring.

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

Compiled form: with the parameters closed over by ``jit`` (concrete arrays), terms whose coefficient is
exactly 0 (the speed decay ``LMUV``, ``QBZ10``, ``RBY4``) are left out rather than multiplied by zero; the
result is the same, the compiled loop count smaller (``benchmarks/PERF_NOTES.md``).

Host form: params whose leaves are NumPy arrays, with NumPy or Python inputs (no JAX array anywhere), run the
same lines in NumPy (:mod:`jaxtire._xp`): eager, nothing traced or compiled, NumPy arrays out (float64 params:
within ~1e-15 of JAX float64).  :func:`jaxtire.load_tir` checks a tire this way.

Surface: ``surface.grip`` multiplies ``LMUX`` and ``LMUY`` (peak and sliding
friction; stiffness unchanged) and ``surface.rolling_resistance`` multiplies
``LMY``.  Ploughing drag acts on the chassis: see
:func:`jaxtire.surfaces.ploughing_force`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as np

from jaxtire import vertical
from jaxtire._math import atan, cos_atan, materialise, safe_div, safe_norm, safe_sqrt
from jaxtire._trig import cos, sin, tan
from jaxtire._trig import safe_pow as _pow_pos
from jaxtire._xp import namespace
from jaxtire.forces import TireForces
from jaxtire.limits import LimitFlags, limit_flags, warn_out_of_range
from jaxtire.magic_formula import peak_phase
from jaxtire.params import MFParams
from jaxtire.slip import spin
from jaxtire.surfaces import check_surface
from jaxtire.validation import check_choice

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


def _common(p: MFParams, fz, gamma, vx, grip, slip_speed, pres=None) -> _Common:
    xp = namespace(fz)
    fz0p = p.FNOMIN * p.LFZO
    dfz = (fz - fz0p) / fz0p
    dpi = ((p.INFLPRES if pres is None else pres) - p.NOMPRES) / p.NOMPRES
    decay = 1.0 + p.LMUV * slip_speed / p.LONGVL
    lmux = p.LMUX * grip / decay
    lmuy = p.LMUY * grip / decay
    if p.is_mf52:
        gx, gs, gz = gamma * p.LGAX, gamma * p.LGAY, gamma * p.LGAZ
        lmux_p, lmuy_p = lmux, lmuy
    else:
        gx, gs, gz = gamma, materialise(sin(gamma)), materialise(sin(gamma))
        lmux_p = _A_MU * lmux / (1.0 + (_A_MU - 1.0) * lmux)
        lmuy_p = _A_MU * lmuy / (1.0 + (_A_MU - 1.0) * lmuy)
    if vx is None:
        w_low = xp.ones_like(fz)
    else:
        ratio = xp.minimum(xp.abs(vx) / p.VXLOW, 1.0)
        w_low = materialise(0.5 * (1.0 - cos(np.pi * ratio)))
    return _Common(fz, fz0p, dfz, dpi, gx, gs, gz, lmux, lmuy, lmux_p, lmuy_p, w_low)


def _concrete_zero(x) -> bool:
    """True for a concrete (not traced) scalar 0: a term it multiplies can be left out exactly."""
    return not isinstance(x, jax.core.Tracer) and np.ndim(x) == 0 and float(x) == 0.0


def _term(coef, x):
    """``coef * x``, or a plain ``0.0`` where ``coef`` is a concrete 0 (a file's unused coefficient; params closed
    over by ``jit``).  Exact for finite ``x``; XLA does not fold ``0 * x`` itself, and the term would keep an
    intermediate alive for one more loop (``QBZ10 By Cy``), or stop the cambered and zero-camber evaluations of
    ``Gyk`` from being one (``RBY4 gamma*^2``).  See ``benchmarks/PERF_NOTES.md``."""
    return 0.0 if _concrete_zero(coef) else coef * x


def _nonzero(x, tiny=1e-12):
    """``x`` with exact zeros replaced by ``tiny`` (a divisor that is zero only for degenerate coefficients)."""
    xp = namespace(x)
    return xp.where(x == 0.0, tiny, x)


class _TurnSlip(NamedTuple):
    """Turn-slip state of one evaluation (Pacejka 2012, §4.3.3, eqs. 4.75-4.106 / 4.E)."""

    phi: jax.Array  # spin phi = phi_t + (1 - eps_gamma) Omega sin(gamma) / Vc' [1/m]
    phit: jax.Array  # turn slip phi_t = -psi_dot / Vc [1/m] (the input)
    eps_g: jax.Array  # camber reduction factor eps_gamma = PECP1 (1 + PECP2 dfz)
    sgn_v: jax.Array  # sign of the forward speed
    zeta1: jax.Array
    zeta2: jax.Array
    zeta3: jax.Array
    zeta5: jax.Array
    zeta6: jax.Array


def _turn_slip(p: MFParams, c: _Common, kappa, alpha_s, gamma, phit, vx, omega) -> _TurnSlip:
    """Spin and the zeta factors that depend on the inputs only (zeta0 = 0, zeta4/7/8 follow in Fy0 and Mz)."""
    xp = namespace(c.fz)
    r0 = p.UNLOADED_RADIUS
    eps_g = p.PECP1 * (1.0 + p.PECP2 * c.dfz)
    v = p.LONGVL if vx is None else vx
    sgn_v = xp.where(xp.asarray(v) >= 0.0, 1.0, -1.0)
    vc = xp.maximum(xp.abs(v) * xp.sqrt(1.0 + alpha_s * alpha_s), p.VXLOW) * sgn_v
    if omega is None:
        re = vertical.effective_rolling_radius(p, c.fz, v / r0)
        omega = v * (1.0 + kappa) / re
    phi = spin(phit, omega, gamma, vc, eps_g)
    r0phi = r0 * xp.abs(phi)
    bxp = p.PDXP1 * (1.0 + p.PDXP2 * c.dfz) * cos_atan(p.PDXP3 * kappa)
    byp = p.PDYP1 * (1.0 + p.PDYP2 * c.dfz) * cos_atan(p.PDYP3 * alpha_s)
    return _TurnSlip(
        phi,
        phit,
        eps_g,
        sgn_v,
        zeta1=cos_atan(bxp * r0 * phi),
        zeta2=cos_atan(byp * (r0phi + p.PDYP4 * safe_sqrt(r0phi))),
        zeta3=cos_atan(p.PKYP1 * (r0 * phi) ** 2),
        zeta5=cos_atan(p.QDTP1 * r0 * phi),
        zeta6=cos_atan(p.QBRP1 * r0 * phi),
    )


class _Fx0(NamedTuple):
    fx0: jax.Array
    kxk: jax.Array
    mux: jax.Array
    phase: jax.Array
    svx: jax.Array


def _fx0(p: MFParams, c: _Common, kappa, ts: _TurnSlip | None = None) -> _Fx0:
    """Pure longitudinal slip ``Fx0`` (Pacejka 2012, eqs. 4.E9-4.E18; turn slip: ``Dx *= zeta1``)."""
    xp = namespace(c.fz)
    cx = p.PCX1 * p.LCX
    mux = (p.PDX1 + p.PDX2 * c.dfz) * (1.0 + p.PPX3 * c.dpi + p.PPX4 * c.dpi**2) * (1.0 - p.PDX3 * c.gx**2) * c.lmux
    dx = mux * c.fz if ts is None else mux * c.fz * ts.zeta1
    kxk = c.fz * (p.PKX1 + p.PKX2 * c.dfz) * xp.exp(p.PKX3 * c.dfz) * (1.0 + p.PPX1 * c.dpi + p.PPX2 * c.dpi**2) * p.LKX
    shx = (p.PHX1 + p.PHX2 * c.dfz) * p.LHX * c.w_low
    svx = c.fz * (p.PVX1 + p.PVX2 * c.dfz) * p.LVX * c.lmux_p * c.w_low
    kx = kappa + shx
    ex = xp.minimum((p.PEX1 + p.PEX2 * c.dfz + p.PEX3 * c.dfz**2) * (1.0 - p.PEX4 * xp.sign(kx)) * p.LEX, 1.0)
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


def _kya(p: MFParams, c: _Common, gs):
    xp = namespace(c.fz)
    pky4 = 2.0 if p.is_mf52 else p.PKY4
    return (
        p.PKY1
        * c.fz0p
        * (1.0 + p.PPY1 * c.dpi)
        * (1.0 - p.PKY3 * xp.abs(gs))
        * sin(pky4 * atan(c.fz / ((p.PKY2 + p.PKY5 * gs**2) * (1.0 + p.PPY2 * c.dpi) * c.fz0p)))
        * p.LKY
    )


def _fy0(p: MFParams, c: _Common, alpha_s, gs, ts: _TurnSlip | None = None) -> _Fy0:
    """Pure lateral slip ``Fy0`` (Pacejka 2012, eqs. 4.E19-4.E30); ``alpha_s = tan(alpha)``, ``gs`` the camber term.

    With turn slip (``ts``): ``Kya *= zeta3``, ``Dy *= zeta2``, the first ``SVy`` term ``*= zeta2``, and the
    camber shift ``(Kyg0 gamma* - SVyg)/Kya`` is replaced (``zeta0 = 0``) by ``zeta4 - 1 = SHyphi - SVyg/Kya``
    with ``SHyphi = DHyphi sin(CHyphi atan(BHyphi R0 phi - EHyphi(...))) sgn(Vx)`` (eqs. 4.E27, 4.80-4.89).
    """
    xp = namespace(c.fz)
    kya = materialise(_kya(p, c, gs))
    if ts is not None:
        kya = kya * ts.zeta3
    z2 = 1.0 if ts is None else ts.zeta2
    if p.is_mf52:
        svyg = c.fz * (p.PVY3 + p.PVY4 * c.dfz) * gs * p.LVY * c.lmuy_p
        shy_camber = p.PHY3 * gs
    else:
        kyg0 = c.fz * (p.PKY6 + p.PKY7 * c.dfz) * (1.0 + p.PPY5 * c.dpi) * p.LKYC
        svyg = c.fz * (p.PVY3 + p.PVY4 * c.dfz) * gs * p.LKYC * c.lmuy_p
        if ts is None:
            shy_camber = safe_div(kyg0 * gs - svyg, kya)
        else:
            kya0 = _kya(p, c, xp.zeros_like(gs)) * ts.zeta3
            chyp = p.PHYP1
            dhyp = (p.PHYP2 + p.PHYP3 * c.dfz) * ts.sgn_v
            ehyp = xp.minimum(p.PHYP4, 1.0)
            kyrp0 = kyg0 / _nonzero(1.0 - ts.eps_g)
            bhyp = safe_div(kyrp0, chyp * dhyp * kya0)
            x = bhyp * p.UNLOADED_RADIUS * ts.phi
            shyp = dhyp * sin(chyp * atan(x - ehyp * (x - atan(x)))) * ts.sgn_v
            shy_camber = shyp - safe_div(svyg, kya)
    svy = (c.fz * (p.PVY1 + p.PVY2 * c.dfz) * p.LVY * c.lmuy_p * z2 + svyg) * c.w_low
    shy = ((p.PHY1 + p.PHY2 * c.dfz) * p.LHY + shy_camber) * c.w_low
    ay = alpha_s + shy
    cy = p.PCY1 * p.LCY
    muy = (p.PDY1 + p.PDY2 * c.dfz) * (1.0 + p.PPY3 * c.dpi + p.PPY4 * c.dpi**2) * (1.0 - p.PDY3 * gs**2) * c.lmuy
    dy = muy * c.fz * z2
    ey = xp.minimum(
        (p.PEY1 + p.PEY2 * c.dfz) * (1.0 + p.PEY5 * gs**2 - (p.PEY3 + p.PEY4 * gs) * xp.sign(ay)) * p.LEY, 1.0
    )
    by = safe_div(kya, cy * dy)
    phase = peak_phase(ay, by, cy, ey)
    return _Fy0(dy * sin(phase) + svy, kya, muy, by, cy, shy, svy, phase)


def _gxa(p: MFParams, c: _Common, kappa, alpha_s):
    """Weighting of Fx by slip angle, ``Gxa`` (eqs. 4.E54-4.E57)."""
    xp = namespace(c.fz)
    bxa = (p.RBX1 + p.RBX3 * c.gs**2) * cos_atan(p.RBX2 * kappa) * p.LXAL
    cxa = p.RCX1
    exa = xp.minimum(p.REX1 + p.REX2 * c.dfz, 1.0)
    shxa = p.RHX1
    return cos(peak_phase(alpha_s, bxa, cxa, exa, shxa)) / cos(peak_phase(shxa, bxa, cxa, exa))


def _gyk(p: MFParams, c: _Common, kappa, alpha_s, gs, muy):
    """Weighting of Fy by slip ratio ``Gyk`` and the kappa-induced side force ``SVyk`` (eqs. 4.E58-4.E67)."""
    xp = namespace(c.fz)
    byk = (p.RBY1 + _term(p.RBY4, gs**2)) * cos_atan(p.RBY2 * (alpha_s - p.RBY3)) * p.LYKA
    cyk = p.RCY1
    eyk = xp.minimum(p.REY1 + p.REY2 * c.dfz, 1.0)
    shyk = p.RHY1 + p.RHY2 * c.dfz
    gyk = cos(peak_phase(kappa, byk, cyk, eyk, shyk)) / cos(peak_phase(shyk, byk, cyk, eyk))
    dvyk = muy * c.fz * (p.RVY1 + p.RVY2 * c.dfz + p.RVY3 * gs) * cos_atan(p.RVY4 * alpha_s)
    svyk = dvyk * sin(p.RVY5 * atan(p.RVY6 * kappa)) * p.LVYKA * c.w_low
    return gyk, svyk


class _Mz(NamedTuple):
    mz: jax.Array
    t: jax.Array  # pneumatic trail [m]
    mzr: jax.Array  # residual torque [N m]


def _mz(
    p: MFParams,
    c: _Common,
    kappa,
    gamma,
    alpha_s,
    fy,
    fy_g0,
    fx,
    y: _Fy0,
    kxk,
    combined: bool,
    fz_mz,
    mfeval: bool,
    ts: _TurnSlip | None = None,
    gyk=None,
) -> _Mz:
    """Aligning torque from pneumatic trail and residual torque (eqs. 4.E31-4.E49, 4.E71-4.E78).

    ``fz_mz`` is the load of the ``Dt`` and ``Dr`` factors (``max(Fz, FZMIN)`` under limits="clamp").
    ``mfeval``: the forms MFeval / the TNO solver use instead of the book's (camber terms of ``Bt``
    and ``Dt`` with ``gamma``, equivalent slip angles ``atan(sqrt(tan^2 a + (Kxk/Kya)^2 kappa^2))``,
    ``cos(alpha*)`` in ``Dr``, ``s`` with ``Fy/Fz0``, ``t`` times ``LFZO``).
    Turn slip (``ts``): ``Dt *= zeta5``, ``Br *= zeta6``, ``Cr = zeta7``, ``Dr += zeta8 - 1``,
    the ``Dr`` camber term ``*= zeta0 = 0`` and its ``LRES`` term ``*= zeta2`` (eqs. 4.90-4.104).
    """
    xp = namespace(c.fz)
    r0 = p.UNLOADED_RADIUS
    cos_a = cos_atan(alpha_s)  # cos(alpha) for |alpha| < pi/2
    gz = c.gz
    gb = gamma if mfeval else gz  # camber in the Bt and Dt terms
    sht = p.QHZ1 + p.QHZ2 * c.dfz + (p.QHZ3 + p.QHZ4 * c.dfz) * gz
    alpha_t = alpha_s + sht
    alpha_r = alpha_s + y.shy + safe_div(y.svy, y.kya)
    bt = (p.QBZ1 + p.QBZ2 * c.dfz + p.QBZ3 * c.dfz**2) * (1.0 + p.QBZ4 * gb + p.QBZ5 * xp.abs(gb)) * p.LKY / c.lmuy
    ct = p.QCZ1
    z2 = 1.0 if ts is None else ts.zeta2
    if p.is_mf52:
        dt = fz_mz * (p.QDZ1 + p.QDZ2 * c.dfz) * (1.0 + p.QDZ3 * gz + p.QDZ4 * gz**2) * (r0 / c.fz0p) * p.LTR
        dr = (
            fz_mz
            * ((p.QDZ6 + p.QDZ7 * c.dfz) * p.LRES * z2 + (p.QDZ8 + p.QDZ9 * c.dfz) * gz * (ts is None))
            * r0
            * c.lmuy
        )
    else:
        dt0 = fz_mz * (r0 / c.fz0p) * (p.QDZ1 + p.QDZ2 * c.dfz) * (1.0 - p.PPZ1 * c.dpi) * p.LTR
        dt = dt0 * ((1.0 + p.QDZ3 * gb + p.QDZ4 * gb**2) if mfeval else (1.0 + p.QDZ3 * xp.abs(gz) + p.QDZ4 * gz**2))
        camber = (
            0.0
            if ts is not None
            else (
                ((p.QDZ8 + p.QDZ9 * c.dfz) * (1.0 + p.PPZ2 * c.dpi) + (p.QDZ10 + p.QDZ11 * c.dfz) * xp.abs(gz))
                * gz
                * p.LKZC
            )
        )
        dr = fz_mz * r0 * ((p.QDZ6 + p.QDZ7 * c.dfz) * p.LRES * z2 + camber) * c.lmuy
    if ts is not None:
        dt = dt * ts.zeta5
    dr = dr * (cos(alpha_s) if mfeval else cos_a)
    br = p.QBZ9 * p.LKY / c.lmuy + _term(p.QBZ10, y.by * y.cy)
    cr = None
    if ts is not None:
        br = br * ts.zeta6
        # zeta7, zeta8 (eqs. 4.93-4.104): parking torque of a turning tyre
        mzp_inf = xp.maximum(p.QCRP1 * xp.abs(y.muy) * r0 * c.fz * safe_sqrt(c.fz / c.fz0p) * p.LMP, 1e-6)
        cdrp = xp.maximum(p.QDRP1, 1e-3)  # documented clamp: files without turn slip write QDRP1 = 0
        ddrp = mzp_inf / sin(0.5 * np.pi * cdrp)
        kzgr0 = c.fz * r0 * (p.QDZ8 + p.QDZ9 * c.dfz) * (1.0 + p.PPZ2 * c.dpi) * p.LKZC
        bdrp = kzgr0 / _nonzero(cdrp * ddrp * (1.0 - ts.eps_g))
        drp = ddrp * sin(cdrp * atan(bdrp * r0 * ts.phi))
        mzp90 = mzp_inf * (2.0 / np.pi) * atan(p.QCRP2 * r0 * xp.abs(ts.phit)) * gyk
        ratio = xp.clip(mzp90 / xp.maximum(xp.abs(drp), 1e-9), -1.0 + 1e-6, 1.0 - 1e-6)
        cr = (2.0 / np.pi) * xp.arccos(ratio)  # zeta7
        dr = dr + drp  # + zeta8 - 1
    dr = dr * c.w_low
    et = xp.minimum(
        (p.QEZ1 + p.QEZ2 * c.dfz + p.QEZ3 * c.dfz**2)
        * (1.0 + (p.QEZ4 + p.QEZ5 * gz) * (2.0 / np.pi) * atan(bt * ct * alpha_t)),
        1.0,
    )
    if combined:
        ratio2 = safe_div(kxk, y.kya) ** 2 * kappa**2
        if mfeval:
            alpha_t = atan(safe_sqrt(tan(alpha_t) ** 2 + ratio2)) * xp.sign(alpha_t)
            alpha_r = atan(safe_sqrt(tan(alpha_r) ** 2 + ratio2)) * xp.sign(alpha_r)
        else:
            alpha_t = safe_sqrt(alpha_t**2 + ratio2) * xp.sign(alpha_t)
            alpha_r = safe_sqrt(alpha_r**2 + ratio2) * xp.sign(alpha_r)
    t = dt * cos(peak_phase(alpha_t, bt, ct, et)) * cos_a
    if mfeval:
        t = t * p.LFZO
    mzr = dr * (cos_atan(br * alpha_r) if cr is None else cos(cr * atan(br * alpha_r)))
    mz = -t * fy_g0 + mzr
    if combined:
        fy_n = fy / (p.FNOMIN if mfeval else c.fz0p)
        s = r0 * (p.SSZ1 + p.SSZ2 * fy_n + (p.SSZ3 + p.SSZ4 * c.dfz) * gz) * p.LS
        mz = mz + s * fx
    return _Mz(mz, t, mzr)


def _mx(p: MFParams, c: _Common, gamma, fy, fz):
    """Overturning moment (MF 6.1: Pacejka 2012 eq. 4.E69 / TNO form; MF 5.2: the PAC2002 three-term form)."""
    xp = namespace(fz)
    r0, fz0 = p.UNLOADED_RADIUS, p.FNOMIN
    fyn, fzn = fy / fz0, fz / fz0
    if p.is_mf52:
        return r0 * fz * (p.QSX1 * p.LVMX - p.QSX2 * gamma + p.QSX3 * fyn) * p.LMX
    inner = (
        p.QSX1 * p.LVMX
        - p.QSX2 * gamma * (1.0 + p.PPMX1 * c.dpi)
        + p.QSX3 * fyn
        + p.QSX4 * cos(p.QSX5 * atan((p.QSX6 * fzn) ** 2)) * sin(p.QSX7 * gamma + p.QSX8 * atan(p.QSX9 * fyn))
        + p.QSX10 * atan(p.QSX11 * fzn) * gamma
    )
    return r0 * fz * p.LMX * inner + r0 * p.LMX * (
        fy * (p.QSX13 + p.QSX14 * xp.abs(gamma)) - fz * p.QSX12 * gamma * xp.abs(gamma)
    )


def _my(p: MFParams, fz, gamma, fx, vx, rr_scale, pres=None, kappa=0.0):
    """Rolling-resistance moment (eq. 4.E70, the TNO / MFeval form), opposing the wheel's spin.

    ``My = -R0 Fz0 LMY poly load * direction * spin``: negative for a wheel rolling forward.
    ``direction = clip(vx / VXLOW, -1, 1)`` fades it to 0 at standstill (``vx`` given; else 1).
    ``spin = sin(pi/2 clip((1 + kappa) max(|v|, VXLOW) / VXLOW, -1, 1))`` (``v = vx`` or ``LONGVL``) turns
    it round where the wheel spins against the travel (``omega Re = (1 + kappa) vx``, ``kappa < -1``:
    a reverse torque on a moving car), MFeval's rule: ``sin`` ramp from 0 at ``kappa = -1`` (a locked
    wheel) to +-1 at ``|(1 + kappa) v| = VXLOW``.  With ``|v|`` floored at ``VXLOW`` the ramp leaves a
    free-rolling wheel (``kappa = 0``) at 1 at every speed (the low-speed fade is ``direction``'s alone)."""
    xp = namespace(fz)
    r0, fz0, v0 = p.UNLOADED_RADIUS, p.FNOMIN, p.LONGVL
    vxn = 1.0 if vx is None else vx / v0
    direction = 1.0 if vx is None else xp.clip(vx / p.VXLOW, -1.0, 1.0)
    speed = xp.maximum(xp.abs(v0 if vx is None else vx), p.VXLOW)
    x = xp.clip((1.0 + kappa) * speed / p.VXLOW, -1.0, 1.0)
    spin = xp.where(xp.abs(x) >= 1.0, x, sin(0.5 * np.pi * x))  # exactly +-1 outside the ramp
    poly = p.QSY1 + p.QSY2 * fx / fz0 + p.QSY3 * xp.abs(vxn) + p.QSY4 * vxn**4 + (p.QSY5 + p.QSY6 * fz / fz0) * gamma**2
    load = _pow_pos(fz / fz0, p.QSY7) * ((p.INFLPRES if pres is None else pres) / p.NOMPRES) ** p.QSY8
    return -r0 * fz0 * p.LMY * rr_scale * poly * load * direction * spin


def _check_load(fz):
    if not isinstance(fz, jax.core.Tracer):
        arr = np.asarray(fz)
        if arr.size and np.nanmin(arr) < 0:
            raise ValueError(f"fz must be >= 0 N (vertical load); got min {np.nanmin(arr)}")


def _mirror(p: MFParams, side, xp):
    """``-1`` where the tyre is mounted on the other side than the file's ``TYRESIDE``, else ``+1`` (namespace ``xp``)."""
    return xp.where(xp.asarray(side) * p.tyreside < 0, -1.0, 1.0)


def out_of_range(params: MFParams, kappa, alpha, gamma=0.0, fz=None, *, side=None, pressure=None) -> LimitFlags:
    """Which inputs lie outside the file's validity ranges (the flags :func:`jaxtire.evaluate` returns).

    Same inputs as :func:`mf_forces`; with ``side`` the ranges apply to the mirrored (tyre-frame)
    ``alpha`` and ``gamma``.  Pure and cheap: call it next to ``mf_forces`` inside ``jit``.
    """
    p = params
    fz = p.FNOMIN if fz is None else fz
    xp = namespace(p, kappa, alpha, gamma, fz, side, pressure)
    kappa, alpha, gamma, fz = (xp.asarray(x) for x in (kappa, alpha, gamma, fz))
    if side is not None:
        mirror = _mirror(p, side, xp)
        alpha, gamma = mirror * alpha, mirror * gamma
    pres = p.INFLPRES if pressure is None else xp.asarray(pressure)
    return limit_flags(p, kappa, alpha, gamma, xp.maximum(fz, 0.0), pres)


class _Solution(NamedTuple):
    forces: TireForces
    flags: LimitFlags
    mirror: Any  # +1 / -1 (array) or 1.0 when side is None
    fz: jax.Array  # load given (>= 0) [N]
    fz_used: jax.Array  # load of the force channels (clamped at FZMAX under limits="clamp")
    kappa: jax.Array  # tyre-frame inputs after the limits
    alpha: jax.Array
    gamma: jax.Array
    pressure: jax.Array
    kxk: jax.Array
    kya: jax.Array
    t: jax.Array
    mzr: jax.Array
    phi: Any  # spin phi [1/m] or None


LIMITS = ("clamp", "off")
CONVENTIONS = ("book", "mfeval")


# Input saturation of _solve (issue 15: every finite input gives finite outputs, also in float32):
# Fz above FZ_SAT_FACTOR * FNOMIN, |vx| above VX_SAT [m/s].
FZ_SAT_FACTOR = 20.0
VX_SAT = 1000.0


class _Options(NamedTuple):
    """The keyword options of :func:`mf_forces` (and :func:`jaxtire.evaluate`), in one place."""

    combined: bool = True
    phi: Any = None
    side: Any = None
    pressure: Any = None
    omega: Any = None
    limits: str = "clamp"
    convention: str = "book"


def _solve(params: MFParams, kappa, alpha, gamma, fz, vx, surface, opts: _Options) -> _Solution:
    combined, phi, side, pressure, omega, limits, convention = opts
    check_choice("limits", limits, LIMITS, "mf_forces")
    check_choice("convention", convention, CONVENTIONS, "mf_forces")
    p = params
    if fz is None:
        fz = p.FNOMIN
    _check_load(fz)
    check_surface(surface, source="mf_forces: surface")  # concrete values only; skipped under jit
    zero_camber = _concrete_zero(gamma)
    xp = namespace(p, kappa, alpha, gamma, fz, vx, surface, opts)
    kappa, alpha, gamma, fz = (xp.asarray(x) for x in (kappa, alpha, gamma, fz))
    pres = p.INFLPRES if pressure is None else xp.asarray(pressure)
    if phi is not None:
        if p.is_mf52:
            raise ValueError("mf_forces: turn slip (phi) is modelled for MF 6.1 / 6.2 files (FITTYP 61, 62) only")
        phi = xp.asarray(phi)
    mirror: jax.Array | float = 1.0
    if side is not None:
        mirror = _mirror(p, side, xp)
        alpha = mirror * alpha
        if not zero_camber:  # the mirror image of zero camber is zero camber: it stays one scalar (see _term)
            gamma = mirror * gamma
        if phi is not None:
            phi = mirror * phi
    fz = xp.clip(fz, 0.0, FZ_SAT_FACTOR * p.FNOMIN)  # saturation: finite outputs for every finite input
    vx = None if vx is None else xp.clip(xp.asarray(vx), -VX_SAT, VX_SAT)
    flags = limit_flags(p, kappa, alpha, gamma, fz, pres)
    warn_out_of_range(p, kappa, alpha, gamma, fz, pres, limits)  # eager calls only (concrete inputs)
    kappa_in = kappa  # the wheel's spin (1 + kappa) vx sets the sign of My, beyond the limits too
    if limits == "clamp":
        kappa = xp.clip(kappa, p.KPUMIN, p.KPUMAX)
        alpha = xp.clip(alpha, p.ALPMIN, p.ALPMAX)
        gamma = xp.clip(gamma, p.CAMMIN, p.CAMMAX)
        pres = xp.clip(pres, p.PRESMIN, p.PRESMAX)
        fz_f = xp.minimum(fz, p.FZMAX)
        fz_mz = xp.where(fz > 0.0, xp.maximum(fz_f, p.FZMIN), 0.0)
    else:
        fz_f = fz_mz = fz
    alpha = xp.clip(alpha, -ALPHA_LIMIT, ALPHA_LIMIT)
    # below FZMIN, Mx and My scale with (Fz/FZMIN)^2 and Fz/FZMIN (MFeval's rule, both modes)
    fzmin = xp.maximum(p.FZMIN, 1e-9)
    low_f, low = fz_f < p.FZMIN, fz < p.FZMIN
    fz_mx = xp.where(low_f, fz_f * (fz_f / fzmin) ** 2, fz_f)
    fz_my = xp.where(low, fz * (fz / fzmin), fz)

    grip, rr_scale = (1.0, 1.0) if surface is None else (surface.grip, surface.rolling_resistance)
    alpha_s = materialise(tan(alpha))
    # no friction decay with slip speed where LMUV is a concrete 0 (most files): exact, and saves a sqrt and two
    # divides that XLA would otherwise write to memory (3 loops fewer; see _term)
    slip_speed = 0.0 if vx is None or _concrete_zero(p.LMUV) else xp.abs(vx) * safe_norm(kappa, alpha_s)
    c = _common(p, fz_f, gamma, vx, grip, slip_speed, pres)
    ts = None if phi is None else _turn_slip(p, c, kappa, alpha_s, gamma, phi, vx, omega)
    mfeval = convention == "mfeval"

    x = _fx0(p, c, kappa, ts)
    y = _fy0(p, c, alpha_s, c.gs, ts)
    y_g0 = _fy0(p, c, alpha_s, xp.zeros_like(c.gs))
    gyk = None
    if combined:
        fx = _gxa(p, c, kappa, alpha_s) * x.fx0
        gyk, svyk = _gyk(p, c, kappa, alpha_s, c.gs, y.muy)
        fy = gyk * y.fy0 + svyk
        gyk0, _ = _gyk(p, c, kappa, alpha_s, c.gs if mfeval else xp.zeros_like(c.gs), y_g0.muy)
        fy_g0 = gyk0 * y_g0.fy0
    else:
        fx, fy, fy_g0 = x.fx0, y.fy0, y_g0.fy0
        gyk = xp.ones_like(fx)
    fy_out = fy
    if side is not None:
        # The output is the mirror image; the tyre-frame fy below is taken back from it (exact, mirror is
        # +-1) so that XLA computes fy in one loop and reads it back, instead of recomputing it for Mz.
        fy_out = mirror * fy
        fy = mirror * fy_out
    m = _mz(p, c, kappa, gamma, alpha_s, fy, fy_g0, fx, y, x.kxk, combined, fz_mz, mfeval, ts, gyk)
    mx = _mx(p, c, gamma, fy, fz_mx)
    my = _my(p, fz_my, gamma, fx, vx, rr_scale, pres, kappa_in)
    util = safe_norm(safe_div(fx, x.mux * fz_f), safe_div(fy, y.muy * fz_f))
    sliding = (xp.abs(x.phase) > np.pi / 2) | (xp.abs(y.phase) > np.pi / 2)
    mz = m.mz
    if side is not None:
        mx, mz = mirror * mx, mirror * mz
    forces = TireForces(fx, fy_out, mz, mx, my, x.mux, y.muy, util, sliding)
    return _Solution(
        forces,
        flags,
        mirror,
        fz,
        fz_f,
        kappa,
        alpha,
        gamma,
        xp.asarray(pres),
        x.kxk,
        y.kya,
        m.t,
        m.mzr,
        None if ts is None else ts.phi,
    )


def mf_forces(
    params: MFParams,
    kappa,
    alpha,
    gamma=0.0,
    fz=None,
    vx=None,
    surface=None,
    *,
    combined: bool = True,
    phi=None,
    side=None,
    pressure=None,
    omega=None,
    limits: str = "clamp",
    convention: str = "book",
) -> TireForces:
    """Steady-state MF 6.1 / 6.2 (and 5.2) forces and moments at the contact, TYDEX / ISO-W axes.

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
      phi: turn slip ``phi_t = -psi_dot / Vc`` [1/m] (the book's and MFeval's ``phit``; ``psi_dot`` the
        wheel's yaw rate, ``Vc`` the contact speed).  ``None`` (default): turn slip off, the
        book's zeta factors all 1, bit for bit the steady-state model.  Any array switches on every
        zeta factor of Pacejka 2012 §4.3.3 (MF 6.1 / 6.2 files), with the spin
        ``phi = phi_t + (1 - eps_gamma) Omega sin(gamma) / Vc'`` (eq. 4.76,
        ``eps_gamma = PECP1 (1 + PECP2 dfz)``, ``Vc' = max(|Vc|, VXLOW)``); at zero ``phi`` and zero
        camber it equals the steady-state model.
      side: ``None`` (default) evaluates the tyre as measured; else +1 (mounted on the left of the
        car) / -1 (right), any broadcastable array.  Where ``side`` differs from the file's
        ``TYRESIDE`` the tyre is the mirror image y -> -y: it is evaluated at
        ``(kappa, -alpha, -gamma, -phi)`` and ``fy, mx, mz`` are negated (``fx, my`` unchanged).
      pressure: inflation pressure [Pa]; ``None``: the file's ``INFLPRES``.
      omega: wheel spin rate [rad/s], used by turn slip only (default ``vx (1 + kappa) / Re``).
      limits: ``"clamp"`` (default, static) applies the file's validity ranges as MFeval does:
        ``kappa``, ``alpha``, ``gamma``, ``pressure`` saturate at ``KPU*``, ``ALP*``, ``CAM*``,
        ``PRES*``; ``fz`` above ``FZMAX`` saturates in Fx, Fy, Mz, Mx (not in My); below ``FZMIN``
        the Dt and Dr loads of Mz use ``FZMIN``.  ``"off"``: no saturation.  In both modes ``Mx``
        and ``My`` scale their load with ``(Fz/FZMIN)^2`` and ``Fz/FZMIN`` below ``FZMIN``.
        :func:`jaxtire.evaluate` returns which inputs were outside their range.
      convention: ``"book"`` (default, static): Pacejka 2012; ``"mfeval"``: the forms of MFeval / the
        TNO solver in Mz (camber terms of Bt and Dt, equivalent slip angles, Fy at zero camber
        weighted by the cambered Gyk, ``cos(alpha*)`` in Dr, ``s`` with ``Fy/Fz0``, ``t LFZO``).

    Returns:
      :class:`~jaxtire.forces.TireForces` with ``fx, fy`` [N], ``mz, mx, my`` [N m], peak friction
      ``mux, muy``, ``grip_utilisation`` and ``is_sliding``.
    """
    opts = _Options(combined, phi, side, pressure, omega, limits, convention)
    return _solve(params, kappa, alpha, gamma, fz, vx, surface, opts).forces


def cornering_stiffness(params: MFParams, fz=None, gamma=0.0, surface=None):
    """Analytic cornering stiffness ``Kya = By Cy Dy`` [N/rad] (negative with ISO-W signs)."""
    check_surface(surface, source="cornering_stiffness: surface")  # concrete values only; skipped under jit
    xp = namespace(params, fz, gamma, surface)
    fz = xp.asarray(params.FNOMIN if fz is None else fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, xp.asarray(gamma), None, grip, 0.0)
    return _fy0(params, c, 0.0, c.gs).kya


def slip_stiffness(params: MFParams, fz=None, surface=None):
    """Analytic longitudinal slip stiffness ``Kxk = Bx Cx Dx`` [N] per unit slip ratio."""
    check_surface(surface, source="slip_stiffness: surface")  # concrete values only; skipped under jit
    xp = namespace(params, fz, surface)
    fz = xp.asarray(params.FNOMIN if fz is None else fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, xp.zeros_like(fz), None, grip, 0.0)
    return _fx0(params, c, 0.0).kxk


def clamped_stiffness(params: MFParams, fz, gamma=0.0, surface=None):
    """``(Kxk, Kya)`` (:func:`slip_stiffness`, :func:`cornering_stiffness` at camber ``gamma``) at the load, camber and
    pressure that :func:`mf_forces` evaluates with its default ``limits="clamp"``: ``fz`` saturated at ``FZMAX``
    (and ``FZ_SAT_FACTOR FNOMIN``), ``gamma`` clipped to ``[CAMMIN, CAMMAX]``, ``INFLPRES`` to ``[PRESMIN,
    PRESMAX]``.  So they are the zero-slip slopes of the forces :func:`mf_forces` returns, and, written as
    ``mf_forces`` writes them, XLA evaluates them once for both (common subexpressions)."""
    check_surface(surface, source="clamped_stiffness: surface")  # concrete values only; skipped under jit
    p = params
    xp = namespace(p, fz, gamma, surface)
    fz_f = xp.minimum(xp.clip(xp.asarray(fz), 0.0, FZ_SAT_FACTOR * p.FNOMIN), p.FZMAX)
    gamma = xp.clip(xp.asarray(gamma), p.CAMMIN, p.CAMMAX)
    grip = 1.0 if surface is None else surface.grip
    c = _common(p, fz_f, gamma, None, grip, 0.0, xp.clip(p.INFLPRES, p.PRESMIN, p.PRESMAX))
    return _fx0(p, c, 0.0).kxk, _fy0(p, c, 0.0, c.gs).kya


class PeakValues(NamedTuple):
    """Extreme values of the pure-slip curves [N]: ``D + SV`` and ``-D + SV`` per axis."""

    fx_max: jax.Array
    fx_min: jax.Array
    fy_max: jax.Array
    fy_min: jax.Array


def peak_values(params: MFParams, fz=None, gamma=0.0, surface=None) -> PeakValues:
    """Analytic extremes of the pure-slip Fx0 and Fy0 curves (reached where ``|C atan(...)| = pi/2``, for C > 1)."""
    check_surface(surface, source="peak_values: surface")  # concrete values only; skipped under jit
    xp = namespace(params, fz, gamma, surface)
    fz = xp.asarray(params.FNOMIN if fz is None else fz)
    grip = 1.0 if surface is None else surface.grip
    c = _common(params, fz, xp.asarray(gamma), None, grip, 0.0)
    x = _fx0(params, c, 0.0)
    y = _fy0(params, c, 0.0, c.gs)
    dx, dy = x.mux * fz, y.muy * fz
    return PeakValues(dx + x.svx, -dx + x.svx, dy + y.svy, -dy + y.svy)
