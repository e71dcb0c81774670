"""Tests of jaxtire.fit: recovery of a real tire from noisy data, bounds, validation, fleets, CLI.

The expensive part is compiling the four stage programs (once per static configuration); the
recovery fit is done once in a module fixture and every test that fits again reuses that
configuration (same data layout, iterations and bounds) or a small one.
"""

import dataclasses
import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire import fit as F
from jaxtire.fit import api
from jaxtire.fit.objectives import stage_loss
from jaxtire.fit.reports import rmse_tables
from jaxtire.fit.stages import plan as make_plan
from jaxtire.mf61 import cornering_stiffness
from jaxtire.simple import default_simple_params
from jaxtire.tir import load_tir, save_tir

from tests.conftest import tir_path

ALL = ("Fx0", "Fy0", "Mz0", "Fx", "Fy", "Mz")
RANGES = ("FZMIN", "FZMAX", "KPUMIN", "KPUMAX", "ALPMIN", "ALPMAX", "CAMMIN", "CAMMAX")


@pytest.fixture(scope="module")
def true_tire():
    return load_tir(tir_path())


@pytest.fixture(scope="module")
def measured(true_tire):
    return F.synthetic_data(true_tire, noise=0.01, seed=0)


@pytest.fixture(scope="module")
def start(true_tire):
    # Generic passenger-tire curve coefficients; only geometry / FNOMIN / metadata from the file.
    return F.generic_tire(like=true_tire)


@pytest.fixture(scope="module")
def fitted(measured, start):
    return F.fit(measured, start)


def _rel_rmse_vs_truth(params, true_tire):
    clean = F.synthetic_data(true_tire, noise=0.0)
    with jax.enable_x64(True):
        rmse, peak, _, _ = rmse_tables(params, clean, ALL)
    return {c: rmse[c] / peak[c] for c in ALL}


def _kya_rel_err(params, true_tire, loads):
    with jax.enable_x64(True):
        fz = jnp.asarray(loads, jnp.float64)
        kya = jax.jit(cornering_stiffness)
        k_fit = np.asarray(kya(params.astype(jnp.float64), fz))
        k_true = np.asarray(kya(true_tire.astype(jnp.float64), fz))
    return np.abs(k_fit / k_true - 1.0)


# ---------------------------------------------------------------------------------------------
# Recovery of a real .tir from 1 % noise, from a generic start
# ---------------------------------------------------------------------------------------------


def test_start_is_genuinely_far_from_the_truth(start, true_tire):
    err = _rel_rmse_vs_truth(start, true_tire)
    assert min(err.values()) > 0.03, err  # every channel starts > 3 % of peak off
    loads = [2000.0, 4000.0, 6000.0, 8000.0]
    assert np.all(_kya_rel_err(start, true_tire, loads) > 0.10)


def test_recovers_curves_within_1_percent_of_peak(fitted, true_tire):
    err = _rel_rmse_vs_truth(fitted.params, true_tire)
    for c in ALL:
        assert err[c] < 0.01, (c, err)
    # against the noisy data the RMSE is the noise level (<= 1 % of peak), not far below it
    for c in ALL:
        assert 0.002 < fitted.report.rel_rmse[c] < 0.011, (c, fitted.report.rel_rmse)


def test_recovers_cornering_stiffness_within_2_percent(fitted, true_tire, measured):
    loads = F.load_cases(measured.fz)[0]
    assert len(loads) == 4
    err = _kya_rel_err(fitted.params, true_tire, np.concatenate([loads, [float(true_tire.FNOMIN)]]))
    assert np.all(err < 0.02), err


def test_report_contents(fitted, measured):
    r = fitted.report
    assert [s.name for s in r.stages] == ["Fx0", "Fy0", "Mz0", "combined", "Mz"]
    for s in r.stages:
        assert s.iterations == 150 and 1 <= s.converged_at <= 150
        assert s.loss_final < 0.05 * s.loss_start  # every stage improves by > 20x
    assert r.iterations == 750
    assert math.isclose(r.final_loss, sum(s.loss_final for s in r.stages))
    assert set(r.rmse) == set(ALL) and r.n_rows == {"Fx0": 200, "Fy0": 200, "Mz0": 200, "Fx": 400, "Fy": 400,
                                                 "Mz": 400}
    assert sorted(r.rmse_by_load["Fy0"]) == [2000.0, 4000.0, 6000.0, 8000.0]
    # the per-load RMSEs combine (equal row counts) to the channel RMSE
    per = np.array(list(r.rmse_by_load["Fx0"].values()))
    assert math.isclose(np.sqrt(np.mean(per**2)), r.rmse["Fx0"], rel_tol=1e-9)
    assert set(r.coefficients) == {k for s in r.stages for k in s.coefs}
    assert "PKY1" in r.coefficients and "QSX1" not in r.coefficients
    text = str(r)
    for word in ("Fx0", "Fy0", "Mz0", "combined", "RMSE", "PKY1", "2000 N"):
        assert word in text


def test_only_the_stage_coefficients_change(fitted, start, measured):
    free = {k for s in fitted.report.stages for k in s.coefs}
    ranges = F.api.validity_ranges(measured)  # set from the data
    for k in RANGES:
        assert float(fitted.params.coef[k]) == ranges[k]
    assert ranges["FZMIN"] == 2000.0 and ranges["FZMAX"] == 8000.0 and ranges["ALPMIN"] == -0.3
    for k, v in start.coef.items():
        if k in RANGES:
            continue
        if k not in free:  # unchanged, upcast from float32 through the shortest decimal
            assert np.float32(fitted.params.coef[k]) == np.asarray(v), k
            assert float(fitted.params.coef[k]) == float(str(np.asarray(v, np.float32))), k
    assert float(fitted.params.UNLOADED_RADIUS) == 0.3135 and float(fitted.params.LONGVL) == 16.7
    assert fitted.params.fittyp == start.fittyp and fitted.params.meta == start.meta


def test_x64_is_only_enabled_inside_the_fit(fitted, measured, start):
    before = bool(jax.config.read("jax_enable_x64"))
    F.fit(measured, start, stages=("Fy0",), n_iter=60)
    assert bool(jax.config.read("jax_enable_x64")) == before
    assert fitted.params.coef["PKY1"].dtype == jnp.float64


def test_fitted_tir_round_trips(fitted, tmp_path, measured):
    path = tmp_path / "fitted.tir"
    save_tir(fitted.params, path)
    text = path.read_text()
    assert re.search(r"(?m)^UNLOADED_RADIUS\s*=\s*0\.3135\b", text) and re.search(r"(?m)^LONGVL\s*=\s*16\.7\b", text)
    with jax.enable_x64(True):
        back = load_tir(path, dtype=jnp.float64)
        for k in fitted.report.coefficients:
            assert float(back.coef[k]) == float(fitted.params.coef[k]), k
        rmse, _, _, _ = rmse_tables(back, measured, ALL)
    for c in ALL:
        assert math.isclose(rmse[c], fitted.report.rmse[c], rel_tol=1e-9)


# ---------------------------------------------------------------------------------------------
# Bounds transform
# ---------------------------------------------------------------------------------------------

BOUND_CASES = [(-2.0, 5.0), (0.1, math.inf), (-math.inf, -0.1), (-math.inf, math.inf), (0.001, 1.0)]


@pytest.mark.parametrize("lo,hi", BOUND_CASES)
def test_bounds_round_trip_and_respect_bounds(lo, hi):
    fwd = jax.jit(lambda u: F.from_unconstrained(u, lo, hi))
    inv = jax.jit(lambda x: F.to_unconstrained(x, lo, hi))
    with jax.enable_x64(True):
        rng = np.random.default_rng(1)
        a = lo if math.isfinite(lo) else (hi - 10.0 if math.isfinite(hi) else -10.0)
        b = hi if math.isfinite(hi) else a + 20.0
        x = a + (b - a) * rng.uniform(0.001, 0.999, 200)
        np.testing.assert_allclose(np.asarray(fwd(inv(jnp.asarray(x)))), x, rtol=1e-9, atol=1e-12)
        u_wild = jnp.linspace(-60.0, 60.0, 241)
        y = np.asarray(fwd(u_wild))
        assert np.all(np.isfinite(y)) and np.all(y >= lo) and np.all(y <= hi)
        assert np.all(np.diff(y) >= 0) and y[-1] > y[0]  # increasing
        g = np.asarray(jax.jit(jax.vmap(jax.grad(lambda v: F.from_unconstrained(v, lo, hi))))(u_wild))
        assert np.all(np.isfinite(g)) and np.all(g >= 0) and g[120] > 0


def test_bounds_vectorised_and_edge_values():
    lo, hi = np.array([0.0, -1.0]), np.array([1.0, np.inf])
    with jax.enable_x64(True):
        u = F.to_unconstrained(jnp.array([0.0, -1.0]), lo, hi)  # on the lower bounds: moved inside
        x = np.asarray(F.from_unconstrained(u, lo, hi))
        assert np.all(np.isfinite(np.asarray(u)))
        assert 0.0 < x[0] < 1e-5 and -1.0 < x[1] < -1.0 + 1e-6
    with pytest.raises(ValueError, match="upper"):
        F.from_unconstrained(0.0, 2.0, 1.0)


def test_fit_respects_a_tight_bound(measured, start):
    # the true PDY1 is 0.878; bounded to [0.9, 1.2] (start 1.0) the fit presses against 0.9, never below
    free = F.fit(measured, start, stages=("Fy0",), n_iter=60)
    assert float(free.params.PDY1) < 0.89
    res = F.fit(measured, start, stages=("Fy0",), bounds={"PDY1": (0.9, 1.2)}, n_iter=60)
    v = float(res.params.PDY1)
    assert 0.9 <= v < 0.901
    assert res.report.rmse["Fy0"] > free.report.rmse["Fy0"]
    with pytest.raises(ValueError, match="PDY1 = 1 is outside its bounds"):
        F.fit(measured, start, stages=("Fy0",), bounds={"PDY1": (0.2, 0.5)})
    with pytest.raises(ValueError, match="not fittable"):
        F.fit(measured, start, bounds={"QSX1": (0.0, 1.0)})


@pytest.mark.filterwarnings("ignore::UserWarning")  # the shared file has keys jaxtire keeps but does not use
def test_default_bounds_admit_real_tires(measured):
    for name in ("TNO_car205_60R15.tir", "MagicFormula61_Parameters.tir"):
        p = load_tir(tir_path(name))
        plan, bounds_t = make_plan(measured, p, None, None, None)  # raises if a start value is out of bounds
        assert [s.name for s in plan] == ["Fx0", "Fy0", "Mz0", "combined", "Mz"]
        for k, (lo, hi) in bounds_t:
            assert lo <= float(p.coef[k]) <= hi


def test_loss_gradient_is_finite_everywhere(measured, start):
    plan, bounds_t = make_plan(measured, start, None, None, None)
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        d = api._device_data(measured, np.ones(measured.n_rows))
        p = start.astype(jnp.float64)
        for stage in plan:
            bd = dict(bounds_t)
            lo = np.array([bd[k][0] for k in stage.coefs])
            hi = np.array([bd[k][1] for k in stage.coefs])

            def loss(u, stage=stage, lo=lo, hi=hi):
                x = F.from_unconstrained(u, lo, hi)
                return stage_loss(p.replace(**{k: x[i] for i, k in enumerate(stage.coefs)}), d, stage)

            u0 = F.to_unconstrained(jnp.stack([p.coef[k] for k in stage.coefs]), lo, hi)
            us = jnp.stack([u0, u0 + 3.0 * rng.standard_normal(u0.shape), jnp.full_like(u0, 12.0),
                            jnp.full_like(u0, -12.0)])
            g = np.asarray(jax.jit(jax.vmap(jax.grad(loss)), compiler_options=F.compiler_options(True))(us))
            assert np.all(np.isfinite(g)), (stage.name, g)
            assert np.linalg.norm(g[0]) > 0  # the start is not stationary


# ---------------------------------------------------------------------------------------------
# Weighting by load case
# ---------------------------------------------------------------------------------------------


def test_row_weights():
    fz = np.array([2000.0] * 10 + [4010.0] * 30 + [3990.0] * 10)
    w = F.row_weights(fz, "equal")
    assert math.isclose(w[:10].sum(), w[10:].sum())
    w = F.row_weights(fz, {2000.0: 3.0, 4000.0: 0.5})
    assert np.all(w[:10] == 3.0) and np.all(w[10:] == 0.5)
    np.testing.assert_array_equal(F.row_weights(fz, lambda f: f / 1000.0), fz / 1000.0)
    with pytest.raises(ValueError, match="load_weights"):
        F.row_weights(fz, {2000.0: -1.0})
    with pytest.raises(ValueError, match="unknown mode"):
        F.row_weights(fz, "loud")


def test_load_weights_steer_the_fit(measured, start):
    plain = F.fit(measured, start, stages=("Fy0",), n_iter=60).report.rmse_by_load["Fy0"]
    low_only = F.fit(measured, start, stages=("Fy0",), n_iter=60,
                     load_weights={2000.0: 1.0, 4000.0: 0.0, 6000.0: 0.0, 8000.0: 0.0}).report.rmse_by_load["Fy0"]
    assert low_only[2000.0] < plain[2000.0]
    assert low_only[8000.0] > 2.0 * plain[8000.0]


# ---------------------------------------------------------------------------------------------
# Data validation and CSV
# ---------------------------------------------------------------------------------------------


def _cols(n=5):
    z = np.zeros(n)
    return dict(kappa=np.linspace(-0.1, 0.1, n), alpha=z, gamma=z, fz=np.full(n, 4000.0), fx=z + 1.0, fy=z, mz=z)


def test_measurement_set_accepts_good_data_and_broadcasts_scalars():
    c = _cols()
    c["gamma"] = 0.0
    ms = F.measurement_set(**c)
    assert ms.n_rows == 5 and ms.gamma.shape == (5,) and ms.fx.dtype == np.float64


@pytest.mark.parametrize("col,value,pattern", [
    ("fx", np.nan, r"column 'fx' has NaN/inf at row 3"),
    ("alpha", np.inf, r"column 'alpha' has NaN/inf at row 3"),
    ("fz", -4000.0, r"column 'fz' must be > 0 N .* got -4000 at row 3"),
    ("fz", 0.0, r"column 'fz' must be > 0 N"),
    ("alpha", 5.0, r"column 'alpha' must be in radians"),
])
def test_bad_values_name_column_and_row(col, value, pattern):
    c = _cols()
    c[col] = c[col].copy()
    c[col][3] = value
    with pytest.raises(ValueError, match=pattern):
        F.measurement_set(**c)


def test_bad_shapes():
    c = _cols()
    c["fy"] = np.zeros(4)
    with pytest.raises(ValueError, match=r"column 'fy' has shape \(4,\) but 'kappa' has \(5,\)"):
        F.measurement_set(**c)
    with pytest.raises(ValueError, match="no rows"):
        F.measurement_set(**_cols(0))
    with pytest.raises(ValueError, match="NaN/inf"):  # NaN in a measured channel = not measured; inf is refused
        F.fit(F.MeasurementSet(**{**_cols(), "mz": np.array([0, 0, np.inf, 0, 0.0])}))
    with pytest.raises(ValueError, match="NaN/inf"):
        F.fit(F.MeasurementSet(**{**_cols(), "fz": np.array([4e3, 4e3, np.nan, 4e3, 4e3])}))


def test_csv_round_trip_and_errors(tmp_path, measured):
    p = tmp_path / "m.csv"
    F.save_csv(measured, p)
    back = F.load_csv(p)
    for c in F.COLUMNS:
        np.testing.assert_array_equal(getattr(back, c), getattr(measured, c))
    bad = tmp_path / "bad.csv"
    bad.write_text("kappa,alpha,gamma,fx,fy\n0,0,0,1,2\n")
    with pytest.raises(ValueError, match="missing column.*fz"):
        F.load_csv(bad)
    bad.write_text("kappa,alpha,gamma,fz\n0,0,0,4000\n")
    with pytest.raises(ValueError, match="no measured column"):
        F.load_csv(bad)
    ok = tmp_path / "no_mz.csv"  # a measured channel may be absent: NaN = not measured
    ok.write_text("kappa,alpha,gamma,fz,fx,fy\n0,0,0,4000,1,2\n")
    assert np.isnan(F.load_csv(ok).mz).all() and F.load_csv(ok).fy[0] == 2.0
    bad.write_text("kappa,alpha,gamma,fz,fx,fy,mz\n0,0,0,4000,1,2,3\n0,0,0,4000,abc,2,3\n")
    with pytest.raises(ValueError, match=r"line 3, column 'fx': 'abc' is not a number"):
        F.load_csv(bad)
    bad.write_text("kappa,alpha,gamma,fz,fx,fy,mz\n0,0,0,4000,1,2,3\n\n0,0,0,-10,1,2,3\n")
    with pytest.raises(ValueError, match=r"bad.csv: .*'fz' must be > 0 N .* at line 4"):
        F.load_csv(bad)
    bad.write_text("fz,kappa,alpha,gamma,fx,fy,mz,note\n4000,0,0,0,1,2,3,x\n4000,0,0,0,1,nan,3,y\n")
    with pytest.raises(ValueError, match=r"column 'fy' has NaN/inf at line 3"):
        F.load_csv(bad)
    bad.write_text("kappa,alpha,gamma,fz,fx,fy,mz\n")
    with pytest.raises(ValueError, match="no rows"):
        F.load_csv(bad)


# ---------------------------------------------------------------------------------------------
# Fleet: one vmapped program equals individual fits
# ---------------------------------------------------------------------------------------------


def test_fit_many_equals_individual_fits(true_tire, start):
    tires = F.perturbed_tires(true_tire, 8, spread=0.1, seed=3)
    assert not np.allclose(np.asarray(tires.PKY1), float(true_tire.PKY1))
    data = F.synthetic_data(tires, n_slip=20, loads=[2000.0, 4000.0, 6000.0], noise=0.01, seed=4)
    assert data.fx.shape == (8, 3 * 4 * 20)
    # pure (Fy0) and combined stages: both model branches under vmap, half the compile time of all four
    kw = dict(stages=("Fy0", "combined"), method="adam", n_iter=200, learning_rate=0.03, fast_compile=True)
    fleet = F.fit_many(data, start, **kw)
    rep = fleet.report
    assert rep.n_tires == 8 and rep.seconds > 0 and rep.seconds_per_tire == rep.seconds / 8
    assert rep.rmse["Fy0"].shape == (8,) and set(rep.rmse) == {"Fy0", "Fx", "Fy"} and "per tire" in str(rep)
    for i in (0, 5):
        one = F.fit(F.MeasurementSet(*(np.asarray(x)[i] for x in data)), start, **kw)
        for k in one.report.coefficients:
            np.testing.assert_allclose(float(fleet.params.coef[k][i]), float(one.params.coef[k]), rtol=1e-8,
                                       atol=1e-12, err_msg=k)
        assert math.isclose(rep.final_loss[i], one.report.final_loss, rel_tol=1e-8)
        np.testing.assert_allclose(rep.rmse["Fx"][i], one.report.rmse["Fx"], rtol=1e-8)
    # distinct tires get distinct fits, each close to its own data
    assert np.unique(np.round(np.asarray(fleet.params.PDY1), 6)).size == 8
    assert np.all(rep.rel_rmse["Fy0"] < 0.02)


# ---------------------------------------------------------------------------------------------
# Simple model and CLI
# ---------------------------------------------------------------------------------------------


def test_simple_model_recovery():
    base = default_simple_params()
    true = dataclasses.replace(base, **{k: jnp.asarray(v) for k, v in dict(
        Bx=15.0, Dx=1.15, Cy=1.45, Dy=0.95, Ey=-0.5, k_load=0.1, trail=0.035, slide_ratio=0.7, beta=5.0).items()})
    data = F.synthetic_data(true, noise=0.01, n_slip=40, loads=[2000.0, 4000.0, 6000.0])
    res = F.fit_simple(data, base)
    assert [s.name for s in res.report.stages] == ["pure", "Mz0", "combined"]
    clean = F.synthetic_data(true, noise=0.0, n_slip=40, loads=[2000.0, 4000.0, 6000.0])
    with jax.enable_x64(True):
        rmse, peak, _, _ = rmse_tables(res.params, clean, ALL[:5])
        rmse0, _, _, _ = rmse_tables(base, clean, ALL[:5])
    for c in ALL[:5]:  # the simple model fits no combined Mz (no s Fx arm)
        assert rmse[c] / peak[c] < 0.01, (c, rmse[c] / peak[c])
        assert rmse0[c] / peak[c] > 0.02, c  # and the start was far off
    for k, tol in (("Dx", 0.01), ("Dy", 0.01), ("k_load", 0.05), ("trail", 0.03)):
        assert abs(float(getattr(res.params, k)) / float(getattr(true, k)) - 1) < tol, k


def test_cli_default_run(tmp_path, capsys, fitted):
    out = tmp_path / "fitted.tir"
    csv = tmp_path / "data.csv"
    assert F.main(["--out", str(out), "--save-data", str(csv)]) == 0
    text = capsys.readouterr().out
    assert "Kya error" in text and "RMSE" in text and f"wrote {out}" in text
    with jax.enable_x64(True):
        p = load_tir(out, dtype=jnp.float64)
    np.testing.assert_allclose(float(p.PKY1), float(fitted.params.PKY1), rtol=1e-9)  # same data, same fit
    assert F.load_csv(csv).n_rows == 800
