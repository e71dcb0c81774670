"""sims.run.chunked: block-wise lax.map over the batch axis gives the unchunked results (padding dropped)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from sims.run.chunked import chunked


def _tire(p, kappa, alpha, fz):
    o = jaxtire.mf_forces(p, kappa, alpha, 0.0, fz, 20.0)
    return {"fx": o.fx, "fy": o.fy, "mz": o.mz}


def test_chunked_tire_equals_direct():
    n, chunk = 1000, 128  # 8 blocks, the last one padded
    p = jaxtire.default_tire()
    rng = np.random.default_rng(n)
    k, a = (jnp.asarray(rng.uniform(-0.3, 0.3, n), jnp.float32) for _ in range(2))
    fz = jnp.asarray(rng.uniform(1000, 8000, n), jnp.float32)
    ref = jax.jit(_tire)(p, k, a, fz)
    got = jax.jit(chunked(_tire, chunk, in_axes=(None, 0, 0, 0)))(p, k, a, fz)
    for name in ref:
        assert got[name].shape == (n,)
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(ref[name]), rtol=2e-6, atol=1e-3)


@pytest.mark.parametrize("n, chunk", [(1000, 1000), (7, 3), (5, 64), (64, 16)])
def test_chunked_sizes(n, chunk):
    f = lambda x, y: (jnp.sin(x) * y, x[:, None] * jnp.ones(3))  # noqa: E731
    x, y = jnp.linspace(0.0, 1.0, n), jnp.linspace(1.0, 2.0, n)
    a, b = chunked(f, chunk)(x, y)
    ra, rb = f(x, y)
    assert a.shape == (n,) and b.shape == (n, 3)
    np.testing.assert_allclose(np.asarray(a), np.asarray(ra), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), np.asarray(rb), rtol=1e-6)


def test_chunked_pytree_axes_and_errors():
    f = lambda d, s: {"y": d["a"] * s + d["b"][:, 0]}  # noqa: E731
    d = {"a": jnp.arange(10.0), "b": jnp.ones((10, 3))}
    out = chunked(f, 4, in_axes=({"a": 0, "b": 0}, None))(d, 2.0)
    np.testing.assert_allclose(np.asarray(out["y"]), np.arange(10.0) * 2 + 1)
    with pytest.raises(ValueError, match="share one leading size"):
        chunked(f, 4, in_axes=({"a": 0, "b": 0}, None))({"a": jnp.arange(10.0), "b": jnp.ones((9, 3))}, 2.0)
    with pytest.raises(ValueError, match="chunk"):
        chunked(f, 0)
