"""The shared optimisation loop (jaxtire.fit.loop) and the bounds transforms (jaxtire.fit.transforms)."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxtire.fit import loop, transforms
from jaxtire.fit.loop import minimize

TARGET = jnp.array([1.5, -2.0, 0.25])


def quad(x):
    return jnp.sum((x["a"] - TARGET) ** 2) + (x["b"] - 3.0) ** 2


X0 = {"a": jnp.zeros(3), "b": jnp.asarray(0.0)}


def test_lbfgs_finds_the_minimum_of_a_quadratic():
    res = jax.jit(lambda x: minimize(quad, x, method="lbfgs", n_iter=20))(X0)
    np.testing.assert_allclose(res.params["a"], TARGET, atol=1e-5)
    np.testing.assert_allclose(float(res.params["b"]), 3.0, atol=1e-5)
    assert res.losses.shape == (20,)
    np.testing.assert_allclose(float(res.losses[0]), float(quad(X0)), rtol=1e-6)  # loss of x0 first
    assert float(res.loss) < 1e-9 and int(res.first_nonfinite) == -1


def test_adam_equals_a_hand_written_optax_loop():
    """clip + cosine-decayed Adam, step for step, as sims/identify and sims/tuning wrote it."""
    lr, clip, n = 0.1, 1.0, 25
    opt = optax.chain(optax.clip_by_global_norm(clip), optax.adam(optax.cosine_decay_schedule(lr, n, alpha=0.05)))
    x, state, losses = X0, opt.init(X0), []
    for _ in range(n):
        value, g = jax.value_and_grad(quad)(x)
        upd, state = opt.update(g, state, x)
        x = optax.apply_updates(x, upd)
        losses.append(float(value))
    res = minimize(quad, X0, method="adam", n_iter=n, learning_rate=lr, clip=clip, decay_to=0.05, keep="last")
    np.testing.assert_allclose(np.asarray(res.losses), losses, rtol=1e-5)
    np.testing.assert_allclose(res.params["a"], x["a"], rtol=1e-5)
    np.testing.assert_allclose(float(res.loss), float(quad(x)), rtol=1e-5)


def test_keep_best_returns_the_lowest_loss_seen():
    # a learning rate far too large: Adam overshoots, so the best iterate is not the last
    res = minimize(lambda x: jnp.sum(x ** 2), jnp.array([1.0]), method="adam", n_iter=30, learning_rate=3.0)
    last = minimize(lambda x: jnp.sum(x ** 2), jnp.array([1.0]), method="adam", n_iter=30, learning_rate=3.0,
                    keep="last")
    seen = min(float(np.min(res.losses)), float(last.loss))
    assert float(res.loss) == pytest.approx(seen)
    assert float(res.loss) == pytest.approx(float(jnp.sum(res.params ** 2)))
    assert float(res.loss) <= float(last.loss)


def test_nonfinite_loss_is_reported_and_never_an_iterate():
    def loss(x):  # minimum at 2, but NaN once x crosses 0.5
        return jnp.sum((x - 2.0) ** 2) + jnp.where(x[0] > 0.5, jnp.nan, 0.0)

    res = minimize(loss, jnp.array([0.0]), method="adam", n_iter=40, learning_rate=0.1)
    assert int(res.first_nonfinite) > 0
    assert np.isfinite(float(res.loss)) and float(res.params[0]) <= 0.5
    ok = minimize(quad, X0, method="adam", n_iter=5)
    assert int(ok.first_nonfinite) == -1


def test_data_argument_and_per_iteration_batches():
    def loss(x, d):
        return jnp.sum((x - d) ** 2)

    fixed = jax.jit(lambda x, d: minimize(loss, x, n_iter=15, data=d))(jnp.zeros(2), jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(fixed.params, [1.0, 2.0], atol=1e-5)
    # a new batch each iteration: the target moves with i; keep="last" follows the last one
    res = minimize(loss, jnp.zeros(2), method="adam", n_iter=200, learning_rate=0.1,
                   data=lambda i: jnp.full(2, 1.0) + 0.0 * i, keep="last")
    np.testing.assert_allclose(res.params, [1.0, 1.0], atol=1e-2)
    with pytest.raises(ValueError, match="lbfgs"):
        minimize(loss, jnp.zeros(2), method="lbfgs", data=lambda i: jnp.ones(2))


def test_vmap_over_starts_and_argument_errors():
    starts = {"a": jnp.stack([jnp.zeros(3), jnp.ones(3)]), "b": jnp.array([0.0, 5.0])}
    res = jax.jit(jax.vmap(lambda x: minimize(quad, x, method="adam", n_iter=300, learning_rate=0.05)))(starts)
    np.testing.assert_allclose(res.params["a"], jnp.stack([TARGET, TARGET]), atol=1e-2)
    for kw, match in ((dict(method="sgd"), "method"), (dict(keep="first"), "keep"), (dict(n_iter=0), "n_iter"),
                      (dict(method="lbfgs", clip=1.0), "apply to .adam. only")):
        with pytest.raises(ValueError, match=match):
            minimize(quad, X0, **kw)


def test_callback_sees_every_tenth_iteration():
    seen = []
    res = minimize(quad, X0, method="adam", n_iter=25, callback=lambda i, v, x: seen.append((i, float(v))))
    jax.block_until_ready(res)
    jax.effects_barrier()
    assert [i for i, _ in seen] == [0, 10, 20, 24]
    assert seen[0][1] == pytest.approx(float(quad(X0)))


def test_compiler_options_and_dual_jit():
    assert loop.compiler_options(False) is None
    fast = loop.compiler_options(True)
    assert fast in (None, loop.FAST_COMPILE_OPTIONS)
    assert (fast is not None) == loop.fast_compile_supported(jax.default_backend())
    assert not loop.fast_compile_supported("gpu")
    select = loop.dual_jit(lambda x: 2.0 * x)
    assert float(select(True)(1.5)) == float(select(False)(1.5)) == 3.0


def test_pack_unpack_round_trip_and_bounds():
    bounds = {"m": (500.0, 3000.0), "k": (0.0, np.inf), "s": (-np.inf, np.inf)}
    values = {"m": 1200.0, "k": 4.0, "s": -0.3}
    u = transforms.pack(values, bounds)
    back = transforms.unpack(u, bounds)
    for k, v in values.items():
        assert float(back[k]) == pytest.approx(v, rel=1e-5)
    far = transforms.unpack({k: jnp.asarray(60.0) for k in bounds}, bounds)
    assert float(far["m"]) <= 3000.0 and float(far["k"]) >= 0.0
    # two-sided: the scaled sigmoid, by hand
    np.testing.assert_allclose(float(transforms.from_unconstrained(0.0, 2.0, 6.0)), 4.0)


def test_fit_takes_its_model_facts_from_the_tire_interface():
    from jaxtire import fit as F
    from jaxtire.fit.stages import model_tables
    from jaxtire.simple import default_simple_params
    from jaxtire.spline import make_spline

    kappa = np.linspace(-0.2, 0.2, 9)
    data = F.measurement_set(kappa, 0.0, 0.0, 4000.0, 1e4 * kappa, 0.0, 0.0)
    with pytest.raises(TypeError, match="no tire model for parameters of type SplineParams"):
        F.fit(data, make_spline())
    assert model_tables(default_simple_params()) == (F.SIMPLE_STAGES, F.SIMPLE_BOUNDS)
    assert model_tables(F.generic_tire()) == (F.STAGES, F.DEFAULT_BOUNDS)
