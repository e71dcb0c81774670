"""Compiled baseline: what a performance-minded user writes by hand, in numba (optional extra ``bench``).

``numba`` (``@njit(parallel=True, fastmath=True)``, one ``prange`` loop per kernel, float32 throughout)
with the *same* polynomial approximations as jaxtire's float32 path: :func:`jaxtire._math.atan`
(range-reduced minimax polynomial), :mod:`jaxtire._trig` ``sin`` / ``cos`` (Cephes, Cody-Waite
reduction), ``tan = sin / cos``, ``cos(atan x) = 1 / sqrt(1 + x^2)``.  The equations are those of
:mod:`benchmarks.reference` (which ``tests/benchmarks`` checks against jaxtire):

* :func:`curve`: ``D sin(C atan(B x - E (B x - atan(B x))))``;
* :func:`tire_kernel`: wheel slip then MF 6.1 combined ``Fx, Fy, Mz`` (FITTYP 61 default path of
  :func:`benchmarks.reference.mf61_forces`) of the bundled TNO tire.

The 4-wheel vehicle step is not ported yet (see ``RESULTS.md``).

The tire coefficients become compile-time float32 constants: each kernel function is rebuilt with
the coefficients in its globals (:func:`tire_kernel`), as a user would hard-code them.  Without numba
installed :data:`AVAILABLE` is False and :func:`skip_reason` says why.
"""
# ruff: noqa: F821  (the MF coefficient names are globals injected per tire by tire_kernel)

from __future__ import annotations

import math
import types

import numpy as np

try:  # optional: pip install .[bench]
    import numba
    from numba import njit, prange

    AVAILABLE = True
    _WHY = ""
except ImportError as e:  # pragma: no cover - depends on the environment
    numba = None
    AVAILABLE = False
    _WHY = f"numba not installed ({e}); pip install 'jaxtire[bench]' for the compiled baseline"

    def njit(*a, **k):
        return (lambda f: f) if not (a and callable(a[0])) else a[0]

    prange = range


def skip_reason() -> str:
    """Empty when the compiled baseline can run, else the message to print."""
    return _WHY


f32 = np.float32
ZERO, HALF, ONE, TWO = f32(0.0), f32(0.5), f32(1.0), f32(2.0)
EPSF = f32(1e-6)
TINY = f32(1e-20)
PI = f32(np.pi)
PIO2 = f32(np.pi / 2)
TWO_OVER_PI = f32(2.0 / np.pi)
A_MU = f32(10.0)
ALPHA_LIMIT = f32(math.pi / 2 - 0.01)
V_REG = f32(0.5)
# jaxtire._math._ATAN_COEFFS and jaxtire._trig constants (the same numbers; imported, not copied)
from jaxtire._math import _ATAN_COEFFS as _AC  # noqa: E402  (imports numpy and jax only)

A0, A1, A2, A3, A4, A5, A6, A7, A8 = (f32(c) for c in _AC)
from jaxtire._trig import _C1, _C2, _C3, _PIO2_1, _PIO2_2, _PIO2_3, _S1, _S2, _S3  # noqa: E402


@njit(fastmath=True, inline="always")
def atan_p(x):
    t = abs(x)
    big = t > ONE
    z = ONE / max(t, ONE) if big else t
    z2 = z * z
    p = (((((((A8 * z2 + A7) * z2 + A6) * z2 + A5) * z2 + A4) * z2 + A3) * z2 + A2) * z2 + A1) * z2 + A0
    r = p * z
    r = PIO2 - r if big else r
    return r if x >= ZERO else -r


@njit(fastmath=True, inline="always")
def sincos_p(x):
    k = f32(math.floor(x * TWO_OVER_PI + HALF))
    r = ((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    q = np.int32(k) & 3
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * _S3))
    c = ONE - HALF * z + z * z * (_C1 + z * (_C2 + z * _C3))
    sv = c if (q & 1) == 1 else s
    cv = s if (q & 1) == 1 else c
    sv = -sv if (q & 2) == 2 else sv
    cv = -cv if ((q + 1) & 2) == 2 else cv
    return sv, cv


@njit(fastmath=True, inline="always")
def sin_p(x):
    return sincos_p(x)[0]


@njit(fastmath=True, inline="always")
def cos_p(x):
    return sincos_p(x)[1]


@njit(fastmath=True, inline="always")
def cos_atan(x):
    return ONE / math.sqrt(ONE + x * x)


@njit(fastmath=True, inline="always")
def safe_div(num, den):
    return num / (den + (EPSF if den >= ZERO else -EPSF))


@njit(fastmath=True, inline="always")
def safe_sqrt(x):
    return math.sqrt(x) if x > TINY else ZERO


@njit(fastmath=True, inline="always")
def sgn(x):
    return ONE if x > ZERO else (-ONE if x < ZERO else ZERO)


@njit(fastmath=True, inline="always")
def phase(x, B, C, E):
    bx = B * x
    return C * atan_p(bx - E * (bx - atan_p(bx)))


@njit(parallel=True, fastmath=True)
def curve(x, B, C, D, E, out):
    """``out[i] = D sin(C atan(B x - E (B x - atan(B x))))`` (float32 arrays, float32 scalars)."""
    for i in prange(x.shape[0]):
        out[i] = D * sin_p(phase(x[i], B, C, E))


# ---------------------------------------------------------------------------------------------
# MF 6.1 (the FITTYP 61 default path of benchmarks.reference.mf61_forces), coefficients as globals


def _fy0(alpha_s, gs, fz, dfz, dpi, lmuy, lmuy_p, w_low):
    kya = (
        PKY1
        * FZ0P
        * (ONE + PPY1 * dpi)
        * (ONE - PKY3 * abs(gs))
        * sin_p(PKY4 * atan_p(fz / ((PKY2 + PKY5 * gs * gs) * (ONE + PPY2 * dpi) * FZ0P)))
        * LKY
    )
    kyg0 = fz * (PKY6 + PKY7 * dfz) * (ONE + PPY5 * dpi) * LKYC
    svyg = fz * (PVY3 + PVY4 * dfz) * gs * LKYC * lmuy_p
    shy_camber = safe_div(kyg0 * gs - svyg, kya)
    svy = (fz * (PVY1 + PVY2 * dfz) * LVY * lmuy_p + svyg) * w_low
    shy = ((PHY1 + PHY2 * dfz) * LHY + shy_camber) * w_low
    ay = alpha_s + shy
    cy = PCY1 * LCY
    muy = (PDY1 + PDY2 * dfz) * (ONE + PPY3 * dpi + PPY4 * dpi * dpi) * (ONE - PDY3 * gs * gs) * lmuy
    dy = muy * fz
    ey = min((PEY1 + PEY2 * dfz) * (ONE + PEY5 * gs * gs - (PEY3 + PEY4 * gs) * sgn(ay)) * LEY, ONE)
    by = safe_div(kya, cy * dy)
    fy0 = dy * sin_p(phase(ay, by, cy, ey)) + svy
    return fy0, kya, muy, by, cy, shy, svy


def _gyk(kappa, alpha_s, gs, muy, fz, dfz, w_low):
    byk = (RBY1 + RBY4 * gs * gs) * cos_atan(RBY2 * (alpha_s - RBY3)) * LYKA
    eyk = min(REY1 + REY2 * dfz, ONE)
    shyk = RHY1 + RHY2 * dfz
    gyk = cos_p(phase(kappa + shyk, byk, RCY1, eyk)) / cos_p(phase(shyk, byk, RCY1, eyk))
    dvyk = muy * fz * (RVY1 + RVY2 * dfz + RVY3 * gs) * cos_atan(RVY4 * alpha_s)
    svyk = dvyk * sin_p(RVY5 * atan_p(RVY6 * kappa)) * LVYKA * w_low
    return gyk, svyk


def _point(vx, vy, omega, gamma, fz_in):
    # wheel slip (jaxtire.slip; atan2(vy, vr) with vr > 0 is atan(vy / vr))
    vr = math.sqrt(vx * vx + V_REG * V_REG)
    kappa = (omega * RADIUS - vx) / vr
    alpha = atan_p(vy / vr)
    # inputs
    fz = max(fz_in, ZERO)
    alpha = min(max(alpha, -ALPHA_LIMIT), ALPHA_LIMIT)
    sa, ca = sincos_p(alpha)
    alpha_s = sa / ca
    slip_speed = abs(vx) * safe_sqrt(kappa * kappa + alpha_s * alpha_s)
    # common
    dfz = (fz - FZ0P) / FZ0P
    dpi = DPI
    decay = ONE + LMUV * slip_speed / LONGVL
    lmux = LMUX / decay
    lmuy = LMUY / decay
    gs = sin_p(gamma)
    lmux_p = A_MU * lmux / (ONE + (A_MU - ONE) * lmux)
    lmuy_p = A_MU * lmuy / (ONE + (A_MU - ONE) * lmuy)
    ratio = min(abs(vx) / VXLOW, ONE)
    w_low = HALF * (ONE - cos_p(PI * ratio))
    # Fx0
    cx = PCX1 * LCX
    mux = (PDX1 + PDX2 * dfz) * (ONE + PPX3 * dpi + PPX4 * dpi * dpi) * (ONE - PDX3 * gamma * gamma) * lmux
    dx = mux * fz
    kxk = fz * (PKX1 + PKX2 * dfz) * math.exp(PKX3 * dfz) * (ONE + PPX1 * dpi + PPX2 * dpi * dpi) * LKX
    shx = (PHX1 + PHX2 * dfz) * LHX * w_low
    svx = fz * (PVX1 + PVX2 * dfz) * LVX * lmux_p * w_low
    kx = kappa + shx
    ex = min((PEX1 + PEX2 * dfz + PEX3 * dfz * dfz) * (ONE - PEX4 * sgn(kx)) * LEX, ONE)
    bx = safe_div(kxk, cx * dx)
    fx0 = dx * sin_p(phase(kx, bx, cx, ex)) + svx
    # Fy0 at camber and at zero camber
    fy0, kya, muy, by, cy, shy, svy = _fy0(alpha_s, gs, fz, dfz, dpi, lmuy, lmuy_p, w_low)
    fy00, _k0, muy0, _b0, _c0, _s0, _v0 = _fy0(alpha_s, ZERO, fz, dfz, dpi, lmuy, lmuy_p, w_low)
    # combined Fx
    bxa = (RBX1 + RBX3 * gs * gs) * cos_atan(RBX2 * kappa) * LXAL
    exa = min(REX1 + REX2 * dfz, ONE)
    fx = cos_p(phase(alpha_s + RHX1, bxa, RCX1, exa)) / cos_p(phase(RHX1, bxa, RCX1, exa)) * fx0
    gyk, svyk = _gyk(kappa, alpha_s, gs, muy, fz, dfz, w_low)
    fy = gyk * fy0 + svyk
    gyk0, _sv = _gyk(kappa, alpha_s, ZERO, muy0, fz, dfz, w_low)
    fy_g0 = gyk0 * fy00
    # Mz
    cos_a = cos_atan(alpha_s)
    gz = gs
    sht = QHZ1 + QHZ2 * dfz + (QHZ3 + QHZ4 * dfz) * gz
    alpha_t = alpha_s + sht
    alpha_r = alpha_s + shy + safe_div(svy, kya)
    bt = (QBZ1 + QBZ2 * dfz + QBZ3 * dfz * dfz) * (ONE + QBZ4 * gz + QBZ5 * abs(gz)) * LKY / lmuy
    ct = QCZ1
    dt0 = fz * (R0 / FZ0P) * (QDZ1 + QDZ2 * dfz) * (ONE - PPZ1 * dpi) * LTR
    dt = dt0 * (ONE + QDZ3 * abs(gz) + QDZ4 * gz * gz)
    dr = (
        fz
        * R0
        * (
            (QDZ6 + QDZ7 * dfz) * LRES
            + ((QDZ8 + QDZ9 * dfz) * (ONE + PPZ2 * dpi) + (QDZ10 + QDZ11 * dfz) * abs(gz)) * gz * LKZC
        )
        * lmuy
    )
    dr = dr * cos_a * w_low
    br = QBZ9 * LKY / lmuy + QBZ10 * by * cy
    et = min(
        (QEZ1 + QEZ2 * dfz + QEZ3 * dfz * dfz) * (ONE + (QEZ4 + QEZ5 * gz) * TWO_OVER_PI * atan_p(bt * ct * alpha_t)),
        ONE,
    )
    q = safe_div(kxk, kya)
    ratio2 = q * q * kappa * kappa
    alpha_t = safe_sqrt(alpha_t * alpha_t + ratio2) * sgn(alpha_t)
    alpha_r = safe_sqrt(alpha_r * alpha_r + ratio2) * sgn(alpha_r)
    t = dt * cos_p(phase(alpha_t, bt, ct, et)) * cos_a
    mzr = dr * cos_atan(br * alpha_r)
    s = R0 * (SSZ1 + SSZ2 * (fy / FZ0P) + (SSZ3 + SSZ4 * dfz) * gz) * LS
    return fx, fy, -t * fy_g0 + mzr + s * fx


def _tire(vx, vy, omega, gamma, fz, fx, fy, mz):
    for i in prange(vx.shape[0]):
        fx[i], fy[i], mz[i] = _point(vx[i], vy[i], omega[i], gamma[i], fz[i])


def tire_kernel(coefs: dict, radius: float):
    """``kernel(vx, vy, omega, gamma, fz, fx, fy, mz)`` (float32 arrays; outputs written in place) for the
    tire of ``coefs`` (``name -> float``, :func:`benchmarks.inputs._coef_values`) and wheel ``radius``."""
    if not AVAILABLE:
        raise RuntimeError(_WHY)
    g = dict(globals())
    g.update({k: f32(v) for k, v in coefs.items()})
    fz0p = float(coefs["FNOMIN"]) * float(coefs["LFZO"])
    g.update(
        FZ0P=f32(fz0p),
        DPI=f32((coefs["INFLPRES"] - coefs["NOMPRES"]) / coefs["NOMPRES"]),
        R0=f32(coefs["UNLOADED_RADIUS"]),
        RADIUS=f32(radius),
    )
    for name, opts in (
        ("_fy0", dict(inline="always")),
        ("_gyk", dict(inline="always")),
        ("_point", dict(inline="always")),
        ("_tire", dict(parallel=True)),
    ):
        fn = types.FunctionType(globals()[name].__code__, g, name)
        g[name] = njit(fastmath=True, **opts)(fn)
    return g["_tire"]


def set_threads(n: int | None) -> int:
    """Use ``n`` numba threads (None: all); returns the number in effect."""
    if not AVAILABLE:
        return 0
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if n is None else n)
    return numba.get_num_threads()
