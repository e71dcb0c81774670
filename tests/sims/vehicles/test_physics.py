"""Physics invariants of the vehicle models."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY as G
from jaxtire.tire import scale_tire, tire_forces
from sims.drivers import Constant, StraightBraking
from sims.vehicles import DOUBLE_TRACK, SINGLE_TRACK, Controls, presets
from sims.vehicles.double_track import wheel_loads
from sims.vehicles.integrators import make_step_with_telemetry
from sims.vehicles.params import astype
from tests.sims.conftest import FAST
from tests.sims.conftest import roll as rollout

MODELS = [DOUBLE_TRACK, SINGLE_TRACK]


def _speed(s):
    return float(np.hypot(s.vx, s.vy))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_coasting_without_drag_or_rolling_resistance_keeps_its_speed(no_rr_table, model):
    p = presets.get("hatchback", surfaces=no_rr_table, drag_area=0.0, surface_ids=0)
    s0 = model.init_state(p, 20.0)
    res = rollout(p, s0, Constant(), 2000, dt=0.005, model=model)  # 10 s
    assert _speed(res.final_state) == pytest.approx(20.0, rel=2e-4)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_a_car_started_at_100kmh_rolls_free_on_the_effective_rolling_radius(no_rr_table, model):
    """init_state spins each wheel at V / Re (the tire's effective rolling radius at its static load, not the
    chassis radius): the tires start at zero slip (|Fx| < 1e-3 Fz at t = 0) and the coasting car keeps its speed."""
    from jaxtire.tire import rolling_radius
    from sims.vehicles.core import rolling_radii

    p = presets.get("hatchback", surfaces=no_rr_table, drag_area=0.0, surface_ids=0)
    v = 100.0 / 3.6
    s0 = model.init_state(p, v)
    # Re by hand: the axle's static tire load (m g b / L / 2, no downforce on the hatchback) at the spin V / Re
    ch = p.chassis
    fz = float(ch.mass * G * ch.cg_to_rear / (ch.cg_to_front + ch.cg_to_rear) / 2)
    re = float(ch.wheel_radius_front)
    for _ in range(4):
        re = float(rolling_radius(p.tire_front, fz, v / re, 0.0))
    assert 0.29 < re < float(ch.wheel_radius_front)  # the tire's, not the chassis' 0.31 m
    np.testing.assert_allclose(float(s0.omega[0]), v / re, rtol=2e-6)
    # the one function the drivers use: the same radii at the spin of the start (static loads)
    np.testing.assert_allclose(
        np.asarray(rolling_radii(p, model.n_wheels, s0.omega)), v / np.asarray(s0.omega), rtol=2e-6
    )
    _, tel = make_step_with_telemetry(model, "semi_implicit_euler", 1)(p, s0, Controls(), 0.005)
    # zero slip: Fx within Kx |kappa| < 0.1 N (<< 1e-3 Fz) of the tire's own force at zero slip (its SHx, SVx
    # shifts: ~0.5 % Fz); started on the chassis radius 0.31 m the slip would be ~2 % (~1.5 kN per tire)
    assert np.all(np.abs(np.asarray(tel.kappa)) < 1e-6)
    assert np.all(np.abs(np.asarray(tel.fx)) < 1e-2 * np.asarray(tel.fz))
    res = rollout(p, s0, Constant(), 400, dt=0.005, model=model)  # 2 s
    assert _speed(res.final_state) == pytest.approx(v, rel=1e-4)


def test_rolling_resistance_decelerates_at_the_rate_the_tire_gives(no_rr_table):
    p = presets.get("hatchback", surfaces=no_rr_table, drag_area=0.0, surface_ids=1)
    ch = p.chassis
    v = 20.0
    s0 = DOUBLE_TRACK.init_state(p, v)
    # My of each tire from jaxtire at the static loads; quasi-static wheels: m_eff a = sum My / r
    fz = np.asarray(wheel_loads(p, s0))
    surf = jax.tree.map(lambda f: f[1], p.surfaces)
    my = [
        float(tire_forces(scale_tire(t, *sc), 0.0, 0.0, 0.0, float(f), v, surf).my)
        for t, sc, f in [
            (p.tire_front, ch.tire_scale_front, fz[0]),
            (p.tire_front, ch.tire_scale_front, fz[1]),
            (p.tire_rear, ch.tire_scale_rear, fz[2]),
            (p.tire_rear, ch.tire_scale_rear, fz[3]),
        ]
    ]
    r = [float(ch.wheel_radius_front)] * 2 + [float(ch.wheel_radius_rear)] * 2
    inertia = [float(ch.wheel_inertia_front)] * 2 + [float(ch.wheel_inertia_rear)] * 2
    m_eff = float(ch.mass) + sum(i / ri**2 for i, ri in zip(inertia, r, strict=True))
    a_expected = sum(m / ri for m, ri in zip(my, r, strict=True)) / m_eff
    assert a_expected < -0.05  # about 0.01 g
    res = rollout(p, s0, Constant(), 2000, dt=0.005)  # 10 s: ~1 m/s slower, My nearly constant
    a_sim = (_speed(res.final_state) - v) / 10.0
    assert a_sim == pytest.approx(a_expected, rel=0.05)


def test_load_transfer_sums_to_weight_and_moves_the_right_way(hatch):
    p = hatch
    m = float(p.chassis.mass)
    s = DOUBLE_TRACK.init_state(p, 0.0)
    for ax, ay in [(0.0, 0.0), (-8.0, 0.0), (3.0, 0.0), (0.0, 6.0), (-5.0, -4.0)]:
        fz = np.asarray(wheel_loads(p, s._replace(ax=jnp.float32(ax), ay=jnp.float32(ay))))
        assert fz.sum() == pytest.approx(m * G, rel=1e-6)
        assert (fz > 0).all()
        if ax < 0:
            assert fz[:2].sum() > m * G * float(p.chassis.cg_to_rear) / float(p.chassis.wheelbase)
        if ay > 0:  # left turn loads the right (outer) wheels
            assert fz[1] > fz[0] and fz[3] > fz[2]
    # downforce adds to the weight, nothing else
    rc = presets.get("race_car")
    s = DOUBLE_TRACK.init_state(rc, 50.0)
    fz = np.asarray(wheel_loads(rc, s))
    down = 0.5 * float(rc.chassis.air_density * rc.chassis.lift_area) * 50.0**2
    assert fz.sum() == pytest.approx(float(rc.chassis.mass) * G + down, rel=1e-5)


def test_parked_car_on_gravel_neither_creeps_nor_jitters():
    from jaxtire.surfaces import surface_id

    p = presets.get("hatchback", surface_ids=surface_id("gravel"))
    for brake in (0.0, 1.0):
        s0 = DOUBLE_TRACK.init_state(p, 0.0)
        res = rollout(p, s0, Constant(brake=brake), 2000, dt=0.005, record="state")
        tr = res.trajectory
        for f in ("x", "y", "yaw", "vx", "vy", "yaw_rate"):
            assert np.max(np.abs(np.asarray(getattr(tr, f)))) < 1e-6, f
        assert np.max(np.abs(np.asarray(tr.omega))) < 1e-6
    # a nudged car settles without oscillating: its held tires' carcass springs (transient tire) take the
    # push and return the car once, critically damped (one sign change of the speed, the return stroke;
    # the steady-slip tire, a pure slip damper, had none; an oscillation would change sign repeatedly)
    s0 = DOUBLE_TRACK.init_state(p, 0.0)._replace(vx=jnp.float32(0.05), vy=jnp.float32(0.02))
    res = rollout(p, s0, Constant(brake=1.0), 2000, dt=0.005, record="state")
    vx = np.asarray(res.trajectory.vx, np.float64)
    moving = vx[np.abs(vx) > 1e-5]
    assert np.sum(np.diff(np.sign(moving)) != 0) <= 1 and abs(float(res.final_state.vx)) < 1e-5
    assert np.max(np.abs(np.asarray(res.trajectory.x))) < 1e-3
    assert abs(float(res.final_state.vy)) < 1e-5


def test_a_wheel_stopped_by_its_brake_stays_stopped(hatch):
    # brake to a stop, then keep the pedal down with some throttle (drive torque below the brake torque)
    s0 = DOUBLE_TRACK.init_state(hatch, 15.0)
    res = rollout(hatch, s0, StraightBraking(abs_on=0.0), 800, dt=0.005)
    s1 = res.final_state
    assert abs(float(s1.vx)) < 1e-3 and np.max(np.abs(np.asarray(s1.omega))) < 1e-2
    res2 = rollout(hatch, s1, Constant(throttle=0.3, brake=1.0), 2000, dt=0.005, record="state")
    om = np.asarray(res2.trajectory.omega)
    assert np.max(np.abs(om)) < 0.01  # rad/s
    assert abs(float(res2.final_state.x - s1.x)) < 0.02  # m over 10 s


def test_stiff_kart_tires_are_stable_at_1ms_with_both_integrators_which_agree():
    # kart wheel inertia 0.02 kg m^2: its slip mode is ~1e5 1/s at standstill, ~100x beyond explicit stability
    kart = presets.get("kart")
    s0 = DOUBLE_TRACK.init_state(kart, 15.0, yaw_rate=0.01)
    x = {}
    for integ in ("semi_implicit_euler", "rk4"):
        res = rollout(kart, s0, StraightBraking(abs_on=1.0), 3000, dt=0.001, integrator=integ)
        assert all(np.isfinite(np.asarray(v)).all() for v in jax.tree.leaves(res.final_state))
        assert abs(float(res.final_state.vx)) < 0.05
        x[integ] = float(res.final_state.x)
    assert x["rk4"] == pytest.approx(x["semi_implicit_euler"], rel=0.03)


def test_substeps_converge_towards_the_small_step(hatch):
    s0 = DOUBLE_TRACK.init_state(hatch, 27.0)
    a = float(rollout(hatch, s0, StraightBraking(), 600, dt=0.005, substeps=5).final_state.x)
    b = float(rollout(hatch, s0, StraightBraking(), 3000, dt=0.001).final_state.x)
    c = float(rollout(hatch, s0, StraightBraking(), 800, dt=0.005).final_state.x)
    assert a == pytest.approx(b, rel=2e-3)
    assert c == pytest.approx(b, rel=0.03)


def test_one_step_function_gives_the_first_or_the_last_substeps_telemetry(hatch):
    """The runners' step (telemetry of the first substep) and the RL envs' (of the last) are one function: both
    return the state of ``substeps`` single steps of ``dt / substeps``, and the telemetry of that single step
    taken first or last (braking from 27 m/s with a steer: the slips change from substep to substep)."""
    s0 = DOUBLE_TRACK.init_state(hatch, 27.0)
    c = Controls(steer=0.05, throttle=0.0, brake=0.6)
    one = make_step_with_telemetry(DOUBLE_TRACK, "semi_implicit_euler", 1)
    states, tels = [s0], []
    for _ in range(4):
        s, tel = one(hatch, states[-1], c, 0.0025)
        states.append(s)
        tels.append(tel)
    for point, want in (("first", tels[0]), ("last", tels[-1])):
        s, tel = make_step_with_telemetry(DOUBLE_TRACK, "semi_implicit_euler", 4, point)(hatch, s0, c, 0.01)
        np.testing.assert_allclose(s.vx, states[-1].vx, rtol=1e-6)
        np.testing.assert_allclose(tel.kappa, want.kappa, rtol=1e-5, atol=1e-7)
    assert not np.allclose(tels[0].kappa, tels[-1].kappa, rtol=1e-3)
    with pytest.raises(ValueError, match="telemetry = 'middle'"):
        make_step_with_telemetry(DOUBLE_TRACK, "semi_implicit_euler", 4, "middle")


def test_ackermann_inner_wheel_turns_more_and_steady_circle_yaw_rate_is_v_over_r():
    from sims.run.fleet import make_fleet
    from sims.scenarios.skidpad import circle_run
    from sims.vehicles.double_track import ackermann_angles

    dl, dr = ackermann_angles(jnp.float32(0.1), 2.6, 1.5, 1.0)
    assert float(dl) > 0.1 > float(dr) > 0
    assert float(1 / np.tan(dr) - 1 / np.tan(dl)) == pytest.approx(1.5 / 2.6, rel=1e-4)
    p = presets.get("hatchback")
    pts = circle_run(
        make_fleet(p, 3), np.array([6.0, 10.0, 14.0]), radius=40.0, duration=16.0, settle=8.0, compiler_options=FAST
    )
    assert pts.holds.all()
    np.testing.assert_allclose(pts.yaw_rate, pts.speed / 40.0, rtol=0.01)


def test_gradients_flow_through_braking_rollouts_with_abs(hatch):
    # reverse mode through a rollout (the simple tire keeps the backward pass cheap to compile) ...
    from jaxtire.surfaces import surface_id

    simple = presets.get("hatchback", tire="simple", surface_ids=surface_id("asphalt_wet"))
    s0 = DOUBLE_TRACK.init_state(simple, 20.0)

    def final_x(v0, slip):
        s = s0._replace(vx=v0, omega=s0.omega * v0 / 20.0)
        return rollout(simple, s, StraightBraking(abs_on=1.0, target_slip=slip), 400, dt=0.005).final_state.x

    gv, gs = jax.jit(jax.grad(final_x, argnums=(0, 1)), compiler_options=FAST)(jnp.float32(20.0), jnp.float32(0.08))
    assert np.isfinite(float(gv)) and np.isfinite(float(gs))
    assert float(gv) > 0.5  # faster start, longer stop
    # ... forward mode through the Magic Formula car, across lock-up and standstill
    s1 = DOUBLE_TRACK.init_state(hatch, 15.0)
    f = lambda b: rollout(hatch, s1, StraightBraking(abs_on=0.0, brake=b), 800, dt=0.005).final_state.x  # noqa
    jvp = jax.jit(lambda b: jax.jvp(f, (b,), (jnp.ones_like(b),)), compiler_options=FAST)
    x, dx = jvp(jnp.float32(1.0))
    assert np.isfinite(float(x)) and np.isfinite(float(dx)) and float(dx) != 0.0
    # and through one step of a parked car (the standstill regularisation has finite derivatives)
    step = make_step_with_telemetry(DOUBLE_TRACK, "semi_implicit_euler", 1)
    park = DOUBLE_TRACK.init_state(hatch, 0.0)
    g = jax.jit(jax.grad(lambda th: step(hatch, park, Controls(0.0, th, 0.0), 0.005)[0].vx), compiler_options=FAST)(
        jnp.float32(0.2)
    )
    assert np.isfinite(float(g)) and float(g) > 0


def test_float64_matches_float32(hatch):
    s0 = DOUBLE_TRACK.init_state(hatch, 25.0, yaw_rate=0.01)
    x32 = float(rollout(hatch, s0, StraightBraking(abs_on=1.0), 800, dt=0.005).final_state.x)
    with jax.enable_x64(True):
        p64 = presets.get("hatchback", dtype=jnp.float64)
        assert p64.chassis.mass.dtype == jnp.float64 and p64.tire_front.PDX1.dtype == jnp.float64
        s64 = DOUBLE_TRACK.init_state(p64, 25.0, yaw_rate=0.01)
        fs = rollout(p64, s64, StraightBraking(abs_on=1.0), 800, dt=0.005).final_state
        assert fs.vx.dtype == jnp.float64 and fs.omega.dtype == jnp.float64
        x64 = float(fs.x)
    assert x64 == pytest.approx(x32, rel=1e-3)
    assert astype(hatch, jnp.float32).contact.surface_ids.dtype == jnp.int32


def test_open_loop_array_and_openloop_driver_agree_with_decimated_recording(hatch):
    from sims.drivers import OpenLoop

    n = 400
    brake = np.where(np.arange(n) < 200, 0.0, 0.6).astype(np.float32)
    seq = Controls(jnp.zeros(n), jnp.zeros(n), jnp.asarray(brake))
    s0 = DOUBLE_TRACK.init_state(hatch, 15.0)
    a = rollout(hatch, s0, seq, n, dt=0.005, record="state", every=10)
    b = rollout(hatch, s0, OpenLoop(seq, 0.005), n, dt=0.005, record="state", every=10)
    assert np.shape(a.trajectory.vx) == (40,)
    np.testing.assert_allclose(np.asarray(a.trajectory.vx), np.asarray(b.trajectory.vx), rtol=1e-6)
    np.testing.assert_allclose(float(a.final_state.x), float(b.final_state.x), rtol=1e-6)
    v = np.asarray(a.trajectory.vx)
    assert v[19] > 14.5 and v[-1] < v[20] - 2.0  # coasts, then brakes from step 200
