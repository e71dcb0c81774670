"""Compiled baseline: what a performance-minded user writes by hand, in numba (optional extra ``bench``).

``numba`` (``@njit(parallel=True, fastmath=True)``, one ``prange`` loop per kernel, float32 throughout)
with the *same* polynomial approximations as jaxtire's float32 path: :func:`jaxtire._math.atan`
(range-reduced minimax polynomial), :mod:`jaxtire._trig` ``sin`` / ``cos`` (Cephes, Cody-Waite
reduction), ``tan = sin / cos``, ``cos(atan x) = 1 / sqrt(1 + x^2)``.  The equations are those of
:mod:`benchmarks.reference` (which ``tests/benchmarks`` checks against jaxtire):

* :func:`curve`: ``D sin(C atan(B x - E (B x - atan(B x))))``;
* :func:`tire_kernel`: wheel slip then MF 6.1 combined ``Fx, Fy, Mz`` (FITTYP 61 default path of
  :func:`benchmarks.reference.mf61_forces`) of the bundled TNO tire.

* :func:`vehicle_kernel` / :func:`fleet_stepper`: ``n_steps`` steps of the 4-wheel double-track car of
  :func:`benchmarks.reference.vehicle_step` (Ackermann steer, load transfer with the exact first-order
  lag, MF 6.1 tires at zero camber with per-wheel surface grip, implicit Coulomb wheel friction, the
  3x3 linearly implicit chassis solve with the wheels back-substituted, semi-implicit Euler pose), one
  ``prange`` over the vehicles, each vehicle's state in registers for all its steps.

The tire coefficients become compile-time float32 constants: each kernel function is rebuilt with
the coefficients in its globals (:func:`tire_kernel`), as a user would hard-code them.  Without numba
installed :data:`AVAILABLE` is False and :func:`skip_reason` says why.
"""
# ruff: noqa: F821  (the MF coefficient names are globals injected per tire by tire_kernel)

from __future__ import annotations

import math
import types

import numpy as np

from benchmarks import reference as _ref

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
# the vehicle step's constants, from benchmarks.reference
G, KAPPA_0, ALPHA_0 = f32(_ref.G), f32(_ref.KAPPA_0), f32(_ref.ALPHA_0)
TAU_MIN, LAG_MAX, SPIN_MIN, LOAD_MIN = f32(1e-30), f32(80.0), f32(1e-3), f32(1e-12)
SIGMA_MIN, ZETA_LOW, RELAX_SMALL = f32(_ref.SIGMA_MIN), f32(_ref.LOW_SPEED_DAMPING_RATIO), f32(1e-4)
# jaxtire._math._ATAN_COEFFS and jaxtire._trig constants (the same numbers; imported, not copied)
from jaxtire._math import _ATAN_COEFFS as _AC  # noqa: E402  (imports numpy and jax only)

A0, A1, A2, A3, A4, A5, A6, A7, A8 = (f32(c) for c in _AC)
from jaxtire._trig import _C1, _C2, _C3, _PIO2_1, _PIO2_2, _PIO2_3, _S1, _S2, _S3  # noqa: E402


@njit(fastmath=True, inline="always")
def atan_p(x):
    t = abs(x)
    big = t > ONE
    z = ONE / max(t, ONE) if big else t
    w = z * z  # the polynomial in w by Estrin's scheme, as jaxtire._math._estrin evaluates it
    w2 = w * w
    w4 = w2 * w2
    q0 = (A0 + A1 * w) + (A2 + A3 * w) * w2
    q1 = (A4 + A5 * w) + (A6 + A7 * w) * w2
    p = (q0 + q1 * w4) + A8 * (w4 * w4)
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


def _fy0(alpha_s, gs, fz, dfz, dpi, lmuy, lmuy_p, w_low, lky):
    kya = (
        PKY1
        * FZ0P
        * (ONE + PPY1 * dpi)
        * (ONE - PKY3 * abs(gs))
        * sin_p(PKY4 * atan_p(fz / ((PKY2 + PKY5 * gs * gs) * (ONE + PPY2 * dpi) * FZ0P)))
        * lky
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


def _slip(vx, vy, omega, radius):
    """Slip ratio, slip angle and ``vr`` (jaxtire.slip; ``atan2(vy, vr)`` with ``vr > 0`` is ``atan(vy / vr)``)."""
    vr = math.sqrt(vx * vx + V_REG * V_REG)
    return (omega * radius - vx) / vr, atan_p(vy / vr), vr


def _combined(kappa, alpha, gamma, fz_in, vx, lmux0, lmuy0, lkx, lky):
    """Combined ``Fx, Fy`` with the intermediates ``Mz`` and the vehicle's implicit wheel need.

    ``lmux0 = LMUX * scale * grip``, ``lmuy0`` likewise, ``lkx`` / ``lky`` the (scaled) ``LKX`` / ``LKY``."""
    # inputs
    fz = max(fz_in, ZERO)
    kappa = min(max(kappa, KPUMIN), KPUMAX)  # the file's validity ranges (jaxtire's limits="clamp")
    alpha = min(max(alpha, ALPMIN), ALPMAX)
    alpha = min(max(alpha, -ALPHA_LIMIT), ALPHA_LIMIT)
    sa, ca = sincos_p(alpha)
    alpha_s = sa / ca
    slip_speed = abs(vx) * safe_sqrt(kappa * kappa + alpha_s * alpha_s)
    # common
    dfz = (fz - FZ0P) / FZ0P
    dpi = DPI
    decay = ONE + LMUV * slip_speed / LONGVL
    lmux = lmux0 / decay
    lmuy = lmuy0 / decay
    gs = sin_p(gamma)
    lmux_p = A_MU * lmux / (ONE + (A_MU - ONE) * lmux)
    lmuy_p = A_MU * lmuy / (ONE + (A_MU - ONE) * lmuy)
    ratio = min(abs(vx) / VXLOW, ONE)
    w_low = HALF * (ONE - cos_p(PI * ratio))
    # Fx0
    cx = PCX1 * LCX
    mux = (PDX1 + PDX2 * dfz) * (ONE + PPX3 * dpi + PPX4 * dpi * dpi) * (ONE - PDX3 * gamma * gamma) * lmux
    dx = mux * fz
    kxk = fz * (PKX1 + PKX2 * dfz) * math.exp(PKX3 * dfz) * (ONE + PPX1 * dpi + PPX2 * dpi * dpi) * lkx
    shx = (PHX1 + PHX2 * dfz) * LHX * w_low
    svx = fz * (PVX1 + PVX2 * dfz) * LVX * lmux_p * w_low
    kx = kappa + shx
    ex = min((PEX1 + PEX2 * dfz + PEX3 * dfz * dfz) * (ONE - PEX4 * sgn(kx)) * LEX, ONE)
    bx = safe_div(kxk, cx * dx)
    fx0 = dx * sin_p(phase(kx, bx, cx, ex)) + svx
    # Fy0 at camber
    fy0, kya, muy, by, cy, shy, svy = _fy0(alpha_s, gs, fz, dfz, dpi, lmuy, lmuy_p, w_low, lky)
    # combined
    bxa = (RBX1 + RBX3 * gs * gs) * cos_atan(RBX2 * kappa) * LXAL
    exa = min(REX1 + REX2 * dfz, ONE)
    fx = cos_p(phase(alpha_s + RHX1, bxa, RCX1, exa)) / cos_p(phase(RHX1, bxa, RCX1, exa)) * fx0
    gyk, svyk = _gyk(kappa, alpha_s, gs, muy, fz, dfz, w_low)
    fy = gyk * fy0 + svyk
    return fx, fy, fz, alpha_s, dfz, lmuy, lmuy_p, w_low, gs, kxk, kya, by, cy, shy, svy, dx


def _point(vx, vy, omega, gamma, fz_in):
    kappa, alpha, _vr = _slip(vx, vy, omega, RADIUS)
    kappa = min(max(kappa, KPUMIN), KPUMAX)  # Mz below sees the clamped slip too, as in jaxtire
    fx, fy, fz, alpha_s, dfz, lmuy, lmuy_p, w_low, gs, kxk, kya, by, cy, shy, svy, _dx = _combined(
        kappa, alpha, gamma, fz_in, vx, LMUX, LMUY, LKX, LKY
    )
    # Fy at zero camber (for the pneumatic trail term)
    fy00, _k0, muy0, _b0, _c0, _s0, _v0 = _fy0(alpha_s, ZERO, fz, dfz, DPI, lmuy, lmuy_p, w_low, LKY)
    gyk0, _sv = _gyk(kappa, alpha_s, ZERO, muy0, fz, dfz, w_low)
    fy_g0 = gyk0 * fy00
    # Mz
    dpi = DPI
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


# ---------------------------------------------------------------------------------------------
# 4-wheel vehicle (benchmarks.reference.vehicle_step), one prange over the vehicles, n_steps per call


def _relax(speed, sigma, h):
    """``(e, G)`` of the exact deflection step (``reference.relax_factors``)."""
    x = abs(speed) * h / sigma
    em1 = math.expm1(-x)
    return ONE + em1, h * ((ONE - HALF * x) if x < RELAX_SMALL else -em1 / x)


def _rolling_radius(om, fz, R):
    """``reference.rolling_radius``: the slip's effective rolling radius (``R`` where the file has no fitted
    vertical model; ``RE_FITTED``, ``RE_SCALE = FNOMIN / Cz`` compile-time constants of :func:`_build`)."""
    if not RE_FITTED:
        return R
    w = om * R0 / LONGVL
    n = max(fz, ZERO) / FNOMIN
    return R0 * (Q_RE0 + Q_V1 * w * w) - RE_SCALE * (DREFF * atan_p(BREFF * n) + FREFF * n)


def _contact(om, R, uwx, uwy, fz, lkx, lky, d_x, d_y, h):
    """``reference.vehicle_step``'s transient-contact block: lagged slips ``(kappa, alpha, tan_a)``, predicted
    deflections ``dxp, dyp``, gains ``gx, gy``, ``sigma_x`` and the slip sensitivities ``kxs, kys``."""
    dfz = (fz - FZ0P) / FZ0P
    kx = fz * (PKX1 + PKX2 * dfz) * math.exp(PKX3 * dfz) * (ONE + PPX1 * DPI + PPX2 * DPI * DPI) * lkx
    ky = abs(PKY1 * FZ0P * (ONE + PPY1 * DPI) * sin_p(PKY4 * atan_p(fz / (PKY2 * (ONE + PPY2 * DPI) * FZ0P))) * lky)
    cxs = max(LONGITUDINAL_STIFFNESS * (ONE + PCFX1 * dfz + PCFX2 * dfz * dfz) * (ONE + PCFX3 * DPI), ONE)
    cys = max(LATERAL_STIFFNESS * (ONE + PCFY1 * dfz + PCFY2 * dfz * dfz) * (ONE + PCFY3 * DPI), ONE)
    sx, sy = max(kx / cxs, SIGMA_MIN), max(ky / cys, SIGMA_MIN)
    ex, gx = _relax(uwx, sx, h)
    ey, gy = _relax(uwx, sy, h)
    vsx = om * R - uwx
    dxp, dyp = ex * d_x + gx * vsx, ey * d_y + gy * uwy
    fade = HALF + HALF * cos_p(PI * min(abs(uwx) / VXLOW, ONE))
    corner = fade * TWO * ZETA_LOW * math.sqrt(max(fz, ONE) / G)
    tx, ty = corner / math.sqrt(cxs), corner / math.sqrt(cys)
    kappa, tan_a = (dxp + tx * vsx) / sx, (dyp + ty * uwy) / sy
    return kappa, atan_p(tan_a), tan_a, dxp, dyp, gx, gy, sx, (gx + tx) / sx, (gy + ty) / sy


def _wheel_tire(kappa, alpha, fz_in, vx, lmux0, lmuy0, lkx, lky, rr_scale):
    """``reference._vehicle_tire`` at zero camber: ``Fx, Fy, My, Kx, |Ky|, Dx``."""
    fx, fy, fz, _as, _dfz, _lmuy, _lmuyp, _w, _gs, kxk, kya, _by, _cy, _shy, _svy, dx = _combined(
        kappa, alpha, ZERO, fz_in, vx, lmux0, lmuy0, lkx, lky
    )
    # rolling resistance My (reference._my at gamma = 0: the QSY5 / QSY6 terms vanish)
    vxn = vx / LONGVL
    direction = min(max(vx / VXLOW, -ONE), ONE)
    poly = QSY1 + QSY2 * fx / FNOMIN + QSY3 * abs(vxn) + QSY4 * (vxn * vxn) * (vxn * vxn)
    zn = fz / FNOMIN
    load = zn**QSY7 * PRESSURE_QSY8 if zn > LOAD_MIN else ZERO
    my = -R0 * FNOMIN * LMY * rr_scale * poly * load * direction
    return fx, fy, my, kxk, abs(kya), dx


def _fleet(
    ch,
    sids,
    grip_t,
    rres_t,
    drag_t,
    x,
    y,
    yaw,
    vx,
    vy,
    r,
    omega,
    ax,
    ay,
    dfx,
    dfy,
    steer,
    throttle,
    brake,
    h,
    n_steps,
    work,
):
    for i in prange(x.shape[0]):
        c = ch[i]
        a, b, tf, tr, m = c.cg_to_front, c.cg_to_rear, c.track_front, c.track_rear, c.mass
        L = a + b
        # controls are held for the call: Ackermann steer, drive and brake commands, load-transfer lag
        delta = min(max(steer[i], -c.max_steer), c.max_steer)
        sd, cd = sincos_p(delta)
        t = sd / cd
        half = HALF * tf * t  # L - half > 0 for |delta| < pi/2: atan2(L t, L -+ half) = atan(L t / (L -+ half))
        dl = delta + c.ackermann * (atan_p(L * t / (L - half)) - delta)
        dr = delta + c.ackermann * (atan_p(L * t / (L + half)) - delta)
        sl, cl = sincos_p(dl)
        sr, cr = sincos_p(dr)
        thr = min(max(throttle[i], -ONE), ONE)
        brk = min(max(brake[i], ZERO), ONE) * c.max_brake_torque
        tmax, pmax = c.max_drive_torque, c.max_power
        lag = (ONE - math.exp(-min(h / max(c.load_transfer_tau, TAU_MIN), LAG_MAX))) / h  # exact lag
        xi, yi, yawi, vxi, vyi, ri, axi, ayi = x[i], y[i], yaw[i], vx[i], vy[i], r[i], ax[i], ay[i]
        for _ in range(n_steps):
            # loads: static, aero, longitudinal and lateral transfer from the lagged accelerations
            down = HALF * c.air_density * c.lift_area * vxi * vxi
            shift = m * axi * c.cg_height / L
            ff = m * G * b / L + down * c.aero_balance_front - shift
            fr = m * G * a / L + down * (ONE - c.aero_balance_front) + shift
            m_roll = m * ayi * c.cg_height
            dff = c.roll_stiffness_front * m_roll / tf
            dfr = (ONE - c.roll_stiffness_front) * m_roll / tr
            # drive torque available (open differentials, smooth power limit)
            sf = c.drive_split_front
            om_drive = HALF * sf * (omega[i, 0] + omega[i, 1]) + HALF * (ONE - sf) * (omega[i, 2] + omega[i, 3])
            t_avail = thr * tmax * pmax / math.sqrt(pmax * pmax + (tmax * om_drive) * (tmax * om_drive))
            # wheels: tire forces, implicit wheel spin, the wheel's row eliminated into the chassis matrix
            qx = qy = qr = c11 = c12 = c22 = c13 = c23 = c33 = ZERO
            for w in range(4):
                front = w < 2
                side = ONE if w % 2 == 0 else -ONE  # left wheels at +y
                X = a if front else -b
                Y = side * HALF * (tf if front else tr)
                cs, ss = (cl, sl) if w == 0 else ((cr, sr) if w == 1 else (ONE, ZERO))
                R = c.wheel_radius_front if front else c.wheel_radius_rear  # the torque arm
                J = c.wheel_inertia_front if front else c.wheel_inertia_rear
                drive = HALF * (sf if front else ONE - sf)
                bshare = HALF * (c.brake_bias_front if front else ONE - c.brake_bias_front)
                fz = max(HALF * ff - side * dff, ZERO) if front else max(HALF * fr - side * dfr, ZERO)
                sid = sids[i, w]
                grip, rres, drag = grip_t[sid], rres_t[sid], drag_t[sid]
                sx = (c.mu_x_front, c.mu_y_front, c.k_x_front, c.k_y_front)
                sc = sx if front else (c.mu_x_rear, c.mu_y_rear, c.k_x_rear, c.k_y_rear)
                ucx = vxi - ri * Y
                ucy = vyi + ri * X
                uwx = cs * ucx + ss * ucy
                uwy = -ss * ucx + cs * ucy
                om = omega[i, w]
                Re = _rolling_radius(om, fz, R)  # the slip's effective rolling radius
                kappa, alpha, tan_a, dxp, dyp, gx, gy, sxr, kxs, kys = _contact(
                    om, Re, uwx, uwy, fz, LKX * sc[2], LKY * sc[3], dfx[i, w], dfy[i, w], h
                )
                fx, fy, my, kx, ky, dx = _wheel_tire(
                    kappa, alpha, fz, uwx, LMUX * sc[0] * grip, LMUY * sc[1] * grip, LKX * sc[2], LKY * sc[3], rres
                )
                # brake + rolling resistance as implicit Coulomb friction
                cap = brk * bshare + abs(my) / min(max(abs(uwx) / VXLOW, SPIN_MIN), ONE)
                xs = kx * kappa / max(dx, EPSF)
                jxs = max((kx * KAPPA_0 * KAPPA_0 + fx * kappa) / (kappa * kappa + KAPPA_0 * KAPPA_0), ZERO)
                jx = max(kx / ((ONE + xs * xs) * (ONE + xs * xs)), jxs - J / (h * R * Re * kxs))
                jy = max((ky * ALPHA_0 * ALPHA_0 - fy * alpha) / (alpha * alpha + ALPHA_0 * ALPHA_0), ZERO)
                d_wheel = J + h * (jx * R * Re * kxs)
                free = om + h * (t_avail * drive - fx * R) / d_wheel
                lim = h * cap / d_wheel
                held = abs(free) <= lim
                domega = (free - min(max(free, -lim), lim) - om) / h
                fx_gs = fx + jx * Re * kxs * (h * domega)
                # ploughing drag at the contact
                pscale = -drag * fz / max(safe_sqrt(ucx * ucx + ucy * ucy), HALF)
                fbx = cs * fx_gs - ss * fy + pscale * ucx
                fby = ss * fx_gs + cs * fy + pscale * ucy
                # Schur complement of the wheel row; (domega, back-substitution row) kept for after the solve
                fu = max(ONE + sgn(uwx) * dxp / sxr, ZERO)  # d kappa'/du_x of the lag's decay term
                cu = (jxs if held else jx) * (kxs - gx * (ONE - fu) / sxr)
                cxw = cu * (ONE if held else J / d_wheel)
                g = ZERO if held else h * R * cu / d_wheel
                work[i, w, 0], work[i, w, 1], work[i, w, 2], work[i, w, 3] = (
                    domega,
                    g * cs,
                    g * ss,
                    g * (ss * X - cs * Y),
                )
                work[i, w, 4], work[i, w, 5], work[i, w, 6], work[i, w, 7], work[i, w, 8] = (
                    dxp,
                    gx * Re,
                    gx * fu,
                    dyp,
                    gy,
                )
                cyw = jy * kys / (ONE + tan_a * tan_a)
                cxx, cxy, cyy = cs * cs * cxw + ss * ss * cyw, cs * ss * (cxw - cyw), ss * ss * cxw + cs * cs * cyw
                qx, qy, qr = qx + fbx, qy + fby, qr + X * fby - Y * fbx
                c11, c12, c22 = c11 + cxx, c12 + cxy, c22 + cyy
                c13 = c13 - Y * cxx + X * cxy
                c23 = c23 - Y * cxy + X * cyy
                c33 = c33 + Y * Y * cxx - TWO * X * Y * cxy + X * X * cyy
            # chassis: aero drag, the 3x3 linearly implicit solve (LDL^T), then the wheels back-substituted
            kd = HALF * c.air_density * c.drag_area * safe_sqrt(vxi * vxi + vyi * vyi)
            qx = qx - kd * vxi + m * ri * vyi
            qy = qy - kd * vyi - m * ri * vxi
            a11, a12, a13, a22, a23, a33 = m + h * c11, h * c12, h * c13, m + h * c22, h * c23, c.yaw_inertia + h * c33
            l21, l31 = a12 / a11, a13 / a11  # A = L diag(a11, d2, d3) L^T (symmetric positive definite)
            d2 = a22 - l21 * a12
            e23 = a23 - l31 * a12
            l32 = e23 / d2
            d3 = a33 - l31 * a13 - l32 * e23
            z2 = qy - l21 * qx
            dyr = (qr - l31 * qx - l32 * z2) / d3
            dvy = z2 / d2 - l32 * dyr
            dvx = qx / a11 - l21 * dvy - l31 * dyr
            for w in range(4):
                domega = work[i, w, 0] + work[i, w, 1] * dvx + work[i, w, 2] * dvy + work[i, w, 3] * dyr
                omega[i, w] = omega[i, w] + h * domega
                # contact deflections: d' = d_pred + G (Re h domega - fu h du_x/dt), d_y' = d_y,pred + G_y h du_y/dt
                front = w < 2
                X = a if front else -b
                Y = (ONE if w % 2 == 0 else -ONE) * HALF * (tf if front else tr)
                cs, ss = (cl, sl) if w == 0 else ((cr, sr) if w == 1 else (ONE, ZERO))
                dux = cs * (dvx - Y * dyr) + ss * (dvy + X * dyr)
                duy = -ss * (dvx - Y * dyr) + cs * (dvy + X * dyr)
                dfx[i, w] = work[i, w, 4] + h * (work[i, w, 5] * domega - work[i, w, 6] * dux)
                dfy[i, w] = work[i, w, 7] + work[i, w, 8] * h * duy
            dax = (dvx - ri * vyi - axi) * lag
            day = (dvy + ri * vxi - ayi) * lag
            # semi-implicit Euler: velocities first, then the pose from the new velocities
            vxi, vyi, ri = vxi + h * dvx, vyi + h * dvy, ri + h * dyr
            sm, cm = sincos_p(yawi + HALF * h * ri)
            xi, yi, yawi = xi + h * (vxi * cm - vyi * sm), yi + h * (vxi * sm + vyi * cm), yawi + h * ri
            axi, ayi = axi + h * dax, ayi + h * day
        x[i], y[i], yaw[i], vx[i], vy[i], r[i], ax[i], ay[i] = xi, yi, yawi, vxi, vyi, ri, axi, ayi


def _build(coefs: dict, radius: float, names: tuple, inline: bool = True):
    """The kernel functions ``names`` compiled with the MF coefficients of ``coefs`` as float32 globals: the
    last one ``parallel``, the others inlined by numba (``inline``) or left to LLVM; returns the last."""
    if not AVAILABLE:
        raise RuntimeError(_WHY)
    g = dict(globals())
    g.update({k: f32(v) for k, v in coefs.items()})
    fz0p = float(coefs["FNOMIN"]) * float(coefs["LFZO"])
    g.update(
        FZ0P=f32(fz0p),
        DPI=f32((coefs["INFLPRES"] - coefs["NOMPRES"]) / coefs["NOMPRES"]),
        PRESSURE_QSY8=f32((coefs["INFLPRES"] / coefs["NOMPRES"]) ** coefs["QSY8"]),
        R0=f32(coefs["UNLOADED_RADIUS"]),
        RADIUS=f32(radius),
        RE_FITTED=bool(coefs["Q_RE0"] > 0.0 and (coefs["DREFF"] != 0.0 or coefs["FREFF"] != 0.0)),
        RE_SCALE=f32(
            coefs["FNOMIN"]
            / (
                coefs["VERTICAL_STIFFNESS"]
                * (1.0 + coefs["PFZ1"] * (coefs["INFLPRES"] - coefs["NOMPRES"]) / coefs["NOMPRES"])
            )
        ),
    )
    for name in names:
        opts = dict(parallel=True) if name == names[-1] else dict(inline="always" if inline else "never")
        fn = types.FunctionType(globals()[name].__code__, g, name)
        g[name] = njit(fastmath=True, **opts)(fn)
    return g[names[-1]]


def tire_kernel(coefs: dict, radius: float):
    """``kernel(vx, vy, omega, gamma, fz, fx, fy, mz)`` (float32 arrays; outputs written in place) for the
    tire of ``coefs`` (``name -> float``, :func:`benchmarks.inputs._coef_values`) and wheel ``radius``."""
    return _build(coefs, radius, ("_fy0", "_gyk", "_slip", "_combined", "_point", "_tire"))


#: Per-vehicle chassis fields of the vehicle kernel (one float32 record per vehicle).
CHASSIS_FIELDS = (
    "cg_to_front",
    "cg_to_rear",
    "track_front",
    "track_rear",
    "max_steer",
    "ackermann",
    "air_density",
    "lift_area",
    "drag_area",
    "aero_balance_front",
    "mass",
    "yaw_inertia",
    "cg_height",
    "roll_stiffness_front",
    "wheel_radius_front",
    "wheel_radius_rear",
    "wheel_inertia_front",
    "wheel_inertia_rear",
    "drive_split_front",
    "brake_bias_front",
    "max_drive_torque",
    "max_power",
    "max_brake_torque",
    "load_transfer_tau",
)
_SCALES = ("mu_x", "mu_y", "k_x", "k_y")


def vehicle_kernel(coefs: dict):
    """The compiled fleet kernel for the tire of ``coefs`` (front and rear, as the benchmark fleet):
    ``kernel(chassis, surface_ids, grip, rolling, drag, x, y, yaw, vx, vy, yaw_rate, omega, ax, ay, defl_x,
    defl_y, steer, throttle, brake, h, n_steps, work)``; bind a fleet to it with :func:`fleet_stepper`."""
    # numba-level inlining of the tire into the wheel loop: 50-100 s to compile and no faster (measured)
    return _build(
        coefs,
        0.0,
        ("_fy0", "_gyk", "_slip", "_combined", "_wheel_tire", "_relax", "_contact", "_rolling_radius", "_fleet"),
        inline=False,
    )


def fleet_stepper(kernel, ch, table):
    """``step(state, controls, h, n_steps)``: ``n_steps`` steps of :func:`benchmarks.reference.vehicle_step`
    for the fleet ``ch`` (a :func:`benchmarks.reference.chassis_values` namespace over ``n`` vehicles with
    ``tire_scale_front`` / ``tire_scale_rear`` and ``surface_ids`` as in :func:`benchmarks.inputs.numpy_fleet`)
    on the surface ``table`` ``(grip, rolling_resistance, drag)``.

    ``state`` is :func:`fleet_state`'s tuple of float32 arrays, updated in place; ``controls`` ``(steer,
    throttle, brake)`` float32 ``(n,)`` arrays held over the ``n_steps`` steps of length ``h`` [s]."""
    n = np.shape(ch.surface_ids[0])[0]
    dtype = [(k, np.float32) for k in CHASSIS_FIELDS]
    dtype += [(f"{s}_{axle}", np.float32) for axle in ("front", "rear") for s in _SCALES]
    rec = np.empty(n, dtype)
    for k in CHASSIS_FIELDS:
        rec[k] = getattr(ch, k)
    for axle in ("front", "rear"):
        for s, v in zip(_SCALES, getattr(ch, f"tire_scale_{axle}"), strict=True):
            rec[f"{s}_{axle}"] = v
    sids = np.ascontiguousarray(np.stack([np.broadcast_to(s, (n,)) for s in ch.surface_ids], -1), np.int32)
    tab = tuple(np.ascontiguousarray(t, np.float32) for t in table)
    work = np.empty((n, 4, 9), np.float32)

    def step(state, controls, h, n_steps=1):
        kernel(rec, sids, *tab, *state, *controls, f32(h), n_steps, work)

    return step


def fleet_state(state) -> tuple:
    """The reference's state tuple ``(x, y, yaw, vx, vy, yaw_rate, omega, ax, ay[, defl_x, defl_y])``
    (``omega`` and the contact deflections lists of 4; without them: undeflected) as contiguous float32
    arrays, ``omega`` and the deflections of shape ``(n, 4)``."""
    c = lambda v: np.array(v, np.float32, order="C")  # noqa: E731  (a copy: the kernel writes in place)
    omega = c(np.stack(state[6], -1))
    defl = tuple(c(np.stack(d, -1)) for d in state[9:11]) if len(state) == 11 else (0 * omega, 0 * omega)
    return tuple(c(v) for v in state[:6]) + (omega,) + tuple(c(v) for v in state[7:9]) + defl


def default_coefs() -> dict:
    """The MF coefficients (``name -> float``) of the bundled tire that the benchmark inputs use."""
    from benchmarks import inputs

    return {k: float(v) for k, v in vars(inputs.reference_tire(np.float64)).items()}


def set_threads(n: int | None) -> int:
    """Use ``n`` numba threads (None: all); returns the number in effect."""
    if not AVAILABLE:
        return 0
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if n is None else n)
    return numba.get_num_threads()
