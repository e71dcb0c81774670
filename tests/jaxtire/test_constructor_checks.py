"""Issue 29, items 7-9: one constructor check (jaxtire.validation.check_fields) and the Surface check at every
public tire entry."""

import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire.mf61 import cornering_stiffness, peak_values, slip_stiffness
from jaxtire.surfaces import Surface, make_surface, make_table
from jaxtire.validation import ValidationError, check_fields

# 1e-46 and 1e-300 are below float32's smallest normal number (1.18e-38): stored as 0 they divide by zero later
UNDERFLOW = [
    (lambda: jaxtire.make_params({"LFZO": 1e-300}), "LFZO = 1e-300 underflows"),
    (lambda: jaxtire.make_params({"FNOMIN": 1e-46}), "FNOMIN = 1e-46 underflows"),
    (lambda: jaxtire.make_simple_params(fz0=1e-46), "fz0 = 1e-46 underflows"),
    (lambda: jaxtire.make_spline(stiffness=1e-40), "stiffness = 1e-40 underflows"),
    (lambda: jaxtire.make_load_table([1000.0, 2000.0], 10.0, 1.5, 1e-45, 0.0), "D = 1e-45 underflows"),
    (lambda: make_surface(drag=1e-45), "drag = 1e-45 underflows"),
]
INTEGER = [
    lambda d: jaxtire.make_params(dtype=d),
    lambda d: jaxtire.make_simple_params(dtype=d),
    lambda d: jaxtire.make_spline(dtype=d),
    lambda d: jaxtire.make_load_table([1000.0, 2000.0], 10.0, 1.58, 1.0, 0.0, dtype=d),
    lambda d: make_surface(0.65, dtype=d),
]
SHAPES = [
    (lambda: jaxtire.make_params({"PCX1": np.full(2, 1.6), "PDX1": np.full(3, 1.0)}), "PCX1 (2,), PDX1 (3,)"),
    (lambda: jaxtire.make_simple_params(Bx=np.full(2, 10.0), By=np.full(3, 10.0)), "Bx (2,), By (3,)"),
    (lambda: jaxtire.make_spline(extremum_value=np.full(2, 1e4), stiffness=np.ones(3)), "extremum_value (2,), stiffness (3,)"),
    (lambda: make_surface(np.full(2, 0.8), np.ones(3)), "grip (2,), rolling_resistance (3,)"),
]


@pytest.mark.parametrize("make, message", UNDERFLOW)
def test_values_that_underflow_are_refused_naming_the_field(make, message):
    with pytest.raises(ValidationError, match=message):
        make()


def test_underflow_is_judged_in_the_storage_dtype():
    assert check_fields({"x": 1e-40}, source="t", dtype=jnp.float64) == np.float64  # normal in float64
    check_fields({"x": 0.0, "y": 1.2e-38}, source="t", dtype=jnp.float32)  # 0 and the smallest normal are fine


@pytest.mark.parametrize("make", INTEGER)
@pytest.mark.parametrize("dtype", [jnp.int32, jnp.bool_])
def test_integer_dtypes_are_refused(make, dtype):
    with pytest.raises(ValidationError, match=r"dtype = (int32|bool) must be a floating dtype"):
        make(dtype)


@pytest.mark.parametrize("make, message", SHAPES)
def test_batch_shapes_that_do_not_broadcast_are_refused_naming_the_fields(make, message):
    with pytest.raises(ValidationError, match=r"batch shapes do not broadcast: " + message.replace("(", r"\(").replace(")", r"\)")):
        make()


RAGGED = [
    (lambda: jaxtire.make_params({"PCX1": [1.6, [1.5, 1.4]]}), r"PCX1 is a ragged .* expected a scalar or one rectangular"),
    (lambda: jaxtire.make_params({"PDX1": [1.0, 1.1], "PCX1": [[1.6, 1.5], [1.4]]}), r"PCX1 is a ragged .* \(2,\)"),
    (lambda: jaxtire.make_simple_params(Bx=[[10.0], [10.0, 11.0]]), r"Bx is a ragged"),
    (lambda: make_surface([0.8, [0.7, 0.6]]), r"grip is a ragged"),
]


@pytest.mark.parametrize("make, message", RAGGED)
def test_ragged_lists_are_refused_naming_the_field_and_the_expected_shape(make, message):
    """Issue 38 item 5: was numpy's 'inhomogeneous shape' message, naming neither field nor shape."""
    with pytest.raises(ValidationError, match=message):
        make()


def test_make_table_names_the_entry_and_field_of_an_array_value():
    with pytest.raises(ValidationError, match=r"surface entry 1: grip = .* must be one number"):
        make_table(["asphalt_dry", (np.array([1.0, 0.5]), 1.0, 0.0)])


BAD_SURFACES = [Surface(6.0, 1.0, 0.0), Surface(float("nan"), 1.0, 0.0), Surface(-1.0, 1.0, 0.0)]
ENTRIES = {
    "mf_forces": lambda s: jaxtire.mf_forces(jaxtire.default_tire(), 0.05, 0.05, surface=s),
    "evaluate": lambda s: jaxtire.evaluate(jaxtire.default_tire(), 0.05, 0.05, surface=s),
    "simple_forces": lambda s: jaxtire.simple_forces(jaxtire.default_simple_params(), 0.05, 0.05, surface=s),
    "tire_forces": lambda s: jaxtire.tire_forces(jaxtire.default_simple_params(), 0.05, 0.05, surface=s),
    "cornering_stiffness": lambda s: cornering_stiffness(jaxtire.default_tire(), surface=s),
    "slip_stiffness": lambda s: slip_stiffness(jaxtire.default_tire(), surface=s),
    "peak_values": lambda s: peak_values(jaxtire.default_tire(), surface=s),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("surface", BAD_SURFACES, ids=["grip6", "gripnan", "grip-1"])
def test_every_public_entry_checks_a_concrete_surface(entry, surface):
    with pytest.raises(ValidationError, match=r"grip = "):
        ENTRIES[entry](surface)
