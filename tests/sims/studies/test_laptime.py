"""The quasi-steady lap solver (sims.vehicles.qss) against closed-form point-mass results."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.simple import make_simple_params
from sims.roads import circuits as c
from sims.run.spec import fast_compile_options
from sims.vehicles import qss as L
from sims.vehicles import presets
from sims.vehicles.params import TireScale

#: Compiled once per line shape and dtype, with the fast XLA:CPU options.
SOLVE = jax.jit(L.solve_lap, compiler_options=fast_compile_options())

MU_X, MU_Y = 1.04, 0.88  # the simple tire's Dx, Dy: its peak friction with k_load = 0 (no load sensitivity)


def point_mass(dtype, **chassis):
    """The race car on a constant-friction tire (peak Fx = MU_X Fz, Fy = MU_Y Fz at every load)."""
    tire = make_simple_params(k_load=0.0, dtype=dtype)
    base = dict(max_drive_torque=1e6, max_power=1e9, max_brake_torque=1e6)
    p = presets.get("race_car", tire=tire, dtype=dtype, **{**base, **chassis})
    one = TireScale(*(jnp.ones((), dtype),) * 4)  # the preset's slick scales off: the tire's own friction
    return p._replace(chassis=p.chassis._replace(tire_scale_front=one, tire_scale_rear=one))


def line_from_curvature(kappa, ds, dtype):
    """A line given by its curvature only (the solver reads curvature, spacing, elevation and banking)."""
    n = len(kappa)
    z = np.zeros(n)
    return c.Track(
        xy=jnp.zeros((n, 2), dtype),
        s=jnp.asarray(np.arange(n) * ds, dtype),
        heading=jnp.asarray(z, dtype),
        curvature=jnp.asarray(kappa, dtype),
        length=jnp.asarray(n * ds, dtype),
        half_width=jnp.asarray(5.0, dtype),
        ds=jnp.asarray(ds, dtype),
        width_left=jnp.asarray(z + 5, dtype),
        width_right=jnp.asarray(z + 5, dtype),
        elevation=jnp.asarray(z, dtype),
        banking=jnp.asarray(z, dtype),
    )


def test_circle_speed_is_the_friction_limit(dtype):
    R = 1250 * 2.0 / (2 * np.pi)  # 1250 points 2 m apart: the shape of the straight-line test (one compile)
    a = np.linspace(0, 2 * np.pi, 301)[:-1]
    circle = c.make_circuit(np.stack([R * np.cos(a), R * np.sin(a)], 1), ds=2.0, dtype=dtype)
    assert circle.n == 1250
    solve = SOLVE
    for downforce in (0.0, 1.0):  # one compile: the downforce is a value (3.0 here: no grip limit, mu k R > m)
        p = point_mass(dtype, lift_area=downforce, drag_area=0.0)
        res = solve(p, circle)
        m = float(p.chassis.mass)
        k = 0.5 * 1.2 * downforce
        # m v^2 / R = mu (m g + k v^2)  ->  v^2 = mu g R / (1 - mu k R / m)
        v_exact = np.sqrt(MU_Y * GRAVITY * R / (1 - MU_Y * k * R / m))
        assert np.allclose(res.v, v_exact, rtol=5e-3)
        assert abs(float(res.lap_time) / (2 * np.pi * R / v_exact) - 1) < 5e-3


def test_straight_acceleration_and_braking_distances_are_closed_form(x64):
    dtype = jnp.float64
    # no load transfer (h = 0), aero balance = static front share, brake bias = the same share: both axles
    # saturate together under braking; rear-wheel drive
    ch = presets.chassis_values("race_car")
    front = ch["cg_to_rear"] / (ch["cg_to_front"] + ch["cg_to_rear"])
    p = point_mass(dtype, cg_height=0.0, aero_balance_front=front, brake_bias_front=front)
    m, a_, L_ = ch["mass"], ch["cg_to_front"], ch["cg_to_front"] + ch["cg_to_rear"]
    k = 0.5 * 1.2 * ch["lift_area"]
    c_d = 0.5 * 1.2 * ch["drag_area"]
    ds = 2.0
    n_hair, n_str = 50, 1200  # a 100 m hairpin of radius 30 m, a 2.4 km straight
    kappa = np.concatenate([np.full(n_hair, 1 / 30.0), np.zeros(n_str)])
    res = SOLVE(p, line_from_curvature(kappa, ds, dtype))
    v = np.asarray(res.v)[n_hair:]
    s = np.arange(n_str) * ds
    top = int(np.argmax(v))  # the first point at the top speed (the solver's cap V_MAX: no power limit here)
    top_last = n_str - 1 - int(np.argmax(v[::-1]))  # the brake point
    # accelerating: v dv/ds = A + B v^2 (traction MU_X on the rear load m g a / L + k (1 - f) v^2, minus drag);
    # the rear ground force also spins up the free front wheels: J_f = 2 I_f / (R_f Re_f) of extra mass
    # (the simple tire has no vertical model: Re = R)
    e = m / (m + 2 * ch["wheel_inertia_front"] / ch["wheel_radius_front"] ** 2)
    A, B = MU_X * GRAVITY * a_ / L_ * e, (MU_X * k * (1 - front) * e - c_d) / m
    dist = lambda v0, v1: np.log((A + B * v1**2) / (A + B * v0**2)) / (2 * B)  # noqa: E731
    i0, i1 = 2, top - 2
    assert abs(dist(v[i0], v[i1]) / (s[i1] - s[i0]) - 1) < 5e-3
    # braking: v dv/ds = -(Ab + Bb v^2) (MU_X on all of m g + k v^2, plus drag)
    Ab, Bb = MU_X * GRAVITY, (MU_X * k + c_d) / m
    j0, j1 = top_last + 2, n_str - 2
    brake_dist = np.log((Ab + Bb * v[j0] ** 2) / (Ab + Bb * v[j1] ** 2)) / (2 * Bb)
    assert abs(brake_dist / (s[j1] - s[j0]) - 1) < 5e-3
    assert s[i1] - s[i0] > 500 and s[j1] - s[j0] > 200  # long phases, so the check has teeth


@pytest.fixture(scope="module")
def monza_race_car():
    return presets.get("race_car"), SOLVE


def test_grid_convergence_and_plausible_monza_lap(monza_race_car):
    p, solve = monza_race_car
    t5 = solve(p, c.load_raceline("Monza", ds=2.5))
    t25 = solve(p, c.load_raceline("Monza", ds=1.25))
    assert abs(float(t5.lap_time) / float(t25.lap_time) - 1) < 1e-3  # 0.05 % measured
    # an FIA F3 car laps Monza in ~1:41-1:45 (2019-2023 qualifying and race laps)
    assert 98.0 < float(t5.lap_time) < 110.0
    assert np.isclose(float(jnp.sum(t5.sector_times)), float(t5.lap_time), rtol=1e-5)
    v = np.asarray(t5.v)
    assert np.all(v <= np.asarray(t5.v_lat) * (1 + 1e-5)) and 70 < v.max() < 80  # ~270 km/h top speed


@pytest.mark.parametrize("envelope", L.ENVELOPES)
def test_envelope_gradients_are_finite_at_standstill(envelope):
    """The g-g-v envelope at v = 0 (a standing start, the apex of a hairpin of zero radius's limit; no slip, no
    lateral utilisation), and with the inner wheels lifted (zero load, 40 m/s^2 at 10 m/s): the gradients w.r.t.
    every float chassis field, the speed and the lateral acceleration are finite, for both envelopes."""
    p = presets.get("race_car")

    def f(ch, v, ay):
        q = p._replace(chassis=ch)
        tab = L.friction_tables(q, envelope=envelope)
        a, b = L.ax_limits(q, tab, v, ay)
        return a - b

    grad = jax.jit(jax.grad(f, argnums=(0, 1, 2), allow_int=True), compiler_options=fast_compile_options())
    for v, ay in [(0.0, 0.0), (0.0, 5.0), (10.0, 40.0)]:
        g = grad(p.chassis, jnp.float32(v), jnp.float32(ay))
        leaves = [x for x in jax.tree.leaves(g) if jnp.issubdtype(x.dtype, jnp.floating)]
        assert len(leaves) > 30 and all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


def test_tire_envelope_tables_against_the_tire():
    """``envelope="tire"`` (the race car's rear tire at 1.4-7 kN): the combined-slip rows start at the pure peak
    (1 at u = 0) and fall with the lateral utilisation to 0 (drive) at u = 1, never rising; the slip angle of a
    small utilisation is the linear tire's ``u Fy_max / C_alpha`` (``C_alpha`` a central difference of the
    tire's own Fy at alpha = 0, ``Fy_max`` the mean of the two sides' peaks: the slick's offsets cancel between
    the left and right wheel) within 3 %, and at u = 1 the peak's own slip angle (``grip.peak_force``)."""
    from jaxtire.surfaces import lookup
    from jaxtire.tire import scale_tire, tire_forces
    from sims.vehicles.grip import peak_force

    p = presets.get("race_car")
    tab = jax.jit(L.friction_tables, static_argnames="envelope", compiler_options=fast_compile_options())(
        p, envelope="tire"
    )
    ch = p.chassis
    tire = scale_tire(p.tire_rear, *ch.tire_scale_rear)
    surf = lookup(p.surfaces, jnp.asarray(p.contact.surface_ids)[2])
    idx = np.arange(1, 6)  # 1.4-7 kN
    fz = np.asarray(tab.fz)[idx]
    for table in (tab.drive_at, tab.brake_at):
        t = np.asarray(table[1])[:, idx]
        assert np.allclose(t[0], 1.0) and np.all(np.diff(t, axis=0) <= 1e-6), t
    assert np.all(np.asarray(tab.drive_at[1])[-1, idx] <= 1e-6)
    h = 1e-4
    fy = lambda a: np.asarray(tire_forces(tire, 0.0, a, 0.0, jnp.asarray(fz), 30.0, surf, combined=False).fy)  # noqa: E731
    c_alpha = -(fy(h) - fy(-h)) / (2 * h)
    fy_max = 0.5 * (np.asarray(tab.lateral[1]) + np.asarray(tab.lateral_in[1]))[idx]
    u = L.UTILS[1]
    alpha = np.asarray(tab.alpha_at[1])[1, idx]
    assert np.allclose(alpha, u * fy_max / c_alpha, rtol=0.03), (alpha, u * fy_max / c_alpha)
    a_peak = np.asarray(peak_force(tire, jnp.asarray(fz), surf, 30.0, "lateral", pure=True)[0])
    assert np.allclose(np.asarray(tab.alpha_at[1])[-1, idx], a_peak, rtol=1e-5)
    assert np.all(np.diff(np.asarray(tab.alpha_at[1])[:, idx], axis=0) > 0)


def test_the_two_envelopes_bracket_the_double_tracks_skidpad_limit():
    """The race car's own double track on a 40 m circle (``sims.scenarios.skidpad.circle_run``, the measured
    ``a_y = V r``): the largest a_y it holds lies between the tire envelope's apex limit (which charges the
    driven tires with the aero and slip drag) and the point mass's (ellipse, no drag at the apex), and a car
    aimed 12 % above the tire envelope's limit does not hold.  Measured: tire 15.64, car 16.32, ellipse 16.98
    m/s^2."""
    from sims.scenarios.skidpad import circle_run

    R = 40.0
    p = presets.get("race_car")
    limit = {
        e: float(L.apex_speed(p, L.friction_tables(p, envelope=e), jnp.asarray(1.0 / R))) ** 2 / R for e in L.ENVELOPES
    }
    frac = np.array([0.98, 1.0, 1.02, 1.04, 1.06, 1.08, 1.12])  # target a_y / the tire envelope's limit
    n = len(frac)
    fleet = p._replace(chassis=jax.tree.map(lambda x: jnp.broadcast_to(x, (n,) + jnp.shape(x)), p.chassis))
    speeds = jnp.asarray(np.sqrt(frac * limit["tire"] * R), jnp.float32)
    pt = circle_run(fleet, speeds, radius=R, duration=12.0, settle=6.0, compiler_options=fast_compile_options())
    held = np.asarray(pt.ay)[np.asarray(pt.holds)]
    assert held.size and limit["tire"] <= held.max() <= limit["ellipse"], (limit, pt.ay, pt.holds)
    assert not bool(pt.holds[-1]), (limit, pt.ay, pt.holds)


def test_tire_envelope_lap_gradients_match_central_differences(x64):
    """The lap time with ``envelope="tire"`` (a 30 m hairpin, a straight and a long 150 m bend: braking, the
    apex, traction out, a power-limited corner) is differentiable: its derivatives (``jax.jvp``) w.r.t. brake
    bias, downforce, mass, aero balance, roll-stiffness share and drag area agree with central differences
    within 1 %."""
    dtype = jnp.float64
    p = presets.get("race_car", dtype=dtype)
    ds = 4.0
    kappa = np.concatenate([np.full(25, 1 / 30.0), np.zeros(200), np.full(75, 1 / 150.0), np.zeros(100)])
    line = line_from_curvature(kappa, ds, dtype)
    names = ("brake_bias_front", "lift_area", "mass", "aero_balance_front", "roll_stiffness_front", "drag_area")
    x0 = jnp.asarray([float(getattr(p.chassis, k)) for k in names], dtype)

    def lap(x):
        ch = p.chassis._replace(**{k: x[i] for i, k in enumerate(names)})
        return L.solve_lap(p._replace(chassis=ch), line, envelope="tire").lap_time

    # one compiled program gives the value and a directional derivative (jax.jvp: forward mode, a third of
    # reverse mode's compile; the setup study's jax.grad runs the same rules transposed, test_lap_setup.py)
    jvp = jax.jit(lambda x, v: jax.jvp(lap, (x,), (v,)), compiler_options=fast_compile_options())
    for i in range(len(names)):
        e = jnp.zeros_like(x0).at[i].set(1.0)
        h = 1e-3 * abs(float(x0[i]))
        d = float(jvp(x0, e)[1])
        fd = (float(jvp(x0 + h * e, e)[0]) - float(jvp(x0 - h * e, e)[0])) / (2 * h)
        assert abs(d - fd) <= 0.01 * abs(fd) + 1e-9, (names[i], d, fd)


def test_envelope_and_grip_are_checked():
    from sims.scenarios.lap import transient_lap

    p = presets.get("race_car")
    line = line_from_curvature(np.full(16, 0.01), 2.0, jnp.float32)
    fleet = p._replace(chassis=jax.tree.map(lambda x: jnp.broadcast_to(x, (1,) + jnp.shape(x)), p.chassis))
    with pytest.raises(L.ValidationError, match="envelope"):
        L.lap_times(fleet, line, envelope="gg")
    with pytest.raises(L.ValidationError, match="envelope"):
        L.friction_tables(p, envelope="gg")
    with pytest.raises(L.ValidationError, match="grip"):
        transient_lap(fleet, line, line, grip=1.5)
    # one Track is one circuit for every vehicle, a sequence one per vehicle (a Track is a tuple: it was taken
    # for a sequence of its fields)
    with pytest.raises(L.ValidationError, match="3 lines and 1 centrelines for 1 vehicles"):
        transient_lap(fleet, [line] * 3, line)
