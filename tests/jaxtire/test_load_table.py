"""Multi-curve load table: exact at the slices, linear in load between them, clamped outside."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.load_table import LoadTable, load_table_force, make_load_table

LOADS = [2000.0, 4000.0, 6000.0, 9000.0]
B = [14.0, 12.0, 10.5, 9.0]
C = [1.55, 1.6, 1.65, 1.7]
D = [2300.0, 4200.0, 5900.0, 8100.0]  # peak force [N] of each slice
E = [0.2, 0.1, 0.0, -0.3]

force = jax.jit(load_table_force)


def _slice(i, x, direct=False):
    """Slice i's curve in numpy float64 (independent of jaxtire.magic_formula)."""
    x = np.asarray(x, np.float64)
    bx = B[i] * x
    inner = bx - E[i] * (np.arctan(bx - np.arctan(bx)) if direct else bx - np.arctan(bx))
    return D[i] * np.sin(C[i] * np.arctan(inner))


X = np.linspace(-0.5, 0.5, 41)


@pytest.mark.parametrize("direct", [False, True])
def test_equals_each_slice_at_its_load(direct):
    t = make_load_table(LOADS, B, C, D, E, direct=direct)
    for i, fz in enumerate(LOADS):
        np.testing.assert_allclose(force(t, X, fz), _slice(i, X, direct), rtol=1e-5, atol=1e-3)
    assert np.abs(_slice(1, X, True) - _slice(1, X, False)).max() > 1.0  # the two variants differ


def test_linear_in_load_between_slices():
    t = make_load_table(LOADS, B, C, D, E)
    for i in range(len(LOADS) - 1):
        for w in (0.25, 0.5, 0.9):
            fz = LOADS[i] + w * (LOADS[i + 1] - LOADS[i])
            expect = (1 - w) * _slice(i, X) + w * _slice(i + 1, X)
            np.testing.assert_allclose(force(t, X, fz), expect, rtol=1e-5, atol=1e-2)
    # dF/dFz is constant inside a segment: (F_{i+1} - F_i) / (Fz_{i+1} - Fz_i)
    dfz = jax.vmap(jax.grad(load_table_force, argnums=2), in_axes=(None, None, 0))(t, 0.1, jnp.array([4100.0, 5000.0, 5900.0]))
    np.testing.assert_allclose(dfz, (_slice(2, 0.1) - _slice(1, 0.1)) / 2000.0, rtol=1e-4)


def test_clamped_outside_range():
    t = make_load_table(LOADS, B, C, D, E)
    for fz in (0.0, 1000.0, 1999.0):
        np.testing.assert_allclose(force(t, X, fz), _slice(0, X), rtol=1e-5, atol=1e-3)
    for fz in (9001.0, 12000.0, 1e6):
        np.testing.assert_allclose(force(t, X, fz), _slice(3, X), rtol=1e-5, atol=1e-3)
    g = jax.vmap(jax.grad(load_table_force, argnums=2), in_axes=(None, None, 0))(t, 0.1, jnp.array([500.0, 15000.0]))
    np.testing.assert_array_equal(g, 0.0)


def test_broadcasting_over_x_and_fz_matches_loop():
    t = make_load_table(LOADS, B, C, D, E)
    x = np.linspace(-0.3, 0.3, 7)[:, None]
    fz = np.array([1500.0, 2000.0, 3100.0, 6000.0, 7777.0, 9500.0])
    out = np.asarray(force(t, x, fz))
    assert out.shape == (7, 6)
    for j, f in enumerate(fz):
        np.testing.assert_allclose(out[:, j], force(t, x[:, 0], f), rtol=1e-6, atol=1e-3)
    # a single slice is a plain curve at every load
    one = make_load_table([4000.0], 12.0, 1.6, 4200.0, 0.1)
    np.testing.assert_allclose(force(one, x, fz), np.broadcast_to(np.asarray(force(one, x, 4000.0)), (7, 6)))


def test_scalar_shape_parameters_are_shared():
    t = make_load_table([3000.0, 5000.0], 11.0, 1.5, [3300.0, 5100.0], 0.0)
    assert isinstance(t, LoadTable) and t.B.shape == (2,) and t.direct is False
    np.testing.assert_allclose(t.C, [1.5, 1.5])


@pytest.mark.parametrize("kw, match", [
    (dict(fz=[2000.0, 2000.0, 3000.0]), r"strictly increasing; fz\[0\] = 2000.0 >= fz\[1\] = 2000.0"),
    (dict(fz=[2000.0, 5000.0, 3000.0]), r"strictly increasing; fz\[1\] = 5000.0 >= fz\[2\] = 3000.0"),
    (dict(fz=[[1.0, 2.0, 3.0]]), "1-D"),
    (dict(fz=[]), "1-D sequence of at least one load"),
    (dict(fz=[-1.0, 2.0, 3.0]), r"fz = -1.0 .*\[0.0, inf\)"),
    (dict(B=[10.0, 11.0]), r"B must be a scalar or have one value per load \(3\)"),
    (dict(C=[1.5, 2.5, 1.5]), r"C = 2.5 .*\(0.0, 2.0\]"),
    (dict(B=0.0), "B = 0.0"),
    (dict(D=[1.0, -1.0, 1.0]), "D = -1.0"),
    (dict(E=1.5), r"E = 1.5 .*1.0\]"),
])
def test_validation(kw, match):
    args = dict(fz=[2000.0, 4000.0, 6000.0], B=10.0, C=1.6, D=[2000.0, 4000.0, 6000.0], E=0.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        make_load_table(**args)


def test_direct_flag_must_be_bool():
    with pytest.raises(ValueError, match="static flag"):
        make_load_table([1.0, 2.0], 10.0, 1.6, 1.0, 0.0, direct=1)


def test_gradients_finite_and_match_finite_differences(x64):
    t = make_load_table(LOADS, B, C, D, E, dtype=jnp.float64)
    g = jax.jit(jax.grad(load_table_force, argnums=(0, 1, 2)))
    for leaf in jax.tree_util.tree_leaves(g(t, 0.0, 0.0)):  # zero slip, zero load: finite
        assert np.all(np.isfinite(np.asarray(leaf)))
    f = jax.jit(load_table_force)
    for x, fz in ((0.07, 3000.0), (-0.2, 7500.0), (0.0, 5000.0)):  # inside segments, away from the knots
        gt, gx, gf = g(t, x, fz)
        for name, x0, an, ev in (("x", x, gx, lambda v: f(t, v, fz)), ("fz", fz, gf, lambda v: f(t, x, v))):
            h = 1e-6 * max(abs(x0), 1e-2)
            np.testing.assert_allclose(an, (ev(x0 + h) - ev(x0 - h)) / (2 * h), rtol=1e-5, atol=1e-6, err_msg=name)
        for field in ("fz", "B", "C", "D", "E"):
            leaf = np.asarray(getattr(t, field))
            for i in range(leaf.size):
                h = 1e-6 * max(abs(leaf[i]), 1e-2)

                def ev(v):
                    arr = leaf.copy()
                    arr[i] = v
                    return float(f(LoadTable(**{**{k: getattr(t, k) for k in ("fz", "B", "C", "D", "E")},
                                               field: jnp.asarray(arr)}), x, fz))

                fd = (ev(leaf[i] + h) - ev(leaf[i] - h)) / (2 * h)
                np.testing.assert_allclose(getattr(gt, field)[i], fd, rtol=1e-5, atol=1e-6, err_msg=f"{field}[{i}]")


def test_float32_matches_float64_and_vmap_over_tables():
    x = np.linspace(-0.4, 0.4, 33)
    fz = np.array([1000.0, 3333.0, 5000.0, 8000.0, 10000.0])
    tables = [make_load_table(LOADS, B, C, D, E), make_load_table(LOADS, 10.0, 1.4, [1900.0, 3900.0, 5600.0, 7900.0], 0.0)]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *tables)
    vm = jax.jit(jax.vmap(load_table_force, in_axes=(0, None, None)))(batch, x[:, None], fz)
    for i, t in enumerate(tables):
        np.testing.assert_allclose(vm[i], force(t, x[:, None], fz), rtol=1e-6, atol=1e-3)
    out32 = np.asarray(vm[0])
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        ref = np.asarray(force(make_load_table(LOADS, B, C, D, E, dtype=jnp.float64), x[:, None], fz))
        assert ref.dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", prev)
    np.testing.assert_allclose(out32, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
