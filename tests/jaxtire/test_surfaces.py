"""Surface table: reference presets, lookup, validation and ploughing drag."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire import surfaces

# The reference table (shared/reference surfaces page), in id order: name, grip, rolling resistance, drag.
REFERENCE_TABLE = [
    ("asphalt_dry", 1.0, 1.0, 0.0), ("concrete", 0.95, 0.9, 0.0), ("asphalt_wet", 0.65, 1.1, 0.0),
    ("cobbles", 0.75, 1.6, 0.0), ("gravel", 0.6, 2.0, 0.02), ("dirt", 0.65, 1.5, 0.01),
    ("grass", 0.45, 2.5, 0.03), ("sand", 0.4, 3.0, 0.12), ("snow", 0.3, 1.5, 0.04),
    ("ice", 0.12, 0.8, 0.0), ("kerb", 0.9, 1.2, 0.0),
]


def test_presets_match_reference_table():
    assert surfaces.PRESET_NAMES == tuple(r[0] for r in REFERENCE_TABLE)
    table = surfaces.preset_table()
    for i, (name, grip, rr, drag) in enumerate(REFERENCE_TABLE):
        assert surfaces.surface_id(name) == i
        assert tuple(surfaces.preset(name)) == (grip, rr, drag)
        got = surfaces.lookup(table, i)
        np.testing.assert_allclose([float(v) for v in got], [grip, rr, drag], rtol=1e-6)
    assert surfaces.surface_id("snow") == 8
    assert tuple(surfaces.REFERENCE) == (1.0, 1.0, 0.0)
    np.testing.assert_array_equal(surfaces.default_table().grip, [1.0])
    with pytest.raises(ValueError, match="unknown surface 'lava'.*asphalt_dry"):
        surfaces.surface_id("lava")


def test_ids_beyond_the_table_read_as_id_0():
    table = surfaces.make_table(["ice", "sand", "gravel"])  # id 0 is ice here, not asphalt
    ids = jnp.array([[0, 1, 2], [3, 15, -1]])
    got = surfaces.lookup(table, ids)
    np.testing.assert_allclose(got.grip, [[0.12, 0.4, 0.6], [0.12, 0.12, 0.12]], rtol=1e-6)
    np.testing.assert_allclose(got.drag, [[0.0, 0.12, 0.02], [0.0, 0.0, 0.0]], rtol=1e-6)
    got = jax.jit(surfaces.lookup)(surfaces.preset_table(), jnp.array([9, 11, 100]))
    np.testing.assert_allclose(got.grip, [0.12, 1.0, 1.0], rtol=1e-6)


def test_make_table_entry_forms_and_reference_defaults():
    t = surfaces.make_table([surfaces.Surface(0.5, 2.0, 0.1), {"grip": 0.7}, (0.8, 1.5, 0.0), "snow"])
    np.testing.assert_allclose(t.grip, [0.5, 0.7, 0.8, 0.3])
    np.testing.assert_allclose(t.rolling_resistance, [2.0, 1.0, 1.5, 1.5])  # missing fields: reference
    np.testing.assert_allclose(t.drag, [0.1, 0.0, 0.0, 0.04])


def test_invalid_tables_raise_and_leave_the_previous_table_untouched():
    current = surfaces.preset_table()
    before = [np.array(f) for f in current]
    with pytest.raises(ValueError, match=r"surface entry 1: grip = 7(\.0)? is outside the allowed range \[0.0, 5.0\]"):
        current = surfaces.make_table(["asphalt_dry", {"grip": 7.0}, "ice"])
    with pytest.raises(ValueError, match="1 to 16 entries, got 17"):
        current = surfaces.make_table(["asphalt_dry"] * 17)
    with pytest.raises(ValueError, match=r"drag = 1.5 is outside the allowed range \[0.0, 1.0\]"):
        current = surfaces.make_table([(1.0, 1.0, 1.5)])
    with pytest.raises(ValueError, match="unknown field"):
        current = surfaces.make_table([{"mu": 1.0}])
    with pytest.raises(ValueError, match="0 entries|got 0"):
        current = surfaces.make_table([])
    for a, b in zip(current, before):
        np.testing.assert_array_equal(a, b)
    assert len(surfaces.make_table(["asphalt_dry"] * 16).grip) == 16  # the limit itself is fine


def test_ploughing_force_opposes_velocity_and_fades_below_the_floor():
    sand = surfaces.preset("sand")
    fz = 4000.0
    full = 0.12 * fz
    # above the floor: magnitude drag Fz, opposite to the contact velocity
    for vx, vy in ((10.0, 0.0), (-3.0, 4.0), (0.0, -2.0), (0.4, 0.3)):
        fx, fy = (float(v) for v in surfaces.ploughing_force(sand, fz, vx, vy, v_floor=0.5))
        speed = np.hypot(vx, vy)
        mag = full * min(1.0, speed / 0.5)
        np.testing.assert_allclose([fx, fy], [-mag * vx / speed, -mag * vy / speed], rtol=1e-6)
    # below the floor: linear in speed (viscous), zero at standstill
    speeds = np.array([0.0, 0.05, 0.1, 0.25, 0.5, 0.75])
    fx, fy = surfaces.ploughing_force(sand, fz, speeds, 0.0, v_floor=0.5)
    np.testing.assert_allclose(fx, -full * np.minimum(speeds / 0.5, 1.0), rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(fy, 0.0)
    # no sign switch near standstill: the force always opposes the velocity
    v = np.linspace(-0.2, 0.2, 41)
    fx, _ = surfaces.ploughing_force(sand, fz, v, 0.0)
    assert (np.asarray(fx) * v <= 0).all()
    # no drag on asphalt and none with the wheel lifted; finite gradients at standstill
    np.testing.assert_array_equal(surfaces.ploughing_force(surfaces.preset("asphalt_dry"), fz, 3.0, 1.0), (0.0, 0.0))
    np.testing.assert_array_equal(surfaces.ploughing_force(sand, 0.0, 3.0, 1.0), (0.0, 0.0))
    g = jax.grad(lambda vx, vy, f: sum(surfaces.ploughing_force(sand, f, vx, vy)), argnums=(0, 1, 2))(0.0, 0.0, fz)
    assert all(np.isfinite(float(x)) for x in g)
    np.testing.assert_allclose(g[0], -full / 0.5, rtol=1e-6)  # viscous slope drag Fz / v_floor


def test_mean_of_two_surfaces():
    m = surfaces.mean(surfaces.preset("asphalt_dry"), surfaces.preset("grass"))
    np.testing.assert_allclose([float(v) for v in m], [0.725, 1.75, 0.015])
