"""The quasi-steady lap solver (sims.studies.laptime) against closed-form point-mass results."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.simple import make_simple_params
from sims.roads import circuits as c
from sims.run.rollout import fast_compile_options
from sims.studies import laptime as L
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


def test_envelope_gradients_are_finite_at_standstill():
    """The g-g-v envelope at v = 0 (a standing start, the apex of a hairpin of zero radius's limit): the
    gradients w.r.t. every float chassis field, the speed and the lateral acceleration are finite."""
    p = presets.get("race_car")

    def f(ch, v, ay):
        q = p._replace(chassis=ch)
        tab = L.friction_tables(q)
        a, b = L.ax_limits(q, tab, v, ay)
        return a - b

    grad = jax.jit(jax.grad(f, argnums=(0, 1, 2), allow_int=True), compiler_options=fast_compile_options())
    for v, ay in [(0.0, 0.0), (0.0, 5.0)]:
        g = grad(p.chassis, jnp.float32(v), jnp.float32(ay))
        leaves = [x for x in jax.tree.leaves(g) if jnp.issubdtype(x.dtype, jnp.floating)]
        assert len(leaves) > 30 and all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)
