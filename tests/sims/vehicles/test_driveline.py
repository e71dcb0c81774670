"""Drivelines (sims.vehicles.driveline) and chassis controls (sims.vehicles.controls): issue 27's criteria.

Every number checked comes from outside the model: an independent point-mass integration written here
(0-100 km/h), the engine map x gearing (wheel-torque bound, coast-down), the configured shift speeds and
torque-bias ratio, the tire's own peak friction (traction bound), FMVSS 126 S5.2 (sine with dwell) and
finite differences (gradients).  Rollouts are batched into a few session fixtures (one compile each).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import lookup, surface_id
from jaxtire.tire import rolling_radius, scale_tire, tire_forces
from jaxtire.validation import ValidationError
from sims.drivers import Constant
from sims.run.fleet import make_fleet
from sims.vehicles import double_track, presets
from sims.vehicles.controls import RANGES as CONTROL_RANGES
from sims.vehicles.controls import ChassisControls, StabilityControl, TractionControl
from sims.vehicles.driveline import (
    RANGES,
    Differential,
    coupling,
    electric_motor,
    engine_torque,
    fleet,
    gear_ratio,
    make_driveline,
    rpm,
    torque_converter,
)
from sims.vehicles.grip import peak_braking
from tests.sims.conftest import FAST, roll

DT = 0.005
ICE, DRY = surface_id("ice"), surface_id("asphalt_dry")


def _record(t, s, c, tel):
    d = s.drive
    return dict(
        vx=s.vx,
        x=s.x,
        omega=s.omega,
        gear=d.gear,
        w_e=d.engine_speed,
        torque=d.wheel_torque,
        t_e=d.engine_torque,
        fx=tel.fx,
        fz=tel.fz,
        kappa=tel.kappa,
        ax=tel.ax,
        re_u=(s.omega, s.vx),
    )


# ------------------------------------------------------------------------------------------ acceleration
@pytest.fixture(scope="session")
def launch():
    """The hatchback (FWD, six-speed automatic, traction control) at full throttle from rest on dry asphalt."""
    p = presets.get("hatchback", driveline=True)
    p = p._replace(driveline=p.driveline._replace(controls=ChassisControls(tc=TractionControl(on=1.0))))
    s0 = double_track.MODEL.init_state(p, 0.0)
    res = roll(p, s0, Constant(throttle=1.0), int(13.0 / DT), dt=DT, record=_record)
    return p, jax.tree.map(np.asarray, res.trajectory)


def point_mass(p, dt=1e-3, t_end=13.0):
    """Independent point-mass integration of the same car: engine map x gear x efficiency over the wheel
    radius, rotating masses (wheels, engine through the gear), aero drag, rolling resistance from the tire's
    My, and the driven axle's traction bound from the tire's peak driving friction at its load (with the
    longitudinal load transfer); the launch clutch slipping with the engine at the speed where its capacity
    meets the engine's torque; shifts at the configured input speed with no drive for the shift time.
    Returns (t, v, x) arrays."""
    ch, dl = p.chassis, p.driveline
    e, g = dl.engine, dl.gearbox
    m, R, h, L = float(ch.mass), float(ch.wheel_radius_front), float(ch.cg_height), float(ch.wheelbase)
    a_cg, b_cg = float(ch.cg_to_front), float(ch.cg_to_rear)
    tire = scale_tire(p.tire_front, *ch.tire_scale_front)
    surf = lookup(p.surfaces, jnp.asarray(DRY))
    fz_static = 0.5 * m * GRAVITY * b_cg / L
    re = float(rolling_radius(tire, jnp.asarray(fz_static), jnp.asarray(0.0), jnp.asarray(R)))
    loads = np.linspace(500.0, 8000.0, 76)
    mu_pk = np.asarray(peak_braking(tire, jnp.asarray(loads), surf, driving=True)[1])
    speeds = np.linspace(0.0, 60.0, 61)
    fz_r = 0.5 * m * GRAVITY * a_cg / L
    my = lambda fz, v: np.abs(np.asarray(tire_forces(tire, 0.0, 0.0, 0.0, jnp.asarray(fz), jnp.asarray(v), surf).my))  # noqa: E731
    f_rr = 2.0 * (my(fz_static, np.maximum(speeds, 1.0)) + my(fz_r, np.maximum(speeds, 1.0))) / R
    ratios = np.asarray(g.ratios) * float(g.final_drive)
    effs = np.asarray(g.efficiency) * float(g.final_efficiency)
    w_tab, t_tab = np.asarray(e.speeds), np.asarray(e.torque_full)
    i_w = 2.0 * float(ch.wheel_inertia_front) + 2.0 * float(ch.wheel_inertia_rear)
    i_und = 2.0 * float(ch.wheel_inertia_rear)
    # launch: the clutch slips (capacity C_max x^2) while the engine revs up, I_e dw_e/dt = T_e - T_clutch;
    # the traction control caps the engine torque at what the tires take
    idle, engage, c_max = float(e.idle_speed), float(g.clutch_engage_speed), float(g.clutch_capacity)
    w_e, k, v, x, t, shift = idle, 0, 0.0, 0.0, 0.0, 0.0
    ts, vs, xs = [0.0], [0.0], [0.0]
    while t < t_end:
        G, eta = ratios[k], effs[k]
        w_in = G * v / re
        if shift <= 0.0 and w_in >= float(g.upshift_speed) and k < len(ratios) - 1:
            k, shift = k + 1, float(g.shift_time)
            G, eta = ratios[k], effs[k]
        res = 0.5 * float(ch.air_density) * float(ch.drag_area) * v * v + np.interp(v, speeds, f_rr)
        locked = (w_in >= w_e) | (shift > 0.0)  # clutch closed (or a shift: the engine is rev-matched)
        w_e = w_in if locked else w_e
        acc = 0.0
        for _ in range(4):  # traction bound at the front axle's load with the load transfer of acc
            fz = 0.5 * (m * GRAVITY * b_cg / L - m * acc * h / L)
            trac = 2.0 * np.interp(fz, loads, mu_pk) * fz
            t_e = min(np.interp(w_e, w_tab, t_tab), trac * R / (eta * G))
            if shift > 0.0:
                drive, m_eng = 0.0, m + i_w / (re * R)
            elif locked:
                drive, m_eng = eta * G * t_e / R, m + (i_w + eta * G * G * float(e.inertia)) / (re * R)
            else:
                x_cl = min(max((w_e - idle) / (engage - idle), 0.0), 1.0)
                drive, m_eng = eta * G * min(c_max * x_cl * x_cl, t_e) / R, m + i_w / (re * R)
            acc = min((drive - res) / m_eng, (trac - res) / (m + i_und / (re * R)))
        if not locked and shift <= 0.0:
            x_cl = min(max((w_e - idle) / (engage - idle), 0.0), 1.0)
            w_e += dt * (t_e - min(c_max * x_cl * x_cl, t_e)) / float(e.inertia)
        v += acc * dt
        x += v * dt
        t += dt
        shift -= dt
        ts.append(t)
        vs.append(v)
        xs.append(x)
    return np.asarray(ts), np.asarray(vs), np.asarray(xs)


def _first_crossing(t, v, x, level):
    i = int(np.argmax(v >= level))
    assert v[i] >= level > v[i - 1]
    f = (level - v[i - 1]) / (v[i] - v[i - 1])
    return t[i - 1] + f * (t[i] - t[i - 1]), x[i - 1] + f * (x[i] - x[i - 1])


def test_zero_to_hundred_matches_point_mass(launch):
    p, tr = launch
    t = np.arange(1, tr["vx"].shape[0] + 1) * DT
    t_sim, x_sim = _first_crossing(t, tr["vx"], tr["x"], 100.0 / 3.6)
    t_ref, v_ref, x_ref = point_mass(p)
    t_pm, x_pm = _first_crossing(t_ref, v_ref, x_ref, 100.0 / 3.6)
    assert t_sim == pytest.approx(t_pm, rel=0.03)
    assert x_sim == pytest.approx(x_pm, rel=0.03)


def test_shifts_at_configured_speeds(launch):
    """Each upshift happens on the first step whose gearbox input speed reaches upshift_speed."""
    p, tr = launch
    g = p.driveline.gearbox
    up = float(g.upshift_speed)
    gear = tr["gear"]
    w_c = 0.5 * (tr["omega"][:, 0] + tr["omega"][:, 1])  # the front (driven) axle's carrier
    steps = np.nonzero(np.diff(gear) > 0)[0] + 1
    assert len(steps) >= 2  # first -> second -> third within 13 s
    for k in steps:
        ratio = float(gear_ratio(g, gear[k - 1])[0])
        assert ratio * w_c[k] >= up * (1 - 2e-3)
        assert ratio * w_c[k - 1] < up * (1 + 2e-3)
        assert gear[k] == gear[k - 1] + 1


def test_wheel_torque_within_map_ratio_efficiency(launch):
    """sum of the drive torques <= full-load torque at the engine speed x overall ratio x efficiency."""
    p, tr = launch
    dl = p.driveline
    w_e = np.concatenate([[float(dl.engine.idle_speed)], tr["w_e"][:-1]])  # at the start of each step
    gear = np.concatenate([[1.0], tr["gear"][:-1]])
    ratio, eta = (np.asarray(v) for v in jax.vmap(lambda k: gear_ratio(dl.gearbox, k))(jnp.asarray(gear)))
    bound = np.asarray(engine_torque(dl.engine, jnp.asarray(w_e), 1.0)) * np.abs(ratio) * eta
    total = tr["torque"].sum(axis=1)
    assert total.max() > 0.5 * bound.max()  # the bound is approached, not trivially met
    assert np.all(total <= bound * (1 + 1e-4) + 1e-3)


# ------------------------------------------------------------------------------- split-mu and traction control
#: The split-mu / traction fleet: (preset, front diff, rear diff, surface ids FL FR RL RR, traction control).
LSD_K = 0.5  # locking coefficient of the limited-slip case: TBR = (1 + k) / (1 - k) = 3
SPLIT = [
    ("hatchback", Differential(), Differential(), (ICE, DRY, ICE, DRY), 0.0),  # open
    ("hatchback", Differential(locked=1.0), Differential(), (ICE, DRY, ICE, DRY), 0.0),  # locked
    ("hatchback", Differential(0.0, LSD_K, LSD_K), Differential(), (ICE, DRY, ICE, DRY), 0.0),  # limited slip
    ("sports_car", Differential(), Differential(), (ICE, ICE, ICE, ICE), 1.0),  # TC on ice
    ("sports_car", Differential(), Differential(30.0, 0.22, 0.27), (ICE, DRY, ICE, DRY), 1.0),  # TC, split-mu, LSD
]


@pytest.fixture(scope="session")
def split():
    return split_run()


def split_run():
    """One fleet, one compile: the three front differentials of the hatchback held in first gear (no
    traction control) and the rear-driven sports car with an open differential and traction control."""
    cars, dls = [], []
    for name, front, rear, ids, tc in SPLIT:
        p = presets.get(name, driveline=True, surface_ids=list(ids))
        dl = p.driveline._replace(front=front, rear=rear, controls=ChassisControls(tc=TractionControl(on=tc)))
        dls.append(dl._replace(gearbox=dl.gearbox._replace(automatic=0.0)))
        cars.append(p)
    params = jax.tree.map(
        lambda *v: jnp.stack([jnp.asarray(x) for x in v]), *[c._replace(driveline=None) for c in cars]
    )
    params = params._replace(
        tire_front=cars[0].tire_front, tire_rear=cars[0].tire_rear, surfaces=cars[0].surfaces, driveline=fleet(dls)
    )
    s0 = jax.vmap(lambda p: double_track.MODEL.init_state(p, 0.0), in_axes=(presets_axes(params),))(params)
    n = int(2.0 / DT)
    res = roll_fleet(params, s0, n)
    return params, jax.tree.map(np.asarray, res)


def presets_axes(params):
    from sims.vehicles.params import fleet_axes

    return fleet_axes(params)


def roll_fleet(params, s0, n):
    from sims.run.fleet import fleet_rollout

    drv = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x, jnp.float32), (len(SPLIT),)), Constant(throttle=1.0))
    return fleet_rollout(params, s0, drv, n, dt=DT, driver_axes=0, record=_record, compiler_options=FAST).trajectory


def test_split_mu_open_differential(split):
    """The low-mu wheel spins up; the thrust is bounded by twice the low-mu wheel's force."""
    _, tr = split
    om, fx = tr["omega"][0], tr["fx"][0]
    late = slice(int(1.0 / DT), None)  # on the rev limiter, wheel spin steady
    assert om[-1, 0] > 3.0 * om[-1, 1]
    thrust, low = fx[late, :2].sum(axis=1).mean(), fx[late, 0].mean()
    assert thrust <= 2.0 * low * 1.03
    assert thrust >= 2.0 * low * 0.9  # and it is that force (not trivially less)


def test_split_mu_locked_differential(split):
    _, tr = split
    om = tr["omega"][1]
    late = slice(int(0.25 / DT), None)  # after the torque build-up (the coupling uses last step's input torque)
    # together to 0.02 rad/s (0.05 % of the spin; the open differential's wheels differ by ~40 rad/s): what
    # is left is each wheel's own rolling resistance over one step, applied after the coupling
    assert np.all(np.abs(om[late, 0] - om[late, 1]) <= 0.02)
    assert om[-1, 1] > 20.0
    assert tr["fx"][1][-1, 1] > 4.0 * tr["fx"][1][-1, 0]  # the dry wheel carries the thrust


def test_split_mu_limited_slip_torque_bias(split):
    _, tr = split
    om, torque = tr["omega"][2], tr["torque"][2]
    late = np.arange(om.shape[0]) >= int(0.25 / DT)  # after the torque build-up (last step's input torque)
    slipping = late & (om[:, 0] > om[:, 1] + 1.0) & (torque[:, 0] > 10.0)
    assert slipping.sum() > 100
    tbr = torque[slipping, 1] / torque[slipping, 0]
    np.testing.assert_allclose(tbr, (1 + LSD_K) / (1 - LSD_K), rtol=0.02)


def _peak_drive(tire, fz, surf, speed):
    """Peak driving slip and friction of ``tire`` at load ``fz`` on ``surf`` by a dense scan of Fx over
    0 <= kappa <= 0.5 (1e-4 steps): written here, independent of the controller's own peak search."""
    kap = np.linspace(0.0, 0.5, 5001)
    fx = np.asarray(tire_forces(tire, jnp.asarray(kap), 0.0, 0.0, jnp.asarray(fz), jnp.asarray(speed), surf).fx)
    j = int(np.argmax(fx))
    return kap[j], fx[j] / fz


def _tc_check(params, tr, i):
    """The driven (rear) wheels' slip over the controller's target (``target_slip`` x the tire's peak driving
    slip on the surface under the wheel) from 0.3 s on, the acceleration and the friction bound: the sum over
    the driven wheels of their tire's peak driving friction (dense scan at the wheel's mean load and the mean
    speed) x the wheel's load at each step, over the mass."""
    p = jax.tree.map(lambda x: x[i], params._replace(tire_front=None, tire_rear=None, surfaces=None))
    p = p._replace(tire_front=params.tire_front, tire_rear=params.tire_rear, surfaces=params.surfaces)
    ch = p.chassis
    tc = p.driveline.controls.tc
    sel = slice(int(0.3 / DT), None)
    fz = tr["fz"][i][sel]
    speed = float(tr["vx"][i][sel].mean())
    ids = np.asarray(p.contact.surface_ids)
    tire = scale_tire(p.tire_rear, *ch.tire_scale_rear)
    slips, bounds = [], 0.0
    for k in (2, 3):
        surf = lookup(p.surfaces, jnp.asarray(ids[k]))
        k_pk, mu_pk = _peak_drive(tire, float(fz[:, k].mean()), surf, speed)
        slips.append(tr["kappa"][i][sel][:, k] / (float(tc.target_slip) * k_pk))  # the tire's slip over its target
        bounds = bounds + mu_pk * fz[:, k]  # the peak friction at the mean load (load sensitivity: < 1 %)
    return np.stack(slips, 1), tr["ax"][i][sel], bounds / float(ch.mass)


def test_traction_control_ice(split):
    """Ice under all four wheels (open rear differential): the driven wheels' slip within +-50 % of the
    target from 0.3 s on, the acceleration at least 90 % of the tires' peak friction bound."""
    params, tr = split
    rel, ax, bound = _tc_check(params, tr, 3)
    assert np.all(np.abs(rel - 1.0) <= 0.5)
    assert ax.mean() >= 0.9 * bound.mean()


def test_traction_control_split_mu(split):
    """Split-mu (left wheels on ice, right on dry asphalt) with the sports car's limited-slip differential:
    both driven wheels' slip within +-50 % of their own targets from 0.3 s on (the ice wheel held by its
    brake, the dry one by the engine loop), the acceleration at least 90 % of the friction bound (ice
    wheel's plus dry wheel's peak force)."""
    params, tr = split
    rel, ax, bound = _tc_check(params, tr, 4)
    assert np.all(np.abs(rel - 1.0) <= 0.5)
    assert ax.mean() >= 0.9 * bound.mean()
    assert bound.mean() > 3.0 * _tc_check(params, tr, 3)[2].mean()  # the dry wheel's grip counts, not twice the ice


# ------------------------------------------------------------------------------------------ coast-down
def test_coast_down_engine_braking(no_rr_table):
    """Third gear held, throttle closed, no aero and no rolling resistance: the deceleration is the engine's
    drag torque through the gear, a = G T_drag(w_e) / (eta R m_eff), m_eff = m + (sum I_w + I_e G^2 / eta) /
    (Re R) (the engine is driven: the efficiency divides), within 2 %."""
    p = presets.get("hatchback", surfaces=no_rr_table, driveline=True, drag_area=0.0)
    dl = p.driveline
    p = p._replace(driveline=dl._replace(gearbox=dl.gearbox._replace(automatic=jnp.float32(0.0))))
    from sims.vehicles.core import rolling_radii

    s0 = double_track.MODEL.init_state(p, 60.0 / 3.6)
    G, eta = (float(v) for v in gear_ratio(dl.gearbox, 3.0))
    w_in = G * float(s0.omega[0])  # the engine turning with the wheels in third
    s0 = s0._replace(drive=s0.drive._replace(gear=jnp.float32(3.0), engine_speed=jnp.float32(w_in)))
    res = roll(p, s0, Constant(), int(1.5 / DT), dt=DT, record=_record)
    tr = jax.tree.map(np.asarray, res.trajectory)
    ch, e = p.chassis, dl.engine
    R = float(ch.wheel_radius_front)
    re = float(rolling_radii(p, 4)[0])
    m_eff = float(ch.mass) + (
        2 * float(ch.wheel_inertia_front) + 2 * float(ch.wheel_inertia_rear) + float(e.inertia) * G * G / eta
    ) / (re * R)
    win = slice(int(0.5 / DT), None)
    expected = G * np.asarray(engine_torque(e, jnp.asarray(tr["w_e"][win]), 0.0)) / (eta * R * m_eff)
    assert np.all(tr["gear"] == 3.0)
    assert tr["ax"][win].mean() == pytest.approx(expected.mean(), rel=0.02)
    assert expected.mean() < -0.1  # engine braking, not nothing (~0.18 m/s^2 in third at 60 km/h)


# ------------------------------------------------------------------------------------------ torque converter
def test_torque_converter_stall():
    """A converter instead of the launch clutch (K0 = 18 rad/s/sqrt(N m), stall torque ratio 1.5), the car
    held on its brakes at full throttle: the engine settles at the stall speed where the full-load torque
    meets the pump's, T_full(w) = (w / K0)^2 (the hatchback's flat 200 N m: w = 18 sqrt(200) = 254.6 rad/s,
    2431 rpm), and the wheels get TR0 x 200 N m x first gear x efficiency (by hand, within 1 %)."""
    p = presets.get("hatchback", driveline=True)
    k0, tr0 = 18.0, 1.5
    g = p.driveline.gearbox._replace(
        converter_k=jnp.float32(k0), converter_ratio=jnp.float32(tr0), lockup_speed=jnp.float32(rpm(1500.0))
    )
    p = p._replace(driveline=p.driveline._replace(gearbox=g))
    s0 = double_track.MODEL.init_state(p, 0.0)
    res = roll(p, s0, Constant(throttle=1.0, brake=1.0), int(1.0 / DT), dt=DT, record=_record)
    tr = jax.tree.map(np.asarray, res.trajectory)
    w_stall = k0 * math.sqrt(200.0)
    assert tr["w_e"][-1] == pytest.approx(w_stall, rel=0.005)
    G, eta = (float(v) for v in gear_ratio(g, 1.0))
    assert tr["torque"][-1].sum() == pytest.approx(tr0 * 200.0 * G * eta, rel=0.01)
    assert abs(tr["vx"][-1]) < 1e-3  # held


def test_torque_converter_curves_and_gradients():
    """The characteristics by hand (stall: T_p = (w/K0)^2, T_t = TR0 T_p; coupling point: TR = 1; SR = 1: no
    torque) and finite gradients everywhere, matching central differences, including a stopped engine."""
    g = presets.get_driveline("hatchback").gearbox._replace(
        converter_k=jnp.float32(18.0), converter_ratio=jnp.float32(2.0), lockup_speed=jnp.float32(1e3)
    )
    tp, tt, on = torque_converter(g, 200.0, 0.0)
    assert float(tp) == pytest.approx((200.0 / 18.0) ** 2, rel=1e-5) and float(tt) == pytest.approx(2.0 * float(tp))
    tp, tt, _ = torque_converter(g, 200.0, 0.85 * 200.0)
    assert float(tt) == pytest.approx(float(tp), rel=1e-5)
    assert float(torque_converter(g, 200.0, 200.0)[1]) == pytest.approx(0.0, abs=1e-6) and bool(on)
    f = lambda k, we, wt: torque_converter(g._replace(converter_k=k), we, wt)[1]  # noqa: E731
    for we, wt in ((200.0, 0.0), (200.0, 100.0), (200.0, 190.0), (0.0, 0.0), (100.0, -5.0)):
        grads = jax.grad(f, argnums=(0, 1, 2))(jnp.float32(18.0), jnp.float32(we), jnp.float32(wt))
        assert all(np.isfinite(float(v)) for v in grads)
        eps = 1e-2
        fd = (float(f(18.0, we + eps, wt)) - float(f(18.0, we - eps, wt))) / (2 * eps)
        if we > 1.0:
            assert float(grads[1]) == pytest.approx(fd, rel=1e-2, abs=1e-3)


# ------------------------------------------------------------------------------------------ ESC
@pytest.fixture(scope="session")
def sine_dwell():
    """The sports car (rear-engined; it spins in the sine with dwell at 6.5 A without ESC) with ESC off and
    on, the amplitude from its slowly increasing steer test."""
    from sims.scenarios.base import scenario_metrics
    from sims.scenarios.sine_dwell import slowly_increasing_steer

    p = presets.get("sports_car", driveline=True)
    a = slowly_increasing_steer(p, compiler_options=FAST)
    dls = [p.driveline._replace(controls=ChassisControls(esc=StabilityControl(on=on))) for on in (0.0, 1.0)]
    f = make_fleet(p, 2)._replace(driveline=fleet(dls))
    m = scenario_metrics("sine_with_dwell", f, {"steer_03g": a, "scale": 6.5}, compiler_options=FAST)
    return a, jax.tree.map(np.asarray, m)


def test_sine_with_dwell_esc(sine_dwell):
    a, m = sine_dwell
    assert 0.005 < a < 0.05  # a road-wheel angle of a car at 0.3 g and 80 km/h
    # without ESC the car spins and fails FMVSS 126 S5.2.1
    assert m["spun"][0] == 1.0 and m["yaw_ratio_100"][0] > 0.35 and m["passed"][0] == 0.0
    # with ESC: S5.2.1 (<= 35 % at 1.00 s), S5.2.2 (<= 20 % at 1.75 s), S5.2.3 (>= 1.83 m at 1.07 s)
    assert m["yaw_ratio_100"][1] <= 0.35
    assert m["yaw_ratio_175"][1] <= 0.20
    assert m["lateral_displacement"][1] >= 1.83
    assert m["passed"][1] == 1.0


# ------------------------------------------------------------------------------------------ validation, units
@pytest.mark.parametrize("field", sorted(RANGES))
def test_every_parameter_validated(field):
    """Each field outside its range raises a ValidationError naming it."""
    dl = presets.get_driveline("hatchback")
    lo, hi, lo_incl, hi_incl = RANGES[field]
    bad = (hi * 2 + 1) if math.isfinite(hi) and hi > 0 else (lo - 1.0)
    if field == "gearbox.efficiency" or field == "gearbox.final_efficiency":
        bad = 1.5
    part, _, name = field.partition(".")
    parts = ("front", "rear", "centre") if not name else (part,)
    name = name or field
    for part in parts:
        obj = getattr(dl, part)
        value = np.full(np.shape(getattr(obj, name)), bad)
        broken = dl._replace(**{part: obj._replace(**{name: value})})
        with pytest.raises(ValidationError, match=name):
            make_driveline(broken.engine, broken.gearbox, broken.front, broken.rear, broken.centre)


@pytest.mark.parametrize("field", sorted(CONTROL_RANGES))
def test_every_control_parameter_validated(field):
    """Each traction / stability control field outside its range raises a ValidationError naming it."""
    dl = presets.get_driveline("hatchback")
    lo, hi, lo_incl, hi_incl = CONTROL_RANGES[field]
    bad = hi * 2 + 1 if hi > 0 else lo - 1.0
    part, _, name = field.partition(".")
    c = ChassisControls()
    c = c._replace(**{part: getattr(c, part)._replace(**{name: bad})})
    with pytest.raises(ValidationError, match=f"controls.{part}.{name}"):
        make_driveline(dl.engine, dl.gearbox, controls=c)


def test_consistency_rules_and_units():
    dl = presets.get_driveline("hatchback")
    g = dl.gearbox
    with pytest.raises(ValidationError, match="downshift_speed"):
        make_driveline(dl.engine, g._replace(downshift_speed=g.upshift_speed_part))
    with pytest.raises(ValidationError, match="ratios must decrease"):
        make_driveline(dl.engine, g._replace(ratios=np.asarray(g.ratios)[::-1]))
    with pytest.raises(ValidationError, match="controls.tc.target_slip"):
        make_driveline(dl.engine, g, controls=ChassisControls(tc=TractionControl(target_slip=2.0)))
    assert float(rpm(60.0)) == pytest.approx(2.0 * math.pi)
    # the map: drag at closed throttle, the table at full load, the fuel cut at the limiter
    e = dl.engine
    assert float(engine_torque(e, rpm(3000.0), 1.0)) == pytest.approx(200.0, rel=1e-5)
    assert float(engine_torque(e, rpm(3000.0), 0.0)) == pytest.approx(-14.0 - 6.0 * 1600.0 / 2600.0, rel=1e-5)
    assert float(engine_torque(e, e.max_speed, 1.0)) == pytest.approx(float(engine_torque(e, e.max_speed, 0.0)))
    # an electric motor: T = min(T_max, P / w)
    mot = electric_motor(300.0, 150e3, 1500.0, 0.05)
    assert float(engine_torque(mot._replace(idle_speed=0.0), 1000.0, 1.0)) == pytest.approx(150.0, rel=1e-3)


def test_coupling_stick_and_slip():
    """The implicit friction + viscous coupling by hand: stick below the capacity (relative speed exactly 0
    after the step), the full capacity plus the implicit viscous part beyond it."""
    a = 0.01
    assert float(coupling(0.5, a, 100.0, 0.0)) == pytest.approx(50.0)  # stick: 0.5 - a T = 0
    assert float(coupling(2.0, a, 100.0, 0.0)) == pytest.approx(100.0)  # slip at the capacity
    c = 20.0  # 100 + c (2 - a 100) / (1 + a c)
    assert float(coupling(2.0, a, 100.0, c)) == pytest.approx(100.0 + c * 1.0 / 1.2)


# ------------------------------------------------------------------------------------------ gradients
def _gear(t, s, c, tel):  # one record function for every call: the compiled rollout is reused
    return s.drive.gear


def test_gradients_through_shift_and_differential():
    """d(speed after 1.2 s from rest)/d(final drive) and /d(LSD preload) finite through an upshift, and the
    final-drive derivative matching a central finite difference taken with the shift instant held fixed
    (both points have the same gear sequence: the pathwise derivative ``grad`` returns, docs/driveline.md)."""
    p = presets.get("hatchback", driveline=True, surface_ids=[ICE, DRY, ICE, DRY])
    dl = p.driveline
    dl = dl._replace(front=Differential(*(jnp.float32(v) for v in (20.0, 0.3, 0.3, 0.0, 0.0))))
    dl = dl._replace(
        gearbox=dl.gearbox._replace(upshift_speed=jnp.float32(rpm(3000.0)), upshift_speed_part=jnp.float32(rpm(2800.0)))
    )
    p = p._replace(driveline=dl)
    n = int(1.2 / DT)

    def speed(fd, pre):
        q = p._replace(
            driveline=dl._replace(gearbox=dl.gearbox._replace(final_drive=fd), front=dl.front._replace(preload=pre))
        )
        s0 = double_track.MODEL.init_state(q, 0.0)
        res = roll(q, s0, Constant(throttle=1.0), n, dt=DT, record=_gear)
        return res.final_state.vx, res.trajectory

    (v, gears), vjp = jax.vjp(speed, jnp.float32(3.65), jnp.float32(20.0))
    assert np.any(np.diff(np.asarray(gears)) > 0)  # an upshift inside the horizon
    g_fd, g_pre = vjp((jnp.float32(1.0), jnp.zeros_like(gears)))
    assert np.isfinite(float(g_fd)) and np.isfinite(float(g_pre))
    eps = 2e-3
    (vp, gp), (vm, gm) = (
        speed(jnp.float32(3.65 + eps), jnp.float32(20.0)),
        speed(jnp.float32(3.65 - eps), jnp.float32(20.0)),
    )
    np.testing.assert_array_equal(np.asarray(gp), np.asarray(gm))  # the same shift instants at both points
    assert float(g_fd) == pytest.approx(float(vp - vm) / (2 * eps), rel=0.1, abs=0.05)


def test_gradients_launch_from_standstill():
    """From rest (wheels and car stopped, clutch slipping, traction control braking the ice wheel on split-mu):
    the gradient of the distance after 0.25 s with respect to the clutch capacity and the traction control's
    target slip against central finite differences (within 10 %; they agree to ~1e-4); a parked car
    (throttle 0) has finite, zero gradients."""
    p = presets.get("sports_car", driveline=True, surface_ids=[ICE, DRY, ICE, DRY])
    dl = p.driveline
    tc = TractionControl(*(jnp.float32(v) for v in TractionControl(on=1.0)))
    p = p._replace(driveline=dl._replace(controls=ChassisControls(tc=tc)))
    n = int(0.25 / DT)
    x0 = (jnp.float32(700.0), jnp.float32(0.9))

    def run(x, throttle):
        cap, slip = x
        d = p.driveline
        q = p._replace(
            driveline=d._replace(
                gearbox=d.gearbox._replace(clutch_capacity=cap),
                controls=ChassisControls(tc=d.controls.tc._replace(target_slip=slip)),
            )
        )
        s0 = double_track.MODEL.init_state(q, 0.0)
        return roll(q, s0, Constant(throttle=throttle), n, dt=DT, record=_gear).final_state.x

    f = jax.jit(run, compiler_options=FAST)
    grad = jax.jit(jax.grad(run), compiler_options=FAST)
    g = grad(x0, jnp.float32(1.0))
    assert all(np.isfinite(float(v)) for v in g)
    steps = (20.0, 0.02)
    for i, h in enumerate(steps):
        xp = tuple(v + h if j == i else v for j, v in enumerate(x0))
        xm = tuple(v - h if j == i else v for j, v in enumerate(x0))
        fd = float(f(xp, jnp.float32(1.0)) - f(xm, jnp.float32(1.0))) / (2 * h)
        assert float(g[i]) == pytest.approx(fd, rel=0.1)
        assert abs(fd) > 1e-6  # the launch does respond to it
    parked = grad(x0, jnp.float32(0.0))
    assert all(np.isfinite(float(v)) and abs(float(v)) < 1e-6 for v in parked)
