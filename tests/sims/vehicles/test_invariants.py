"""Vehicle-physics invariants of issue 14 (each test names the invariant and its number)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.tir import default_tire
from sims.vehicles import double_track as dt
from sims.vehicles import presets
from sims.vehicles.params import Controls, make_chassis
from tests.conftest import tol
from tests.sims.conftest import FAST


@functools.partial(jax.jit, static_argnums=(2,))
def _coast(params, state, n_steps=2000, dt_s=0.005):
    def body(s, _):
        return dt.step(params, s, Controls(), dt_s), None

    return jax.lax.scan(body, state, None, length=n_steps)[0]


@pytest.mark.parametrize("name", ["hatchback", "race_car"])
def test_1_straight_running_drift_below_10cm_over_10s_at_100kmh_with_the_real_tir(name):
    """Invariant 1: wheels straight, 100 km/h, the bundled (asymmetric: conicity, ply steer) TNO .tir on
    all four wheels mounted left +1 / right -1: the car drifts < 0.1 m sideways in 10 s.  With every
    tire evaluated as measured (sides 0) the same car drifts metres (the test can fail)."""
    p = presets.get(name, tire=default_tire())
    np.testing.assert_array_equal(np.asarray(p.chassis.tire_sides), [1.0, -1.0, 1.0, -1.0])
    s0 = dt.init_state(p, 100.0 / 3.6)
    end = _coast(p, s0)
    assert abs(float(end.y)) < 0.1, float(end.y)
    assert abs(float(end.yaw)) < 1e-3
    unmirrored = p._replace(chassis=p.chassis._replace(tire_sides=jnp.zeros(4)))
    assert abs(float(_coast(unmirrored, s0).y)) > 1.0


def test_1_tire_sides_are_validated_and_overridable():
    ch = make_chassis(tire_sides=(1, 1, -1, -1))
    np.testing.assert_array_equal(np.asarray(ch.tire_sides), [1, 1, -1, -1])
    with pytest.raises(ValueError, match="tire_sides"):
        make_chassis(tire_sides=(1, -1, 0.5, -1))
    with pytest.raises(ValueError, match="tire_sides"):
        make_chassis(tire_sides=(1, -1))


def test_1_simple_tire_has_no_side_option_and_still_runs():
    p = presets.get("hatchback", tire="simple")
    end = _coast(p, dt.init_state(p, 100.0 / 3.6), 20)
    assert np.isfinite(float(end.vx)) and abs(float(end.y)) < 1e-6


# ---- 2: vertical loads that add up ---------------------------------------------------------------
from jaxtire.constants import GRAVITY  # noqa: E402
from sims.vehicles.double_track import wheel_loads  # noqa: E402
from sims.vehicles.integrators import semi_implicit_euler  # noqa: E402


def _weight(p, vx):
    ch = p.chassis
    return float(ch.mass) * GRAVITY + 0.5 * float(ch.air_density * ch.lift_area) * vx * vx


def test_2_wheel_loads_sum_to_weight_plus_downforce_through_lift_and_two_wheel_tipping(dtype):
    """Invariant 2 (statics by hand): high-CG race car (downforce), 40 m/s, accelerations over a grid
    incl. wheel lift, a tripod and two-wheel running: loads >= 0, sum = m g + F_down within 0.1 %, and
    the roll moment t/2 (right - left) equals m a_y h while it is within the two-wheel capacity."""
    p = presets.get("race_car", cg_height=1.2, dtype=dtype)
    ch = p.chassis
    s = dt.init_state(p, 40.0)
    rel = tol(dtype, 1e-3, 1e-10)
    W = _weight(p, 40.0)
    tf, tr, m, h = (float(v) for v in (ch.track_front, ch.track_rear, ch.mass, ch.cg_height))
    lifted = tipped = 0
    for ax in (-9.0, 0.0, 4.0):
        for ay in np.linspace(-14.0, 14.0, 15):
            fz = wheel_loads(p, s._replace(ax=jnp.asarray(ax, dtype), ay=jnp.asarray(ay, dtype)))
            assert fz.dtype == dtype
            fz = np.asarray(fz, np.float64)
            assert (fz >= 0).all()
            assert fz.sum() == pytest.approx(W, rel=rel)
            roll = 0.5 * tf * (fz[1] - fz[0]) + 0.5 * tr * (fz[3] - fz[2])
            cap = 0.5 * (tf * (fz[0] + fz[1]) + tr * (fz[2] + fz[3]))
            assert roll == pytest.approx(np.clip(m * ay * h, -cap, cap), rel=rel, abs=W * tol(dtype, 1e-4, 1e-10))
            lifted += int((fz < 1e-3 * W).any())
            tipped += int((fz < 1e-3 * W).sum() == 2)
    assert lifted > 3 and tipped > 1  # the grid reaches lift and two-wheel running


def test_2_load_sum_holds_every_step_of_a_hard_cornering_rollout_with_wheel_lift():
    p = presets.get("hatchback", cg_height=1.0, roll_stiffness_front=0.8)
    s0 = dt.init_state(p, 25.0)

    def body(s, _):
        s, tel = semi_implicit_euler(dt.MODEL, p, s, Controls(steer=0.15), 0.005)
        return s, (tel.fz, s.vx)

    _, (fz, vx) = jax.jit(lambda s: jax.lax.scan(body, s, None, length=400))(s0)
    fz = np.asarray(fz, np.float64)
    np.testing.assert_allclose(fz.sum(-1), float(p.chassis.mass) * GRAVITY, rtol=1e-3)
    assert (fz.min(-1) < 1.0).any()  # an inner wheel lifted during the manoeuvre


def test_2_gradients_finite_through_wheel_lift():
    p = presets.get("hatchback", cg_height=1.2)
    s = dt.init_state(p, 20.0)
    for ay in (3.0, 8.0, 12.0, 30.0):
        g = jax.grad(lambda a: jnp.sum(wheel_loads(p, s._replace(ay=a)) ** 2))(jnp.float32(ay))
        assert np.isfinite(float(g))


# ---- 3 / 4: standstill and road grade / bank -------------------------------------------------------
import math  # noqa: E402

from jaxtire.slip import V_REG  # noqa: E402
from jaxtire.tire import linear_stiffness  # noqa: E402
from sims.vehicles.core import gravity  # noqa: E402

GRADE = math.atan(0.2)  # 20 %


@functools.partial(jax.jit, static_argnums=(3,))
def _run(params, state, controls, n_steps):
    def body(s, _):
        return dt.step(params, s, controls, 0.005), None

    return jax.lax.scan(body, state, None, length=n_steps)[0]


def test_3_stopped_car_on_a_flat_road_stays_within_1mm_over_10s():
    p = presets.get("hatchback")
    end = _run(p, dt.init_state(p, 0.0), Controls(), 2000)
    assert abs(float(end.x)) < 1e-3 and abs(float(end.y)) < 1e-3


@pytest.mark.parametrize("name", ["hatchback", "kart"])
def test_4_a_car_nudged_to_5cm_per_s_stops_within_5cm_at_its_rolling_resistance_deceleration(name):
    """Invariant 4: nudged to 0.05 m/s on a flat road (no drag at that speed), the wheels' Coulomb
    rolling-resistance torque T_i = |My_i| of the rolling tire stops the car in v^2 / (2 a), by hand
    a = sum_i T_i / R_i / (m + sum_i I_i / R_i^2) (the tire's My at 1 m/s, its fade speed; before: a
    viscous fade, 0.55 m and still rolling)."""
    from jaxtire.surfaces import lookup
    from jaxtire.tire import tire_forces

    p = presets.get(name)
    ch = p.chassis
    fz = np.asarray(wheel_loads(p, dt.init_state(p, 0.0)), np.float64)
    sf = lookup(p.surfaces, 0)
    R = [float(ch.wheel_radius_front)] * 2 + [float(ch.wheel_radius_rear)] * 2
    inertia = [float(ch.wheel_inertia_front)] * 2 + [float(ch.wheel_inertia_rear)] * 2
    my = [
        abs(float(tire_forces(p.tire_front if i < 2 else p.tire_rear, 0.0, 0.0, 0.0, fz[i], 1.0, sf).my))
        for i in range(4)
    ]
    a = sum(my[i] / R[i] for i in range(4)) / (float(ch.mass) + sum(inertia[i] / R[i] ** 2 for i in range(4)))
    end = _run(p, dt.init_state(p, 0.05), Controls(), 400)
    assert abs(float(end.vx)) < 1e-6
    assert float(end.x) == pytest.approx(0.05**2 / (2 * a), rel=0.05)
    assert float(end.x) < 0.05


def test_4_gravity_components_and_parked_uphill_load_transfer_by_hand(dtype):
    """Grade theta, bank phi: body-frame gravity (-g sin theta, -g cos theta sin phi, g cos theta cos phi);
    parked uphill the rear axle carries m g (cos theta a + sin theta h) / L; on a bank the low (right)
    side carries m g (cos phi t/2 + sin phi h) / t; loads sum to m g_n."""
    p = presets.get("hatchback", grade=GRADE, bank=0.1, dtype=dtype)
    ch = p.chassis
    assert gravity(p.contact)[0].dtype == dtype
    gx, gy, gn = (float(v) for v in gravity(p.contact))
    g = GRAVITY
    r5, r4 = tol(dtype, 1e-5, 1e-13), tol(dtype, 1e-4, 1e-12)
    assert gx == pytest.approx(-g * math.sin(GRADE), rel=r5)
    assert gy == pytest.approx(-g * math.cos(GRADE) * math.sin(0.1), rel=r5)
    assert gn == pytest.approx(g * math.cos(GRADE) * math.cos(0.1), rel=r5)
    m, a, b, h = (float(v) for v in (ch.mass, ch.cg_to_front, ch.cg_to_rear, ch.cg_height))
    pu = presets.get("hatchback", grade=GRADE, dtype=dtype)
    fz = np.asarray(wheel_loads(pu, dt.init_state(pu, 0.0)), np.float64)
    assert fz[2:].sum() == pytest.approx(m * g * (math.cos(GRADE) * a + math.sin(GRADE) * h) / (a + b), rel=r4)
    assert fz.sum() == pytest.approx(m * g * math.cos(GRADE), rel=r4)
    pb = presets.get("hatchback", bank=0.1, roll_stiffness_front=0.5, track_rear=1.55, dtype=dtype)
    fz = np.asarray(wheel_loads(pb, dt.init_state(pb, 0.0)), np.float64)
    t = float(pb.chassis.track_front)
    assert fz[[1, 3]].sum() == pytest.approx(m * g * (math.cos(0.1) * 0.5 + math.sin(0.1) * h / t), rel=r4)


def test_3_4_on_a_20pct_grade_the_car_rolls_down_with_brakes_off_at_the_gravity_rate():
    """Brakes off, 3 s from rest: v = a t with a <= g sin(theta) m / (m + sum I_w / r^2) (rolling
    resistance and drag only subtract, ~ 0.01 g)."""
    p = presets.get("hatchback", grade=GRADE)
    ch = p.chassis
    m = float(ch.mass)
    m_eff = (
        m
        + 2 * float(ch.wheel_inertia_front) / float(ch.wheel_radius_front) ** 2
        + 2 * float(ch.wheel_inertia_rear) / float(ch.wheel_radius_rear) ** 2
    )
    a_max = GRAVITY * math.sin(GRADE) * m / m_eff
    end = _run(p, dt.init_state(p, 0.0), Controls(), 600)
    v = -float(end.vx)
    assert 0.93 * a_max * 3.0 < v < a_max * 3.0


def test_3_4_on_a_20pct_grade_braked_wheels_are_held_exactly_and_the_car_does_not_creep():
    """Brakes on: the implicit Coulomb brake holds every wheel at exactly omega = 0 and the transient tire's
    carcass springs hold the car (static deflection by hand: test_transient_tires.py).  The steady-slip tire was a
    slip damper at standstill (kappa = -u / V_REG): the car crept at u = -m g sin(theta) V_REG / sum_i Kx_i,
    4.9 mm/s here (by hand); now it moves < 1 mm from t = 1 s to 10 s."""
    p = presets.get("hatchback", grade=GRADE)
    ch = p.chassis
    s0 = dt.init_state(p, 0.0)
    fz = wheel_loads(p, s0)
    kx = sum(float(linear_stiffness(p.tire_front if i < 2 else p.tire_rear, fz[i])[0]) for i in range(4))
    creep = float(ch.mass) * GRAVITY * math.sin(GRADE) * V_REG / kx
    assert creep > 4e-3  # what the steady-slip tire did: 4 cm in the 9 s below
    s1 = _run(p, s0, Controls(brake=1.0), 200)
    end = _run(p, s1, Controls(brake=1.0), 1800)
    assert abs(float(end.x) - float(s1.x)) < 1e-3
    assert abs(float(end.vx)) < 1e-6
    np.testing.assert_array_equal(np.asarray(end.omega), 0.0)


def test_3_4_gradients_finite_at_standstill_and_on_a_grade():
    p = presets.get("hatchback", grade=GRADE)
    s0 = dt.init_state(p, 0.0)

    def loss(brake, grade):
        pp = p._replace(contact=p.contact._replace(grade=grade))
        return _run(pp, s0, Controls(brake=brake), 200).x

    g = jax.jit(jax.grad(loss, argnums=(0, 1)), compiler_options=FAST)(jnp.float32(1.0), jnp.float32(GRADE))
    assert all(np.isfinite(float(v)) for v in g)
    flat = presets.get("hatchback")
    g0 = jax.jit(jax.grad(lambda b: _run(flat, dt.init_state(flat, 0.0), Controls(brake=b), 200).x), compiler_options=FAST)(0.0)
    assert np.isfinite(float(g0))


# ---- kinetic energy while coasting -----------------------------------------------------------------
@pytest.mark.parametrize("vy, r", [(0.0, 0.0), (2.0, 0.3), (-4.0, -0.8)])
def test_kinetic_energy_never_rises_while_coasting_on_tire_forces_alone(vy, r):
    """No throttle, no brake, no aero drag, flat road, straight wheels: tires only dissipate, so
    T = 1/2 m (vx^2 + vy^2) + 1/2 Iz r^2 + sum 1/2 I_w omega^2 is non-increasing at every step
    (float32 rounding allowance 1e-6 relative)."""
    p = presets.get("hatchback", drag_area=0.0)
    ch = p.chassis
    iw = jnp.stack([ch.wheel_inertia_front, ch.wheel_inertia_front, ch.wheel_inertia_rear, ch.wheel_inertia_rear])
    s0 = dt.init_state(p, 20.0, vy=vy, yaw_rate=r)

    def energy(s):
        return (
            0.5 * ch.mass * (s.vx**2 + s.vy**2) + 0.5 * ch.yaw_inertia * s.yaw_rate**2 + 0.5 * jnp.sum(iw * s.omega**2)
        )

    def body(s, _):
        s = dt.step(p, s, Controls(), 0.005)
        return s, energy(s)

    _, e = jax.jit(lambda s: jax.lax.scan(body, s, None, length=600))(s0)
    e = np.concatenate([[float(energy(s0))], np.asarray(e, np.float64)])
    rise = np.diff(e) / e[:-1]
    assert rise.max() <= 1e-6, (rise.max(), int(rise.argmax()))
    assert e[-1] < e[0]
