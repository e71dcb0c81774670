"""sims.studies.sensitivity and the structured designs on functions with known answers (issue 37 item 4):
Sobol' first, total and second-order indices of the Ishigami function against their analytic values, the
intervals clipped to [0, 1]; Morris' elementary effects exact on a linear function, mu* against its exact
expectation over the grid, and Morris' (1991) 20-factor test function screened as Morris found it."""

import itertools
import math

import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.studies import designs, sensitivity
from sims.studies import variation as va
from sims.studies.variation import Variation

A, B = 7.0, 0.1


def _ishigami(x):
    return np.sin(x[:, 0]) + A * np.sin(x[:, 1]) ** 2 + B * x[:, 2] ** 4 * np.sin(x[:, 0])


def _ishigami_indices():
    """Analytic first, total and second-order indices of Ishigami (Sobol' & Levitan 1999): ``S_13`` the one
    interaction."""
    v = A**2 / 8 + B * math.pi**4 / 5 + B**2 * math.pi**8 / 18 + 0.5
    v1 = 0.5 * (1 + B * math.pi**4 / 5) ** 2
    v2 = A**2 / 8
    v13 = B**2 * math.pi**8 * (1 / 18 - 1 / 50)
    first = [v1 / v, v2 / v, 0.0]
    total = [(v1 + v13) / v, v2 / v, v13 / v]
    second = {(0, 1): 0.0, (0, 2): v13 / v, (1, 2): 0.0}
    return first, total, second


def test_saltelli_second_order_layout():
    """The second-order design: the first-order design's n (d + 2) rows, then B_A^(i) (B with column i from
    A); n (2 d + 2) rows."""
    n, d = 8, 3
    x = designs.saltelli(n, d, 5, second_order=True)
    assert x.shape == (designs.saltelli_rows(n, d, True), d) == (n * (2 * d + 2), d)
    np.testing.assert_array_equal(x[: n * (d + 2)], designs.saltelli(n, d, 5))
    a, b, _ = designs.split_saltelli(x, n, d)
    ba = designs.split_second_order(x, n, d)
    for i in range(d):
        want = b.copy()
        want[:, i] = a[:, i]
        np.testing.assert_array_equal(ba[i], want)


def test_sobol_first_total_second_order_of_ishigami():
    """Ishigami (X_i ~ U(-pi, pi)), n = 4096: every analytic index (first, total, S_12, S_13, S_23) inside
    its clipped bootstrap interval (widened by 0.02 for the estimators' bias) and within 0.05; every
    interval inside [0, 1], the clipped bounds listed with their raw values."""
    n = 4096
    first, total, second = _ishigami_indices()
    vs = [Variation(f"scenario.x{i}", "uniform", low=-math.pi, high=math.pi) for i in range(3)]
    d = va.draw(vs, n, 1, "saltelli", options=dict(second_order=True))
    x = np.stack([d.columns[f"scenario.x{i}"] for i in range(3)], axis=1)
    names = [f"x{i}" for i in range(3)]
    res = sensitivity.sobol(_ishigami(x), n, names, second_order=True, n_resamples=200, seed=1)
    assert sensitivity.sobol_factors(res) == names
    for i, k in enumerate(names):
        r = res[k]
        for key, want in (("first", first[i]), ("total", total[i])):
            assert r[f"{key}_low"] - 0.02 <= want <= r[f"{key}_high"] + 0.02, (k, key, r, want)
            assert r[key] == pytest.approx(want, abs=0.05), (k, key)
    assert [p["factors"] for p in res["second_order"]] == [["x0", "x1"], ["x0", "x2"], ["x1", "x2"]]
    for p, (jk, want) in zip(res["second_order"], second.items(), strict=True):
        assert p["second_low"] - 0.02 <= want <= p["second_high"] + 0.02, (jk, p, want)
        assert p["second"] == pytest.approx(want, abs=0.05), jk
    bounds = [v for k in names for key in ("first", "total") for v in (res[k][f"{key}_low"], res[k][f"{key}_high"])]
    bounds += [v for p in res["second_order"] for v in (p["second_low"], p["second_high"])]
    assert all(0.0 <= v <= 1.0 for v in bounds)
    assert res["clipped"] and all(c["raw"] < 0.0 or c["raw"] > 1.0 for c in res["clipped"])
    assert {"factor": "x2", "bound": "first_low"} in [{k: c[k] for k in ("factor", "bound")} for c in res["clipped"]]
    assert "clipped to [0, 1]" in res["interval"]
    # the first-order part is the first-order design's: the same indices from its n (d + 2) rows
    y1 = _ishigami(x)[: n * 5]
    f_a, f_b, f_ab = designs.split_saltelli(y1, n, 3)
    s1, st = sensitivity.indices(f_a, f_b, f_ab)
    np.testing.assert_allclose(s1, [res[k]["first"] for k in names], rtol=1e-12)
    np.testing.assert_allclose(st, [res[k]["total"] for k in names], rtol=1e-12)
    with pytest.raises(ValidationError, match="n \\(2 d \\+ 2\\)"):
        sensitivity.sobol(y1, n, names, second_order=True)


def test_morris_design_layout():
    """r trajectories of d + 1 rows: consecutive rows differ in exactly one factor, by the step Delta (p - 1)
    / p of the unit scale, each factor once per trajectory; the values are the midpoints of p strata."""
    r, d, p = 20, 5, 6
    u = designs.morris(r, d, 3, levels=p)
    assert u.shape == (r * (d + 1), d)
    assert np.array_equal(u, designs.morris(r, d, 3, levels=p)) and not np.array_equal(u, designs.morris(r, d, 4, p))
    np.testing.assert_allclose(np.sort(np.unique(u)), (np.arange(p) + 0.5) / p)
    du = np.diff(u.reshape(r, d + 1, d), axis=1)
    moved = np.abs(du) > 0
    assert (moved.sum(axis=2) == 1).all() and (moved.sum(axis=1) == 1).all()
    np.testing.assert_allclose(np.abs(du[moved]), designs.morris_step(p) * (p - 1) / p)
    with pytest.raises(ValidationError, match="levels = 5 must be even"):
        designs.morris(4, 2, 0, levels=5)
    pop = designs.population_rows("morris", r, d, np.arange(r * (d + 1)))
    assert pop.sum() == r and pop[:: d + 1].all()


def test_morris_linear_function_is_exact():
    """y = sum_i a_i u_i: every elementary effect is a_i (mu = a_i, mu* = |a_i|, sigma = 0), ranked by |a_i|."""
    a = np.array([1.0, -2.0, 0.0, 5.0])
    u = designs.morris(12, 4, 0)
    res = sensitivity.morris(u @ a, u, ["a", "b", "c", "d"])
    for k, ak in zip("abcd", a, strict=True):
        assert res[k]["mu"] == pytest.approx(ak) and res[k]["mu_star"] == pytest.approx(abs(ak))
        assert res[k]["sigma"] == pytest.approx(0.0, abs=1e-9)
    assert res["ranking"] == ["d", "b", "a", "c"]


def _sobol_g(u, a=(0.0, 1.0, 4.5, 9.0)):
    a = np.asarray(a)
    return np.prod((np.abs(4.0 * u - 2.0) + a) / (1.0 + a), axis=-1)


def _exact_mu_star(f, d: int, p: int) -> np.ndarray:
    """``E|EE_i|`` of the Morris design on the grid of ``p`` levels: the moving factor from a level ``j`` of
    the lower half to ``j + p / 2``, every other factor uniform over the ``p`` levels, independently (even
    ``p``), enumerated."""
    levels = (np.arange(p) + 0.5) / p
    step = designs.morris_step(p) * (p - 1) / p
    out = np.zeros(d)
    for i in range(d):
        others = np.array(list(itertools.product(levels, repeat=d - 1)))
        vals = []
        for lo in levels[: p // 2]:
            x0 = np.insert(others, i, lo, axis=1)
            x1 = np.insert(others, i, lo + step, axis=1)
            vals.append(np.abs(f(x1) - f(x0)) / step)
        out[i] = np.mean(vals)
    return out


def test_morris_mu_star_against_its_exact_value_and_sobol_g_ordering():
    """Sobol's G function (a = 0, 1, 4.5, 9: importance falls with a): the estimated mu* of 400 trajectories
    within its 95 % t interval (widened to 4 standard errors) of the exact grid expectation, and ranked x0
    > x1 > x2 > x3 as the a's say (SALib's documented ordering for G)."""
    d, p, r = 4, 4, 400
    u = designs.morris(r, d, 7, levels=p)
    names = [f"x{i}" for i in range(d)]
    res = sensitivity.morris(_sobol_g(u), u, names)
    exact = _exact_mu_star(_sobol_g, d, p)
    for i, k in enumerate(names):
        half = (res[k]["mu_star_high"] - res[k]["mu_star_low"]) / 2
        assert abs(res[k]["mu_star"] - exact[i]) <= 2.1 * half, (k, res[k], exact[i])
    assert res["ranking"] == names
    assert list(np.argsort(-exact)) == list(range(d))


def _morris_1991(u, seed=0):
    """Morris' (1991) 20-factor test function: ``w_i = 2 (u_i - 1/2)`` (``2 (1.1 u_i / (u_i + 0.1) - 1/2)``
    for i = 3, 5, 7), ``beta_i = 20`` (i <= 10), ``beta_ij = -15`` (i, j <= 6), ``beta_ijl = -10`` (<= 5),
    ``beta_ijls = 5`` (<= 4), the other first and second-order coefficients standard normal (``seed``)."""
    rng = np.random.default_rng(seed)
    d = 20
    w = 2.0 * (u - 0.5)
    for i in (2, 4, 6):
        w[:, i] = 2.0 * (1.1 * u[:, i] / (u[:, i] + 0.1) - 0.5)
    b1 = np.concatenate([np.full(10, 20.0), rng.normal(size=10)])
    b2 = rng.normal(size=(d, d))
    b2[:6, :6] = -15.0
    y = rng.normal() + w @ b1
    for i, j in itertools.combinations(range(d), 2):
        y = y + b2[i, j] * w[:, i] * w[:, j]
    for i, j, k in itertools.combinations(range(5), 3):
        y = y - 10.0 * w[:, i] * w[:, j] * w[:, k]
    return y + 5.0 * w[:, 0] * w[:, 1] * w[:, 2] * w[:, 3]


def test_morris_screens_morris_1991_function():
    """Morris' own example, 50 trajectories (1050 runs): factors 1-10 influential, 11-20 not (every mu* of
    the first ten > 2.5 x the largest of the rest); 8-10 nearly linear (sigma / mu* < 0.25) and 1-7
    non-linear or interacting (sigma / mu* > 0.4): Morris' (1991) conclusions."""
    names = [f"x{i + 1}" for i in range(20)]
    u = designs.morris(50, 20, 0)
    res = sensitivity.morris(_morris_1991(u), u, names)
    mu = np.array([res[k]["mu_star"] for k in names])
    ratio = np.array([res[k]["sigma"] for k in names]) / mu
    assert mu[:10].min() > 2.5 * mu[10:].max(), mu
    assert set(res["ranking"][:10]) == set(names[:10])
    assert (ratio[7:10] < 0.25).all() and (ratio[:7] > 0.4).all(), ratio


def test_structured_designs_in_draw():
    """draw() builds them (n (2 d + 2) rows with second_order; r (d + 1) for morris) and refuses a grid with
    either and a correlation with morris, naming the design."""
    vs = [Variation(f"scenario.x{i}", "uniform", low=0.0, high=1.0) for i in range(3)]
    assert va.draw(vs, 8, 0, "saltelli", options=dict(second_order=True)).n == 8 * 8
    m = va.draw(vs, 5, 0, "morris", options=dict(levels=6))
    assert m.n == 5 * 4
    np.testing.assert_array_equal(m.columns["scenario.x1"], designs.morris(5, 3, 0, 6)[:, 1])
    grid = [*vs, Variation("scenario.y", "grid", values=(1.0, 2.0))]
    with pytest.raises(ValidationError, match="'morris' design cannot be combined with 'grid'"):
        va.draw(grid, 4, 0, "morris")
    with pytest.raises(ValidationError, match="correlation with a 'morris' design"):
        va.draw(vs, 4, 0, "morris", correlation=[["scenario.x0", "scenario.x1", 0.5]])
