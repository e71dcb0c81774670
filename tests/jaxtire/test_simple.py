"""Simple-model tire: equations, invariants, gradients, dtypes, batching and dispatch."""

import dataclasses

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
import numpy as np
import pytest

import jaxtire
from jaxtire import surfaces
from jaxtire.simple import DEFAULTS, FIELDS, make_simple_params
from jaxtire.simple import simple_forces as _simple_forces
from tests.conftest import tol

FZ0 = DEFAULTS["fz0"]
ICE = surfaces.preset("ice")
simple_forces = _simple_forces


def _mf(x, B, C, D, E):
    """Reference Magic Formula in numpy float64 (independent of jaxtire.magic_formula)."""
    x = np.asarray(x, np.float64)
    bx = B * x
    return D * np.sin(C * np.arctan(bx - E * (bx - np.arctan(bx))))


# ---------------------------------------------------------------- construction


def test_defaults_and_pytree():
    p = make_simple_params()
    assert all(float(getattr(p, f)) == pytest.approx(DEFAULTS[f]) for f in FIELDS)
    assert p.ellipse is True
    leaves, tree = jax.tree_util.tree_flatten(p)
    assert len(leaves) == len(FIELDS)
    p2 = make_simple_params(ellipse=False)
    assert jax.tree_util.tree_structure(p2) != tree  # the flag is static metadata
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.Dx = 2.0


@pytest.mark.parametrize("field, value, rng", [
    ("Dx", 0.0, "(0.0, 10.0]"), ("Dy", -1.0, "(0.0, 10.0]"), ("fz0", 0.0, "(0.0, inf)"),
    ("Bx", -3.0, "(0.0, inf)"), ("Cy", 2.5, "(0.0, 2.0]"), ("Ex", 1.2, "[-10.0, 1.0]"),
    ("k_load", 1.0, "[0.0, 1.0)"), ("slide_ratio", 0.0, "(0.0, 1.0]"), ("beta", -1.0, "[0.0, inf)"),
    ("radius", 0.0, "(0.0, inf)"), ("v_low", np.nan, "(0.0, inf)"),
])
def test_constructor_rejects_out_of_range(field, value, rng):
    with pytest.raises(ValueError) as e:
        make_simple_params(**{field: value})
    msg = str(e.value)
    assert field in msg and rng in msg


def test_constructor_rejects_bad_batch_element_unknown_field_and_flag():
    with pytest.raises(ValueError, match=r"Dx = -0.5 .*\(0.0, 10.0\]"):
        make_simple_params(Dx=[1.0, -0.5, 1.2])
    with pytest.raises(ValueError, match="unknown field"):
        make_simple_params(mu=1.0)
    with pytest.raises(ValueError, match="ellipse"):
        make_simple_params(ellipse=1)
    p = make_simple_params()
    with pytest.raises(ValueError, match="fz0"):
        p.replace(fz0=-1.0)
    assert float(p.replace(Dx=1.2).Dx) == pytest.approx(1.2)


def test_negative_load_raises_eagerly_and_clamps_under_jit():
    p = make_simple_params()
    with pytest.raises(ValueError, match="fz must be >= 0"):
        _simple_forces(p, 0.1, 0.0, 0.0, -10.0)
    out = jax.jit(_simple_forces)(p, 0.1, 0.05, 0.0, -10.0)
    assert float(out.fx) == 0.0 and float(out.fy) == 0.0


# ---------------------------------------------------------------- signs and pure slip


def test_sign_conventions_match_mf61(tnop):
    s = make_simple_params()
    cases = [(0.05, 0.0, ("fx", "my")), (-0.05, 0.0, ("fx", "my")), (0.0, 0.04, ("fy", "mz", "my")),
             (0.0, -0.04, ("fy", "mz", "my")), (0.1, 0.1, ("fx", "fy", "my"))]
    for kappa, alpha, fields in cases:  # the components slip drives (MF offsets make the others ~0)
        a = simple_forces(s, kappa, alpha, 0.0, 4000.0, 20.0)
        b = jaxtire.mf_forces(tnop, kappa, alpha, 0.0, 4000.0, 20.0)
        for f in fields:
            va, vb = float(getattr(a, f)), float(getattr(b, f))
            assert np.sign(va) == np.sign(vb) != 0, (kappa, alpha, f, va, vb)
    assert float(simple_forces(s, 0.1, 0.0).fx) > 0
    assert float(simple_forces(s, 0.0, 0.05).fy) < 0
    # camber: same sign as the MF tire (gamma > 0 gives fy < 0 with ISO-W)
    d_mf = float(jaxtire.mf_forces(tnop, 0.0, 0.0, 0.05).fy - jaxtire.mf_forces(tnop, 0.0, 0.0, 0.0).fy)
    assert np.sign(float(simple_forces(s, 0.0, 0.0, 0.05).fy)) == np.sign(d_mf)


def test_defaults_reproduce_bundled_tire_at_nominal_load(tnop):
    s = make_simple_params()
    k = jnp.linspace(-0.4, 0.4, 201)
    a = jnp.linspace(-0.3, 0.3, 201)
    fm = np.asarray(jaxtire.mf_forces(tnop, k, 0.0, 0.0, FZ0, combined=False).fx)
    gm = np.asarray(jaxtire.mf_forces(tnop, 0.0, a, 0.0, FZ0, combined=False).fy)
    fm, gm = 0.5 * (fm - fm[::-1]), 0.5 * (gm - gm[::-1])  # odd parts (MF shifts removed)
    assert np.max(np.abs(np.asarray(simple_forces(s, k, 0.0).fx) - fm)) < 0.005 * FZ0
    assert np.max(np.abs(np.asarray(simple_forces(s, 0.0, a).fy) - gm)) < 0.005 * FZ0


@pytest.mark.parametrize("ellipse", [True, False])
def test_pure_slip_is_the_magic_formula_and_unchanged_by_ellipse(ellipse, dtype):
    p = make_simple_params(ellipse=ellipse)
    k = np.linspace(-1.0, 1.0, 101, dtype=dtype)
    a = np.linspace(-0.6, 0.6, 101, dtype=dtype)
    fx = simple_forces(p, k, 0.0).fx
    fy = simple_forces(p, 0.0, a).fy
    assert fx.dtype == fy.dtype == dtype
    d = DEFAULTS
    rtol, atol = tol(dtype, 1e-5, 1e-12), tol(dtype, 1e-2, 1e-8)
    np.testing.assert_allclose(fx, FZ0 * _mf(k, d["Bx"], d["Cx"], d["Dx"], d["Ex"]), rtol=rtol, atol=atol)
    np.testing.assert_allclose(fy, -FZ0 * _mf(a, d["By"], d["Cy"], d["Dy"], d["Ey"]), rtol=rtol, atol=atol)


def test_mx_zero_and_default_load_is_fz0():
    p = make_simple_params()
    a = simple_forces(p, 0.07, 0.03)
    b = simple_forces(p, 0.07, 0.03, 0.0, FZ0)
    assert float(a.mx) == 0.0
    for f in TireForcesFields:
        np.testing.assert_allclose(getattr(a, f), getattr(b, f))


TireForcesFields = jaxtire.TireForces._fields


# ---------------------------------------------------------------- friction ellipse


@pytest.mark.parametrize("fz, surface, gamma", [(4000.0, None, 0.0), (7000.0, None, -0.05),
                                                 (1500.0, ICE, 0.03), (4000.0, surfaces.preset("gravel"), 0.0)])
def test_resultant_never_exceeds_the_ellipse(fz, surface, gamma):
    p = make_simple_params()
    k, a = np.meshgrid(np.linspace(-1.0, 1.0, 121), np.linspace(-0.6, 0.6, 121))
    out = simple_forces(p, k, a, gamma, fz, 20.0, surface)
    e = (np.asarray(out.fx) / (np.asarray(out.mux) * fz)) ** 2 + (np.asarray(out.fy) / (np.asarray(out.muy) * fz)) ** 2
    assert e.max() <= 1.0 + 1e-5
    assert e.max() > 0.9  # the grid does reach the limit
    np.testing.assert_allclose(out.grip_utilisation, np.sqrt(e), rtol=1e-4, atol=1e-6)
    # without the ellipse the same grid exceeds it (the test can tell the two apart)
    off = simple_forces(make_simple_params(ellipse=False), k, a, gamma, fz, 20.0, surface)
    e_off = (np.asarray(off.fx) / (np.asarray(off.mux) * fz)) ** 2 + (np.asarray(off.fy) / (np.asarray(off.muy) * fz)) ** 2
    assert e_off.max() > 1.5


def test_ellipse_keeps_direction_of_demand():
    on, off = make_simple_params(), make_simple_params(ellipse=False)
    a, b = simple_forces(on, 0.3, 0.2), simple_forces(off, 0.3, 0.2)
    np.testing.assert_allclose(float(a.fx) / float(a.fy), float(b.fx) / float(b.fy), rtol=1e-5)


# ---------------------------------------------------------------- load sensitivity


@pytest.mark.parametrize("fz, lam", [(2000.0, 1.0375), (4000.0, 1.0), (8000.0, 0.925), (12000.0, 0.85)])
def test_load_sensitivity_numbers(fz, lam, dtype):
    # mu(Fz) = mu0 (1 - k_load (Fz - Fz0)/Fz0) with k_load = 0.075, Fz0 = 4000 N
    p = make_simple_params()
    out = simple_forces(p, 0.0, 0.0, 0.0, fz)
    assert out.mux.dtype == dtype
    r6, r5 = tol(dtype, 1e-6, 1e-14), tol(dtype, 1e-5, 1e-12)
    np.testing.assert_allclose(out.mux, 1.04 * lam, rtol=r6)
    np.testing.assert_allclose(out.muy, 0.88 * lam, rtol=r6)
    # peak force = mu(Fz) Fz (E = 0: the peak is at B x = tan(pi / (2 C)))
    q = make_simple_params(Ex=0.0, Ey=0.0)
    kpk = np.tan(np.pi / (2 * 1.58)) / 13.2
    apk = np.tan(np.pi / (2 * 1.34)) / 11.3
    np.testing.assert_allclose(simple_forces(q, kpk, 0.0, 0.0, fz).fx, 1.04 * lam * fz, rtol=r5)
    np.testing.assert_allclose(simple_forces(q, 0.0, apk, 0.0, fz).fy, -0.88 * lam * fz, rtol=r5)
    # cornering stiffness dFy/dalpha at 0 = -B C D lam Fz (degressive in load)
    ky = jax.grad(lambda a: simple_forces(p, 0.0, a, 0.0, fz).fy)(0.0)
    np.testing.assert_allclose(ky, -11.3 * 1.34 * 0.88 * lam * fz, rtol=r5)


def test_load_sensitivity_floor(dtype):
    p = make_simple_params(k_load=0.5)
    out = simple_forces(p, 0.0, 0.0, 0.0, 10 * FZ0)  # 1 - 0.5 * 9 < 0: floored at 0.05
    assert out.mux.dtype == dtype
    np.testing.assert_allclose(out.mux, 1.04 * 0.05, rtol=tol(dtype, 1e-6, 1e-14))


# ---------------------------------------------------------------- camber thrust


@pytest.mark.parametrize("gamma, fz", [(0.02, 4000.0), (-0.05, 6000.0), (0.08, 2500.0)])
def test_camber_thrust_at_zero_slip(gamma, fz, dtype):
    p = make_simple_params(c_gamma=-0.9)
    for vx in (None, 30.0):
        out = simple_forces(p, 0.0, 0.0, gamma, fz, vx)
        assert out.fy.dtype == dtype
        np.testing.assert_allclose(out.fy, -0.9 * gamma * fz, rtol=tol(dtype, 1e-5, 1e-12))
        assert float(out.fx) == 0.0


def test_camber_thrust_fades_at_standstill(dtype):
    p = make_simple_params(c_gamma=-0.9, v_low=1.0)
    np.testing.assert_allclose(simple_forces(p, 0.0, 0.0, 0.05, 4000.0, 0.0).fy, 0.0, atol=tol(dtype, 1e-6, 1e-12))
    # w = (1 - cos(pi / 2)) / 2 = 0.5 at vx = v_low / 2
    half = simple_forces(p, 0.0, 0.0, 0.05, 4000.0, -0.5).fy
    assert half.dtype == dtype
    np.testing.assert_allclose(half, -0.5 * 0.9 * 0.05 * 4000.0, rtol=tol(dtype, 1e-5, 1e-12))


# ---------------------------------------------------------------- breakaway


def _peak_slips(p):
    return (np.tan(np.pi / (2 * float(p.Cx))) / float(p.Bx), np.tan(np.pi / (2 * float(p.Cy))) / float(p.By))


@pytest.mark.parametrize("r, beta", [(0.8, 8.0), (0.5, 2.0), (0.6, 0.0), (1.0, 30.0)])
def test_breakaway_formula_at_both_peaks(r, beta, dtype):
    # At both curve peaks the demand is exactly sqrt(2): on the ellipse, scaled by
    # mu_eff/mu_peak = r + (1 - r) exp(-beta (sqrt(2) - 1)^2).
    p = make_simple_params(Ex=0.0, Ey=0.0, slide_ratio=r, beta=beta)
    kpk, apk = _peak_slips(p)
    out = simple_forces(p, kpk, apk)
    b = r + (1 - r) * np.exp(-beta * (np.sqrt(2) - 1) ** 2)
    mux, muy = 1.04, 0.88
    assert out.fx.dtype == dtype
    rtol = tol(dtype, 1e-5, 1e-12)
    np.testing.assert_allclose(out.fx, FZ0 * mux * b / np.sqrt(2), rtol=rtol)
    np.testing.assert_allclose(out.fy, -FZ0 * muy * b / np.sqrt(2), rtol=rtol)
    np.testing.assert_allclose(out.grip_utilisation, b, rtol=rtol)
    assert bool(out.is_sliding)


def test_breakaway_from_camber_overload_value_and_continuity(dtype):
    # pure lateral slip at the peak plus camber thrust: demand d = 1 + |c_gamma gamma| / Dy exactly
    p = make_simple_params(Ex=0.0, Ey=0.0, c_gamma=-0.9, slide_ratio=0.7, beta=5.0)
    _, apk = _peak_slips(p)
    gamma = 0.1
    d = 1.0 + 0.9 * gamma / 0.88
    b = 0.7 + 0.3 * np.exp(-5.0 * (d - 1.0) ** 2)
    out = simple_forces(p, 0.0, apk, gamma)
    assert out.fy.dtype == dtype
    np.testing.assert_allclose(out.fy, -FZ0 * 0.88 * b, rtol=tol(dtype, 1e-5, 1e-12))
    np.testing.assert_allclose(out.grip_utilisation, b, rtol=tol(dtype, 1e-5, 1e-12))
    # continuous through d = 1: just below and just above the limit differ by O(eps)
    lo = simple_forces(p, 0.0, apk * 0.999).fy
    hi = simple_forces(p, 0.0, apk * 0.999, 1e-4).fy
    assert abs(float(hi - lo)) < 2.0


def test_is_sliding_past_the_peak():
    p = make_simple_params(Ex=0.0)
    kpk, _ = _peak_slips(p)
    assert not bool(simple_forces(p, 0.9 * kpk, 0.0).is_sliding)
    assert bool(simple_forces(p, 1.1 * kpk, 0.0).is_sliding)


# ---------------------------------------------------------------- surface grip


def test_ice_peak_is_grip_times_asphalt_at_smaller_slip():
    p = make_simple_params()
    k = jnp.linspace(0.0, 0.5, 20001)
    a = jnp.linspace(0.0, 0.4, 20001)
    fx_dry, fx_ice = simple_forces(p, k, 0.0).fx, simple_forces(p, k, 0.0, surface=ICE).fx
    fy_dry, fy_ice = -simple_forces(p, 0.0, a).fy, -simple_forces(p, 0.0, a, surface=ICE).fy
    for dry, ice, x in ((fx_dry, fx_ice, k), (fy_dry, fy_ice, a)):
        np.testing.assert_allclose(float(ice.max()) / float(dry.max()), 0.12, rtol=1e-4)
        x_dry, x_ice = float(x[jnp.argmax(dry)]), float(x[jnp.argmax(ice)])
        assert x_ice < x_dry
        np.testing.assert_allclose(x_ice / x_dry, 0.12, rtol=0.02)


def test_grip_keeps_slip_stiffness_and_scales_curve_in_both_axes():
    p = make_simple_params()
    g = 0.3
    surf = surfaces.Surface(g, 1.0, 0.0)
    kx = [jax.grad(lambda k: simple_forces(p, k, 0.0, surface=s).fx)(0.0) for s in (None, surf)]
    ky = [jax.grad(lambda a: simple_forces(p, 0.0, a, surface=s).fy)(0.0) for s in (None, surf)]
    np.testing.assert_allclose(kx[0], kx[1], rtol=1e-5)
    np.testing.assert_allclose(ky[0], ky[1], rtol=1e-5)
    # F_g(kappa, alpha) = g F_1(kappa / g, alpha / g), combined slip included
    k, a = np.meshgrid(np.linspace(-0.3, 0.3, 13), np.linspace(-0.2, 0.2, 11))
    lhs = simple_forces(p, k, a, surface=surf)
    rhs = simple_forces(p, k / g, a / g)
    np.testing.assert_allclose(lhs.fx, g * np.asarray(rhs.fx), rtol=1e-4, atol=0.05)
    np.testing.assert_allclose(lhs.fy, g * np.asarray(rhs.fy), rtol=1e-4, atol=0.05)


def test_zero_grip_gives_no_force():
    p = make_simple_params()
    out = simple_forces(p, 0.2, 0.1, 0.05, 4000.0, 10.0, surfaces.Surface(0.0, 1.0, 0.0))
    assert abs(float(out.fx)) < 0.01 * 4000 and abs(float(out.fy)) < 0.01 * 4000


# ---------------------------------------------------------------- moments


def test_rolling_resistance_moment_fades_and_opposes_rolling():
    p = make_simple_params(c_rr=0.01, radius=0.3, v_low=1.0)
    full = -0.01 * 0.3 * 5000.0
    my = lambda vx, s=None: float(simple_forces(p, 0.0, 0.0, 0.0, 5000.0, vx, s).my)
    np.testing.assert_allclose(my(None), full, rtol=1e-6)
    np.testing.assert_allclose(my(20.0), full, rtol=1e-6)
    np.testing.assert_allclose(my(0.25), 0.25 * full, rtol=1e-5)
    np.testing.assert_allclose(my(-0.5), -0.5 * full, rtol=1e-5)
    np.testing.assert_allclose(my(-20.0), -full, rtol=1e-6)
    assert my(0.0) == 0.0
    np.testing.assert_allclose(my(20.0, surfaces.preset("sand")), 3.0 * full, rtol=1e-6)


def test_aligning_torque_trail():
    p = make_simple_params(Ey=0.0, trail=0.03)
    small = simple_forces(p, 0.0, 1e-3)
    np.testing.assert_allclose(float(small.mz) / -float(small.fy), 0.03, rtol=1e-3)  # t -> trail as alpha -> 0
    assert float(small.mz) > 0  # restoring, positive for alpha > 0 as in mf_forces
    _, apk = _peak_slips(p)
    np.testing.assert_allclose(simple_forces(p, 0.0, apk).mz, 0.0, atol=1e-3)  # trail vanishes at the peak
    np.testing.assert_allclose(simple_forces(p, 0.0, 2 * apk).mz, 0.0, atol=1e-6)
    # camber thrust acts at the contact centre: no Mz from camber alone
    np.testing.assert_allclose(simple_forces(p, 0.0, 0.0, 0.05).mz, 0.0, atol=1e-6)


# ---------------------------------------------------------------- gradients


def _numeric(out):
    return [getattr(out, f) for f in TireForcesFields if f != "is_sliding"]


@pytest.mark.parametrize("kappa, alpha, gamma, fz, vx", [
    (0.0, 0.0, 0.0, 4000.0, 20.0), (0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 4000.0, 0.0),
    (0.1, 0.05, 0.02, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, None),
])
def test_gradients_finite_at_singular_points(kappa, alpha, gamma, fz, vx):
    p = make_simple_params()
    surf = surfaces.Surface(1.0, 1.0, 0.0)

    def total(p, k, a, g, f, v, s):
        out = simple_forces(p, k, a, g, f, v, s)
        return sum(jnp.sum(x) for x in _numeric(out))

    args = (p, kappa, alpha, gamma, fz, 0.0 if vx is None else vx, surf)
    if vx is None:
        grads = jax.grad(lambda p, k, a, g, f, s: total(p, k, a, g, f, None, s), argnums=(0, 1, 2, 3, 4, 5))(
            p, kappa, alpha, gamma, fz, surf)
    else:
        grads = jax.grad(total, argnums=tuple(range(7)))(*args)
    for leaf in jax.tree_util.tree_leaves(grads):
        assert np.all(np.isfinite(np.asarray(leaf)))
    # every output is finite, too
    for x in _numeric(simple_forces(p, kappa, alpha, gamma, fz, vx, surf)):
        assert np.all(np.isfinite(np.asarray(x)))


@pytest.mark.parametrize("point, past_limit, inert", [
    # inside the ellipse, above v_low: the breakaway and the low-speed fades do not act
    ((0.03, 0.02, 0.01, 3500.0, 12.0, 0.9), False, {"slide_ratio", "beta", "v_low", "vx"}),
    # past the limit (breakaway active), vx below v_low: everything acts
    ((0.25, 0.15, -0.02, 5200.0, 0.6, 0.7), True, set()),
])
def test_gradients_match_central_differences_float64(x64, point, past_limit, inert):
    kappa, alpha, gamma, fz, vx, grip = point
    p = make_simple_params(dtype=jnp.float64)
    inputs = dict(kappa=kappa, alpha=alpha, gamma=gamma, fz=fz, vx=vx, grip=grip)

    @jax.jit
    def outputs(p, kappa, alpha, gamma, fz, vx, grip):
        out = simple_forces(p, kappa, alpha, gamma, fz, vx, surfaces.Surface(grip, 1.3, 0.0))
        return jnp.stack([out.fx, out.fy, out.mz, out.my, out.grip_utilisation])

    demand = simple_forces(make_simple_params(ellipse=False, dtype=jnp.float64), kappa, alpha, gamma, fz, vx,
                           surfaces.Surface(grip, 1.3, 0.0)).grip_utilisation
    assert (float(demand) > 1.05) if past_limit else (float(demand) < 0.95)  # away from the ellipse kink
    # every parameter leaf and every input in one flat float64 vector
    flat, unravel = ravel_pytree((p, inputs))
    f = jax.jit(lambda v: (lambda q, kw: outputs(q, **kw))(*unravel(v)))
    names = list(FIELDS) + sorted(inputs)  # ravel order: dataclass fields, then dict keys sorted
    assert flat.shape == (len(names),)
    jac = np.asarray(jax.jit(jax.jacfwd(f))(flat))
    h = 1e-6 * np.maximum(np.abs(np.asarray(flat)), 1e-2)
    steps = np.diag(h)
    fd = (np.asarray(jax.vmap(f)(flat + steps)) - np.asarray(jax.vmap(f)(flat - steps))).T / (2 * h)
    base = np.abs(np.asarray(f(flat))).max()
    for i, name in enumerate(names):
        np.testing.assert_allclose(jac[:, i], fd[:, i], rtol=1e-5, atol=1e-7 * base, err_msg=name)
    assert {n for n, c in zip(names, np.abs(jac).max(axis=0)) if c == 0.0} == inert


# ---------------------------------------------------------------- dtypes, batching, dispatch


def _grid():
    ks = np.concatenate([np.linspace(-0.6, 0.6, 13), np.linspace(-0.05, 0.05, 11)])
    as_ = np.concatenate([np.linspace(-0.4, 0.4, 9), np.linspace(-0.04, 0.04, 9)])
    return np.meshgrid(ks, as_)


WET = surfaces.preset("asphalt_wet")


def test_float32_matches_float64():
    k, a = _grid()
    out32 = simple_forces(make_simple_params(), k.astype(np.float32), a.astype(np.float32), 0.02, 4500.0, 15.0, WET)
    assert out32.fx.dtype == jnp.float32
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        out64 = simple_forces(make_simple_params(dtype=jnp.float64), k, a, 0.02, 4500.0, 15.0,
                              surfaces.Surface(*(np.float64(v) for v in WET)))
        assert out64.fx.dtype == jnp.float64
        out64 = jax.tree.map(np.asarray, out64)
    finally:
        jax.config.update("jax_enable_x64", prev)
    for f in ("fx", "fy", "mz", "my", "grip_utilisation"):
        ref = getattr(out64, f)
        np.testing.assert_allclose(getattr(out32, f), ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max(), err_msg=f)
    np.testing.assert_array_equal(out32.is_sliding, out64.is_sliding)


def test_vmap_over_params_equals_loop():
    ps = [make_simple_params(), make_simple_params(Dx=1.2, By=9.0, k_load=0.1, c_gamma=-0.5),
          make_simple_params(Bx=8.0, Cy=1.6, slide_ratio=0.5, beta=3.0, trail=0.04)]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *ps)
    kappa, alpha, gamma, fz = 0.2, jnp.array([0.0, 0.1, 0.3]), 0.03, 4800.0
    vm = jax.jit(jax.vmap(_simple_forces, in_axes=(0, None, None, None, None)))(batch, kappa, alpha, gamma, fz)
    bc = simple_forces(batch, kappa, alpha[0], gamma, fz)  # leading-axis broadcasting
    for i, p in enumerate(ps):
        ref = simple_forces(p, kappa, alpha, gamma, fz)
        for f in TireForcesFields:
            np.testing.assert_allclose(getattr(vm, f)[i], getattr(ref, f), rtol=1e-6, atol=1e-4, err_msg=f)
            np.testing.assert_allclose(getattr(bc, f)[i], getattr(ref, f)[0], rtol=1e-6, atol=1e-4, err_msg=f)


def test_jit_with_static_flag():
    f = jax.jit(_simple_forces)
    for ellipse in (True, False):
        p = make_simple_params(ellipse=ellipse)
        np.testing.assert_allclose(f(p, 0.3, 0.2).fx, simple_forces(p, 0.3, 0.2).fx, rtol=1e-6)
    assert float(f(make_simple_params(ellipse=False), 0.3, 0.2).fx) > float(f(make_simple_params(), 0.3, 0.2).fx)
