"""The one tire interface (jaxtire.tire): dispatch, options, scaling, stiffness, accessors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import surfaces
from jaxtire import tire as T
from jaxtire.forces import TireForces
from jaxtire.mf61 import mf_forces, peak_values
from jaxtire.simple import DEFAULTS, FIELDS, make_simple_params, simple_forces

ARGS = (0.05, 0.03, 0.01, 4200.0, 15.0, surfaces.preset("asphalt_wet"))


@pytest.fixture(scope="module")
def simple():
    return make_simple_params()


def _same(a, b, **tol):
    for f in TireForces._fields:
        np.testing.assert_allclose(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)), **tol)


# ---------------------------------------------------------------- dispatch


def test_dispatch_calls_each_model(tnop, simple):
    _same(T.tire_forces(tnop, *ARGS), mf_forces(tnop, *ARGS), rtol=0, atol=0)
    _same(T.tire_forces(simple, *ARGS), simple_forces(simple, *ARGS), rtol=0, atol=0)
    _same(T.tire_forces(tnop, *ARGS, combined=False), mf_forces(tnop, *ARGS, combined=False), rtol=0, atol=0)
    # the simple model's pure-slip curves are its one set of equations
    _same(T.tire_forces(simple, *ARGS, combined=False), simple_forces(simple, *ARGS), rtol=0, atol=0)
    assert jaxtire.tire_forces is T.tire_forces
    # pure vs combined differ for MF at combined slip
    assert float(T.tire_forces(tnop, 0.1, 0.1).fx) != float(T.tire_forces(tnop, 0.1, 0.1, combined=False).fx)


def test_dispatch_under_jit_and_vmap(tnop, simple):
    jitted = jax.jit(T.tire_forces)
    np.testing.assert_allclose(jitted(simple, *ARGS).fy, simple_forces(simple, *ARGS).fy, rtol=1e-6)
    np.testing.assert_allclose(jitted(tnop, *ARGS).fy, mf_forces(tnop, *ARGS).fy, rtol=1e-6)
    stacked = jax.tree.map(lambda x: jnp.broadcast_to(x, (3,)), simple)
    batch = T.replace_coefficients(stacked, {"Dx": jnp.array([0.9, 1.0, 1.1], jnp.float32)})
    out = jax.vmap(lambda p: T.tire_forces(p, 0.3, 0.0).fx)(batch)
    loop = [float(simple_forces(make_simple_params(Dx=d), 0.3, 0.0).fx) for d in (0.9, 1.0, 1.1)]
    np.testing.assert_allclose(out, loop, rtol=1e-6)


def test_unknown_type_raises(simple):
    for bad in ({"Dx": 1.0}, None, 3.0, jaxtire.make_spline()):
        assert not T.is_tire(bad)
        with pytest.raises(TypeError, match="no tire model for parameters of type"):
            T.tire_forces(bad, 0.0, 0.0)
        with pytest.raises(TypeError, match="known: MFParams, SimpleParams"):
            T.nominal_load(bad)
    assert T.is_tire(simple)


def test_unsupported_option_names_it(tnop, simple):
    with pytest.raises(T.UnsupportedOption, match=r"SimpleParams tire has no turn slip \(phi\)"):
        T.tire_forces(simple, 0.0, 0.1, phi=0.1)
    with pytest.raises(ValueError, match=r"no tire side \(side\)"):
        T.tire_forces(simple, 0.0, 0.1, side="left")
    with pytest.raises(NotImplementedError, match=r"MFParams tire has no option \(bogus\)"):
        T.tire_forces(tnop, 0.0, 0.1, bogus=1)
    # None means "not given": accepted by every model
    _same(T.tire_forces(simple, 0.0, 0.1, phi=None), simple_forces(simple, 0.0, 0.1), rtol=0, atol=0)
    assert "combined" in T.model_options(simple) and "combined" in T.model_options(tnop)
    assert "phi" not in T.model_options(simple)


# ---------------------------------------------------------------- scale_tire


@pytest.mark.parametrize("mu, k", [(0.7, 1.3), (1.2, 0.8)])
def test_scale_tire_mf_peak_by_mu_stiffness_by_k(tnop, mu, k, x64):
    p = tnop.astype(jnp.float64)
    s = T.scale_tire(p, mu, 1.5 * mu, k, 0.5 * k)
    fz = 5000.0
    a, b = peak_values(p, fz), peak_values(s, fz)
    # peak-to-peak 2 D: D = mu Fz is proportional to LMUX / LMUY
    np.testing.assert_allclose(float(b.fx_max - b.fx_min), mu * float(a.fx_max - a.fx_min), rtol=1e-12)
    np.testing.assert_allclose(float(b.fy_max - b.fy_min), 1.5 * mu * float(a.fy_max - a.fy_min), rtol=1e-12)
    kx0, ky0 = T.linear_stiffness(p, fz)
    kx1, ky1 = T.linear_stiffness(s, fz)
    np.testing.assert_allclose([float(kx1), float(ky1)], [k * float(kx0), 0.5 * k * float(ky0)], rtol=1e-12)


@pytest.mark.parametrize("mu, k", [(0.7, 1.3), (1.2, 0.8)])
def test_scale_tire_simple_peak_by_mu_stiffness_by_k(mu, k, x64):
    p = make_simple_params(dtype=jnp.float64)
    s = T.scale_tire(p, mu, mu, k, k)
    fz = 5000.0
    kappa = jnp.linspace(0.0, 0.5, 5001)
    peak0 = float(jnp.max(T.tire_forces(p, kappa, 0.0, 0.0, fz).fx))
    peak1 = float(jnp.max(T.tire_forces(s, kappa, 0.0, 0.0, fz).fx))
    np.testing.assert_allclose(peak1, mu * peak0, rtol=1e-6)  # peak D Fz lam, reached on the grid
    lam = 1.0 - DEFAULTS["k_load"] * (fz - DEFAULTS["fz0"]) / DEFAULTS["fz0"]
    np.testing.assert_allclose(float(T.tire_forces(s, 0.0, 0.0, 0.0, fz).mux), mu * DEFAULTS["Dx"] * lam, rtol=1e-12)
    kx0, ky0 = T.linear_stiffness(p, fz)
    kx1, ky1 = T.linear_stiffness(s, fz)
    np.testing.assert_allclose([float(kx1), float(ky1)], [k * float(kx0), k * float(ky0)], rtol=1e-12)
    # by hand: Kx = Bx Cx Dx lam Fz at zero slip (independent of the ellipse)
    np.testing.assert_allclose(float(kx0), DEFAULTS["Bx"] * DEFAULTS["Cx"] * DEFAULTS["Dx"] * lam * fz, rtol=1e-12)


def test_scale_tire_batched_and_traced(simple):
    mus = jnp.array([0.8, 1.0, 1.2])
    out = jax.jit(jax.vmap(lambda m: T.tire_forces(T.scale_tire(simple, m, m, 1.0, 1.0), 0.0, 0.0).mux))(mus)
    np.testing.assert_allclose(out, mus * DEFAULTS["Dx"], rtol=1e-6)
    g = jax.grad(lambda m: T.tire_forces(T.scale_tire(simple, m, m, 1.0, 1.0), 0.3, 0.0).fx)(1.0)
    assert np.isfinite(float(g)) and float(g) > 0


# ---------------------------------------------------------------- linear stiffness


def test_linear_stiffness_matches_finite_differences(tnop, simple, x64):
    fz, h = 4500.0, 1e-6
    for p, rtol in ((simple.astype(jnp.float64), 1e-6), (tnop.astype(jnp.float64), 2e-2)):
        # MF: the analytic B C D; the curve's slope at zero slip differs by the small shifts SHx, SHy
        kx, ky = T.linear_stiffness(p, fz)
        fd_x = (T.tire_forces(p, h, 0.0, 0.0, fz).fx - T.tire_forces(p, -h, 0.0, 0.0, fz).fx) / (2 * h)
        fd_y = (T.tire_forces(p, 0.0, h, 0.0, fz).fy - T.tire_forces(p, 0.0, -h, 0.0, fz).fy) / (2 * h)
        assert float(kx) > 0 and float(ky) > 0
        np.testing.assert_allclose(float(kx), abs(float(fd_x)), rtol=rtol)
        np.testing.assert_allclose(float(ky), abs(float(fd_y)), rtol=rtol)


def test_linear_stiffness_default_load_and_surface(tnop, simple):
    for p in (tnop, simple):
        np.testing.assert_allclose(T.linear_stiffness(p), T.linear_stiffness(p, T.nominal_load(p)), rtol=1e-6)
        ice = surfaces.preset("ice")
        # grip scales friction, not the slip stiffness
        np.testing.assert_allclose(T.linear_stiffness(p, 4000.0, ice), T.linear_stiffness(p, 4000.0), rtol=1e-4)


# ---------------------------------------------------------------- accessors


def test_accessors(tnop, simple):
    assert T.model_name(tnop) == "mf" and T.model_name(simple) == "simple"
    assert T.model_label(tnop) == f"MF FITTYP {tnop.fittyp}" and T.model_label(simple) == "simple model"
    assert float(T.nominal_load(tnop)) == float(tnop.FNOMIN)
    assert float(T.nominal_load(simple)) == DEFAULTS["fz0"]
    assert float(T.unloaded_radius(tnop)) == float(tnop.UNLOADED_RADIUS)
    assert float(T.unloaded_radius(simple)) == pytest.approx(DEFAULTS["radius"])
    # the low-speed threshold is the tire's own fact, read through the interface (the vehicle never names it)
    assert float(T.low_speed(tnop)) == float(tnop.VXLOW) and float(T.low_speed(simple)) == pytest.approx(DEFAULTS["v_low"])
    assert T.coefficient_names(simple) == FIELDS
    assert "PDY1" in T.coefficient_names(tnop) and "FITTYP" not in T.coefficient_names(tnop)
    assert float(T.get_coefficient(tnop, "PDY1")) == float(tnop.PDY1)
    assert float(T.get_coefficient(simple, "Dy")) == pytest.approx(DEFAULTS["Dy"])


def test_replace_coefficients_under_jit(tnop, simple):
    for p, name in ((tnop, "PDX1"), (simple, "Dx")):
        f = jax.jit(lambda v, p=p, name=name: T.tire_forces(T.replace_coefficients(p, {name: v}), 0.3, 0.0).fx)
        base = float(T.get_coefficient(p, name))
        ratio = float(f(jnp.asarray(1.1 * base))) / float(f(jnp.asarray(base)))
        assert ratio > 1.05  # a larger peak friction coefficient, a larger force past the peak
        with pytest.raises(ValueError, match="unknown"):
            T.replace_coefficients(p, {"NOPE": 1.0})


def test_options_come_from_the_force_function_signature():
    def forces(tire, kappa, alpha, gamma=0.0, fz=None, vx=None, surface=None, side="left", *, phi=None):
        return None

    assert T._extra_inputs(forces) == frozenset({"side", "phi"})
    assert T._extra_inputs(simple_forces) == frozenset()


# ---------------------------------------------------------------- nominal load and radius


def test_with_nominal_inverts_the_getters(tnop, simple):
    for p in (tnop, simple):
        q = T.with_nominal(p, load=320.0, radius=0.127)
        assert float(T.nominal_load(q)) == pytest.approx(320.0) and float(T.unloaded_radius(q)) == pytest.approx(0.127)
        assert T.nominal_load(q).dtype == T.nominal_load(p).dtype
        r = T.with_nominal(p, radius=0.4)  # the load kept
        assert float(T.nominal_load(r)) == float(T.nominal_load(p)) and float(T.unloaded_radius(r)) == pytest.approx(
            0.4
        )
        assert T.with_nominal(p) is p
        f = jax.jit(lambda x, p=p: T.nominal_load(T.with_nominal(p, load=x)))
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.asarray([300.0, 5000.0]))), [300.0, 5000.0])


@pytest.mark.parametrize("c", [0.08, 2.0])
def test_with_nominal_stretches_the_curves_to_the_new_load(tnop, simple, c):
    # every load dependence is written in Fz / Fz0 (dfz = Fz / Fz0 - 1, lam(Fz) of the simple model) and the
    # peak force is mu Fz, so F(kappa, alpha; c Fz, c Fz0) = c F(kappa, alpha; Fz, Fz0) for the slip forces
    for p in (tnop, simple):
        fz = 0.9 * float(T.nominal_load(p))
        q = T.with_nominal(p, load=c * float(T.nominal_load(p)))
        for kappa, alpha in ((0.04, 0.0), (0.0, 0.05), (0.1, 0.08)):
            a, b = T.tire_forces(p, kappa, alpha, 0.0, fz), T.tire_forces(q, kappa, alpha, 0.0, c * fz)
            np.testing.assert_allclose([float(b.fx), float(b.fy)], [c * float(a.fx), c * float(a.fy)], rtol=2e-5)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"load": 0.0}, "load"),
        ({"radius": -0.3}, "radius"),
        ({"load": float("nan")}, "load"),
        ({"radius": float("inf")}, "radius"),
    ],
)
def test_with_nominal_refuses_bad_values(tnop, simple, kw, field):
    for p in (tnop, simple):
        with pytest.raises(jaxtire.validation.ValidationError, match=f"with_nominal: {field} "):
            T.with_nominal(p, **kw)


def test_mf_linear_stiffness_saturates_with_the_forces(tnop, x64):
    # mf_forces (limits="clamp") evaluates its force channels at min(Fz, FZMAX): so do Kx, Ky (the slopes of those
    # forces; XLA shares them with the force evaluation, benchmarks/PERF_NOTES.md "Fleet step op diet")
    p = tnop.astype(jnp.float64)
    fzmax = float(p.FZMAX)
    f_max, f_hi = mf_forces(p, 0.02, 0.02, 0.0, fzmax), mf_forces(p, 0.02, 0.02, 0.0, 1.5 * fzmax)
    assert float(f_hi.fx) == float(f_max.fx) and float(f_hi.fy) == float(f_max.fy)
    k_max, k_hi = T.linear_stiffness(p, fzmax), T.linear_stiffness(p, 1.5 * fzmax)
    assert [float(k) for k in k_hi] == [float(k) for k in k_max]
    # inside the range: the analytic Kxk and |Kya| (PKY1 < 0) at the load itself
    kx, ky = T.linear_stiffness(p, 4000.0)
    np.testing.assert_allclose(float(kx), float(jaxtire.mf61.slip_stiffness(p, 4000.0)), rtol=1e-12)
    np.testing.assert_allclose(float(ky), -float(jaxtire.mf61.cornering_stiffness(p, 4000.0)), rtol=1e-12)
    assert float(T.linear_stiffness(p, 0.9 * fzmax)[0]) < float(k_max[0])  # not saturated below FZMAX


# ---------------------------------------------------------------- effective rolling radius


def _re_by_hand(p, fz, omega):
    """Pacejka 2012 eq. A3.9 in numpy float64 from the file's coefficients (independent of jaxtire.vertical)."""
    c = {k: float(p.coef[k]) for k in p.coef}
    r0, fz0, v0 = c["UNLOADED_RADIUS"], c["FNOMIN"], c["LONGVL"]
    r_omega = r0 * (c["Q_RE0"] + c["Q_V1"] * (omega * r0 / v0) ** 2)
    cz = c["VERTICAL_STIFFNESS"] * (1.0 + c["PFZ1"] * (c["INFLPRES"] - c["NOMPRES"]) / c["NOMPRES"])
    n = fz / fz0
    return r_omega - fz0 / cz * (c["DREFF"] * np.arctan(c["BREFF"] * n) + c["FREFF"] * n)


def test_rolling_radius_mf_by_hand_and_fallbacks(tnop, simple, x64):
    p = tnop.astype(jnp.float64)
    fz = np.array([2000.0, 4000.0, 6000.0])
    for omega in (0.0, 90.0):
        np.testing.assert_allclose(
            np.asarray(T.rolling_radius(p, fz, omega, 0.31)), _re_by_hand(p, fz, omega), rtol=1e-12
        )
    # the figures quoted in the docstring (bundled TNO 205/60 R15, R0 = 0.3135 m), standing wheel
    np.testing.assert_allclose(np.asarray(T.rolling_radius(p, fz, 0.0, 0.31)), [0.3054, 0.3041, 0.3032], atol=6e-5)
    # no vertical model: the default, broadcast like the inputs
    np.testing.assert_array_equal(np.asarray(T.rolling_radius(simple, fz, 0.0, 0.31)), [0.31] * 3)
    for unfitted in (dict(Q_RE0=0.0), dict(DREFF=0.0, FREFF=0.0)):
        np.testing.assert_array_equal(np.asarray(T.rolling_radius(p.replace(**unfitted), fz, 0.0, 0.31)), [0.31] * 3)
    # differentiable in load and spin (finite, and Re falls with load)
    g = jax.grad(lambda f: T.rolling_radius(p, f, 50.0, 0.31))(4000.0)
    assert np.isfinite(float(g)) and float(g) < 0.0
