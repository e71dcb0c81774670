"""sims.studies.variation / designs / sensitivity (without a scenario): distributions, designs, paths and
their validation, the copula, the grid, and Sobol' indices of the Ishigami function."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError
from sims.studies import designs, sensitivity
from sims.studies import variation as va
from sims.studies.variation import Variation
from tests.sims.studies.test_sensitivity import _ishigami, _ishigami_indices


def test_distributions_match_their_laws():
    """Each distribution's draws (4096 Sobol' points) against its CDF (Kolmogorov-Smirnov), truncation kept."""
    n = 4096
    u = designs.unit_design("sobol", n, 1, 0)[:, 0]
    norm = va.from_unit(Variation("vehicle.chassis.mass", "normal", mean=1400.0, sd=120.0), u)
    assert sps.kstest(norm, sps.norm(1400, 120).cdf).statistic < 0.01
    logn = va.from_unit(Variation("vehicle.chassis.mass", "lognormal", median=1400.0, sigma=0.1), u)
    assert sps.kstest(logn, sps.lognorm(0.1, scale=1400).cdf).statistic < 0.01
    trunc = va.from_unit(Variation("vehicle.chassis.mass", "normal", mean=1400.0, sd=120.0, low=1300, high=1450), u)
    assert trunc.min() >= 1300 and trunc.max() <= 1450
    tn = sps.truncnorm((1300 - 1400) / 120, (1450 - 1400) / 120, 1400, 120)
    assert sps.kstest(trunc, tn.cdf).statistic < 0.01
    uni = va.from_unit(Variation("vehicle.tire_scale.mu_x", "uniform", "factor", 0.8, 1.1), u)
    assert sps.kstest(uni, sps.uniform(0.8, 0.3).cdf).statistic < 0.01
    ch = va.from_unit(Variation("road.surface", "choice", values=(1, 4), weights=(3, 1)), u)
    assert np.mean(ch == 1) == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize("design", ["random", "sobol", "lhs"])
def test_designs_seeded_and_uniform(design):
    a = designs.unit_design(design, 256, 3, 7)
    assert a.shape == (256, 3) and np.array_equal(a, designs.unit_design(design, 256, 3, 7))
    assert not np.array_equal(a, designs.unit_design(design, 256, 3, 8))
    assert ((a >= 0) & (a < 1)).all()
    if design == "lhs":  # one point per stratum of every factor
        assert all(np.array_equal(np.sort(np.floor(a[:, j] * 256)), np.arange(256)) for j in range(3))


def test_saltelli_layout():
    n, d = 8, 3
    x = designs.saltelli(n, d, 0)
    a, b, ab = designs.split_saltelli(x, n, d)
    for i in range(d):
        expect = a.copy()
        expect[:, i] = b[:, i]
        assert np.array_equal(ab[i], expect)
    with pytest.raises(ValidationError, match="power of 2"):
        designs.saltelli(10, 2, 0)


def test_grid_cross_product_and_copula():
    vs = [
        Variation("vehicle.chassis.mass", "uniform", low=1200, high=1500),
        Variation("vehicle.tire_scale.mu_x", "uniform", "factor", 0.8, 1.2),
        Variation("road.surface", "grid", values=("asphalt_dry", "asphalt_wet")),
        Variation("scenario.speed", "grid", values=(20.0, 25.0, 30.0)),
    ]
    d = va.draw(vs, 2000, 3, "lhs", correlation=[["vehicle.chassis.mass", "vehicle.tire_scale.mu_x", 0.7]])
    assert d.n == 6 * 2000 and d.grid_cells == 6
    cells = set(zip(d.columns["road.surface"], d.columns["scenario.speed"], strict=True))
    ids = (surface_id("asphalt_dry"), surface_id("asphalt_wet"))
    assert cells == {(s, v) for s in ids for v in (20.0, 25.0, 30.0)}
    # common random numbers: every cell has the same random draws
    m = d.columns["vehicle.chassis.mass"]
    assert np.array_equal(m[:2000], m[2000:4000])
    # Gaussian copula: Spearman's rho = (6 / pi) asin(rho / 2) for a normal copula
    rs = sps.spearmanr(m[:2000], d.columns["vehicle.tire_scale.mu_x"][:2000]).statistic
    assert rs == pytest.approx(6 / math.pi * math.asin(0.35), abs=0.03)


@pytest.mark.parametrize(
    "v, match",
    [
        (Variation("vehicle.chassis.brake_bias_front", "uniform", low=0.5, high=1.2), r"high = 1.2 is outside"),
        (Variation("vehicle.chassis.mass", "uniform", low=1500, high=1200), "swap"),
        (Variation("vehicle.chassis.nope", "uniform", low=1, high=2), "names nothing"),
        (Variation("vehicle.tire_scale.mu_z", "uniform", low=1, high=2), "tire scale"),
        (Variation("road.surface", "choice", values=("tarmac",)), "unknown surface"),
        (Variation("vehicle.chassis.mass", "normal", mean=1, sd=0), "sd = 0"),
        (Variation("driver.target_slip", "uniform", low=0.1, high=1.5), "high = 1.5"),
        (Variation("vehicle.chassis.mass", "choice", values=(1, 2), weights=(1,)), "one weight per value"),
    ],
)
def test_bad_variations_name_field_and_range(v, match):
    with pytest.raises(ValidationError, match=match):
        va.draw([v], 4, 0)


def test_sobol_indices_of_ishigami_match_analytic():
    """Ishigami (a = 7, b = 0.1, X_i ~ U(-pi, pi)): analytic S_i and S_Ti (Sobol' & Levitan 1999) inside the
    bootstrap intervals (widened by the estimator's own small bias allowance of 0.02)."""
    n = 4096
    first, total, _ = _ishigami_indices()
    vs = [Variation(f"scenario.x{i}", "uniform", low=-math.pi, high=math.pi) for i in range(3)]
    d = va.draw(vs, n, 1, "saltelli")
    x = np.stack([d.columns[f"scenario.x{i}"] for i in range(3)], axis=1)
    res = sensitivity.sobol(_ishigami(x), n, [f"x{i}" for i in range(3)], n_resamples=100, seed=1)
    for i in range(3):
        r = res[f"x{i}"]
        assert r["first_low"] - 0.02 <= first[i] <= r["first_high"] + 0.02, (i, r, first[i])
        assert r["total_low"] - 0.02 <= total[i] <= r["total_high"] + 0.02, (i, r, total[i])
        assert r["first"] == pytest.approx(first[i], abs=0.05) and r["total"] == pytest.approx(total[i], abs=0.05)
    # the estimators are scipy's (an independent implementation of the same formulas)
    f_a, f_b, f_ab = designs.split_saltelli(_ishigami(x), n, 3)
    ref = sps.sobol_indices(func=dict(f_A=f_a[None], f_B=f_b[None], f_AB=f_ab[:, None]), n=n)
    s1, st = sensitivity.indices(f_a, f_b, f_ab)
    np.testing.assert_allclose(s1, np.ravel(ref.first_order), rtol=1e-10)
    np.testing.assert_allclose(st, np.ravel(ref.total_order), rtol=1e-10)


def test_pathwise_gradients_of_a_known_function():
    """d/dx_k of m_k = x_k^2 y_k and of sin(y_k): per-vehicle derivatives, summarised."""
    x = jnp.linspace(0.5, 2.0, 5)
    y = jnp.linspace(1.0, 3.0, 5)

    def fn(v):
        return {"m": v["x"] ** 2 * v["y"], "s": jnp.sin(v["y"]) + 0 * v["x"]}

    g = sensitivity.pathwise(fn, {"x": x, "y": y}, ["m", "s"])
    np.testing.assert_allclose(g["m"]["x"], 2 * x * y, rtol=1e-6)
    np.testing.assert_allclose(g["m"]["y"], x**2, rtol=1e-6)
    np.testing.assert_allclose(g["s"]["y"], np.cos(y), rtol=1e-6)
    s = sensitivity.summarise_gradients(g)
    assert s["m"]["x"]["mean"] == pytest.approx(float(jnp.mean(2 * x * y)), rel=1e-6)
    assert jax.tree.structure(s)  # JSON-ready dicts
