"""Transient tires in the vehicle step (issue 14 item 8, with item 4): the contact deflections as vehicle
state (:func:`sims.vehicles.core.contact_step`).  Every expected number is worked by hand here, in numpy
float64, from the tire file's coefficients: the carcass stiffness ``C = LONGITUDINAL_STIFFNESS (1 + PCFX1
dfz + PCFX2 dfz^2)``, the relaxation length ``sigma = K / C``, the static deflection ``m g sin(theta) / sum
C_i`` and the exponential solution of the lag ``sigma du/dt + |V| u = sigma V_s``."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import lookup
from jaxtire.tire import get_coefficient, linear_stiffness, tire_forces
from sims.vehicles import core, presets
from sims.vehicles import double_track as dt
from sims.vehicles.integrators import semi_implicit_euler
from sims.vehicles.params import Controls

GRADE = math.atan(0.2)  # 20 %
H = 0.005


@functools.partial(jax.jit, static_argnums=(3,))
def _run(params, state, controls, n_steps):
    """``n_steps`` default steps; returns the final state and the CG path ``x`` [m] after each step."""

    def body(s, _):
        s = dt.step(params, s, controls, H)
        return s, s.x

    return jax.lax.scan(body, state, None, length=n_steps)


def _carcass(tire, fz, which="X"):
    """``C = STIFFNESS (1 + PCF1 dfz + PCF2 dfz^2)`` [N/m] by hand (nominal pressure), numpy float64."""
    name = "LONGITUDINAL_STIFFNESS" if which == "X" else "LATERAL_STIFFNESS"
    c = {k: float(get_coefficient(tire, k)) for k in (name, f"PCF{which}1", f"PCF{which}2", "FNOMIN", "LFZO")}
    fz0 = c["FNOMIN"] * c["LFZO"]
    dfz = (np.asarray(fz, np.float64) - fz0) / fz0
    return c[name] * (1.0 + c[f"PCF{which}1"] * dfz + c[f"PCF{which}2"] * dfz**2)


def _grade_loads(p):
    """Wheel loads [N] parked on the grade, by statics: rear axle m g (cos a + sin h) / L, halves per side."""
    ch = p.chassis
    m, a, b, h = (float(v) for v in (ch.mass, ch.cg_to_front, ch.cg_to_rear, ch.cg_height))
    rear = m * GRAVITY * (math.cos(GRADE) * a + math.sin(GRADE) * h) / (a + b)
    front = m * GRAVITY * math.cos(GRADE) - rear
    return np.array([front, front, rear, rear]) / 2


@pytest.mark.parametrize("name", ["hatchback", "race_car"])
def test_braked_car_holds_on_a_20pct_grade_at_the_static_carcass_deflection(name):
    """Brakes on, 20 % grade, 10 s at 5 ms: every wheel held at exactly omega = 0, the car settles on its
    carcass springs at u = m g sin(theta) / sum_i C_i (by hand; 1.8 mm on the hatchback) within 10 % and
    moves < 1 mm (measured: 0) between t = 1 s and 10 s.  The steady-slip tire crept at 4.9 mm/s here."""
    p = presets.get(name, grade=GRADE)
    m = float(p.chassis.mass)
    u = m * GRAVITY * math.sin(GRADE) / _carcass(p.tire_front, _grade_loads(p)).sum()
    end, xs = dt.init_state(p, 0.0), []
    for _ in range(10):  # 10 x 1 s (one compiled 200-step run for the whole file)
        end, x = _run(p, end, Controls(brake=1.0), 200)
        xs.append(np.asarray(x, np.float64))
    x = np.concatenate(xs)
    np.testing.assert_array_equal(np.asarray(end.omega), 0.0)
    assert abs(x[-1] - x[199]) < 1e-3
    assert -x[-1] == pytest.approx(u, rel=0.1)  # it slid down by the deflection (started undeflected)
    assert float(jnp.mean(end.defl_x)) == pytest.approx(u, rel=0.1)
    assert abs(float(end.vx)) < 1e-4


def test_brakes_off_it_rolls_down_the_grade_at_gravity_less_rolling_resistance():
    """Brakes off, from rest: between t = 1 s and 3 s, a = (m g sin(theta) - sum_i |My_i| / R_i - drag) /
    (m + sum_i I_i / R_i^2) by hand (the rolling tire's moment My at the mean speed, the drag 1/2 rho CdA v^2)
    within 2 %."""
    p = presets.get("hatchback", grade=GRADE)
    ch = p.chassis
    m = float(ch.mass)
    R = [float(ch.wheel_radius_front)] * 2 + [float(ch.wheel_radius_rear)] * 2
    inertia = [float(ch.wheel_inertia_front)] * 2 + [float(ch.wheel_inertia_rear)] * 2
    end1, _ = _run(p, dt.init_state(p, 0.0), Controls(), 200)
    end3, _ = _run(p, _run(p, end1, Controls(), 200)[0], Controls(), 200)
    v1, v3 = -float(end1.vx), -float(end3.vx)
    fz = _grade_loads(p)
    sf = lookup(p.surfaces, 0)
    vm = 0.5 * (v1 + v3)
    my = sum(abs(float(tire_forces(p.tire_front, 0.0, 0.0, 0.0, fz[i], vm, sf).my)) / R[i] for i in range(4))
    drag = 0.5 * float(ch.air_density * ch.drag_area) * vm * vm
    a = (m * GRAVITY * math.sin(GRADE) - my - drag) / (m + sum(i / r**2 for i, r in zip(inertia, R, strict=True)))
    assert (v3 - v1) / 2.0 == pytest.approx(a, rel=0.02)


def test_a_held_car_settles_without_sustained_oscillation():
    """The low-speed damping (damping ratio 0.5 per corner): the held car's speed decays, its oscillation
    on the carcass springs (~5 Hz) is gone within 1 s (|vx| < 0.1 mm/s from t = 1 s on)."""
    p = presets.get("hatchback", grade=GRADE)

    @jax.jit
    def speeds(s):
        return jax.lax.scan(lambda s, _: (dt.step(p, s, Controls(brake=1.0), H),) * 2, s, None, length=400)[1].vx

    vx = np.abs(np.asarray(speeds(dt.init_state(p, 0.0)), np.float64))
    assert vx[:50].max() > 1e-3  # it did move while settling
    assert vx[200:].max() < 1e-4


@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_one_step_update_is_the_exponential_solution_for_constant_inputs(x64, h):
    """d' = d e + G V_s equals u(t + h) = u_ss + (u - u_ss) exp(-|V| h / sigma), u_ss = sigma V_s / |V| (float64),
    and the pure integration u + h V_s at standstill; sigma = K / C with K the slip stiffness."""
    p = presets.get("hatchback", dtype=jnp.float64)
    tire, fz = p.tire_front, 3500.0
    kx, ky = (float(k) for k in linear_stiffness(tire, fz))
    sx, sy = kx / _carcass(tire, fz, "X"), ky / _carcass(tire, fz, "Y")
    for v, vsx, vsy in ((20.0, -0.3, 0.5), (-3.0, 0.2, -0.1), (0.0, 0.01, -0.02)):
        ct = core.contact_step(tire, fz, kx, ky, 0.002, -0.004, vsx, vsy, v, h)
        for got, u0, vs, s in ((ct.dx, 0.002, vsx, sx), (ct.dy, -0.004, vsy, sy)):
            want = u0 + vs * h if v == 0 else s * vs / abs(v) + (u0 - s * vs / abs(v)) * math.exp(-abs(v) * h / s)
            assert float(got) == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert float(ct.sx) == pytest.approx(sx, rel=1e-12)


def test_at_speed_the_lag_settles_on_the_steady_slip():
    """Constant slip velocities at 15 m/s (above the damping's fade-out speed): kappa' -> -V_sx / |V| and
    tan(alpha') -> V_sy / |V| exactly (the steady-slip tire's inputs), float32 to 1e-6."""
    p = presets.get("hatchback")
    tire, fz = p.tire_front, jnp.float32(3500.0)
    kx, ky = linear_stiffness(tire, fz)

    @jax.jit
    def settle(dx, dy):
        def body(d, _):
            ct = core.contact_step(tire, fz, kx, ky, d[0], d[1], 0.6, -0.9, 15.0, H)
            return (ct.dx, ct.dy), (ct.kappa, ct.tan_alpha)

        return jax.lax.scan(body, (dx, dy), None, length=400)[1]

    kappa, tan_a = settle(jnp.float32(0.0), jnp.float32(0.0))
    assert float(kappa[-1]) == pytest.approx(0.6 / 15.0, rel=1e-5)
    assert float(tan_a[-1]) == pytest.approx(-0.9 / 15.0, rel=1e-5)
    assert float(kappa[0]) < 0.5 * 0.6 / 15.0  # and it was a lag: the first step is far from it


def test_step_steer_lateral_force_builds_with_the_relaxation_length():
    """Step steer at 20 m/s: the front-left tire's lateral force rises as F (1 - exp(-t V / sigma_y)), sigma_y
    = Ky / Cy by hand; the time constant fitted over the first three steps is sigma_y / V within 10 %
    (the chassis barely moves in 15 ms; F = the steady tire's force at the initial slip angle)."""
    p = presets.get("hatchback")
    v, steer = 20.0, 0.02
    s0 = dt.init_state(p, v)

    @jax.jit
    def fy_seq(s):
        def body(s, _):
            s, tel = semi_implicit_euler(dt.MODEL, p, s, Controls(steer=steer), H)
            return s, (tel.fy[0], tel.fz[0], tel.steer[0])

        return jax.lax.scan(body, s, None, length=3)[1]

    fy, fz, delta = (np.asarray(a, np.float64) for a in fy_seq(s0))
    tire = p.tire_front
    f_inf = float(tire_forces(tire, 0.0, math.atan(-math.tan(delta[0])), 0.0, fz[0], v, lookup(p.surfaces, 0)).fy)
    sigma = float(linear_stiffness(tire, fz[0])[1]) / _carcass(tire, fz[0], "Y")
    t = H * np.arange(1, 4)  # the force of step k acts with the deflection at its end
    tau = -(np.polyfit(t, np.log(1.0 - fy / f_inf), 1)[0] ** -1)
    assert tau == pytest.approx(sigma / v, rel=0.1)


def test_derivatives_at_standstill_on_the_grade_match_finite_differences(x64):
    """float64, braked (pedal 0.6) on the grade, nudged at 0.02 m/s: the derivatives of x(0.5 s) in the grade
    and the initial speed through the lag, the held wheels' Coulomb brake and the low-speed damping equal
    central differences (rel 1e-4).  Forward mode (one compile: the values and the tangents); the reverse
    mode through 200 steps on the grade: test_invariants.py::test_3_4_gradients_finite_...)."""
    p = presets.get("hatchback", grade=GRADE, dtype=jnp.float64)
    s0 = dt.init_state(p, 0.0)

    def final_x(args):
        grade, speed = args
        pp = p._replace(contact=p.contact._replace(grade=grade))
        s = s0._replace(vx=speed, omega=s0.omega + speed / p.chassis.wheel_radius_front)
        return _run(pp, s, Controls(brake=0.6), 100)[0].x

    jvp = jax.jit(lambda a, t: jax.jvp(final_x, (a,), (t,)))
    args = jnp.array([GRADE, 0.02])
    for i, eps in ((0, 1e-5), (1, 1e-6)):
        e = jnp.zeros(2).at[i].set(1.0)
        d = float(jvp(args, e)[1])
        fd = (float(jvp(args + eps * e, e)[0]) - float(jvp(args - eps * e, e)[0])) / (2 * eps)
        assert np.isfinite(d) and d == pytest.approx(fd, rel=1e-4)
