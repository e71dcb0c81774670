"""Reference implementations for the speed comparison: the same equations in NumPy and in pure Python.

Nothing here imports JAX or jaxtire's JAX code.  One source serves both baselines: every function
takes an ``xp`` namespace, :data:`NP` (vectorised NumPy on arrays, float32 like the JAX runs) or
:data:`PY` (the ``math`` module on Python floats, float64, called once per tire / vehicle in a
loop), so the NumPy and the Python numbers time exactly the same arithmetic.

Equations (identical to the JAX code they are timed against, checked by ``tests/benchmarks``):

* :func:`magic_formula`: ``D sin(C atan(B x - E (B x - atan(B x))))`` (:mod:`jaxtire.magic_formula`).
* :func:`mf61_fxfymz`: slip kinematics (:mod:`jaxtire.slip`) and the steady-state MF 6.1 / 6.2
  combined-slip ``Fx``, ``Fy``, ``Mz`` with the low-speed fade, camber, pressure and surface grip
  terms (:mod:`jaxtire.mf61`, FITTYP 61/62 branch).
* :func:`vehicle_step`: one semi-implicit Euler step of the 4-wheel double-track model of
  :mod:`sims.vehicles.double_track` / :mod:`sims.vehicles.core` (load transfer, Ackermann steer,
  drive and brake torques, MF tires with linearly implicit wheel spin and tire damping, ploughing and
  aero drag) and :func:`sims.vehicles.integrators.semi_implicit_euler`.

Parameters are plain attribute namespaces of floats (:func:`tire_coefs`, :func:`chassis_values`),
chassis values may be NumPy arrays over the vehicles.
"""

from __future__ import annotations

import math
import types

import numpy as np

A_MU = 10.0
ALPHA_LIMIT = math.pi / 2 - 0.01
EPS = 1e-6
V_REG = 0.5
G = 9.81
KAPPA_0 = 0.01
ALPHA_0 = 0.01
SIGMA_MIN = 1e-3  # jaxtire.transient.SIGMA_MIN
LOW_SPEED_DAMPING_RATIO = 1.0  # sims.vehicles.core.LOW_SPEED_DAMPING_RATIO


def _py_sign(x):
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def _py_where(c, a, b):
    return a if c else b


def _py_clip(x, lo, hi):
    return min(max(x, lo), hi)


#: Vectorised NumPy namespace (the ``xp`` of the NumPy baseline).
NP = types.SimpleNamespace(
    name="numpy",
    sin=np.sin,
    cos=np.cos,
    tan=np.tan,
    atan=np.arctan,
    atan2=np.arctan2,
    exp=np.exp,
    expm1=np.expm1,
    sqrt=np.sqrt,
    tanh=np.tanh,
    abs=np.abs,
    sign=np.sign,
    where=np.where,
    minimum=np.minimum,
    maximum=np.maximum,
    clip=np.clip,
    pi=np.float32(np.pi),
    take=lambda table, ids: table[ids],
)

#: Scalar ``math`` namespace (the ``xp`` of the pure-Python baseline).
PY = types.SimpleNamespace(
    name="python",
    sin=math.sin,
    cos=math.cos,
    tan=math.tan,
    atan=math.atan,
    atan2=math.atan2,
    exp=math.exp,
    expm1=math.expm1,
    sqrt=math.sqrt,
    tanh=math.tanh,
    abs=abs,
    sign=_py_sign,
    where=_py_where,
    minimum=min,
    maximum=max,
    clip=_py_clip,
    pi=math.pi,
    take=lambda table, ids: table[int(ids)],
)


# --------------------------------------------------------------------------------------------------
# parameters


def tire_coefs(coef_values: dict, dtype=np.float32) -> types.SimpleNamespace:
    """A namespace of the MF coefficients (``name -> float``), cast to ``dtype`` (NumPy scalars) or
    kept as Python floats with ``dtype=float``."""
    cast = float if dtype is float else (lambda v: np.asarray(v, dtype))
    return types.SimpleNamespace(**{k: cast(v) for k, v in coef_values.items()})


def scaled_tire(t, mu_x, mu_y, k_x, k_y):
    """``t`` with ``LMUX *= mu_x``, ``LMUY *= mu_y``, ``LKX *= k_x``, ``LKY *= k_y`` (the per-vehicle
    :class:`sims.vehicles.params.TireScale`)."""
    s = types.SimpleNamespace(**vars(t))
    s.LMUX, s.LMUY, s.LKX, s.LKY = t.LMUX * mu_x, t.LMUY * mu_y, t.LKX * k_x, t.LKY * k_y
    return s


def chassis_values(values: dict, dtype=np.float32):
    """A namespace of chassis fields (NumPy arrays of ``dtype``, or Python floats with ``dtype=float``)."""
    cast = float if dtype is float else (lambda v: np.asarray(v, dtype))
    return types.SimpleNamespace(**{k: cast(v) for k, v in values.items()})


# --------------------------------------------------------------------------------------------------
# elementary helpers (the safe-where forms of jaxtire._math)


def safe_div(xp, num, den):
    return num / (den + EPS * xp.where(den >= 0, 1.0, -1.0))


def safe_sqrt(xp, x):
    pos = x > 1e-20
    return xp.where(pos, xp.sqrt(xp.where(pos, x, 1.0)), 0.0)


def safe_pow(xp, x, q):
    pos = x > 1e-12
    return xp.where(pos, xp.where(pos, x, 1.0) ** q, 0.0)


def cos_atan(xp, x):
    return 1.0 / xp.sqrt(1.0 + x * x)


def peak_phase(xp, x, B, C, E, Sh=0.0):
    bx = B * (x + Sh)
    return C * xp.atan(bx - E * (bx - xp.atan(bx)))


def magic_formula(xp, x, B, C, D, E):
    """The bare Magic Formula curve ``D sin(C atan(B x - E (B x - atan(B x))))``."""
    bx = B * x
    return D * xp.sin(C * xp.atan(bx - E * (bx - xp.atan(bx))))


# --------------------------------------------------------------------------------------------------
# MF 6.1 tire


def _common(xp, p, fz, gamma, vx, grip, slip_speed):
    fz0p = p.FNOMIN * p.LFZO
    dfz = (fz - fz0p) / fz0p
    dpi = (p.INFLPRES - p.NOMPRES) / p.NOMPRES
    decay = 1.0 + p.LMUV * slip_speed / p.LONGVL
    lmux = p.LMUX * grip / decay
    lmuy = p.LMUY * grip / decay
    gs = xp.sin(gamma)
    lmux_p = A_MU * lmux / (1.0 + (A_MU - 1.0) * lmux)
    lmuy_p = A_MU * lmuy / (1.0 + (A_MU - 1.0) * lmuy)
    ratio = xp.minimum(xp.abs(vx) / p.VXLOW, 1.0)
    w_low = 0.5 * (1.0 - xp.cos(xp.pi * ratio))
    return types.SimpleNamespace(
        fz=fz,
        fz0p=fz0p,
        dfz=dfz,
        dpi=dpi,
        gx=gamma,
        gs=gs,
        gz=gs,
        lmux=lmux,
        lmuy=lmuy,
        lmux_p=lmux_p,
        lmuy_p=lmuy_p,
        w_low=w_low,
    )


def _mux(p, c):
    return (p.PDX1 + p.PDX2 * c.dfz) * (1.0 + p.PPX3 * c.dpi + p.PPX4 * c.dpi**2) * (1.0 - p.PDX3 * c.gx**2) * c.lmux


def _fx0(xp, p, c, kappa):
    cx = p.PCX1 * p.LCX
    dx = _mux(p, c) * c.fz
    kxk = c.fz * (p.PKX1 + p.PKX2 * c.dfz) * xp.exp(p.PKX3 * c.dfz) * (1.0 + p.PPX1 * c.dpi + p.PPX2 * c.dpi**2) * p.LKX
    shx = (p.PHX1 + p.PHX2 * c.dfz) * p.LHX * c.w_low
    svx = c.fz * (p.PVX1 + p.PVX2 * c.dfz) * p.LVX * c.lmux_p * c.w_low
    kx = kappa + shx
    ex = xp.minimum((p.PEX1 + p.PEX2 * c.dfz + p.PEX3 * c.dfz**2) * (1.0 - p.PEX4 * xp.sign(kx)) * p.LEX, 1.0)
    bx = safe_div(xp, kxk, cx * dx)
    return dx * xp.sin(peak_phase(xp, kx, bx, cx, ex)) + svx, kxk


def _fy0(xp, p, c, alpha_s, gs):
    kya = (
        p.PKY1
        * c.fz0p
        * (1.0 + p.PPY1 * c.dpi)
        * (1.0 - p.PKY3 * xp.abs(gs))
        * xp.sin(p.PKY4 * xp.atan(c.fz / ((p.PKY2 + p.PKY5 * gs**2) * (1.0 + p.PPY2 * c.dpi) * c.fz0p)))
        * p.LKY
    )
    kyg0 = c.fz * (p.PKY6 + p.PKY7 * c.dfz) * (1.0 + p.PPY5 * c.dpi) * p.LKYC
    svyg = c.fz * (p.PVY3 + p.PVY4 * c.dfz) * gs * p.LKYC * c.lmuy_p
    shy_camber = safe_div(xp, kyg0 * gs - svyg, kya)
    svy = (c.fz * (p.PVY1 + p.PVY2 * c.dfz) * p.LVY * c.lmuy_p + svyg) * c.w_low
    shy = ((p.PHY1 + p.PHY2 * c.dfz) * p.LHY + shy_camber) * c.w_low
    ay = alpha_s + shy
    cy = p.PCY1 * p.LCY
    muy = (p.PDY1 + p.PDY2 * c.dfz) * (1.0 + p.PPY3 * c.dpi + p.PPY4 * c.dpi**2) * (1.0 - p.PDY3 * gs**2) * c.lmuy
    dy = muy * c.fz
    ey = xp.minimum(
        (p.PEY1 + p.PEY2 * c.dfz) * (1.0 + p.PEY5 * gs**2 - (p.PEY3 + p.PEY4 * gs) * xp.sign(ay)) * p.LEY, 1.0
    )
    by = safe_div(xp, kya, cy * dy)
    fy0 = dy * xp.sin(peak_phase(xp, ay, by, cy, ey)) + svy
    return types.SimpleNamespace(fy0=fy0, kya=kya, muy=muy, by=by, cy=cy, shy=shy, svy=svy)


def _gxa(xp, p, c, kappa, alpha_s):
    bxa = (p.RBX1 + p.RBX3 * c.gs**2) * cos_atan(xp, p.RBX2 * kappa) * p.LXAL
    exa = xp.minimum(p.REX1 + p.REX2 * c.dfz, 1.0)
    return xp.cos(peak_phase(xp, alpha_s, bxa, p.RCX1, exa, p.RHX1)) / xp.cos(peak_phase(xp, p.RHX1, bxa, p.RCX1, exa))


def _gyk(xp, p, c, kappa, alpha_s, gs, muy):
    byk = (p.RBY1 + p.RBY4 * gs**2) * cos_atan(xp, p.RBY2 * (alpha_s - p.RBY3)) * p.LYKA
    eyk = xp.minimum(p.REY1 + p.REY2 * c.dfz, 1.0)
    shyk = p.RHY1 + p.RHY2 * c.dfz
    gyk = xp.cos(peak_phase(xp, kappa, byk, p.RCY1, eyk, shyk)) / xp.cos(peak_phase(xp, shyk, byk, p.RCY1, eyk))
    dvyk = muy * c.fz * (p.RVY1 + p.RVY2 * c.dfz + p.RVY3 * gs) * cos_atan(xp, p.RVY4 * alpha_s)
    svyk = dvyk * xp.sin(p.RVY5 * xp.atan(p.RVY6 * kappa)) * p.LVYKA * c.w_low
    return gyk, svyk


def _mz(xp, p, c, kappa, alpha_s, fy, fy_g0, fx, y, kxk):
    r0 = p.UNLOADED_RADIUS
    cos_a = cos_atan(xp, alpha_s)
    gz = c.gz
    sht = p.QHZ1 + p.QHZ2 * c.dfz + (p.QHZ3 + p.QHZ4 * c.dfz) * gz
    alpha_t = alpha_s + sht
    alpha_r = alpha_s + y.shy + safe_div(xp, y.svy, y.kya)
    bt = (p.QBZ1 + p.QBZ2 * c.dfz + p.QBZ3 * c.dfz**2) * (1.0 + p.QBZ4 * gz + p.QBZ5 * xp.abs(gz)) * p.LKY / c.lmuy
    ct = p.QCZ1
    dt0 = c.fz * (r0 / c.fz0p) * (p.QDZ1 + p.QDZ2 * c.dfz) * (1.0 - p.PPZ1 * c.dpi) * p.LTR
    dt = dt0 * (1.0 + p.QDZ3 * xp.abs(gz) + p.QDZ4 * gz**2)
    dr = (
        c.fz
        * r0
        * (
            (p.QDZ6 + p.QDZ7 * c.dfz) * p.LRES
            + ((p.QDZ8 + p.QDZ9 * c.dfz) * (1.0 + p.PPZ2 * c.dpi) + (p.QDZ10 + p.QDZ11 * c.dfz) * xp.abs(gz))
            * gz
            * p.LKZC
        )
        * c.lmuy
    )
    dr = dr * cos_a * c.w_low
    br = p.QBZ9 * p.LKY / c.lmuy + p.QBZ10 * y.by * y.cy
    et = xp.minimum(
        (p.QEZ1 + p.QEZ2 * c.dfz + p.QEZ3 * c.dfz**2)
        * (1.0 + (p.QEZ4 + p.QEZ5 * gz) * (2.0 / math.pi) * xp.atan(bt * ct * alpha_t)),
        1.0,
    )
    ratio2 = safe_div(xp, kxk, y.kya) ** 2 * kappa**2
    alpha_t = safe_sqrt(xp, alpha_t**2 + ratio2) * xp.sign(alpha_t)
    alpha_r = safe_sqrt(xp, alpha_r**2 + ratio2) * xp.sign(alpha_r)
    t = dt * xp.cos(peak_phase(xp, alpha_t, bt, ct, et)) * cos_a
    mzr = dr * cos_atan(xp, br * alpha_r)
    s = r0 * (p.SSZ1 + p.SSZ2 * (fy / c.fz0p) + (p.SSZ3 + p.SSZ4 * c.dfz) * gz) * p.LS
    return -t * fy_g0 + mzr + s * fx


def _my(xp, p, c, gamma, fx, vx, rr_scale):
    r0, fz0 = p.UNLOADED_RADIUS, p.FNOMIN
    vxn = vx / p.LONGVL
    direction = xp.clip(vx / p.VXLOW, -1.0, 1.0)
    poly = (
        p.QSY1 + p.QSY2 * fx / fz0 + p.QSY3 * xp.abs(vxn) + p.QSY4 * vxn**4 + (p.QSY5 + p.QSY6 * c.fz / fz0) * gamma**2
    )
    load = safe_pow(xp, c.fz / fz0, p.QSY7) * (p.INFLPRES / p.NOMPRES) ** p.QSY8
    return -r0 * fz0 * p.LMY * rr_scale * poly * load * direction


def _inputs(xp, p, kappa, alpha, fz, vx):
    """The file's validity ranges as jaxtire's default ``limits="clamp"`` applies them to the slips
    (``KPUMIN..KPUMAX``, ``ALPMIN..ALPMAX``); returns ``fz, kappa, tan(alpha), slip speed``."""
    fz = xp.maximum(fz, 0.0)
    kappa = xp.clip(kappa, p.KPUMIN, p.KPUMAX)
    alpha = xp.clip(xp.clip(alpha, p.ALPMIN, p.ALPMAX), -ALPHA_LIMIT, ALPHA_LIMIT)
    alpha_s = xp.tan(alpha)
    slip_speed = xp.abs(vx) * safe_sqrt(xp, kappa * kappa + alpha_s * alpha_s)
    return fz, kappa, alpha_s, slip_speed


def mf61_forces(xp, p, kappa, alpha, gamma, fz, vx, grip=1.0):
    """Combined-slip ``(Fx, Fy, Mz)`` [N, N, N m] of MF 6.1 at ``(kappa, alpha, gamma, fz, vx)``."""
    fz, kappa, alpha_s, slip_speed = _inputs(xp, p, kappa, alpha, fz, vx)
    c = _common(xp, p, fz, gamma, vx, grip, slip_speed)
    fx0, kxk = _fx0(xp, p, c, kappa)
    y = _fy0(xp, p, c, alpha_s, c.gs)
    y0 = _fy0(xp, p, c, alpha_s, 0.0 * c.gs)
    fx = _gxa(xp, p, c, kappa, alpha_s) * fx0
    gyk, svyk = _gyk(xp, p, c, kappa, alpha_s, c.gs, y.muy)
    fy = gyk * y.fy0 + svyk
    gyk0, _ = _gyk(xp, p, c, kappa, alpha_s, 0.0 * c.gs, y0.muy)
    mz = _mz(xp, p, c, kappa, alpha_s, fy, gyk0 * y0.fy0, fx, y, kxk)
    return fx, fy, mz


def wheel_slip(xp, vx, vy, omega, radius):
    """Slip ratio and slip angle from the wheel-centre velocity (regularised, :mod:`jaxtire.slip`)."""
    vr = xp.sqrt(vx * vx + V_REG * V_REG)
    return (omega * radius - vx) / vr, xp.atan2(vy, vr)


def mf61_step(xp, p, vx, vy, omega, gamma, fz, radius):
    """Single-wheel step: slip kinematics then combined ``(Fx, Fy, Mz)``."""
    kappa, alpha = wheel_slip(xp, vx, vy, omega, radius)
    return mf61_forces(xp, p, kappa, alpha, gamma, fz, vx)


def _vehicle_tire(xp, p, kappa, alpha, fz, vx, grip, rr_scale):
    """What the vehicle uses at zero camber: ``Fx, Fy, My``, the linear stiffnesses ``Kx, |Ky|`` and the
    peak force ``Dx = mux Fz``."""
    fz, kappa, alpha_s, slip_speed = _inputs(xp, p, kappa, alpha, fz, vx)
    c = _common(xp, p, fz, 0.0, vx, grip, slip_speed)
    fx0, kxk = _fx0(xp, p, c, kappa)
    y = _fy0(xp, p, c, alpha_s, c.gs)
    fx = _gxa(xp, p, c, kappa, alpha_s) * fx0
    gyk, svyk = _gyk(xp, p, c, kappa, alpha_s, c.gs, y.muy)
    fy = gyk * y.fy0 + svyk
    my = _my(xp, p, c, 0.0, fx, vx, rr_scale)
    return fx, fy, my, kxk, xp.abs(y.kya), _mux(p, c) * fz


def _vehicle_stiffness(xp, p, fz):
    """``Kx`` [N], ``|Ky|`` [N/rad] at zero slip and camber (:func:`jaxtire.tire.linear_stiffness`): the
    transient contact needs them before the slips."""
    c = _common(xp, p, xp.maximum(fz, 0.0), 0.0, 0.0, 1.0, 0.0)
    return _fx0(xp, p, c, 0.0)[1], xp.abs(_fy0(xp, p, c, 0.0, 0.0).kya)


def _carcass(xp, p, fz):
    """Carcass stiffness ``(Cx, Cy)`` [N/m] (:func:`jaxtire.transient.carcass_stiffness`)."""
    fz0p = p.FNOMIN * p.LFZO
    dfz = (xp.maximum(fz, 0.0) - fz0p) / fz0p
    dpi = (p.INFLPRES - p.NOMPRES) / p.NOMPRES
    cx = p.LONGITUDINAL_STIFFNESS * (1.0 + p.PCFX1 * dfz + p.PCFX2 * dfz**2) * (1.0 + p.PCFX3 * dpi)
    cy = p.LATERAL_STIFFNESS * (1.0 + p.PCFY1 * dfz + p.PCFY2 * dfz**2) * (1.0 + p.PCFY3 * dpi)
    return cx, cy


def rolling_radius(xp, p, fz, omega, default):
    """Effective rolling radius ``Re`` [m] of the slip (:func:`jaxtire.tire.rolling_radius`; Pacejka 2012 eq.
    A3.9): ``R_omega - (Fz0 / Cz) (DREFF atan(BREFF Fz / Fz0) + FREFF Fz / Fz0)``, ``R_omega = R0 (Q_RE0 + Q_V1
    (omega R0 / V0)^2)``, ``Cz = VERTICAL_STIFFNESS (1 + PFZ1 dpi)``; ``default`` where the file's vertical
    model was not fitted (``Q_RE0 = 0`` or ``DREFF = FREFF = 0``)."""
    r0 = p.UNLOADED_RADIUS
    w = omega * r0 / p.LONGVL
    cz = p.VERTICAL_STIFFNESS * (1.0 + p.PFZ1 * (p.INFLPRES - p.NOMPRES) / p.NOMPRES)
    n = xp.maximum(fz, 0.0) / p.FNOMIN
    re = r0 * (p.Q_RE0 + p.Q_V1 * w * w) - p.FNOMIN / cz * (p.DREFF * xp.atan(p.BREFF * n) + p.FREFF * n)
    fitted = (p.Q_RE0 > 0.0) and (p.DREFF != 0.0 or p.FREFF != 0.0)
    return re if fitted else default


def relax_factors(xp, speed, sigma, h):
    """``(e, G)`` of the exact deflection step ``d' = e d + G V_s`` (:func:`jaxtire.transient.relax_factors`)."""
    x = xp.abs(speed) * h / sigma
    small = x < 1e-4
    xs = xp.where(small, 1.0, x)
    return xp.exp(-x), h * xp.where(small, 1.0 - 0.5 * x, -xp.expm1(-xs) / xs)


# --------------------------------------------------------------------------------------------------
# 4-wheel vehicle (double track), one semi-implicit Euler step


def vehicle_step(xp, ch, tire_f, tire_r, table, state, controls, h):
    """One step of length ``h`` [s].

    ``ch`` chassis namespace (``surface_ids`` a list of 4 id values or arrays), ``tire_f``/``tire_r``
    base tire namespaces, ``table`` ``(grip, rolling_resistance, drag)`` arrays/lists indexed by id,
    ``state`` a tuple ``(x, y, yaw, vx, vy, yaw_rate, omega, ax, ay, defl_x, defl_y)`` with ``omega`` and
    the contact deflections ``defl_x``, ``defl_y`` lists of 4 (without the last two: undeflected tires),
    ``controls`` ``(steer, throttle, brake)``.  Returns the new state tuple (with the deflections).
    """
    x, y, yaw, vx, vy, r, omega, ax, ay = state[:9]
    defl_x, defl_y = state[9:] if len(state) == 11 else ([0.0] * 4, [0.0] * 4)
    steer, throttle, brake = controls
    a, b, tf, tr = ch.cg_to_front, ch.cg_to_rear, ch.track_front, ch.track_rear
    L = a + b
    # geometry: Ackermann steer, loads
    delta = xp.clip(steer, -ch.max_steer, ch.max_steer)
    t = xp.tan(delta)
    half = 0.5 * tf * t
    dl = delta + ch.ackermann * (xp.atan2(L * t, L - half) - delta)
    dr = delta + ch.ackermann * (xp.atan2(L * t, L + half) - delta)
    down = 0.5 * ch.air_density * ch.lift_area * vx * vx
    shift = ch.mass * ax * ch.cg_height / L
    ff = ch.mass * G * b / L + down * ch.aero_balance_front - shift
    fr = ch.mass * G * a / L + down * (1.0 - ch.aero_balance_front) + shift
    m_roll = ch.mass * ay * ch.cg_height
    dff = ch.roll_stiffness_front * m_roll / tf
    dfr = (1.0 - ch.roll_stiffness_front) * m_roll / tr
    fzs = [xp.maximum(v, 0.0) for v in (0.5 * ff - dff, 0.5 * ff + dff, 0.5 * fr - dfr, 0.5 * fr + dfr)]
    X = (a, a, -b, -b)
    Y = (0.5 * tf, -0.5 * tf, 0.5 * tr, -0.5 * tr)
    steers = (dl, dr, 0.0, 0.0)
    radius = (ch.wheel_radius_front, ch.wheel_radius_front, ch.wheel_radius_rear, ch.wheel_radius_rear)
    inertia = (ch.wheel_inertia_front, ch.wheel_inertia_front, ch.wheel_inertia_rear, ch.wheel_inertia_rear)
    sf, bf = ch.drive_split_front, ch.brake_bias_front
    drive = (0.5 * sf, 0.5 * sf, 0.5 * (1.0 - sf), 0.5 * (1.0 - sf))
    brake_share = (0.5 * bf, 0.5 * bf, 0.5 * (1.0 - bf), 0.5 * (1.0 - bf))
    tires = (scaled_tire(tire_f, *ch.tire_scale_front),) * 2 + (scaled_tire(tire_r, *ch.tire_scale_rear),) * 2
    # drive torque available (open differentials, smooth power limit)
    thr = xp.clip(throttle, -1.0, 1.0)
    omega_drive = drive[0] * omega[0] + drive[1] * omega[1] + drive[2] * omega[2] + drive[3] * omega[3]
    tmax, pmax = ch.max_drive_torque, ch.max_power
    t_avail = thr * tmax * pmax / xp.sqrt(pmax * pmax + (tmax * omega_drive) ** 2)

    qx = qy = qr = 0.0
    c11 = c12 = c22 = c13 = c23 = c33 = 0.0
    domegas = []
    backs = []
    defls = []
    for i in range(4):
        ucx = vx - r * Y[i]
        ucy = vy + r * X[i]
        c, s = xp.cos(steers[i]), xp.sin(steers[i])
        uwx = c * ucx + s * ucy
        uwy = -s * ucx + c * ucy
        R, om, fz = radius[i], omega[i], fzs[i]  # R the torque arm, Re the slip's rolling radius
        Re = rolling_radius(xp, tires[i], fz, om, R)
        # transient contact (sims.vehicles.core.contact_step): relaxation lengths sigma = K / C, exact
        # deflection step d = e d0 + G vs, low-speed damping time tau, lagged slips (d + tau vs) / sigma
        kx, ky = _vehicle_stiffness(xp, tires[i], fz)
        cxs, cys = (xp.maximum(cc, 1.0) for cc in _carcass(xp, tires[i], fz))
        sx, sy = xp.maximum(kx / cxs, SIGMA_MIN), xp.maximum(ky / cys, SIGMA_MIN)
        (ex, gx), (ey, gy) = relax_factors(xp, uwx, sx, h), relax_factors(xp, uwx, sy, h)
        vsx = om * Re - uwx
        dxp, dyp = ex * defl_x[i] + gx * vsx, ey * defl_y[i] + gy * uwy
        fade = 0.5 + 0.5 * xp.cos(xp.pi * xp.minimum(xp.abs(uwx) / tires[i].VXLOW, 1.0))
        corner = fade * 2.0 * LOW_SPEED_DAMPING_RATIO * xp.sqrt(xp.maximum(fz, 1.0) / G)
        tx, ty = corner / xp.sqrt(cxs), corner / xp.sqrt(cys)
        kappa, tan_a = (dxp + tx * vsx) / sx, (dyp + ty * uwy) / sy
        kxs, kys = (gx + tx) / sx, (gy + ty) / sy  # d slip / d slip velocity [s/m]
        alpha = xp.atan(tan_a)
        sid = ch.surface_ids[i]
        grip, rres, drag = xp.take(table[0], sid), xp.take(table[1], sid), xp.take(table[2], sid)
        fx, fy, my, kx, ky, dx = _vehicle_tire(xp, tires[i], kappa, alpha, fz, uwx, grip, rres)
        # brake + rolling resistance as implicit Coulomb friction (sims.vehicles.core.coulomb_spin_update)
        cap = xp.clip(brake, 0.0, 1.0) * ch.max_brake_torque * brake_share[i]
        cap = cap + xp.abs(my) / xp.clip(xp.abs(uwx) / tires[i].VXLOW, 1e-3, 1.0)
        xs = kx * kappa / xp.maximum(dx, 1e-6)
        jxs = xp.maximum((kx * KAPPA_0 * KAPPA_0 + fx * kappa) / (kappa * kappa + KAPPA_0 * KAPPA_0), 0.0)
        jx = xp.maximum(kx / (1.0 + xs * xs) ** 2, jxs - inertia[i] / (h * R * Re * kxs))
        jy = xp.maximum((ky * ALPHA_0 * ALPHA_0 - fy * alpha) / (alpha * alpha + ALPHA_0 * ALPHA_0), 0.0)
        d_wheel = inertia[i] + h * (jx * R * Re * kxs)
        free = om + h * (t_avail * drive[i] - fx * R) / d_wheel
        lim = h * cap / d_wheel
        held = xp.abs(free) <= lim
        domega = (free - xp.clip(free, -lim, lim) - om) / h
        fx_gs = fx + jx * Re * kxs * (h * domega)
        # ploughing drag on the chassis at the contact
        fzp = xp.maximum(fz, 0.0)
        speed = safe_sqrt(xp, ucx * ucx + ucy * ucy)
        pscale = -drag * fzp / xp.maximum(speed, 0.5)
        fbx = c * fx_gs - s * fy + pscale * ucx
        fby = s * fx_gs + c * fy + pscale * ucy
        # the wheel's implicit row eliminated (Schur complement): a free wheel follows the chassis
        fu = xp.maximum(1.0 + xp.sign(uwx) * dxp / sx, 0.0)  # d kappa'/du_x of the lag's decay term
        cu = xp.where(held, jxs, jx) * (gx * fu + tx) / sx
        cx = cu * xp.where(held, 1.0, inertia[i] / d_wheel)
        g = xp.where(held, 0.0, h * R * cu / d_wheel)  # back-substitution of the chassis rates
        backs.append((g * c, g * s, g * (s * X[i] - c * Y[i])))
        cy = jy * kys / (1.0 + tan_a * tan_a)
        defls.append((dxp, gx, fu, dyp, gy, c, s, X[i], Y[i], Re))  # deflections' back-substitution, below
        cxx, cxy, cyy = c * c * cx + s * s * cy, c * s * (cx - cy), s * s * cx + c * c * cy
        qx, qy, qr = qx + fbx, qy + fby, qr + X[i] * fby - Y[i] * fbx
        c11, c12, c22 = c11 + cxx, c12 + cxy, c22 + cyy
        c13 = c13 - Y[i] * cxx + X[i] * cxy
        c23 = c23 - Y[i] * cxy + X[i] * cyy
        c33 = c33 + Y[i] * Y[i] * cxx - 2.0 * X[i] * Y[i] * cxy + X[i] * X[i] * cyy
        domegas.append(domega)

    m, iz = ch.mass, ch.yaw_inertia
    kd = 0.5 * ch.air_density * ch.drag_area * safe_sqrt(xp, vx * vx + vy * vy)
    qx = qx - kd * vx + m * r * vy
    qy = qy - kd * vy - m * r * vx
    a11, a12, a13, a22, a23, a33 = m + h * c11, h * c12, h * c13, m + h * c22, h * c23, iz + h * c33
    k11 = a22 * a33 - a23 * a23
    k12 = a13 * a23 - a12 * a33
    k13 = a12 * a23 - a13 * a22
    k22 = a11 * a33 - a13 * a13
    k23 = a12 * a13 - a11 * a23
    k33 = a11 * a22 - a12 * a12
    inv = 1.0 / (a11 * k11 + a12 * k12 + a13 * k13)
    dvx = (k11 * qx + k12 * qy + k13 * qr) * inv
    dvy = (k12 * qx + k22 * qy + k23 * qr) * inv
    dyr = (k13 * qx + k23 * qy + k33 * qr) * inv
    domegas = [d + bx * dvx + by * dvy + br * dyr for d, (bx, by, br) in zip(domegas, backs, strict=True)]
    # contact deflections: d' = d_pred + G (Re h domega - fu h du_x/dt), d_y' = d_y,pred + G_y h du_y/dt
    defl_x2, defl_y2 = [], []
    for (dxp, gx, fu, dyp, gy, c, s, xi, yi, Re), dom in zip(defls, domegas, strict=True):
        dux = c * (dvx - yi * dyr) + s * (dvy + xi * dyr)
        duy = -s * (dvx - yi * dyr) + c * (dvy + xi * dyr)
        defl_x2.append(dxp + gx * h * (Re * dom - fu * dux))
        defl_y2.append(dyp + gy * h * duy)
    lag = (1.0 - xp.exp(-xp.minimum(h / xp.maximum(ch.load_transfer_tau, 1e-30), 80.0))) / h  # exact lag
    dax = (dvx - r * vy - ax) * lag
    day = (dvy + r * vx - ay) * lag
    # semi-implicit Euler: velocities first, then the pose from the new velocities
    vx2, vy2, r2 = vx + h * dvx, vy + h * dvy, r + h * dyr
    omega2 = [om + h * d for om, d in zip(omega, domegas, strict=False)]
    mid = yaw + 0.5 * h * r2
    cm, sm = xp.cos(mid), xp.sin(mid)
    return (
        x + h * (vx2 * cm - vy2 * sm),
        y + h * (vx2 * sm + vy2 * cm),
        yaw + h * r2,
        vx2,
        vy2,
        r2,
        omega2,
        ax + h * dax,
        ay + h * day,
        defl_x2,
        defl_y2,
    )
