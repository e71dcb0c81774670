"""Equations of motion shared by the single- and double-track models.

Each model describes its wheels by a :class:`Geometry` (contact positions, steer angles, loads,
surfaces, inertias, drive and brake shares) and calls :func:`rates`, which returns the time derivative
of the :class:`~sims.vehicles.params.VehicleState` velocity states for a step of length ``h``.

Chassis (body frame at the CG, x forward, y left; planar)::

    m (dvx/dt - r vy) = sum_i Fbx_i + Pbx_i - Fdrag_x + m g_x
    m (dvy/dt + r vx) = sum_i Fby_i + Pby_i - Fdrag_y + m g_y
    Iz dr/dt          = sum_i x_i (Fby_i + Pby_i) - y_i (Fbx_i + Pbx_i)

with ``Fb_i = Rot(delta_i) (Fx_i, Fy_i)`` the tire force of wheel ``i`` (at ``(x_i, y_i)``, steered by
``delta_i``) turned into the body frame, ``Pb_i`` the surface's ploughing drag
(:func:`jaxtire.surfaces.ploughing_force`, on the chassis at the contact, not on the wheel) and the
aerodynamic drag ``Fdrag = 1/2 rho CdA |v| v``.  The aligning torque ``Mz`` of the tires is not applied
(it matters to the steering, not to the planar motion), so XLA drops it from the tire evaluation.

Wheel spin (positive rolling forward; ``Fx`` acts at the contact, a radius ``r`` below the axle)::

    I_w domega/dt = T_drive - r Fx + T_f,     T_f in -(T_b + T_rr) Sign(omega)

with ``T_f`` a Coulomb friction torque of capacity ``T_b + T_rr``: the brake ``T_b`` (pedal x
``max_brake_torque`` x the wheel's share) and the rolling resistance ``T_rr = |My|`` of the rolling tire
(:func:`rolling_torque`; the tire's own ``My`` fades viscously below its low speed, so it is replaced by
this friction torque, which can stop and hold the wheel).  Coulomb friction is solved implicitly
(:func:`coulomb_spin_update`): a wheel whose torque stays below the capacity is held at exactly
``omega = 0`` (stick), otherwise it slides at the full capacity; no regularising speed scale, no
chatter, at any step.  So a car nudged to 0.05 m/s stops in ``v^2 / (2 a)``, ``a = sum T_rr / r / m``
(~2 cm), and a braked car is held by its tires alone.

Two radii.  The wheel's torque arm ``r`` (:attr:`~sims.vehicles.params.Chassis.wheel_radius_front` /
``_rear``, the :class:`Geometry` ``radius``) carries the drive, brake and tire torques (``r Fx`` above,
unchanged); the slip uses the tire's *effective rolling radius* ``Re`` (TYDEX / MF-Tyre slip definition,
:func:`jaxtire.tire.rolling_radius`, one call per wheel and step)::

    Re = R_omega - (Fz0 / Cz) (DREFF atan(BREFF Fz / Fz0) + FREFF Fz / Fz0),   R_omega = R0 (Q_RE0 + Q_V1 (omega R0 / V0)^2)

at the wheel's load ``Fz`` and spin ``omega`` (MF files with a fitted vertical model; 0.3041 m at 4 kN for
the bundled TNO tire, ``R0`` = 0.3135 m), ``Re = r`` for tires without one (simple model).  Every
``omega``-derivative of the slip below (wheel row, Gauss-Seidel force, deflection update) uses the same
``Re``, held constant over the step (its ``Q_V1`` speed term changes it by ~0.2 % at 100 km/h).
:meth:`Model.init_state` starts each wheel at ``omega = V / Re`` at its static load (free rolling, zero
slip), and :func:`rolling_radii` gives the same radii to the slip estimates of drivers and observations.

Tire inputs (per wheel, wheel frame ``u = Rot(-delta) (vx - r_z y_i, vy + r_z x_i)``): the transient
tire, Pacejka 2012 §7.2's first-order (stretched-string) contact model (:func:`contact_step`).  Each tire
carries its contact deflections ``d_x``, ``d_y`` [m] (``VehicleState.defl_x``, ``defl_y``)::

    d(d_x)/dt = (omega Re - u_x) - |u_x| d_x / sigma_x,     d(d_y)/dt = u_y - |u_x| d_y / sigma_y

with the relaxation lengths ``sigma = K / C`` [m]: the tire's slip stiffnesses ``Kx`` [N], ``Ky`` [N/rad]
(:func:`jaxtire.tire.linear_stiffness`) over its carcass stiffnesses ``Cx``, ``Cy`` [N/m]
(:func:`jaxtire.transient.contact_stiffness`: the MF file's, or 95.5 / 39.4 N/m per N of load for the
simple model), floored at :data:`jaxtire.transient.SIGMA_MIN`; so at small slip the force is ``C d``, the
carcass spring, at any speed.  The lagged slips ``kappa' = d_x / sigma_x``, ``tan(alpha') = d_y /
sigma_y`` settle at speed on the steady slips ``(omega Re - u_x) / |u_x|``, ``u_y / |u_x|`` (the steady
tire's, exactly), with the time constant ``sigma / |u_x|`` (~20 ms at 20 m/s); at standstill the
deflection integrates the slip velocity, so a held car rests on its carcass springs (``m g sin(theta) /
sum C_i``, 1.8 mm on a 20 % grade) instead of creeping on a slip damper.  Below the tire's low speed
``VXLOW`` (:func:`jaxtire.tire.low_speed`) the low-speed damping of MF-Tyre (Pacejka 2012 §7.2) is added to the slips::

    kappa' = (d_x + tau_x (omega Re - u_x)) / sigma_x,   tan(alpha') = (d_y + tau_y u_y) / sigma_y,
    tau = w(u_x) 2 zeta sqrt(Fz / (g C)),   w = 1/2 (1 + cos(pi |u_x| / VXLOW)) (0 above VXLOW)

i.e. a damper ``c = 2 zeta sqrt(C Fz / g)`` [N s/m] in parallel with the carcass spring, ``zeta`` =
:data:`LOW_SPEED_DAMPING_RATIO` = 1 (the corner mass ``Fz / g`` critically damped; without it a car held
on its tires would ring at ~5 Hz).  Forces from :func:`jaxtire.tire.tire_forces` at ``(kappa',
alpha')`` with the wheel's load and surface (:func:`jaxtire.surfaces.lookup`), the vehicle's
:class:`~sims.vehicles.params.TireScale`.  Each step updates the deflections exactly for the step's
inputs (:func:`jaxtire.transient.relax_factors`)::

    d' = e d + G v_s,   e = exp(-|u_x| h / sigma),   G = sigma (1 - e) / |u_x|   (-> h at u_x = 0)  [s]

Stiffness and standstill.  The lagged slip responds to the slip velocity ``v_s`` through ``k = dkappa'/dv_s
= (G + tau) / sigma`` [s/m]: ``~ 1 / |u_x|`` at speed (the steady tire's ``1 / V``, a stiff damper,
``K r Re / (I_w V)`` ~1e4 1/s on a car wheel at low speed), ``(h + tau) / sigma`` at standstill (the
carcass spring and the damper over one step).  The returned derivatives are therefore *linearly
implicit* for the step ``h`` (a Rosenbrock-Euler / W-method preconditioning, which leaves every steady
state unchanged), with the forces at the predicted deflections ``e d + G v_s`` (start-of-step velocities)
and these corrections for the step's velocity changes:

* wheel spin, frictionless part: ``D domega/dt = T_drive - r Fx`` with ``D = I_w + h J_w``, ``J_w = r Re Jx
  k_x``, ``Jx = max(J_t, J_s - I_w / (h r Re k_x))``: the tangent slip stiffness ``J_t`` estimated by
  :func:`tangent_stiffness` (``Kx``, :func:`jaxtire.tire.linear_stiffness`, at small slip, ~0 past the
  peak), but at least what keeps the step from overshooting through zero slip along the secant
  ``J_s`` (:func:`secant_stiffness`; it binds only near standstill, where a sliding wheel would
  otherwise chatter); then the friction by :func:`coulomb_spin_update`;
* chassis: ``(M + h C) dv/dt = Q + sum_i G_i^T Rot (Jx Re k_x h domega_i, 0)`` with ``C`` the 3x3 tire
  damping matrix ``sum_i G_i^T Rot diag(cx_i, cy_i) Rot^T G_i`` (``cy = Jy k_y cos^2(alpha')``, ``Jy`` the
  secant stiffness :func:`secant_stiffness`; ``cx = cu I_w / D``, or ``cu`` with ``Jx'`` the secant
  stiffness for a held wheel, so a car held by its wheels settles without overshoot; ``cu = Jx (G f_u + tau)
  / sigma_x`` with ``f_u = max(1 + sign(u_x) kappa', 0)`` the lag's own dependence on the speed (0 for a
  locked wheel: its steady slip -1 does not depend on the speed)), solved exactly.  At standstill ``h C``
  is ``h (h + tau) C_carcass``: backward Euler on the carcass spring and damper.  This is the
  wheels-eliminated (Schur complement) form of the coupled linearly implicit step;
* back-substitution into the wheel rows: ``domega_i += h r cu_i / D_i du_x,i/dt`` (``du_x/dt`` the
  wheel-frame contact acceleration from the solved chassis rates; 0 for a held wheel).  Without it the
  wheel lagged the chassis by one step's worth of coupling, an O(h) error: the 5 ms braking distances
  were 1.5-2.4 % short and the coast-down deceleration 1.2-2.4 % low;
* the deflections: ``d_x' = e d_x + G (v_s + Re h domega - f_u h du_x/dt)``, ``d_y' = e d_y + G (u_y + h
  du_y/dt)`` (the linearisation the forces used);
* load-transfer filter, the exact exponential update of the lag (:func:`lag_rate`):
  ``d a_f/dt = (1 - exp(-h / tau)) / h (a - a_f)``.

For ``h J << 1`` this is the explicit derivative; for ``h J >> 1`` the stiff modes relax in one step
without overshoot, so a parked car neither creeps nor jitters and a braked wheel stays stopped, at any
step size.  The branches are ``clip``/``where`` on finite values only, so gradients stay finite.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.constants import GRAVITY
from jaxtire.numerics import (  # vectorisable float32 sin/cos (XLA:CPU's are scalar libm calls)
    atan,
    cos,
    safe_norm,
    sincos,
)
from jaxtire.surfaces import Surface, ploughing_force
from jaxtire.tire import (
    linear_stiffness,
    low_speed,
    model_options,
    out_of_range_code,
    rolling_radius,
    scale_tire,
    tire_forces,
)
from jaxtire.transient import SIGMA_MIN, contact_stiffness, relax_factors
from sims.roads.contact import Contact
from sims.vehicles import driveline
from sims.vehicles.integrators import semi_implicit_euler
from sims.vehicles.params import (
    Chassis,
    Controls,
    VehicleParams,
    VehicleState,
    init_state,
    per_wheel_array,
    wheel_layout,
)
from sims.vehicles.road import on_road

#: Slip ratio and slip angle [rad] below which the secant stiffness blends into the linear one.
KAPPA_0 = 0.01
ALPHA_0 = 0.01

#: Damping ratio [-] of the transient tire's low-speed damping (Pacejka 2012 §7.2): the damper
#: ``c = 2 zeta sqrt(C Fz / g)`` critically damps the corner mass ``Fz / g`` on its carcass spring ``C``, so a
#: parked car nudged against its brakes returns to rest without oscillating (0.5 left two rebounds).
LOW_SPEED_DAMPING_RATIO = 1.0


class Geometry(NamedTuple):
    """Per wheel state, each a Python list with one (possibly batched) value per wheel: contact position
    ``x``, ``y`` [m] from the CG, ``steer`` [rad], load of one tire ``fz`` [N], ``surface``
    (:class:`jaxtire.surfaces.Surface`), rolling ``radius`` [m], spin ``inertia`` [kg m^2], ``drive`` and
    ``brake`` shares [-] (each summing to 1); ``tires_per_wheel`` (Python int) how many identical tires a
    wheel state stands for (2 for a single-track axle), ``n_front`` (Python int) how many leading wheels
    are on the front axle; ``side`` the mounted side of each tire (+1 left, -1 right, 0 as measured;
    ``None``: every tire as measured), passed to the tire where its model has a ``side`` option;
    ``camber`` the inclination angle [rad] of each tire (ISO-W, positive top to the right; ``None``: 0).

    Wheels are kept as separate scalars (not a stacked axis) so that under ``vmap`` every quantity is a
    contiguous vector over the vehicles, which XLA vectorises best."""

    x: list
    y: list
    steer: list
    fz: list
    surface: list
    radius: list
    inertia: list
    drive: list
    brake: list
    tires_per_wheel: int
    n_front: int
    side: Any = None
    camber: Any = None


class Telemetry(NamedTuple):
    """Per wheel state (last axis), at the start of the step: ``fz`` [N] load (per axle for the single
    track), ``fx``, ``fy`` [N] tire forces in the wheel frame, ``kappa`` [-], ``alpha`` [rad] the lagged slips
    they come from (the transient tire's, with the low-speed damping; module docstring), ``grip`` [-] the
    surface grip in effect, ``steer`` [rad] road-wheel angle; and the CG accelerations ``ax``, ``ay``
    [m/s^2] (body frame) of this step; ``out_of_range`` (per wheel, ``int8``) the tire validity ranges its
    inputs left (bits 1 load, 2 slip ratio, 4 slip angle, 8 camber, 16 pressure; :func:`jaxtire.tire.out_of_range_code`)."""

    fz: Any
    fx: Any
    fy: Any
    kappa: Any
    alpha: Any
    grip: Any
    steer: Any
    ax: Any
    ay: Any
    out_of_range: Any = None  # per wheel int8: bits of the tire ranges left (jaxtire.limits.RANGE_BITS)


@dataclasses.dataclass(frozen=True)
class Model:
    """A vehicle model: a name, its number of wheel states and its ``rates`` function
    ``rates(params, state, controls, h) -> (derivative VehicleState with zero pose rates, Telemetry)``."""

    name: str
    n_wheels: int
    rates: Callable
    geometry: Callable | None = None

    def init_state(self, params: VehicleParams, speed=0.0, **kw) -> VehicleState:
        """State rolling straight and free at ``speed`` [m/s]; keywords ``x, y, yaw, vy, yaw_rate``
        (:func:`sims.vehicles.params.init_state`).  Each wheel spins at ``omega = speed / Re``, ``Re`` its
        tire's effective rolling radius (:func:`rolling_radii`) at the load the model's geometry gives it in
        that state (zero accelerations, downforce at ``speed``, the road under it) and at that spin (a fixed
        point, contracting by ~``2 Q_V1 (omega R0 / V0)^2`` < 1 %: three passes), so the slips start at 0."""
        state = init_state(params, self.n_wheels, speed, **kw)
        if self.geometry is None:
            return state
        p = on_road(params, state)
        loads = self.geometry(p, state, Controls()).fz
        v = state.vx[..., None]
        omega = state.omega
        for _ in range(3):
            omega = v / rolling_radii(p, self.n_wheels, omega, loads)
        drive = None if p.driveline is None else driveline.init_drive_state(p, omega, loads)
        return state._replace(omega=omega, drive=drive)

    def check_step(self, params: VehicleParams, h: float) -> None:
        """Warn where the (sub)step ``h`` [s] is too coarse for the model's fastest modes (none here)."""

    def step(self, params: VehicleParams, state: VehicleState, controls: Controls, dt) -> VehicleState:
        """One semi-implicit Euler step of length ``dt`` [s] (:func:`sims.vehicles.integrators.semi_implicit_euler`)."""
        return semi_implicit_euler(self, params, state, controls, dt)[0]


def make_model(name: str, n_wheels: int, geometry: Callable) -> Model:
    """The :class:`Model` whose ``rates(params, state, controls, h)`` are :func:`rates` with the wheels of
    ``geometry(params, state, controls) -> Geometry`` (linearly implicit for the step ``h``)."""

    def model_rates(params: VehicleParams, state: VehicleState, controls: Controls, h):
        params = on_road(params, state)  # surfaces, grade and bank under the wheels (sims.vehicles.road)
        return rates(params, state, controls, h, geometry(params, state, controls))

    model_rates.__doc__ = f"Linearly implicit derivatives of the {name} model for a step ``h`` and its Telemetry."
    return Model(name, n_wheels, model_rates, geometry)


def gravity(contact: Contact):
    """Gravity per unit mass in the body frame [m/s^2] on a road of grade ``theta`` and bank ``phi`` (the
    :class:`~sims.roads.contact.Contact` under the car): ``g_x = -g sin(theta)``, ``g_y = -g cos(theta)
    sin(phi)`` (in the road plane) and ``g_n = g cos(theta) cos(phi)`` (into the road).  Flat road: ``(0, 0,
    g)``."""
    st, ct = sincos(contact.grade)
    sb, cb = sincos(contact.bank)
    return -GRAVITY * st, -GRAVITY * ct * sb, GRAVITY * ct * cb


def axle_loads(ch: Chassis, contact: Contact, vx, ax):
    """Front and rear axle loads [N] with downforce and quasi-static longitudinal load transfer::

        Ff = m g_n b / L + F_down beta - m (a_x - g_x) h / L,
        Fr = m g_n a / L + F_down (1 - beta) + m (a_x - g_x) h / L,     F_down = 1/2 rho ClA vx^2

    (:func:`gravity`; ``a_x - g_x`` the specific force, so a car parked uphill loads its rear axle), so
    ``Ff + Fr = m g_n + F_down`` exactly (braking, ``a_x < 0``, moves load to the front)."""
    L = ch.cg_to_front + ch.cg_to_rear
    gx, _, gn = gravity(contact)
    down = 0.5 * ch.air_density * ch.lift_area * vx * vx
    shift = ch.mass * (ax - gx) * ch.cg_height / L
    ff = ch.mass * gn * ch.cg_to_rear / L + down * ch.aero_balance_front - shift
    fr = ch.mass * gn * ch.cg_to_front / L + down * (1.0 - ch.aero_balance_front) + shift
    return ff, fr


def lateral_transfer(ch: Chassis, contact: Contact, ay):
    """Lateral load transfer per wheel [N], front and rear: ``dF = lambda m (a_y - g_y) h / t`` (``lambda`` the
    axle's share of the roll stiffness); it is added to the right wheels and taken from the left ones
    (``a_y > 0`` in a left turn loads the right, outer wheels)."""
    m_roll = ch.mass * (ay - gravity(contact)[1]) * ch.cg_height
    return (ch.roll_stiffness_front * m_roll / ch.track_front, (1.0 - ch.roll_stiffness_front) * m_roll / ch.track_rear)


def clamped_axle_loads(ch: Chassis, contact: Contact, vx, ax):
    """:func:`axle_loads` with a wheelie / stoppie handled by statics: ``Ff`` clipped to ``[0, W]``,
    ``Fr = W - Ff`` (``W = m g + F_down``), so the sum stays ``W`` when an axle lifts."""
    ff, fr = axle_loads(ch, contact, vx, ax)
    total = ff + fr
    ff = jnp.clip(ff, 0.0, jnp.maximum(total, 0.0))
    return ff, total - ff


def corner_loads(ch: Chassis, contact: Contact, vx, ax, ay):
    """Vertical loads [N] of the four wheels FL, FR, RL, RR: roll-stiffness split, wheel lift by statics.

    Equilibrium of the rigid chassis fixes three combinations of the four loads ``F = (F1, F2, F3, F4)``::

        F1 + F2 + F3 + F4 = W = m g_n + F_down                    (vertical force; :func:`gravity`)
        F1 + F2 = Ff,  F3 + F4 = Fr                                (pitch; :func:`clamped_axle_loads`)
        t_f/2 (F2 - F1) + t_r/2 (F4 - F3) = M = m (a_y - g_y) h     (roll; a_y > 0 loads the right)

    and every statically admissible load set is ``F = F_s + c v`` with the *warp* mode
    ``v = (1/t_f, -1/t_f, -1/t_r, 1/t_r)`` (zero net force, pitch and roll moment).  The suspension sets
    ``c``: with all wheels on the ground the roll-stiffness split ``lambda`` gives ``F_s`` =
    ``(Ff/2 - dFf, Ff/2 + dFf, Fr/2 - dFr, Fr/2 + dFr)``, ``dFf = lambda M / t_f``, ``dFr = (1 - lambda)
    M / t_r`` (:func:`lateral_transfer`) at ``c = 0``.  A wheel cannot pull (``F_i >= 0``), which bounds
    ``c`` to ``[c_lo, c_hi]``, ``c_lo = max(-F1 t_f, -F4 t_r)``, ``c_hi = min(F2 t_f, F3 t_r)``; the warp
    takes the admissible value nearest the elastic one, ``c = clip(0, c_lo, c_hi)``.  So a lifted wheel
    carries exactly zero and its roll moment moves to the diagonal wheels (a tripod), with the three
    equilibrium equations still met.  The interval is empty only when ``|M|`` exceeds the two-wheel
    capacity ``(t_f Ff + t_r Fr) / 2``: ``M`` is clipped to it, i.e. the car rides on its two outer wheels
    (``F = (0, Ff, 0, Fr)`` for a left turn); the roll acceleration beyond that (roll-over) is not
    modelled.  Hence ``sum F = W`` in every state (up to rounding).  Piecewise linear in the inputs
    (``clip``/``min``/``max`` only): gradients finite everywhere, including at lift-off.
    """
    ff, fr = clamped_axle_loads(ch, contact, vx, ax)
    tf, tr = ch.track_front, ch.track_rear
    cap = 0.5 * (tf * ff + tr * fr)
    m_roll = jnp.clip(ch.mass * (ay - gravity(contact)[1]) * ch.cg_height, -cap, cap)
    lam = ch.roll_stiffness_front
    dff = lam * m_roll / tf
    dfr = (1.0 - lam) * m_roll / tr
    f1, f2, f3, f4 = 0.5 * ff - dff, 0.5 * ff + dff, 0.5 * fr - dfr, 0.5 * fr + dfr
    c_lo = jnp.maximum(-f1 * tf, -f4 * tr)
    c_hi = jnp.minimum(f2 * tf, f3 * tr)
    c = jnp.minimum(jnp.maximum(0.0, c_lo), c_hi)
    return [f1 + c / tf, f2 - c / tf, f3 - c / tr, f4 + c / tr]


def rolling_radii(params: VehicleParams, n_wheels: int, omega=0.0, loads=None):
    """Effective rolling radii ``Re`` [m] of the wheel states (last axis: 4 FL, FR, RL, RR or 2 front, rear):
    :func:`jaxtire.tire.rolling_radius` of each axle's tire at spin ``omega`` [rad/s] (scalar or per wheel)
    and ``loads`` [N] (a list, one per wheel state, per tire), or with ``loads=None`` at the static loads
    ``Ff / 2``, ``Fr / 2`` of the standing car (:func:`clamped_axle_loads` at zero speed and acceleration,
    the contact's grade); the chassis radius where the tire has no vertical model.

    The one source of the slip radius outside the step: :meth:`Model.init_state` (free rolling start) and
    the slip estimates of drivers (ABS) and observations (a real ECU's calibrated rolling radius), so that
    their ``omega Re`` is the model's at the static load.  In the chassis dtype."""
    ch = params.chassis
    dtype = jnp.asarray(ch.mass).dtype
    radius = wheel_layout(ch, n_wheels).radius
    nf = n_wheels // 2
    if loads is None:
        ff, fr = clamped_axle_loads(ch, params.contact, 0.0, 0.0)
        loads = [0.5 * ff] * nf + [0.5 * fr] * nf
    omega = wheel_list(omega, n_wheels)
    tires = [params.tire_front] * nf + [params.tire_rear] * nf
    re = [rolling_radius(t, fz, om, r) for t, fz, om, r in zip(tires, loads, omega, radius, strict=True)]
    return per_wheel_array([jnp.asarray(v, dtype) for v in re])


def drive_torque(ch, throttle, omega_drive):
    """Total wheel torque [N m] of the drive without a driveline at ``throttle`` [-] and the drive-share weighted
    wheel spin ``omega_drive`` [rad/s]: ``throttle T P / sqrt(P^2 + (T w)^2)`` (``T`` ``max_drive_torque``, ``P``
    ``max_power``): the torque at low spin, the power ``P / w`` at high spin.  The one copy of this fade: the
    step, the lap driver's pedal (:func:`sims.drivers.engine_force`) and the quasi-steady lap's envelope."""
    tmax, pmax = ch.max_drive_torque, ch.max_power
    return throttle * tmax * pmax / jnp.sqrt(pmax * pmax + (tmax * omega_drive) ** 2)


def secant_stiffness(force, slip, k_lin, slip0):
    """``J = (K slip0^2 + F slip) / (slip^2 + slip0^2)`` clipped at 0: ``K`` at small slip, ``F / slip``
    far past the peak; a smooth, never-negative stand-in for ``dF/dslip`` in the implicit update."""
    return jnp.maximum((k_lin * slip0 * slip0 + force * slip) / (slip * slip + slip0 * slip0), 0.0)


def rolling_torque(tire, my, vx):
    """Rolling-resistance torque capacity ``T_rr = |My| / clip(|vx| / v_low, 1e-3, 1)`` [N m] (>= 0).

    The tire's ``My`` (:func:`jaxtire.tire.tire_forces`) fades linearly below :func:`jaxtire.tire.low_speed`, which
    makes the stop a viscous one (time constant ``v_low / (f_r g)``, ~10 s: a car nudged to 0.05 m/s
    rolls ~0.5 m).  Dividing the fade out gives the rolling moment of the rolling tire, which the wheel
    row applies as a Coulomb friction torque (:func:`coulomb_spin_update`): it opposes the spin and can
    hold the wheel.  Below ``1e-3 v_low`` (1 mm/s) it fades again (``My`` is 0 at ``vx = 0``)."""
    fade = jnp.clip(jnp.abs(vx) / low_speed(tire), 1e-3, 1.0)
    return jnp.abs(my) / fade


def coulomb_spin_update(omega, torque, cap, inertia, h):
    """One backward-Euler step of a wheel spin with Coulomb friction; returns ``(omega', held)``.

    ``D (omega' - omega) = h (T + T_f)``, ``T_f in -cap Sign(omega')``, with ``D`` [kg m^2] the wheel's
    linearly implicit inertia (``I + h J``, :mod:`sims.vehicles.core`), ``T`` [N m] the drive and tire
    torques and ``cap >= 0`` [N m] the friction capacity (brake + rolling resistance).  Its solution is
    the soft threshold of the frictionless update ``omega* = omega + h T / D``::

        omega' = omega* - clip(omega*, -h cap / D, h cap / D)

    so a wheel whose torque stays below the capacity stops *exactly* and stays stopped (``held``: the
    friction sticks), and a sliding one is decelerated by ``cap`` without chattering through 0 at any
    step.  Piecewise linear (``clip`` only): gradients finite everywhere, zero in ``omega`` while held.
    """
    free = omega + h * torque / inertia
    lim = h * cap / inertia
    held = jnp.abs(free) <= lim
    return free - jnp.clip(free, -lim, lim), held


def lag_rate(tau, h):
    """Rate factor ``k`` [1/s] of the first-order lag ``tau dy/dt = u - y`` (``tau >= 0`` [s]) for a step
    ``h``: ``dy/dt = k (u - y)`` with ``k = (1 - exp(-h / tau)) / h``, so one Euler step of length ``h`` is the
    exact solution for a constant ``u`` (``tau = 0``: ``k = 1 / h``, ``y`` follows ``u`` in one step).  The
    former ``1 / (tau + h)`` (backward Euler) slowed the lag by ``h / tau`` (10 % at 5 ms, ``tau`` 50 ms)."""
    tau = jnp.asarray(tau)
    x = h / jnp.maximum(tau, 1e-30)
    return -jnp.expm1(-jnp.minimum(x, 80.0)) / h


def tangent_stiffness(slip, k_lin, peak):
    """``J = K / (1 + x^2)^2``, ``x = K slip / D`` [N]: a cheap stand-in for the tire's slope ``dF/dslip`` in
    the linearly implicit update, from the tire's linear stiffness ``K`` and peak force ``D = mu Fz``
    (what the tire reports).

    ``K`` at small slip (where the stiff low-speed mode lives), ~0.02 ``K`` at a Magic Formula's peak
    (``x = C tan(pi / 2C)`` ~ 2.4 for ``C`` = 1.6) and -> 0 past it, where the true slope is ~0 or
    negative.  Before the peak it stays above half the Magic Formula's slope (``C`` = 1.6: 0.5-0.9x),
    which keeps the implicit wheel row stable (the step is stable while ``J_true < 2 / h + 2 J``; a
    steeper fall-off made a launching kart's wheels oscillate).  The secant ``F / slip`` used before
    is 2-4x too stiff past the peak: it slowed the lock-up of a braked wheel by a step-size-dependent
    amount (5 ms locked stops 1.3-2.1 % short of the converged ones); a forward-mode tangent of the
    tire doubles the cost of the step."""
    x = k_lin * slip / jnp.maximum(peak, 1e-6)
    q = 1.0 / (1.0 + x * x)
    return k_lin * q * q


def _solve3(a11, a12, a13, a22, a23, a33, b1, b2, b3):
    """Solve the symmetric positive-definite 3x3 system ``A z = b`` by the adjugate."""
    c11 = a22 * a33 - a23 * a23
    c12 = a13 * a23 - a12 * a33
    c13 = a12 * a23 - a13 * a22
    c22 = a11 * a33 - a13 * a13
    c23 = a12 * a13 - a11 * a23
    c33 = a11 * a22 - a12 * a12
    det = a11 * c11 + a12 * c12 + a13 * c13
    inv = 1.0 / det
    return (
        (c11 * b1 + c12 * b2 + c13 * b3) * inv,
        (c12 * b1 + c22 * b2 + c23 * b3) * inv,
        (c13 * b1 + c23 * b2 + c33 * b3) * inv,
    )


def wheel_list(a, n: int) -> list:
    """Split the last axis of ``a`` (length ``n``) into a list; a value without that axis is repeated."""
    a = jnp.asarray(a)
    if a.ndim >= 1 and a.shape[-1] == n:
        return [a[..., i] for i in range(n)]
    return [a] * n


class _WheelIn(NamedTuple):
    x: Any
    y: Any
    steer: Any
    fz: Any
    surface: Surface
    radius: Any
    inertia: Any
    drive: Any
    brake_share: Any
    omega: Any
    brake: Any
    side: Any
    defl_x: Any
    defl_y: Any
    camber: Any = None  # None: 0, a constant XLA folds away (the planar models)


class _WheelOut(NamedTuple):
    fx: Any
    fy: Any
    kappa: Any
    alpha: Any
    domega: Any
    fbx: Any
    fby: Any
    cxx: Any
    cxy: Any
    cyy: Any
    bx: Any
    by: Any
    br: Any
    ddx: Any
    ddx_w: Any
    ddx_x: Any
    ddx_y: Any
    ddx_r: Any
    ddy: Any
    ddy_x: Any
    ddy_y: Any
    ddy_r: Any
    range_code: Any  # int8 bits of the tire's validity ranges left (jaxtire.tire.out_of_range_code)


class LaggedSlip(NamedTuple):
    """One wheel's transient contact over a step (:func:`contact_step`): the lagged slips ``kappa`` [-] and
    ``tan_alpha`` [-] the tire is evaluated at, the predicted deflections ``dx``, ``dy`` [m] (the exact step
    with the start-of-step velocities), the gains ``gx``, ``gy`` [s] of the deflections on the slip
    velocities over the step, the relaxation lengths ``sx``, ``sy`` [m] and the sensitivities ``kx``, ``ky``
    [s/m] of the lagged slips (with the low-speed damping) to the slip velocities ``omega Re - u_x``, ``u_y``."""

    kappa: Any
    tan_alpha: Any
    dx: Any
    dy: Any
    gx: Any
    gy: Any
    sx: Any
    sy: Any
    kx: Any
    ky: Any


def contact_step(tire, fz, k_x, k_y, defl_x, defl_y, vsx, vsy, speed, h) -> LaggedSlip:
    """The first-order (stretched-string) contact of one tire over a step ``h`` [s] (module docstring).

    ``fz`` [N] load, ``k_x`` [N], ``k_y`` [N/rad] the slip stiffnesses (:func:`jaxtire.tire.linear_stiffness`),
    ``defl_x``, ``defl_y`` [m] the deflections at the start of the step, ``vsx = omega Re - u_x`` and ``vsy =
    u_y`` [m/s] the slip velocities driving them (wheel frame), ``speed = u_x`` [m/s].  Relaxation lengths
    ``sigma = K / C`` (carcass stiffness ``C``: :func:`jaxtire.transient.contact_stiffness`, floored at
    :data:`jaxtire.transient.SIGMA_MIN`); exact step (:func:`jaxtire.transient.relax_factors`)
    ``d = e defl + G vs``; low-speed damping time ``tau = w(|u_x|) 2 zeta sqrt(Fz / (g C))``,
    ``w = 1/2 (1 + cos(pi |u_x| / VXLOW))`` below the tire's :func:`jaxtire.tire.low_speed`, 0 above; lagged slips
    ``kappa' = (d_x + tau_x vsx) / sigma_x``, ``tan(alpha') = (d_y + tau_y vsy) / sigma_y``."""
    cx, cy = (jnp.maximum(c, 1.0) for c in contact_stiffness(tire, fz))  # >= 1 N/m whatever the file says
    sx = jnp.maximum(k_x / cx, SIGMA_MIN)
    sy = jnp.maximum(k_y / cy, SIGMA_MIN)
    ex, gx = relax_factors(speed, sx, h)
    ey, gy = relax_factors(speed, sy, h)
    dx = ex * defl_x + gx * vsx
    dy = ey * defl_y + gy * vsy
    fade = 0.5 + 0.5 * cos(jnp.pi * jnp.minimum(jnp.abs(speed) / low_speed(tire), 1.0))
    m_c = jnp.maximum(fz, 1.0) / GRAVITY  # corner mass [kg]
    tx, ty = (fade * (2.0 * LOW_SPEED_DAMPING_RATIO) * jnp.sqrt(m_c / c) for c in (cx, cy))
    isx, isy = 1.0 / sx, 1.0 / sy
    return LaggedSlip(
        (dx + tx * vsx) * isx, (dy + ty * vsy) * isy, dx, dy, gx, gy, sx, sy, (gx + tx) * isx, (gy + ty) * isy
    )


class _Row(NamedTuple):
    """One wheel's tire evaluation and implicit spin row before the drive and friction torques are applied."""

    fx: Any
    fy: Any
    kappa: Any
    alpha: Any
    re: Any
    uwx: Any
    s: Any
    c: Any
    ct: LaggedSlip
    jx: Any
    js: Any
    jy: Any
    d_wheel: Any
    px: Any
    py: Any
    t_rr: Any
    ranges: Any


def _wheel_row(tire, w: _WheelIn, vx, vy, r, h, mult: float) -> _Row:
    """Tire and implicit spin row of one wheel (module docstring)."""
    # contact-point velocity: body frame (uc) and wheel frame (uw)
    ucx = vx - r * w.y
    ucy = vy + r * w.x
    s, c = sincos(w.steer)
    uwx = c * ucx + s * ucy
    uwy = -s * ucx + c * ucy
    R, om, fz = w.radius, w.omega, w.fz  # R: the torque arm (chassis radius)
    Re = rolling_radius(tire, fz, om, R)  # the slip's effective rolling radius
    kx, ky = linear_stiffness(tire, fz, w.surface)
    ct = contact_step(tire, fz, kx, ky, w.defl_x, w.defl_y, om * Re - uwx, uwy, uwx, h)
    kappa, alpha = ct.kappa, atan(ct.tan_alpha)
    opts = {"side": w.side} if "side" in model_options(tire) else {}
    gamma = 0.0 if w.camber is None else w.camber
    out = tire_forces(tire, kappa, alpha, gamma, fz, uwx, w.surface, **opts)
    fx, fy = out.fx, out.fy
    ranges = out_of_range_code(tire, kappa, alpha, gamma, fz, **opts)
    # tangent, but never so soft that the step overshoots through zero slip along the secant (a sliding
    # wheel at standstill would chatter): J >= J_sec - I V / (h r Re)
    js = secant_stiffness(fx, kappa, kx, KAPPA_0)
    jx = jnp.maximum(tangent_stiffness(kappa, kx, out.mux * fz), js - w.inertia / (h * mult * R * Re * ct.kx))
    jy = secant_stiffness(-fy, alpha, ky, ALPHA_0)
    d_wheel = w.inertia + h * (mult * jx * R * Re * ct.kx)
    px, py = ploughing_force(w.surface, fz, ucx, ucy)
    t_rr = mult * rolling_torque(tire, out.my, uwx)
    return _Row(fx, fy, kappa, alpha, Re, uwx, s, c, ct, jx, js, jy, d_wheel, px, py, t_rr, ranges)


def _wheel_spin(ch: Chassis, w: _WheelIn, o: _Row, t_drive, h, mult: float) -> _WheelOut:
    """Spin update (drive, brake, rolling resistance) and chassis-force terms of one wheel (module docstring)."""
    R, om, Re, ct, c, s = w.radius, w.omega, o.re, o.ct, o.c, o.s
    fx, jx, js, d_wheel = o.fx, o.jx, o.js, o.d_wheel
    # wheel spin: drive and tire linearly implicit, brake + rolling resistance as implicit Coulomb friction;
    # the tire torque R Fx responds to the spin through the slip velocity omega Re: dT/domega = R Re Jx k_x
    cap = jnp.clip(w.brake, 0.0, 1.0) * ch.max_brake_torque * w.brake_share + o.t_rr
    om_new, held = coulomb_spin_update(om, t_drive - mult * fx * R, cap, d_wheel, h)
    domega = (om_new - om) / h
    fx_gs = fx + jx * Re * ct.kx * (h * domega)  # linearised Gauss-Seidel: the chassis sees the new spin

    # force on the chassis (body frame): tire + ploughing drag at the contact
    fbx = mult * (c * fx_gs - s * o.fy + o.px)
    fby = mult * (s * fx_gs + c * o.fy + o.py)
    # tire damping of the contact velocity, rotated into the body frame; the longitudinal part is the
    # Schur complement of the wheel's implicit row (a free wheel follows the chassis: (I + h Jb) / D)
    # dFx/du_x of the tire (<= 0 as -cu): the chassis sees it through the Schur complement of the wheel's
    # implicit row (a free wheel follows the chassis: I / D; a held one does not: 1), and the wheel row
    # gets it back once the chassis acceleration is known (back-substitution, :func:`rates`)
    # a held wheel leaves the chassis alone on the tire's slip damper: the secant keeps it from overshooting
    j_ch = jnp.where(held, js, jx)
    # d kappa'/du_x: the lag's decay -|u_x| d / sigma adds -sign(u_x) kappa' to the -1 of the slip velocity
    # (a locked wheel's steady deflection does not depend on the speed), the damper its -tau
    fu = jnp.maximum(1.0 + jnp.sign(o.uwx) * ct.dx / ct.sx, 0.0)
    cu = mult * j_ch * (ct.kx - ct.gx * (1.0 - fu) / ct.sx)
    cx = cu * jnp.where(held, 1.0, w.inertia / d_wheel)
    cy = mult * o.jy * ct.ky / (1.0 + ct.tan_alpha * ct.tan_alpha)
    # back-substitution gain: d omega' += h * g * du_x / dt, du_x/dt = c (dvx - y dr) + s (dvy + x dr)
    g = jnp.where(held, 0.0, h * R * cu / d_wheel)
    # deflections: d' = d_pred + G (Re h domega - fu h du_x/dt) and G h du_y/dt, du_y/dt = -s (dvx - y dr) + c (dvy + x dr)
    gfu = -ct.gx * fu
    return _WheelOut(
        fx,
        o.fy,
        o.kappa,
        o.alpha,
        domega,
        fbx,
        fby,
        c * c * cx + s * s * cy,
        c * s * (cx - cy),
        s * s * cx + c * c * cy,
        g * c,
        g * s,
        g * (s * w.x - c * w.y),
        (ct.dx - w.defl_x) / h,
        ct.gx * Re,
        gfu * c,
        gfu * s,
        gfu * (s * w.x - c * w.y),
        (ct.dy - w.defl_y) / h,
        -ct.gy * s,
        ct.gy * c,
        ct.gy * (c * w.x + s * w.y),
        o.ranges,
    )


def _wheel(ch: Chassis, tire, w: _WheelIn, vx, vy, r, t_avail, h, mult: float) -> _WheelOut:
    """Tire, spin and chassis-force terms of one wheel with the drive torque ``t_avail`` x its share."""
    return _wheel_spin(ch, w, _wheel_row(tire, w, vx, vy, r, h, mult), t_avail * w.drive, h, mult)


def _stack(values: list):
    return jnp.stack(jnp.broadcast_arrays(*values), axis=0)


def _map_wheels(fn, groups):
    """Evaluate ``fn(tire, wheel_inputs)`` for every wheel; ``groups`` is a list of ``(tire, [inputs...])``.

    Groups whose tires share a pytree structure are merged (their tires stacked leaf-wise), and each
    group runs as one ``lax.map`` over its wheels, so the tire equations appear once per tire model in
    the compiled program (compile time) while every wheel still works on contiguous per-vehicle vectors.
    Measured on XLA:CPU (10 k cars): unrolling the wheels runs at the same speed with 3x the compile
    time, ``jax.vmap`` over the wheel axis is ~30x slower.
    Returns the outputs stacked on a leading wheel axis, in input order."""
    merged: list[tuple[list[Any], list[Any]]] = []
    for tire, ins in groups:
        # jaxlib's PyTreeDef does not resolve for mypy (follow_imports=silent), so == on it is rejected
        if merged and jax.tree.structure(merged[-1][0][0]) == jax.tree.structure(tire):  # type: ignore[operator]
            merged[-1][0].extend([tire] * len(ins))
            merged[-1][1].extend(ins)
        else:
            merged.append(([tire] * len(ins), list(ins)))
    outs = []
    for tires, ins in merged:
        if len(ins) == 1:
            outs.append(jax.tree.map(lambda v: jnp.asarray(v)[None], fn(tires[0], ins[0])))
            continue
        xs_tire = jax.tree.map(lambda *v: _stack(list(v)), *tires)
        xs_in = jax.tree.map(lambda *v: _stack(list(v)), *ins)
        outs.append(jax.lax.map(lambda a: fn(*a), (xs_tire, xs_in)))
    if len(outs) == 1:
        return outs[0]
    return jax.tree.map(lambda *v: jnp.concatenate(jnp.broadcast_arrays(*v), axis=0), *outs)


def _wheel_sum(a):
    """Sum over the leading wheel axis as an explicit chain of adds (``a[0] + a[1] + ...``).

    Same value as ``jnp.sum(a, axis=0)`` (up to the order of the adds), but it stays an elementwise op
    that XLA fuses into its consumers: XLA:CPU hands a ``reduce`` over the short wheel axis to a separate
    (YNNPACK) kernel per sum, nine of them per step, which cost about a fifth of the 4-wheel step
    (measured 586 -> 478 CPU ns per vehicle-step, 10 k cars, on the 2-core AVX2 EPYC)."""
    a = jnp.asarray(a)
    out = a[0]
    for i in range(1, a.shape[0]):
        out = out + a[i]
    return out


def _driveline_wheels(params: VehicleParams, state: VehicleState, controls: Controls, h, ins: list, tires, mult, nf):
    """The wheels of a car with a :class:`~sims.vehicles.driveline.Driveline`: every wheel's tire and implicit
    row, then the driveline's coupled solve (:func:`sims.vehicles.driveline.drive_torques`: drive torques and
    the arbitrated brakes), then each wheel's spin and friction.  Returns the stacked wheel outputs and the
    derivative of :attr:`VehicleState.drive` (``(new - old) / h``)."""
    ch = params.chassis
    vx, vy, r = state.vx, state.vy, state.yaw_rate
    rows = _map_wheels(
        lambda tire, w: _wheel_row(tire, w, vx, vy, r, h, mult), [(tires[0], ins[:nf]), (tires[1], ins[nf:])]
    )
    w = jax.tree.map(lambda *v: _stack(list(v)), *ins)
    n = len(ins)
    each = lambda a: [a[i] for i in range(n)]  # noqa: E731
    wheel_rows = driveline.WheelRows(
        each(w.omega),
        each(rows.d_wheel),
        each(-mult * rows.fx * w.radius),
        each(rows.re),
        each(rows.uwx),
        each(w.radius),
        each(w.brake_share),
        each(w.y),
        each(w.brake),
        each(w.fz),
        each(rows.t_rr),
    )
    steer = jnp.clip(controls.steer, -ch.max_steer, ch.max_steer)
    torques, brakes, new = driveline.drive_torques(
        params.driveline,
        state.drive,
        ch,
        params.contact.surface_ids,
        steer,
        jnp.clip(controls.throttle, -1.0, 1.0),
        wheel_rows,
        state,
        h,
    )
    o = _wheel_spin(ch, w._replace(brake=_stack(brakes)), rows, _stack(torques), h, mult)
    return o, jax.tree.map(lambda a, b: (a - b) / h, new, state.drive)


def rates(params: VehicleParams, state: VehicleState, controls: Controls, h, geom: Geometry):
    """Linearly implicit time derivatives of the velocity states (module docstring); pose rates are zero.

    Returns ``(VehicleState of derivatives, Telemetry)``.  One vehicle: ``vmap`` it for a fleet.
    """
    ch = params.chassis
    vx, vy, r = (jnp.asarray(v) for v in (state.vx, state.vy, state.yaw_rate))
    n = len(geom.x)
    nf = geom.n_front
    omega = wheel_list(state.omega, n)
    defl_x, defl_y = wheel_list(state.defl_x, n), wheel_list(state.defl_y, n)
    mult = float(geom.tires_per_wheel)
    brake_cmd = jnp.asarray(controls.brake)
    brake = wheel_list(brake_cmd, n) if brake_cmd.ndim >= 1 else [brake_cmd] * n

    throttle = jnp.clip(controls.throttle, -1.0, 1.0)
    omega_drive = sum(d * w for d, w in zip(geom.drive, omega, strict=False))
    t_avail = drive_torque(ch, throttle, omega_drive)

    side = [0.0] * n if geom.side is None else geom.side
    camber = [None] * n if geom.camber is None else geom.camber
    ins = [
        _WheelIn(
            geom.x[i],
            geom.y[i],
            geom.steer[i],
            geom.fz[i],
            geom.surface[i],
            geom.radius[i],
            geom.inertia[i],
            geom.drive[i],
            geom.brake[i],
            omega[i],
            brake[i],
            side[i],
            defl_x[i],
            defl_y[i],
            camber[i],
        )
        for i in range(n)
    ]
    tires = (scale_tire(params.tire_front, *ch.tire_scale_front), scale_tire(params.tire_rear, *ch.tire_scale_rear))
    d_drive = None
    if params.driveline is None:  # static (the pytree's structure): the chassis' one-number drive
        fn = lambda tire, w: _wheel(ch, tire, w, vx, vy, r, t_avail, h, mult)  # noqa: E731
        o = _map_wheels(fn, [(tires[0], ins[:nf]), (tires[1], ins[nf:])])
    else:
        o, d_drive = _driveline_wheels(params, state, controls, h, ins, tires, mult, nf)

    X, Y = _stack(geom.x), _stack(geom.y)
    m, iz = ch.mass, ch.yaw_inertia
    kd = 0.5 * ch.air_density * ch.drag_area * safe_norm(vx, vy)
    gx, gy, _ = gravity(params.contact)
    qx = _wheel_sum(o.fbx) - kd * vx + m * r * vy + m * gx
    qy = _wheel_sum(o.fby) - kd * vy - m * r * vx + m * gy
    qr = _wheel_sum(X * o.fby - Y * o.fbx)
    C11 = _wheel_sum(o.cxx)
    C12 = _wheel_sum(o.cxy)
    C22 = _wheel_sum(o.cyy)
    C13 = _wheel_sum(-Y * o.cxx + X * o.cxy)
    C23 = _wheel_sum(-Y * o.cxy + X * o.cyy)
    C33 = _wheel_sum(Y * Y * o.cxx - 2.0 * X * Y * o.cxy + X * X * o.cyy)
    dvx, dvy, dr = _solve3(m + h * C11, h * C12, h * C13, m + h * C22, h * C23, iz + h * C33, qx, qy, qr)

    domega = o.domega + o.bx * dvx + o.by * dvy + o.br * dr  # the wheel rows' back-substitution
    ddx = o.ddx + o.ddx_w * domega + o.ddx_x * dvx + o.ddx_y * dvy + o.ddx_r * dr  # and the deflections'
    ddy = o.ddy + o.ddy_x * dvx + o.ddy_y * dvy + o.ddy_r * dr

    ax_m = dvx - r * vy
    ay_m = dvy + r * vx
    lag = lag_rate(ch.load_transfer_tau, h)
    zero = jnp.zeros_like(dvx)
    last = lambda v: jnp.moveaxis(v, 0, -1)  # noqa: E731
    deriv = VehicleState(
        zero,
        zero,
        zero,
        dvx,
        dvy,
        dr,
        last(domega),
        (ax_m - state.ax) * lag,
        (ay_m - state.ay) * lag,
        last(ddx),
        last(ddy),
        d_drive,
    )
    tel = Telemetry(
        mult * last(_stack(geom.fz)),
        mult * last(o.fx),
        mult * last(o.fy),
        last(o.kappa),
        last(o.alpha),
        last(_stack([sf.grip for sf in geom.surface])),
        last(_stack(geom.steer)),
        ax_m,
        ay_m,
        last(o.range_code),
    )
    return deriv, tel
