"""Full vehicle ("14 DOF"): a sprung body in 6 DOF over four corners with vertical unsprung masses.

Degrees of freedom: the planar body motion of the double track (``x, y, yaw`` and ``vx, vy, yaw_rate`` of
the whole car, total mass ``m``), the sprung body's heave ``z`` [m], roll ``phi`` and pitch ``theta`` [rad]
(ISO 8855: roll positive right side down, pitch positive nose down) with their rates ``vz``,
``roll_rate``, ``pitch_rate``, one unsprung mass per corner moving vertically (``zu``, ``vzu``, (4,) FL, FR,
RL, RR, displacements [m] from the static ride height), the four wheel spins ``omega`` and the transient
tire contact deflections of :mod:`sims.vehicles.core` (called, not copied: :func:`sims.vehicles.core.rates`
with the wheels' loads, steer and camber from this module).

Corners, not axles.  Each corner carries its own unsprung mass (independent suspension, what the
14-DOF models of MATLAB's Vehicle Dynamics Blockset, TUM's sim_vehicle_dynamics and UW-SBEL's 24-DOF
model do), rather than CommonRoad MB's rigid axles with heave and roll: it represents the cars users
mostly have (independent front and rear), a wheel lifts alone, a single-wheel bump or a kerb reaches
one corner, and the vertical equations stay one per corner, which keeps the implicit solve small.

Geometry (``x_s``, ``h_s`` the sprung CG's position from the car's CG and height above ground, from the
chassis' CG and the unsprung masses at the wheel centres ``R``; corner ``i`` at ``(xr_i, y_i) = (x_i - x_s,
y_i)`` from the sprung CG)::

    body displacement at corner i   zb_i = z + y_i phi - xr_i theta
    suspension travel (bump +)      s_i  = zu_i - zb_i,          ds_i/dt = vzu_i - (vz + y_i p - xr_i q)
    tire deflection                 rho_i = R_free(omega_i) - (R_st,i + zu_i - h_road,i)

``R_st`` the static loaded radius (``R_free(0) - rho`` at the static load), ``h_road`` the road height under
the wheel (:mod:`sims.roads.profile`).  Forces (on the body, up)::

    suspension  F_s,i = P_i + k_w s_i + k_bs max(s_i - gap, 0)^2 + c_w ds_i/dt +- (arb / t^2)(s_L - s_R)
    tire        F_t,i = Fz(rho_i, omega_i)       (jaxtire.tire.vertical_force: 0 when rho <= 0)
    links       F_j,i = -F'_y,i h_rc / y_i - sgn(x_i) F'_x,i tan(beta_i),   F'_i = F_tire,i - m_u,i (a_x, a_y)

``P_i`` the static sprung corner load (spring preload; the spring's deflection from its free length is
``(P_i + k_w s_i) / (MR k_s)`` at the coil), ``k_w = k_s MR^2``, ``c_w = c_s MR^2``; ``F'`` the tire
forces (body frame) less what accelerates the unsprung mass, reaching the body along the link lines
through the roll centre (height ``h_rc``) and the side-view centres (``tan(beta_f) = anti_dive h / L``,
``tan(beta_r) = anti_squat h / L``).  Equations (``g_n`` gravity normal to the road,
:func:`sims.vehicles.core.gravity`; ``F_d`` the downforce, on the body at the axles)::

    m_s dvz/dt          = sum_i (F_s,i + F_j,i) - m_s g_n - F_d
    (I_x + m_s h'^2) dp/dt = sum_i y_i (F_s,i + F_j,i) + h_s sum_i F'_y,i + m_s g_n h' phi
    I_y dq/dt           = -sum_i xr_i (F_s,i + F_j,i) - h_s sum_i F'_x,i + sum_axles xr F_d,axle
    m_u,i dvzu_i/dt     = F_t,i - F_s,i - F_j,i - m_u,i g_n + G_i

The body rolls about the roll axis (``h' = h_s - h_ra`` the sprung CG's height over it, ``h_ra`` the
roll centres interpolated to ``x_s``): its lateral displacement ``h' phi`` gives the gravity moment ``m_s
g h' phi`` and the inertia ``m_s h'^2``; the link forces' moment ``F'_y (h_s - h_rc)`` (the ``h_s`` term
with the jacking) is the geometric load transfer.  ``G_i = m_u,i R_i a_y / y_i + sgn(x_i) (m_uf R_f + m_ur R_r) a_x / L``
is the unsprung masses' own load transfer (their inertia at the wheel centres, reacted by their tires,
Milliken RCVD ch. 18), so the tire loads carry ``m a h + m_s g h' phi`` in steady cornering.  The planar equations (total mass, the
body's roll and pitch not fed back into them), the tires (with the wheel's load ``F_t``, steer and camber),
wheel spins and brakes are those of :mod:`sims.vehicles.core`.

Wheel angles::

    steer_i   = Ackermann(delta)_i - sgn(y_i) (toe + bump_steer s_i)                   (toe-in positive)
    camber_i  = camber + camber_gain s_i - sgn(y_i) phi      (vehicle: top outward positive)
    gamma_i   = -sgn(y_i) camber_i                            (the tire's ISO-W inclination)

Time stepping.  The vertical equations are linearly implicit for the step ``h``: with ``u = (vz, p, q,
vzu_1..4)`` and each element ``e`` (damper ``C_e``, tangent stiffness ``K_e`` of a spring, bump stop, bar,
tire or the roll's gravity term) taken at its own theta-point ``th_e``::

    (M + sum_e (th_e h C_e + th_e^2 h^2 K_e)) du/dt = F(state) - sum_e th_e h K_e u

(an unrolled Cholesky factorisation, 7x7, one per vehicle), and the positions' rates are returned as ``u +
THETA h du/dt``, so the semi-implicit Euler step is ``u' = u + h du/dt``, ``q' = q + h (u + u') / 2`` with
:data:`THETA` = 1/2: the trapezoidal rule, second order, on every element the step resolves (``th_e`` =
:func:`element_theta`, 1/2 + O(r^4) with ``r = h sqrt(K_e / m_u) / 2``: the ride's 2-15 Hz within 3.2 % at
5 ms), and towards backward Euler (``th_e`` -> 1) on an element too stiff for the step (a ``2e7`` N/m rigid
tire at 5 ms), where the trapezoidal rule would leave the unresolved mode ringing: stable for any stiffness.
(The statics' Newton step, :func:`settle`, is the ``th_e = 1`` form with a long step.)  Under RK4 the
positions' rates carry the same ``THETA h du/dt`` term.

Simplifications: small roll and pitch angles; the road's slope tilts neither the tire force nor the
contact (the height under the wheel centre is used, fine for bumps and kerbs with slopes up to ~0.2);
the vertical tire force omits MF's ``Q_FCX``, ``Q_FCY`` in-plane corrections; gyroscopic terms are left out.

Roads: ``params.road`` ``None``, a :class:`sims.roads.road.Road` (grade, bank, surfaces) or a
:class:`sims.roads.profile.Profile` (height per wheel track, optionally on such a Road).
``params.suspension``: a :class:`~sims.vehicles.suspension.Suspension`, or ``None`` for
:func:`~sims.vehicles.suspension.default_suspension` of the chassis.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.tire import get_coefficient, tire_deflection, tire_free_radius, vertical_force
from jaxtire.transient import contact_stiffness
from sims.roads.profile import Profile, heights_at
from sims.vehicles import core, double_track, driveline
from sims.vehicles.double_track import ackermann_angles
from sims.vehicles.params import Controls, VehicleParams, VehicleState, init_state, wheel_layout
from sims.vehicles.road import on_road, wheel_positions
from sims.vehicles.suspension import Suspension, default_suspension


class BodyState(NamedTuple):
    """The full vehicle's vertical state, its :class:`~sims.vehicles.params.VehicleState`'s ``body`` (the
    planar fields of that state keep their names and meaning: drivers, reducers and observations read them
    unchanged): ``z`` [m] heave of the sprung CG from its static height, ``roll``, ``pitch`` [rad], ``vz``
    [m/s], ``roll_rate``, ``pitch_rate`` [rad/s], ``zu`` (4,) [m] wheel-centre displacements from the static
    ride height and ``vzu`` (4,) [m/s] their rates, FL, FR, RL, RR."""

    z: Any = 0.0
    roll: Any = 0.0
    pitch: Any = 0.0
    vz: Any = 0.0
    roll_rate: Any = 0.0
    pitch_rate: Any = 0.0
    zu: Any = 0.0
    vzu: Any = 0.0


class Layout(NamedTuple):
    """Static layout of the sprung body and the corners (:func:`layout`), lists FL, FR, RL, RR."""

    m_s: Any  # sprung mass [kg]
    x_s: Any  # sprung CG from the car's CG [m]
    h_s: Any  # sprung CG height [m]
    h_arm: Any  # h' = h_s - roll axis height at x_s [m]
    xr: list  # corner x from the sprung CG [m]
    y: list  # corner y [m]
    m_u: list  # unsprung mass [kg]
    preload: list  # static sprung corner load P_i [N]
    k_w: list  # wheel rate [N/m]
    c_w: list  # wheel damping [N s/m]
    k_bar: list  # bar rate at the wheel arb / t^2 [N/m]
    gap: list
    k_bs: list
    h_rc: list
    tan_b: list  # side-view link slope, front anti-dive, rear anti-squat
    r_static: list  # static loaded radius [m]
    r_centre: list  # wheel-centre height for the unsprung load transfer [m]
    k_tire: list  # fallback tire stiffness [N/m]
    tires: list


def suspension_of(params: VehicleParams) -> Suspension:
    """``params.suspension``, or :func:`~sims.vehicles.suspension.default_suspension` of the chassis."""
    s = getattr(params, "suspension", None)
    return default_suspension(params.chassis) if s is None else s


def _axle(s: Suspension, name: str) -> list:
    f, r = getattr(s, f"{name}_front"), getattr(s, f"{name}_rear")
    return [f, f, r, r]


def layout(params: VehicleParams) -> Layout:
    """The sprung body's mass, CG and the corners' static numbers (module docstring)."""
    ch, s = params.chassis, suspension_of(params)
    a, b, m, h = ch.cg_to_front, ch.cg_to_rear, ch.mass, ch.cg_height
    L = a + b
    m_uf, m_ur = s.unsprung_mass_front, s.unsprung_mass_rear
    m_s = m - 2.0 * (m_uf + m_ur)
    tires = [params.tire_front, params.tire_front, params.tire_rear, params.tire_rear]
    k_tire = _axle(s, "tire_stiffness")
    x_s = 2.0 * (m_ur * b - m_uf * a) / m_s
    p_f = 0.5 * m_s * GRAVITY * (b + x_s) / L
    p_r = 0.5 * m_s * GRAVITY * (a - x_s) / L
    preload = [p_f, p_f, p_r, p_r]
    m_u = [m_uf, m_uf, m_ur, m_ur]
    r_static = [
        tire_free_radius(t, 0.0) - tire_deflection(t, p + mu * GRAVITY, 0.0, k)
        for t, p, mu, k in zip(tires, preload, m_u, k_tire, strict=True)
    ]
    h_s = (m * h - 2.0 * (m_uf * r_static[0] + m_ur * r_static[2])) / m_s
    h_rf, h_rr = s.roll_centre_front, s.roll_centre_rear
    h_ra = h_rf + (h_rr - h_rf) * (a - x_s) / L
    tf, tr = ch.track_front, ch.track_rear
    mr = _axle(s, "motion_ratio")
    k_w = [k * q * q for k, q in zip(_axle(s, "spring"), mr, strict=True)]
    c_w = [c * q * q for c, q in zip(_axle(s, "damper"), mr, strict=True)]
    kb_f, kb_r = s.arb_front / (tf * tf), s.arb_rear / (tr * tr)
    tb_f, tb_r = s.anti_dive * h / L, s.anti_squat * h / L
    return Layout(
        m_s,
        x_s,
        h_s,
        h_s - h_ra,
        [a - x_s, a - x_s, -b - x_s, -b - x_s],
        [0.5 * tf, -0.5 * tf, 0.5 * tr, -0.5 * tr],
        m_u,
        preload,
        k_w,
        c_w,
        [kb_f, kb_f, kb_r, kb_r],
        _axle(s, "bump_stop_gap"),
        _axle(s, "bump_stop"),
        [h_rf, h_rf, h_rr, h_rr],
        [tb_f, tb_f, tb_r, tb_r],
        r_static,
        r_static,
        k_tire,
        tires,
    )


def road_heights(params: VehicleParams, state) -> list:
    """Road height [m] under each wheel FL, FR, RL, RR (0 without a :class:`~sims.roads.profile.Profile`)."""
    road = getattr(params, "road", None)
    zero = jnp.zeros_like(jnp.asarray(state.x))
    if not isinstance(road, Profile):
        return [zero] * 4
    xs, ys = wheel_positions(params.chassis, state)
    return [heights_at(road, x, y) + zero for x, y in zip(xs, ys, strict=True)]


def _base_road(params: VehicleParams) -> VehicleParams:
    road = getattr(params, "road", None)
    if isinstance(road, Profile):
        return params._replace(road=road.base)
    return params


class Corners(NamedTuple):
    """Per-corner vertical quantities of a state (lists FL, FR, RL, RR): travel ``s`` [m] and its rate
    ``ds`` [m/s], the suspension force on the body ``fs`` [N] (springs, bump stops, bars, dampers) and its
    tangent stiffness ``ks`` [N/m], the tire deflection ``rho`` [m], load ``ft`` [N] and tangent stiffness
    ``kt`` [N/m], the wheel's ``steer`` and ``camber`` (ISO-W inclination) [rad]."""

    s: list
    ds: list
    fs: list
    ks: list
    rho: list
    ft: list
    kt: list
    steer: list
    camber: list


def _sgn(i: int) -> float:
    return 1.0 if i % 2 == 0 else -1.0  # left +1 (FL, RL), right -1


def corners(params: VehicleParams, state, controls: Controls, lay: Layout | None = None, heights=None) -> Corners:
    """Travel, forces, tire loads and wheel angles of the four corners (module docstring)."""
    ch, s = params.chassis, suspension_of(params)
    lay = layout(params) if lay is None else lay
    heights = road_heights(params, state) if heights is None else heights
    b = state.body
    zu = core.wheel_list(b.zu, 4)
    vzu = core.wheel_list(b.vzu, 4)
    omega = core.wheel_list(state.omega, 4)
    z, phi, th = b.z, b.roll, b.pitch
    sv, dsv, fs, ks, rho, ft, kt = [], [], [], [], [], [], []
    for i in range(4):
        zb = z + lay.y[i] * phi - lay.xr[i] * th
        vb = b.vz + lay.y[i] * b.roll_rate - lay.xr[i] * b.pitch_rate
        sv.append(zu[i] - zb)
        dsv.append(vzu[i] - vb)
    for i in range(4):
        j = i + 1 if i % 2 == 0 else i - 1  # the other corner of the axle
        over = jnp.maximum(sv[i] - lay.gap[i], 0.0)
        bar = lay.k_bar[i] * (sv[i] - sv[j])
        fs.append(lay.preload[i] + lay.k_w[i] * sv[i] + lay.k_bs[i] * over * over + bar + lay.c_w[i] * dsv[i])
        ks.append(lay.k_w[i] + 2.0 * lay.k_bs[i] * over)
        r = tire_free_radius(lay.tires[i], omega[i]) - (lay.r_static[i] + zu[i] - heights[i])
        f, k = jax.jvp(
            lambda q, i=i: vertical_force(lay.tires[i], q, omega[i], lay.k_tire[i]), (r,), (jnp.ones_like(r),)
        )
        rho.append(r)
        ft.append(jnp.maximum(f, 0.0))
        kt.append(jnp.maximum(k, 0.0))
    delta = jnp.clip(controls.steer, -ch.max_steer, ch.max_steer)
    dl, dr = ackermann_angles(delta, ch.cg_to_front + ch.cg_to_rear, ch.track_front, ch.ackermann)
    zero = jnp.zeros_like(dl)
    base = [dl, dr, zero, zero]
    toe, bs = _axle(s, "toe"), _axle(s, "bump_steer")
    cam, gain = _axle(s, "camber"), _axle(s, "camber_gain")
    steer = [base[i] - _sgn(i) * (toe[i] + bs[i] * sv[i]) for i in range(4)]
    camber = [-_sgn(i) * (cam[i] + gain[i] * sv[i] - _sgn(i) * phi) for i in range(4)]
    return Corners(sv, dsv, fs, ks, rho, ft, kt, steer, camber)


def geometry(params: VehicleParams, state, controls: Controls, cn: Corners | None = None) -> core.Geometry:
    """The :class:`sims.vehicles.core.Geometry` of the four wheels: loads from the tires' deflections,
    steer with toe and bump steer, camber (module docstring)."""
    cn = corners(params, state, controls) if cn is None else cn
    # the double track's wheels (positions, surfaces, radii, shares, sides) with this model's loads and angles
    planar = double_track.geometry(params, state, controls)
    return planar._replace(steer=cn.steer, fz=cn.ft, camber=cn.camber)


def _spd_solve(A: list[list], b: list) -> list:
    """Solve ``A x = b`` for a small symmetric positive-definite ``A`` (lists of per-vehicle arrays; only
    ``A[i][j]``, ``j <= i`` read) by an unrolled Cholesky factorisation (elementwise ops only)."""
    n = len(b)
    Lm: list[list] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            acc = A[i][j]
            for k in range(j):
                acc = acc - Lm[i][k] * Lm[j][k]
            if i == j:
                Lm[i][i] = jnp.sqrt(jnp.maximum(acc, 1e-30))
            else:
                Lm[i][j] = acc / Lm[j][j]
    y: list = [None] * n
    for i in range(n):
        acc = b[i]
        for k in range(i):
            acc = acc - Lm[i][k] * y[k]
        y[i] = acc / Lm[i][i]
    x: list = [None] * n
    for i in reversed(range(n)):
        acc = y[i]
        for k in range(i + 1, n):
            acc = acc - Lm[k][i] * x[k]
        x[i] = acc / Lm[i][i]
    return x


class Vertical(NamedTuple):
    """Accelerations of the vertical DOFs: ``az`` [m/s^2], ``ap``, ``aq`` [rad/s^2], ``azu`` list of 4."""

    az: Any
    ap: Any
    aq: Any
    azu: list


#: The vertical equations' implicitness: positions advance by ``h (u + THETA h du/dt)`` and the forces are
#: taken at the ``THETA``-point of the step (module docstring); 1/2 is the trapezoidal rule.
THETA = 0.5


def element_theta(theta, h, k, m):
    """The theta-point [-] of a vertical element of tangent stiffness ``k`` [N/m] acting on a mass ``m`` [kg]
    for a step ``h`` [s]: ``theta + (1 - theta) r^4 / (1 + r^4)``, ``r = h sqrt(k / m) / 2``.  The trapezoidal
    rule (``theta = 1/2``) where the step resolves the element's frequency (a tire's wheel hop at 5 ms: ``r``
    ~0.2, ``theta`` - 1/2 < 1e-3), backward Euler where it cannot (a 2e7 N/m rigid tire: ``r`` ~1.9, 0.96):
    there the trapezoidal rule would keep the unresolved mode ringing at the step's Nyquist frequency, and
    this damps it.  ``theta=None``: 1 (the statics' Newton step)."""
    if theta is None:
        return 1.0
    r2 = 0.25 * h * h * jnp.maximum(k, 0.0) / m
    r4 = r2 * r2
    return theta + (1.0 - theta) * r4 / (1.0 + r4)


def vertical_rates(params: VehicleParams, state, cn: Corners, lay: Layout, fxb, fyb, ax, ay, h, theta=None) -> Vertical:
    """Linearly implicit accelerations of heave, roll, pitch and the unsprung masses (module docstring) for
    a step ``h`` [s], given the tire forces ``fxb``, ``fyb`` [N] (body frame, lists per wheel) and the car's
    accelerations ``ax``, ``ay`` [m/s^2]: ``(M + theta h C + theta^2 h^2 K) a = F - theta h K u`` (``theta``
    :data:`THETA` by default; ``None`` there: the statics' Newton form ``(M + h C + h^2 K) a = F``)."""
    ch, s = params.chassis, suspension_of(params)
    L = ch.cg_to_front + ch.cg_to_rear
    gn = core.gravity(params.contact)[2]
    down = 0.5 * ch.air_density * ch.lift_area * state.vx * state.vx
    d_axle = [down * ch.aero_balance_front, down * (1.0 - ch.aero_balance_front)]
    fj, g_u, fxl, fyl = [], [], [], []
    m_side = lay.m_u[0] * lay.r_centre[0] + lay.m_u[2] * lay.r_centre[2]  # one side's unsprung moment arm sum
    for i in range(4):
        fx_l = fxb[i] - lay.m_u[i] * ax
        fy_l = fyb[i] - lay.m_u[i] * ay
        sx = 1.0 if i < 2 else -1.0
        fj.append(-fy_l * lay.h_rc[i] / lay.y[i] - sx * fx_l * lay.tan_b[i])
        g_u.append(lay.m_u[i] * lay.r_centre[i] * ay / lay.y[i] + sx * m_side * ax / L)
        fxl.append(fx_l)
        fyl.append(fy_l)
    fsj = [cn.fs[i] + fj[i] for i in range(4)]
    fz = sum(fsj) - lay.m_s * gn - down
    mx = sum(lay.y[i] * fsj[i] for i in range(4)) + lay.h_s * sum(fyl) + lay.m_s * gn * lay.h_arm * state.body.roll
    xr_f, xr_r = lay.xr[0], lay.xr[2]
    my = -sum(lay.xr[i] * fsj[i] for i in range(4)) - lay.h_s * sum(fxl) + xr_f * d_axle[0] + xr_r * d_axle[1]
    fu = [cn.ft[i] - cn.fs[i] - fj[i] - lay.m_u[i] * gn + g_u[i] for i in range(4)]
    rhs = [fz, mx, my] + fu

    # elements: suspension B_i = (-1, -y_i, xr_i, e_i) (spring ks_i, damper c_w,i), bars B_L - B_R, tires on zu;
    # each taken at its own theta-point (element_theta): (M + sum th h C_e + th^2 h^2 K_e) a = F - sum th h K_e u
    vecs = [{0: -1.0, 1: -lay.y[i], 2: lay.xr[i], 3 + i: 1.0} for i in range(4)]
    bars = [{k: vecs[i].get(k, 0.0) - vecs[i + 1].get(k, 0.0) for k in (0, 1, 2, 3 + i, 4 + i)} for i in (0, 2)]
    th = [element_theta(theta, h, cn.kt[i] + cn.ks[i] + lay.k_bar[i], lay.m_u[i]) for i in range(4)]
    th_bar = [jnp.maximum(th[i], th[i + 1]) for i in (0, 2)]
    th0 = 1.0 if theta is None else theta
    b = state.body
    u = [b.vz, b.roll_rate, b.pitch_rate] + [b.vzu[..., i] for i in range(4)]
    ix = s.roll_inertia + lay.m_s * lay.h_arm * lay.h_arm
    zero = jnp.zeros_like(jnp.asarray(fz))
    A = [[zero] * 7 for _ in range(7)]
    A[0][0] = A[0][0] + lay.m_s
    A[1][1] = A[1][1] + ix - (th0 * h) ** 2 * lay.m_s * gn * lay.h_arm
    A[2][2] = A[2][2] + s.pitch_inertia
    for i in range(4):
        A[3 + i][3 + i] = A[3 + i][3 + i] + lay.m_u[i]
    rhs[1] = rhs[1] + th0 * h * lay.m_s * gn * lay.h_arm * u[1]

    def element(b: dict, t, c, k):  # an element along b: damper c, tangent stiffness k, at theta-point t
        w = t * h * c + (t * h) ** 2 * k
        ku = t * h * k * sum(b[j] * u[j] for j in b)
        for p in b:
            rhs[p] = rhs[p] - ku * b[p]
            for q in b:
                if q <= p:
                    A[p][q] = A[p][q] + w * b[p] * b[q]

    for i in range(4):
        element({3 + i: 1.0}, th[i], 0.0, cn.kt[i])
        element(vecs[i], th[i], lay.c_w[i], cn.ks[i])
    for n, i in enumerate((0, 2)):
        element(bars[n], th_bar[n], 0.0, lay.k_bar[i])
    acc = _spd_solve(A, rhs)
    return Vertical(acc[0], acc[1], acc[2], acc[3:])


def rates(params: VehicleParams, state: VehicleState, controls: Controls, h):
    """Linearly implicit derivatives of the full vehicle for a step ``h`` and its
    :class:`~sims.vehicles.core.Telemetry` (module docstring); pose rates ``x, y, yaw`` zero."""
    heights = road_heights(params, state)
    params = on_road(_base_road(params), state)  # surfaces, grade and bank (sims.vehicles.road)
    lay = layout(params)
    cn = corners(params, state, controls, lay, heights)
    d, tel = core.rates(params, state, controls, h, geometry(params, state, controls, cn))
    fxb, fyb = [], []
    for i in range(4):
        sn, cs = jnp.sin(cn.steer[i]), jnp.cos(cn.steer[i])
        fx, fy = tel.fx[..., i], tel.fy[..., i]
        fxb.append(cs * fx - sn * fy)
        fyb.append(sn * fx + cs * fy)
    v = vertical_rates(params, state, cn, lay, fxb, fyb, tel.ax, tel.ay, h, THETA)
    azu = jnp.stack(jnp.broadcast_arrays(*v.azu), axis=-1)
    b = state.body
    th = THETA * h
    rate = BodyState(
        z=b.vz + th * v.az,
        roll=b.roll_rate + th * v.ap,
        pitch=b.pitch_rate + th * v.aq,
        vz=v.az,
        roll_rate=v.ap,
        pitch_rate=v.aq,
        zu=jnp.asarray(b.vzu) + th * azu,
        vzu=azu,
    )
    return d._replace(body=rate), tel


def _newton(p: VehicleParams, state: VehicleState, lay: Layout, heights) -> VehicleState:
    """One Newton step of the vertical equilibrium (:func:`settle`): the linearly implicit solve with a long
    step ``H`` and zero velocities gives ``H^2 du/dt = K^-1 F``."""
    big = jnp.asarray(1e3, jnp.asarray(state.vx).dtype)
    zero4 = [jnp.zeros_like(jnp.asarray(state.vx))] * 4
    b = state.body
    b = b._replace(vz=0.0 * b.vz, roll_rate=0.0 * b.roll_rate, pitch_rate=0.0 * b.pitch_rate, vzu=0.0 * b.vzu)
    st = state._replace(body=b)
    cn = corners(p, st, Controls(), lay, heights)
    v = vertical_rates(p, st, cn, lay, zero4, zero4, 0.0, 0.0, big)
    step = big * big
    azu = jnp.stack(jnp.broadcast_arrays(*v.azu), axis=-1)
    b = b._replace(z=b.z + step * v.az, roll=b.roll + step * v.ap, pitch=b.pitch + step * v.aq, zu=b.zu + step * azu)
    return st._replace(body=b)


def settle(params: VehicleParams, state: VehicleState, iterations: int = 4) -> VehicleState:
    """``state`` with its vertical positions moved to the static equilibrium at its speed (no tire
    forces, no accelerations; downforce, tire growth and road heights included): ``iterations`` Newton
    steps on the vertical equations (``lax.fori_loop``)."""
    p = on_road(_base_road(params), state)
    lay = layout(p)
    heights = road_heights(params, state)
    return jax.lax.fori_loop(0, iterations, lambda _, st: _newton(p, st, lay, heights), state)


def init_full_state(params: VehicleParams, speed=0.0, **kw) -> VehicleState:
    """A :class:`~sims.vehicles.params.VehicleState` with a :class:`BodyState` rolling straight at ``speed`` [m/s] (keywords ``x, y, yaw, vy, yaw_rate`` as
    :func:`sims.vehicles.params.init_state`), settled on its suspension (:func:`settle`), each wheel at
    ``omega = speed / Re`` at its load (free rolling): six passes of a Newton step and the spin update; with a
    driveline, its :func:`~sims.vehicles.driveline.init_drive_state` at those spins and loads."""
    base = init_state(params, 4, speed, **kw)
    zero = jnp.zeros_like(base.vx)
    z4 = jnp.zeros_like(base.omega)
    rest = BodyState(z=zero, roll=zero, pitch=zero, vz=zero, roll_rate=zero, pitch_rate=zero, zu=z4, vzu=z4)
    state = base._replace(body=rest)
    p = on_road(_base_road(params), state)
    lay = layout(p)
    heights = road_heights(params, state)

    def body(_, st):
        st = _newton(p, st, lay, heights)
        loads = corners(p, st, Controls(), lay, heights).ft
        return st._replace(omega=base.vx[..., None] / core.rolling_radii(p, 4, st.omega, loads))

    state = jax.lax.fori_loop(0, 6, body, state)
    if p.driveline is None:  # static (the pytree's structure)
        return state
    loads = corners(p, state, Controls(), lay, heights).ft
    return state._replace(drive=driveline.init_drive_state(p, state.omega, loads))


#: The largest ``2 pi f_hop h`` (``f_hop`` the wheel-hop frequency, ``h`` the step) at which a road's ride
#: response stays within ~5 % of the converged one (the trapezoidal vertical steps: body heave acceleration
#: within 3.2 % over 2-15 Hz at 5 ms, ``2 pi 12 Hz 5 ms`` = 0.38; -21 % at 15 Hz with 10 ms steps).
MAX_HOP_PHASE = 0.5


def wheel_hop_frequency(params: VehicleParams) -> np.ndarray:
    """Front and rear wheel-hop frequencies [Hz] ``sqrt((k_t + k_s MR^2) / m_u) / (2 pi)`` (numpy; ``k_t`` the
    tire's ``VERTICAL_STIFFNESS``, else the suspension's ``tire_stiffness``); the largest over a fleet."""
    s = suspension_of(params)
    out = []
    for axle, tire in (("front", params.tire_front), ("rear", params.tire_rear)):
        try:
            kt = np.asarray(get_coefficient(tire, "VERTICAL_STIFFNESS"), np.float64)
        except (AttributeError, KeyError):
            kt = np.asarray(getattr(s, f"tire_stiffness_{axle}"), np.float64)
        kw = np.asarray(getattr(s, f"spring_{axle}"), np.float64) * np.asarray(getattr(s, f"motion_ratio_{axle}")) ** 2
        mu = np.asarray(getattr(s, f"unsprung_mass_{axle}"), np.float64)
        out.append(float(np.max(np.sqrt((kt + kw) / mu))) / (2.0 * np.pi))
    return np.asarray(out)


@dataclasses.dataclass(frozen=True)
class FullModel(core.Model):
    """The full vehicle as a :class:`sims.vehicles.core.Model` (its states carry a :class:`BodyState`)."""

    def init_state(self, params: VehicleParams, speed=0.0, **kw) -> VehicleState:
        """:func:`init_full_state`."""
        return init_full_state(params, speed, **kw)

    def check_step(self, params: VehicleParams, h: float) -> None:
        """On a road with heights (a :class:`~sims.roads.profile.Profile`), warn where the step ``h`` [s] leaves
        the wheel hop under-resolved (``2 pi f_hop h`` > :data:`MAX_HOP_PHASE`): the ride response the road
        excites there is off by more than ~5 % (docs: ride accuracy against the step)."""
        if not isinstance(params.road, Profile):
            return
        f = float(np.max(wheel_hop_frequency(params)))
        if 2.0 * np.pi * f * h > MAX_HOP_PHASE:
            ok = MAX_HOP_PHASE / (2.0 * np.pi * f)
            warnings.warn(
                f"full vehicle on a road profile: step {h * 1e3:.3g} ms is too coarse for its {f:.1f} Hz wheel hop "
                f"(ride responses near it off by more than 5 %); use dt <= {ok * 1e3:.2g} ms or substeps",
                UserWarning,
                stacklevel=4,
            )


def _geometry(params, state, controls):
    return geometry(on_road(_base_road(params), state), state, controls)


MODEL = FullModel("full", 4, rates, _geometry)
step = MODEL.step


def wheel_loads(params: VehicleParams, state: VehicleState):
    """The four tire loads [N] (FL, FR, RL, RR, last axis) of ``state``: from the tires' deflections."""
    p = on_road(_base_road(params), state)
    ft = corners(p, state, Controls(), None, road_heights(params, state)).ft
    return jnp.stack(jnp.broadcast_arrays(*ft), axis=-1)


#: Gauss-Legendre nodes and weights on [0, 1] (8 points) for the tire's strain energy (:func:`energy`).
_GL = [
    (0.0198550717512319, 0.0506142681451881),
    (0.1016667612931866, 0.1111905172266872),
    (0.2372337950418355, 0.1568533229389436),
    (0.4082826787521751, 0.1813418916891810),
    (0.5917173212478249, 0.1813418916891810),
    (0.7627662049581645, 0.1568533229389436),
    (0.8983332387068134, 0.1111905172266872),
    (0.9801449282487681, 0.0506142681451881),
]


def energy(params: VehicleParams, state: VehicleState):
    """Mechanical energy [J] of ``state`` on a flat road: kinetic (the car's translation and yaw with total
    mass, the sprung body's heave, roll about the roll axis and pitch, the unsprung masses, the wheel
    spins) + potential (gravity on the sprung and unsprung masses, springs with their preload, bump
    stops, bars, the roll's gravity term ``-m_s g h' phi^2 / 2``, the tires' vertical strain energy
    ``int_0^rho Fz`` by 8-point Gauss-Legendre at the wheel's spin, the carcass springs of the transient
    contact ``C d^2 / 2``).  Per vehicle; the reference is the static ride height."""
    ch, s = params.chassis, suspension_of(params)
    lay = layout(params)
    cn = corners(params, state, Controls(), lay)
    ke = 0.5 * ch.mass * (state.vx**2 + state.vy**2) + 0.5 * ch.yaw_inertia * state.yaw_rate**2
    b = state.body
    ke = ke + 0.5 * lay.m_s * b.vz**2 + 0.5 * (s.roll_inertia + lay.m_s * lay.h_arm**2) * b.roll_rate**2
    ke = ke + 0.5 * s.pitch_inertia * b.pitch_rate**2
    vzu, zu, omega = (core.wheel_list(v, 4) for v in (b.vzu, b.zu, state.omega))
    inertia = wheel_layout(ch, 4).inertia
    dx, dy = core.wheel_list(state.defl_x, 4), core.wheel_list(state.defl_y, 4)
    pe = lay.m_s * GRAVITY * b.z - 0.5 * lay.m_s * GRAVITY * lay.h_arm * b.roll**2
    for i in range(4):
        ke = ke + 0.5 * lay.m_u[i] * vzu[i] ** 2 + 0.5 * inertia[i] * omega[i] ** 2
        si = cn.s[i]
        over = jnp.maximum(si - lay.gap[i], 0.0)
        pe = pe + lay.m_u[i] * GRAVITY * zu[i] + lay.preload[i] * si + 0.5 * lay.k_w[i] * si * si
        pe = pe + lay.k_bs[i] * over**3 / 3.0
        rho = jnp.maximum(cn.rho[i], 0.0)
        tire = lay.tires[i]
        pe = pe + rho * sum(w * vertical_force(tire, x * rho, omega[i], lay.k_tire[i]) for x, w in _GL)
        # the tire carries F0 = P + m_u g at the reference: its strain energy there is a constant
        cx, cy = contact_stiffness(tire, cn.ft[i])
        pe = pe + 0.5 * (cx * dx[i] ** 2 + cy * dy[i] ** 2)
    for i in (0, 2):
        pe = pe + 0.5 * lay.k_bar[i] * (cn.s[i] - cn.s[i + 1]) ** 2
    return ke + pe


def static_loads(params: VehicleParams):
    """Corner loads [N] FL, FR, RL, RR of the car standing on flat ground by statics (sprung corner load +
    unsprung weight; sums to ``m g``): the reference of the static test."""
    lay = layout(params)
    return [lay.preload[i] + lay.m_u[i] * GRAVITY for i in range(4)]


__all__ = [
    "MODEL",
    "BodyState",
    "Corners",
    "FullModel",
    "Layout",
    "corners",
    "energy",
    "geometry",
    "init_full_state",
    "layout",
    "rates",
    "road_heights",
    "settle",
    "static_loads",
    "step",
    "suspension_of",
    "vertical_rates",
    "wheel_hop_frequency",
    "wheel_loads",
    "element_theta",
]
