"""Bad inputs at the jaxtire API boundaries (issue 15): each raises ValidationError (a ValueError) whose
message names the field; integer inputs are stored as floats (no truncation)."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError


def test_make_params_value_overflowing_float32_refused():
    from jaxtire.params import make_params

    with pytest.raises(ValidationError, match=r"PDX1 = 1e\+39 is not finite.*float32"):
        make_params({"PDX1": 1e39}, dtype=jnp.float32)


def test_make_params_int_inputs_are_floats():
    from jaxtire.params import make_params

    p = make_params({"PCX1": np.int64(2), "PDX1": np.array([1, 2])})
    assert jnp.issubdtype(p.coef["PCX1"].dtype, jnp.floating) and float(p.coef["PCX1"]) == 2.0
    q = make_params({"PCX1": 1.6})
    assert abs(float(q.coef["PCX1"]) - 1.6) < 1e-6  # not truncated to 1
    with pytest.raises(ValidationError, match="dtype = int32 must be a floating dtype"):
        make_params({"PCX1": 1.6}, dtype=jnp.int32)


def test_make_params_batch_shapes_must_broadcast():
    from jaxtire.params import make_params

    with pytest.raises(ValidationError, match=r"PCX1.*\(2, 3\).*PDX1.*\(4,\)"):
        make_params({"PCX1": np.ones((2, 3)), "PDX1": np.ones(4)})
    p = make_params({"PCX1": np.full(3, 1.5), "PDX1": np.ones((2, 1))})  # broadcasting batches are fine
    assert p.coef["PCX1"].shape == (3,)


@pytest.mark.parametrize("entries, words", [([1.0], "surface entry 0"), (None, "entries = None"),
                                            ("asphalt_dry", "must be a sequence"), ([(1, 2, 3, 4)], "entry 0")])
def test_make_table_bad_entries(entries, words):
    from jaxtire.surfaces import make_table

    with pytest.raises(ValidationError, match=words):
        make_table(entries)


def test_spline_slips_compared_as_stored():
    from jaxtire.spline import make_spline, spline_curve

    with pytest.raises(ValidationError, match="asymptote_slip.*float32"):
        make_spline(extremum_slip=1.0, asymptote_slip=1.0 + 1e-9, dtype=jnp.float32)
    # a degenerate span reached by replacing leaves (no validation) is a step, not 0/0
    p = make_spline()._replace(asymptote_slip=jnp.float32(1.0))
    out = np.asarray(spline_curve(p, jnp.array([0.5, 1.0, 1.5, -2.0], jnp.float32)))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out[2:], [10000.0, -10000.0])  # the asymptote value beyond the extremum


@pytest.mark.parametrize("grip, words", [(6.0, "grip = 6.0 is outside the allowed range"),
                                         (-1.0, "grip = -1.0 is outside"), (float("nan"), "grip = nan is not finite")])
@pytest.mark.parametrize("model", ["mf", "simple"])
def test_surface_passed_to_forces_is_validated(grip, words, model):
    from jaxtire.simple import make_simple_params
    from jaxtire.surfaces import Surface
    from jaxtire.tir import load_tir
    from jaxtire.tire import tire_forces
    from tests.conftest import tir_path

    tire = load_tir(tir_path()) if model == "mf" else make_simple_params()
    with pytest.raises(ValidationError, match=words):
        tire_forces(tire, 0.1, 0.0, 0.0, 4000.0, 20.0, Surface(grip, 1.0, 0.0))
    f = tire_forces(tire, 0.1, 0.0, 0.0, 4000.0, 20.0, Surface(0.5, 1.0, 0.0))  # a valid one still runs
    assert np.isfinite(float(f.fx)) and float(f.fx) > 0


def test_saturated_inputs_match_the_documented_limits():
    """simple_forces: a slip beyond SLIP_SAT and a load beyond 20 fz0 give the forces at the limit."""
    from jaxtire.simple import FZ_SAT_FACTOR, SLIP_SAT, make_simple_params, simple_forces

    p = make_simple_params()
    a = simple_forces(p, 3e19, 0.0, 0.0, 1e30, 20.0)
    b = simple_forces(p, SLIP_SAT, 0.0, 0.0, FZ_SAT_FACTOR * float(p.fz0), 20.0)
    np.testing.assert_array_equal(np.asarray(a.fx), np.asarray(b.fx))
    assert np.isfinite(float(a.fx))
