"""Quasi-steady-state (QSS) lap time: a point mass on a line with the car's own g-g-v envelope.

Below the scenarios (issue 35's rooms): :class:`sims.scenarios.lap.TransientLap` solves its driver's speed
profile here, in its own set-up, so a study runs a lap as any other scenario.

The method of OpenLAP and TUM's laptime-simulation (forward/backward passes on a race line), with the
envelope computed from the vehicle of :mod:`sims.vehicles` itself: the jaxtire tires at the wheel loads
(downforce, longitudinal and lateral load transfer by :func:`sims.vehicles.core.corner_loads`, the chassis'
roll-stiffness split, weight distribution and aero balance), drag, engine torque and power, brake bias and
brake torque.  Pure JAX: differentiable w.r.t. every chassis and tire parameter, ``vmap``-ped over setups
(:func:`lap_times`).

**Friction tables** (:func:`friction_tables`, once per vehicle): each axle's tire (its
:class:`~sims.vehicles.params.TireScale` applied, on the surface under the left wheel) gives its pure-slip
peak forces ``Fx_drive(Fz)``, ``Fx_brake(Fz)``, ``Fy(Fz)`` (:func:`sims.vehicles.grip.peak_force`) on a grid
of ``n_loads`` loads from 0 to ``fz_max``, read back by a C1 cubic (Catmull-Rom) interpolation.

**Capacity at a point** (:func:`ax_limits`), speed ``v``, lateral acceleration ``a_y = kappa v^2``, road grade
``theta`` and bank ``phi`` (gravity ``g_x, g_y`` by :func:`sims.vehicles.core.gravity`)::

    Fz_i            = corner_loads(v, a_x, a_y)                      (FL, FR, RL, RR)
    Fy_f = m (a_y - g_y) b / L,   Fy_r = m (a_y - g_y) a / L        (steady yaw: each axle's share)
    u_axle          = |Fy_axle| / (Fy_max(Fz_left) + Fy_max(Fz_right))     lateral utilisation
    Fx_i            = Fx_max(Fz_i) sqrt(1 - u_axle^2)                  friction ellipse per tire
    drive:  F = smin(2 smin(Fx_FL, Fx_FR) / d, 2 smin(Fx_RL, Fx_RR) / (1 - d), F_engine(v))
            F_engine = T P / (r sqrt(P^2 + (T v / Re)^2))              (the torque-power fade, core.drive_torque)
    brake:  F = smin(2 smin(Fx_FL, Fx_FR) / beta, 2 smin(Fx_RL, Fx_RR) / (1 - beta), T_b / r)
    a_x = (+-F - 1/2 rho CdA v^2) / m + g_x

(open differentials and equal brake torque left/right: the weaker tire of an axle limits it; ``d`` the
front drive share, ``beta`` the front brake bias; ``r`` the wheel radius, the arm of the drive and brake
torques, and ``Re`` the driven wheels' effective rolling radius at the static load,
:func:`sims.vehicles.core.rolling_radii`: the vehicle step turns its engine at the wheels' spin ``v / Re``,
~8 % faster than ``v / r`` for the race car, so the power-limited force is that much lower than ``P / v``).
The wheels' spin inertia ``J = sum I_i / (r_i Re_i)`` [kg] (each wheel's ``I domega/dt = I a / Re`` taken from its
torque through the arm ``r``) is mass the engine or the brake torque also accelerates: the torque limits are
divided by ``1 + J / m`` (every wheel), a driving axle's grip limit by ``1 + J_free / m`` (the undriven wheels,
whose spin-up the ground force pays); a braking axle at its grip limit brakes the car's mass alone (the brake
torque spins the wheels down).  For the race car ``J`` ~ 40 kg, 6 % of its mass.  ``a_x`` enters the loads: ``n_fixed`` fixed-point
iterations from the previous point's value.  ``smin(a, b) = -eps log(exp(-a/eps) + exp(-b/eps))`` with
``eps`` = :data:`SMOOTH` x the smaller of the two (a smooth minimum, at most ``eps ln 2`` below the minimum):
the lap time is differentiable in the brake bias and the drive split.  Rolling resistance, the yaw
inertia and the tires' aligning torques are not modelled.

**Envelopes** (``envelope=``, :data:`ENVELOPES`).  ``"ellipse"`` (the default): the point mass above, the
friction ellipse per tire and no slip angles (the exact cases of the tests: ``sqrt(mu g R)`` on a circle).
``"tire"``: the envelope of a car on its tires, from tables over the lateral utilisation ``u`` (:data:`UTILS`)
built once per vehicle by :func:`friction_tables`:

* combined slip from the tire itself: ``drive_at(u, Fz)`` the largest ``Fx`` of the MF combined-slip curves with
  ``-Fy >= u Fy_max`` (a grid of slip ratios x slip angles), over the pure drive peak; ``brake_at`` the same for
  ``-Fx``.  They replace ``sqrt(1 - u^2)``;
* slip drag: a tire making ``Fy`` at slip angle ``alpha`` dissipates ``|Fy| v tan(alpha)``; the car's drag grows
  by ``|Fy_f| alpha_f + |Fy_r| alpha_r``, ``alpha_axle`` the mean of its two tires' ``alpha_at(u, Fz)``: the slip
  angle at which the odd part of the pure-slip curve (the mean of the two sides) reaches ``u`` of its peak;
* the apex speed: the largest ``v`` at which the car both holds the corner (``u <= 1``) and keeps its speed
  (``a_x,drive >= 0``: the driven tires, with the open differential's equal split, pay the aero and slip drag);
* the mounted side (asymmetric tires: ``SHy``, ``SVy``): the table ``lateral_in`` is ``max +Fy`` (``alpha < 0``); a
  wheel whose mounted side ``s_i`` (``Chassis.tire_sides``) times the direction of the needed force
  ``sign(a_y - g_y)`` is positive reads it instead of ``lateral``.

On a 40 m skidpad the race car's own double track holds 16.32 m/s^2: the tire envelope says 15.64 (4 % low), the
ellipse 16.98 (4 % high) (``tests/sims/studies/test_laptime.py``).

**Apex speeds** ``v_lat(s)``: the largest ``v <= v_max`` with ``smax(u_f, u_r) = 1`` at ``a_x = 0`` (bisection,
``n_bisect`` steps; the value is the bisection's, its gradient the implicit function theorem's,
``dv/dp = -(dg/dp) / (dg/dv)``).  With downforce this is the fixed point of ``v^2 kappa =
a_y,max(v)``; on a flat circle with a constant-friction tire and no load transfer, ``sqrt(mu g R)``.

**Passes** on the closed line (``lax.scan``, two laps each so the start is the steady lap): forward
``v_{i+1}^2 = v_i^2 + (a_drive(v_i) + a_drive(v~_{i+1})) ds`` (Heun: second order; exact for a constant
acceleration), ``v_{i+1} <= v_lat``; backward the same with the braking limit; ``v = min(forward,
backward)``.  The time of a segment is ``2 ds / (v_i + v_{i+1})`` (exact for a constant acceleration).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.limits import OutOfRangeWarning
from jaxtire.surfaces import lookup
from jaxtire.tire import scale_tire, tire_forces
from jaxtire.validation import ValidationError, check_range
from sims.roads.circuits import Track
from sims.vehicles.core import corner_loads, drive_torque, gravity, rolling_radii
from sims.vehicles.grip import peak_force
from sims.vehicles.params import VehicleParams, fleet_axes, validate_params

#: Relative width of the smooth minimum (module docstring): at most 0.07 % below the minimum.
SMOOTH = 1e-3
#: Speed cap of the solver [m/s] (above any car's top speed; the passes find the real one).
V_MAX = 120.0
#: The envelopes of :func:`solve_lap` (module docstring): the friction ellipse of a point mass, or the tire's own.
ENVELOPES = ("ellipse", "tire")
#: Lateral utilisations [-] of the combined-slip tables (``envelope="tire"``, :func:`friction_tables`).
UTILS = np.linspace(0.0, 1.0, 11)
#: Slip-ratio and slip-angle grids [-], [rad] of the combined-slip search (from 1e-3: no exact zero of a slip,
#: where the combined-slip terms' square roots have no derivative).
_KAPPAS = np.linspace(1e-3, 0.3, 61)
_ALPHAS = np.linspace(1e-3, 0.4, 81)


class FrictionTables(NamedTuple):
    """Peak pure-slip forces [N] of the front and rear tire (axis 0) at the loads ``fz`` [N] (axis 1, uniform
    from 0): ``drive`` ``max Fx``, ``brake`` ``max -Fx``, ``lateral`` ``max -Fy``."""

    fz: Any
    drive: Any
    brake: Any
    lateral: Any
    drive_radius: Any = None  # [m] the driven wheels' effective rolling radius (engine speed v / Re), None: R
    spin_mass: Any = None  # [kg] (..., 2) front, rear axle's I / (R Re) of its two wheels (module docstring)
    # envelope "tire" (module docstring), None for the ellipse; (2, len(UTILS), K) over the utilisations
    lateral_in: Any = None  # [N] (2, K) max +Fy (alpha < 0): the other side of an asymmetric tire
    drive_at: Any = None  # [-] combined-slip max Fx with -Fy >= u Fy_max, over the pure-slip drive peak
    brake_at: Any = None  # [-] the same for -Fx (braking)
    alpha_at: Any = None  # [rad] the pure-slip slip angle at u of the odd part's peak (module docstring)


class LapResult(NamedTuple):
    """A QSS lap (arrays over the ``n`` points of the line; a leading setup axis from :func:`lap_times`):
    ``lap_time`` [s], ``s`` [m], ``v`` [m/s], ``ax`` [m/s^2] (``dv/dt = (v_{i+1}^2 - v_{i-1}^2) / (4 ds)``),
    ``ay`` [m/s^2] (``kappa v^2``), ``t`` [s] time at each point from the line's start, ``sector_times`` [s]
    (one per sector), ``v_lat`` [m/s] the apex-speed limit."""

    lap_time: Any
    s: Any
    v: Any
    ax: Any
    ay: Any
    t: Any
    sector_times: Any
    v_lat: Any


# --------------------------------------------------------------------------------------------------
# the envelope


def friction_tables(
    params: VehicleParams, n_loads: int = 24, fz_max=None, speed: float = 30.0, envelope: str = "ellipse"
) -> FrictionTables:
    """:class:`FrictionTables` of ``params`` (module docstring): ``n_loads`` loads from 0 to ``fz_max`` [N]
    (default ``m g + 1/2 rho ClA V_MAX^2``: a whole car's weight with downforce at :data:`V_MAX` on one
    tire), tires at ``speed`` [m/s]; ``envelope="tire"`` adds the combined-slip, slip-angle and mounted-side
    tables."""
    if envelope not in ENVELOPES:
        raise ValidationError(f"friction_tables: envelope = {envelope!r} must be one of {ENVELOPES}")
    ch = params.chassis
    dtype = jnp.asarray(ch.mass).dtype
    if fz_max is None:
        fz_max = ch.mass * 9.81 + 0.5 * ch.air_density * jnp.maximum(ch.lift_area, 0.0) * V_MAX**2
    frac = jnp.linspace(0.0, 1.0, n_loads, dtype=dtype)
    fz = fz_max * frac
    load = jnp.maximum(fz[1:], 1.0)  # the tire at 0 N carries 0 N (set below), no 0/0 in its equations
    ids = jnp.asarray(params.contact.surface_ids)
    tires = [scale_tire(params.tire_front, *ch.tire_scale_front), scale_tire(params.tire_rear, *ch.tire_scale_rear)]
    surfs = [lookup(params.surfaces, ids[..., 0]), lookup(params.surfaces, ids[..., 2])]
    axes = ("drive", "brake", "lateral", (0.0, -1.0, 0.0, 1.0))  # the last: +Fy at alpha < 0 (mounted side)
    n_axes = 3 if envelope == "ellipse" else 4

    def one(tire, surf):  # (n_axes, 2, K - 1): each curve's peak slip and force at the loads
        # one call per curve: a vmap over the directions gave wrong float64 peaks under XLA:CPU's
        # 512-bit vector width (--xla_cpu_prefer_vector_width=512, which sims.run._xla.tune_cpu no longer sets)
        return jnp.stack([jnp.stack(peak_force(tire, load, surf, speed, k, pure=True)) for k in axes[:n_axes]])

    # the two tires one after the other (see one(): a vmap here gave wrong float64 peaks at 512-bit vectors)
    peaks = [one(tires[0], surfs[0]), one(tires[1], surfs[1])]
    f = jnp.stack([pk[:, 1] for pk in peaks])
    f = jnp.concatenate([jnp.zeros((2, n_axes, 1), dtype), f], axis=-1)
    re = rolling_radii(params, 4)  # static loads: FL, FR, RL, RR
    d = ch.drive_split_front
    spin = jnp.stack(
        [
            2.0 * ch.wheel_inertia_front / (ch.wheel_radius_front * re[..., 0]),
            2.0 * ch.wheel_inertia_rear / (ch.wheel_radius_rear * re[..., 2]),
        ],
        axis=-1,
    )
    tab = FrictionTables(fz, f[:, 0], f[:, 1], f[:, 2], d * re[..., 0] + (1.0 - d) * re[..., 2], spin)
    if envelope == "ellipse":
        return tab
    with warnings.catch_warnings():  # loads above the tire file's FZMAX: clamped by the tire (documented), as above
        warnings.simplefilter("ignore", OutOfRangeWarning)
        comb = [_combined_tables(tires[k], surfs[k], load, speed, peaks[k]) for k in (0, 1)]  # 3 x (NU, K - 1)
    pad = lambda a, v: jnp.concatenate([jnp.full(a.shape[:-1] + (1,), v, dtype), a], axis=-1)  # noqa: E731
    drive_at, brake_at, alpha_at = (jnp.stack([pad(c[j], 1.0 if j < 2 else 0.0) for c in comb]) for j in range(3))
    return tab._replace(lateral_in=f[:, 3], drive_at=drive_at, brake_at=brake_at, alpha_at=alpha_at)


def _combined_tables(tire, surf, load, speed, peaks):
    """``(drive_at, brake_at, alpha_at)`` (each ``(len(UTILS), K - 1)``) of one tire at the ``load`` s (module
    docstring, envelope ``"tire"``); ``peaks`` ``(4, 2, K - 1)``: :func:`friction_tables`' pure-slip peaks."""
    dtype = load.dtype
    k = load.shape[-1]
    alp = jnp.asarray(_ALPHAS, dtype)
    u = jnp.asarray(UTILS, dtype)
    fy_max = peaks[2, 1]  # the combined-slip rows: -Fy >= u Fy_max, the side the table "lateral" is
    out = []
    for sign, peak in ((1.0, peaks[0, 1]), (-1.0, peaks[1, 1])):
        f = tire_forces(
            tire, sign * jnp.asarray(_KAPPAS, dtype)[:, None, None], alp[None, :, None], 0.0, load, speed, surf
        )
        fx, fy = (sign * f.fx).reshape(-1, k), -f.fy.reshape(-1, k)
        best = jnp.stack([jnp.max(jnp.where(fy >= ui * fy_max, fx, 0.0), axis=0) for ui in UTILS[1:]])
        out.append(jnp.clip(jnp.concatenate([peak[None], best]) / jnp.maximum(peak, 1e-6), 0.0, 1.0))
    # the odd part of the pure-slip curve (the mean of the two sides: an asymmetric tire's offsets SHy, SVy
    # cancel between the left and the right wheel), through the origin, made monotone up to its peak
    pure = lambda a: tire_forces(tire, 0.0, a[:, None], 0.0, load, speed, surf, combined=False).fy  # noqa: E731
    odd = jax.lax.cummax(0.5 * (pure(-alp) - pure(alp)), axis=0)
    odd = jnp.concatenate([jnp.zeros((1, k), dtype), odd])
    alp0 = jnp.concatenate([jnp.zeros((1,), dtype), alp])
    inv = jax.vmap(lambda col: jnp.interp(u * col[-1], col, alp0), in_axes=1, out_axes=1)
    out.append(jnp.minimum(inv(odd), peaks[2, 0]))  # at most the peak's own slip angle
    return out


def _interp(table, fz_grid, fz):
    """Catmull-Rom (C1 cubic) interpolation of ``table`` (..., K) on the uniform ``fz_grid`` at ``fz``; linear
    extrapolation beyond the last load (end slope), 0 at and below 0 N.  Leading axes of ``table`` lead the
    result."""
    k = table.shape[-1]
    h = fz_grid[1] - fz_grid[0]
    u = jnp.clip(fz, 0.0, None) / h
    i = jnp.clip(jnp.floor(u).astype(jnp.int32), 0, k - 2)
    w = u - i
    lo, hi = 2 * table[..., :1] - table[..., 1:2], 2 * table[..., -1:] - table[..., -2:-1]
    ext = jnp.concatenate([lo, table, hi], axis=-1)  # (..., K + 2)
    p0, p1, p2, p3 = ext[..., i], ext[..., i + 1], ext[..., i + 2], ext[..., i + 3]
    m1, m2 = 0.5 * (p2 - p0), 0.5 * (p3 - p1)
    w2, w3 = w * w, w * w * w
    return (2 * w3 - 3 * w2 + 1) * p1 + (w3 - 2 * w2 + w) * m1 + (-2 * w3 + 3 * w2) * p2 + (w3 - w2) * m2


def _interp_u(table, fz_grid, u, fz):
    """A ``(len(UTILS), K)`` table at utilisation ``u`` (linear, clipped to [0, 1]) and load ``fz`` (Catmull-Rom)."""
    rows = _interp(table, fz_grid, fz)  # (NU,) + shape
    x = jnp.clip(u, 0.0, 1.0) * (len(UTILS) - 1)
    hat = jnp.arange(len(UTILS), dtype=rows.dtype).reshape((-1,) + (1,) * jnp.ndim(x))
    return jnp.sum(jnp.clip(1.0 - jnp.abs(x - hat), 0.0, None) * rows, axis=0)


def smin(a, b, rel=SMOOTH):
    """Smooth minimum ``-eps log(exp(-a/eps) + exp(-b/eps))``, ``eps = rel min(|a|, |b|)`` (module docstring)."""
    eps = rel * jnp.minimum(jnp.abs(a), jnp.abs(b)) + 1e-9
    lo = jnp.minimum(a, b)
    return lo - eps * jnp.log1p(jnp.exp(-jnp.abs(a - b) / eps))


def _safe_ratio(num, den, big=1e9):
    ok = den > 1e-6
    return jnp.where(ok, num / jnp.where(ok, den, 1.0), big)


def _axle_terms(params: VehicleParams, tab: FrictionTables, v, ax, ay, grade, bank):
    """``(the road's gravity (g_x, g_y, g_n), loads, (u_f, u_r) the axles' lateral utilisations, (Fy_f, Fy_r)
    their needed lateral forces)`` (module docstring)."""
    ch = params.chassis
    road = params.contact._replace(grade=grade, bank=bank)
    fz = corner_loads(ch, road, v, ax, ay)
    g = gravity(road)
    gy = g[1]
    L = ch.cg_to_front + ch.cg_to_rear
    fy_need = ch.mass * (ay - gy)
    fy = [_interp(tab.lateral[_AXLE[i]], tab.fz, fz[i]) for i in range(4)]
    if tab.lateral_in is not None:  # the mounted side of an asymmetric tire (module docstring)
        sides = jnp.asarray(ch.tire_sides, fy[0].dtype)
        toward = jnp.where(fy_need >= 0, 1.0, -1.0)
        inner = [_interp(tab.lateral_in[_AXLE[i]], tab.fz, fz[i]) for i in range(4)]
        fy = [jnp.where(toward * sides[..., i] > 0, inner[i], fy[i]) for i in range(4)]
    need_f, need_r = jnp.abs(fy_need) * ch.cg_to_rear / L, jnp.abs(fy_need) * ch.cg_to_front / L
    u_f = need_f / jnp.maximum(fy[0] + fy[1], 1e-6)
    u_r = need_r / jnp.maximum(fy[2] + fy[3], 1e-6)
    return g, fz, (u_f, u_r), (need_f, need_r)


#: The axle (0 front, 1 rear) of each wheel FL, FR, RL, RR.
_AXLE = (0, 0, 1, 1)


def _ellipse(u):
    return jnp.sqrt(jnp.clip(1.0 - u * u, 1e-9, None))


def _long_accel(params: VehicleParams, tab: FrictionTables, v, ax, ay, grade, bank, brake):
    """One fixed-point update of the longitudinal limit; ``brake`` a bool (array: traced, both formulas)."""
    ch = params.chassis
    g, fz, util, need = _axle_terms(params, tab, v, ax, ay, grade, bank)
    table = jnp.where(brake, tab.brake, tab.drive)
    cap = [_interp(table[_AXLE[i]], tab.fz, fz[i]) for i in range(4)]
    drag = 0.5 * ch.air_density * ch.drag_area * v * v
    if tab.drive_at is None:  # the friction ellipse, no slip angles
        cap = [cap[i] * _ellipse(util[_AXLE[i]]) for i in range(4)]
    else:  # the tire's combined-slip capacity and the slip drag |Fy| alpha (module docstring)
        comb = jnp.where(brake, tab.brake_at, tab.drive_at)
        cap = [cap[i] * _interp_u(comb[_AXLE[i]], tab.fz, util[_AXLE[i]], fz[i]) for i in range(4)]
        alpha = [_interp_u(tab.alpha_at[_AXLE[i]], tab.fz, util[_AXLE[i]], fz[i]) for i in range(4)]
        drag = drag + 0.5 * (need[0] * (alpha[0] + alpha[1]) + need[1] * (alpha[2] + alpha[3]))
    front = 2.0 * smin(cap[0], cap[1])
    rear = 2.0 * smin(cap[2], cap[3])
    gx = g[0]
    share = jnp.where(brake, ch.brake_bias_front, ch.drive_split_front)
    r = share * ch.wheel_radius_front + (1.0 - share) * ch.wheel_radius_rear
    re = r if tab.drive_radius is None else tab.drive_radius
    limit = jnp.where(brake, ch.max_brake_torque / r, drive_torque(ch, 1.0, v / re) / r)
    grip = smin(_safe_ratio(front, share), _safe_ratio(rear, 1.0 - share))
    if tab.spin_mass is not None:  # the wheels' spin inertia (module docstring)
        j_f, j_r = tab.spin_mass[..., 0], tab.spin_mass[..., 1]
        d = ch.drive_split_front
        j_free = jnp.where(brake, 0.0, (1.0 - d) * j_f + d * j_r)
        grip = grip * ch.mass / (ch.mass + j_free)
        limit = limit * ch.mass / (ch.mass + j_f + j_r)
    force = smin(grip, limit)
    return jnp.where(brake, -force, force) / ch.mass - drag / ch.mass + gx


def ax_limit(params: VehicleParams, tab: FrictionTables, v, ay, grade=0.0, bank=0.0, ax0=0.0, n_fixed=3, brake=False):
    """The largest (``brake=False``) or the smallest (``True``) longitudinal acceleration [m/s^2] at speed
    ``v`` [m/s] with lateral acceleration ``ay`` [m/s^2] (module docstring): the ``n_fixed``-th fixed-point
    iterate of the load transfer from ``ax0``."""
    ax = jnp.asarray(ax0, jnp.asarray(v).dtype) + jnp.zeros_like(v)
    body = lambda _, ax: _long_accel(params, tab, v, ax, ay, grade, bank, brake)  # noqa: E731
    return jax.lax.fori_loop(0, n_fixed, body, ax)


def ax_limits(params: VehicleParams, tab: FrictionTables, v, ay, grade=0.0, bank=0.0, n_fixed: int = 4):
    """``(ax_drive, ax_brake)`` [m/s^2] (:func:`ax_limit` from ``ax0 = 0``): the g-g-v envelope at ``v``, ``ay``."""
    return tuple(ax_limit(params, tab, v, ay, grade, bank, 0.0, n_fixed, b) for b in (False, True))


def _lat_excess(params, tab, v, kappa, grade, bank):
    ay = kappa * v * v
    _, _, (u_f, u_r), _ = _axle_terms(params, tab, v, 0.0, ay, grade, bank)
    excess = -smin(-u_f, -u_r) - 1.0  # smooth max of the utilisations, minus 1
    if tab.drive_at is not None:  # the tire envelope: the speed must also be held (drive >= drag + slip drag)
        excess = jnp.maximum(excess, -_long_accel(params, tab, v, 0.0, ay, grade, bank, False) / GRAVITY)
    return excess


def apex_speed(params: VehicleParams, tab: FrictionTables, kappa, grade=0.0, bank=0.0, v_max=V_MAX, n_bisect=40):
    """Apex speed [m/s] at curvature(s) ``kappa`` [1/m] (module docstring): ``v_max`` where the lateral grip
    never runs out below it."""
    dtype = jnp.asarray(kappa).dtype
    g = lambda v: _lat_excess(params, tab, v, kappa, grade, bank)  # noqa: E731
    lo = jnp.zeros_like(kappa)
    hi = jnp.full_like(kappa, v_max)

    def body(_, lh):
        lo, hi = lh
        mid = 0.5 * (lo + hi)
        over = jax.lax.stop_gradient(g(mid)) > 0
        return jnp.where(over, lo, mid), jnp.where(over, mid, hi)

    lo, hi = jax.lax.fori_loop(0, n_bisect, body, (lo, hi))
    vb = jax.lax.stop_gradient(0.5 * (lo + hi))
    val, slope = jax.jvp(g, (vb,), (jnp.ones_like(vb),))
    slope = jax.lax.stop_gradient(jnp.where(slope > 1e-9, slope, 1.0))
    # value vb (the bisection's, never moved out of its bracket by a poor slope), gradient -dg/dp / dg/dv
    # (the implicit function theorem)
    root = vb - (val - jax.lax.stop_gradient(val)) / slope
    capped = jax.lax.stop_gradient(g(jnp.full_like(vb, v_max))) <= 0
    return jnp.where(capped, jnp.asarray(v_max, dtype) + 0.0 * val, root)


# --------------------------------------------------------------------------------------------------
# the solver


def _line_arrays(line: Track):
    n = int(np.shape(line.s)[-1])
    kappa = jnp.asarray(line.curvature)
    z = jnp.zeros_like(kappa) if line.elevation is None else jnp.asarray(line.elevation)
    bank = jnp.zeros_like(kappa) if line.banking is None else jnp.asarray(line.banking)
    grade = jnp.arctan((jnp.roll(z, -1) - jnp.roll(z, 1)) / (2.0 * line.ds))
    return n, kappa, grade, bank


def _passes(params, tab, kappa, grade, bank, v_lat, ds, n_fixed: int):
    """The forward (driving) and backward (braking, on the reversed line) Heun passes over two laps each,
    in one scan with the two passes on a leading axis of 2; returns ``(v_forward, v_backward)``."""
    n = kappa.shape[0]
    rev = lambda a: jnp.stack([a, jnp.flip(a)])  # noqa: E731  (2, n): forward, reversed
    kap, gr, bk, vl = rev(kappa), rev(grade), rev(bank), rev(v_lat)
    brake = jnp.asarray([False, True])
    sign = jnp.asarray([1.0, -1.0], kappa.dtype)  # backwards, the speed grows by the deceleration
    idx = jnp.concatenate([jnp.arange(n), jnp.arange(n)])
    nxt = jnp.mod(idx + 1, n)

    one = lambda v, k, g, b, a0, br: ax_limit(params, tab, v, k * v * v, g, b, a0, n_fixed, br)  # noqa: E731

    def accel(v, i, ax0):  # (2,) speeds at point i of each pass -> (2,) accelerations, one trace for both
        return jax.vmap(one)(v, kap[:, i], gr[:, i], bk[:, i], ax0, brake)

    def step(carry, ij):
        v, ax_prev = carry
        i, j = ij
        a0 = accel(v, i, ax_prev)
        v_pred = jnp.minimum(jnp.sqrt(jnp.clip(v * v + 2.0 * sign * a0 * ds, 1e-6, None)), vl[:, j])
        a1 = accel(v_pred, j, a0)
        v_new = jnp.minimum(jnp.sqrt(jnp.clip(v * v + sign * (a0 + a1) * ds, 1e-6, None)), vl[:, j])
        return (v_new, a1), v_new

    (_, _), vs = jax.lax.scan(step, (vl[:, 0], jnp.zeros_like(vl[:, 0])), (idx, nxt))
    v = jnp.roll(vs[n:], 1, axis=0)  # vs[k] is the speed at point k + 1 of the second lap; (n, 2)
    return v[:, 0], jnp.flip(v[:, 1])


def solve_lap(
    params: VehicleParams,
    line: Track,
    *,
    sectors=3,
    n_loads: int = 24,
    n_fixed: int = 2,
    v_max: float = V_MAX,
    tables: FrictionTables | None = None,
    envelope: str = "ellipse",
) -> LapResult:
    """The QSS lap (module docstring) of one vehicle ``params`` on the closed ``line`` (a
    :class:`~sims.roads.circuits.Track`: its curvature, spacing ``ds``, elevation and banking).  ``sectors``:
    a number of equal sectors or the arc lengths [m] of the sector ends (the last the line's length).
    Traceable; :func:`lap_times` vmaps it over setups."""
    n, kappa, grade, bank = _line_arrays(line)
    ds = jnp.asarray(line.ds)
    tab = friction_tables(params, n_loads, envelope=envelope) if tables is None else tables
    v_lat = apex_speed(params, tab, kappa, grade, bank, v_max)
    v_f, v_b = _passes(params, tab, kappa, grade, bank, v_lat, ds, n_fixed)
    v = jnp.minimum(v_f, v_b)
    v_next = jnp.roll(v, -1)
    dt = 2.0 * ds / (v + v_next)
    t = jnp.concatenate([jnp.zeros((1,), dt.dtype), jnp.cumsum(dt)[:-1]])
    lap = jnp.sum(dt)
    s = jnp.asarray(line.s)
    ax = (v_next**2 - jnp.roll(v, 1) ** 2) / (4.0 * ds)
    ay = kappa * v * v
    bounds = _sector_ends(sectors, line)
    t_ends = jnp.interp(bounds, jnp.concatenate([s, s[-1:] + ds]), jnp.concatenate([t, lap[None]]))
    sector_times = jnp.diff(jnp.concatenate([jnp.zeros((1,), t_ends.dtype), t_ends]))
    return LapResult(lap, s, v, ax, ay, t, sector_times, v_lat)


def _sector_ends(sectors, line: Track):
    length = jnp.asarray(line.length)
    if np.ndim(sectors) == 0:
        k = int(sectors)
        if k < 1:
            raise ValidationError(f"solve_lap: sectors = {sectors} must be >= 1")
        return length * jnp.arange(1, k + 1, dtype=length.dtype) / k
    return jnp.asarray(sectors, length.dtype)


def check_line(line: Track, source: str = "solve_lap") -> None:
    """Raise :class:`~jaxtire.validation.ValidationError` unless ``line`` is a concrete closed line with at
    least 8 points and a positive spacing."""
    if not isinstance(line, Track):
        raise ValidationError(f"{source}: line must be a sims.roads.circuits.Track, got {type(line).__name__}")
    check_range("ds", line.ds, 0.0, 100.0, False, True, source=source)
    if int(np.shape(line.s)[-1]) < 8:
        raise ValidationError(f"{source}: the line has {np.shape(line.s)[-1]} points; at least 8 are needed")


def lap_times(params: VehicleParams, line: Track, *, compiler_options=None, **solve_kw) -> LapResult:
    """:func:`solve_lap` for a fleet of setups (chassis leaves batched on axis 0, tires shared:
    :func:`sims.vehicles.params.fleet_axes`), in one compiled ``vmap``; validates ``params`` and ``line``
    first.  ``solve_kw``: :func:`solve_lap`'s keywords (``sectors``, ``n_loads``, ``n_fixed``, ``v_max``; its
    defaults; ``TypeError`` for others).  ``compiler_options``: XLA options of the compile (e.g.
    :func:`sims.run.spec.fast_compile_options`)."""
    validate_params(params, source="lap_times")
    check_line(line, "lap_times")
    if "tables" in solve_kw:
        raise TypeError("lap_times() computes each setup's friction tables; tables= is solve_lap's keyword only")
    bound = inspect.signature(solve_lap).bind(params, line, **solve_kw)
    bound.apply_defaults()
    a = bound.arguments
    ends = _sector_ends(a["sectors"], line)
    if a["envelope"] not in ENVELOPES:
        raise ValidationError(f"lap_times: envelope = {a['envelope']!r} must be one of {ENVELOPES}")
    key = (int(a["n_loads"]), int(a["n_fixed"]), float(a["v_max"]), str(a["envelope"]))
    fn = _jitted_fleet(*key, tuple(sorted((compiler_options or {}).items())))
    return fn(params, line, ends)


def fleet_laps(params: VehicleParams, line: Track, **solve_kw) -> LapResult:
    """:func:`solve_lap` (``solve_kw`` its keywords) ``vmap``-ped over a fleet's setups (chassis leaves batched on
    axis 0, tires shared: :func:`sims.vehicles.params.fleet_axes`): traceable, no checks (:func:`lap_times`
    checks and compiles it; :func:`sims.scenarios.lap.qss_profile` calls it inside a scenario's set-up)."""
    return jax.vmap(lambda p: solve_lap(p, line, **solve_kw), in_axes=(fleet_axes(params),))(params)


@functools.cache
def _jitted_fleet(n_loads: int, n_fixed: int, v_max: float, envelope: str, options: tuple):
    def run(params, line, ends):
        kw = dict(sectors=ends, n_loads=n_loads, n_fixed=n_fixed, v_max=v_max, envelope=envelope)
        return fleet_laps(params, line, **kw)

    return jax.jit(run, compiler_options=dict(options) or None)


def at_grip(params: VehicleParams, grip) -> VehicleParams:
    """``params`` with both axles' tire friction (``mu_x``, ``mu_y``) times ``grip`` [-] (per vehicle or one)."""
    ch = params.chassis
    fr, rr = ch.tire_scale_front.with_friction(grip), ch.tire_scale_rear.with_friction(grip)
    return params._replace(chassis=ch._replace(tire_scale_front=fr, tire_scale_rear=rr))
