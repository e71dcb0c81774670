"""The one optimisation loop of the project: fixed-iteration optax minimisation in ``lax.scan``.

Tire fitting (:func:`jaxtire.fit.fit`), vehicle identification and controller tuning all call
:func:`minimize`.  It runs ``n_iter`` optimiser steps on a pytree ``x`` inside one
``lax.scan`` (no data-dependent Python control flow), so it is pure, ``jit``- and
``vmap``-able; callers jit it (with :func:`compiler_options` on CPU for a quick compile).

Each iteration ``i``::

    d_i      = data(i) if data is a function, else data (or nothing)
    L_i, g_i = value_and_grad(loss_fn)(x_i, d_i)
    x_{i+1}  = x_i + update(g_i)                (optax; the iterate before any NaN is kept)

``losses[i] = L_i`` (so ``losses[0]`` is the loss of ``x0``).  With ``keep="best"`` the result
is the iterate with the lowest finite loss seen (the final iterate included); with
``keep="last"`` it is ``x_n`` (for stochastic objectives whose batches change every iteration).
A non-finite loss or gradient never becomes an iterate: the step falls back to the best
iterate, and ``first_nonfinite`` reports the first such iteration (``-1``: none), so eager
callers can raise.

Optimisers (:func:`make_optimizer`): ``"lbfgs"`` (``optax.lbfgs``, memory 20, zoom line
search of at most 20 steps; deterministic objectives only) and ``"adam"`` (``optax.adam``,
learning rate optionally cosine-decayed to ``decay_to`` times its start over ``n_iter``
steps, gradients optionally clipped to global norm ``clip`` first:
``optax.chain(optax.clip_by_global_norm(clip), optax.adam(schedule))``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

__all__ = [
    "FAST_COMPILE_OPTIONS",
    "METHODS",
    "MinimizeResult",
    "compiler_options",
    "dual_jit",
    "fast_compile_supported",
    "make_optimizer",
    "minimize",
]

#: XLA CPU options that cut the compile time of a program about 3x for about 2x slower iterations:
#: the right trade for one tire or one identification (compile-bound), not for a big fleet (run-bound).
FAST_COMPILE_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}

METHODS = ("lbfgs", "adam")


@functools.cache
def fast_compile_supported(backend: str) -> bool:
    """Whether ``backend`` compiles with :data:`FAST_COMPILE_OPTIONS` (CPU only; the XLA flags are not a
    stable API, so this jaxlib is asked once, by compiling a one-operation program, and the answer kept)."""
    if backend != "cpu":
        return False
    try:
        jax.jit(lambda x: x + 1.0, compiler_options=FAST_COMPILE_OPTIONS).lower(jnp.float32(0.0)).compile()
    except Exception as e:  # noqa: BLE001 - only an unknown-option error means "not supported"
        if "option" in str(e).lower():
            return False
        raise
    return True


def compiler_options(fast: bool) -> dict | None:
    """:data:`FAST_COMPILE_OPTIONS` when ``fast`` and the default backend supports them, else ``None``
    (pass to ``jax.jit(..., compiler_options=...)``)."""
    return FAST_COMPILE_OPTIONS if fast and fast_compile_supported(jax.default_backend()) else None


def dual_jit(fun: Callable, **jit_kwargs) -> Callable[[bool], jax.stages.Wrapped]:
    """``fun`` jitted twice (plain and with :data:`FAST_COMPILE_OPTIONS`); returns ``select(fast)``, the
    jitted function to call.  Create it once (module level) so both keep their compile caches."""
    plain = jax.jit(fun, **jit_kwargs)
    quick = jax.jit(fun, compiler_options=FAST_COMPILE_OPTIONS, **jit_kwargs)

    def select(fast: bool = True) -> jax.stages.Wrapped:
        return quick if compiler_options(fast) else plain

    return select


class MinimizeResult(NamedTuple):
    """Result of :func:`minimize` (a pytree: batches under ``vmap``)."""

    params: Any  # pytree like x0: the best iterate (keep="best") or the last one (keep="last")
    loss: jax.Array  # loss of ``params`` (on the last iteration's data)
    losses: jax.Array  # (n_iter,) loss of iterate i, before its update
    first_nonfinite: jax.Array  # int32: first iteration with a non-finite loss or gradient, -1 if none


def make_optimizer(
    method: str = "adam",
    learning_rate: float = 0.02,
    *,
    n_iter: int | None = None,
    clip: float | None = None,
    decay_to: float | None = None,
) -> optax.GradientTransformation:
    """The optax transformation of :func:`minimize` (module docstring); ``decay_to`` needs ``n_iter``."""
    if method == "lbfgs":
        if clip is not None or decay_to is not None:
            raise ValueError("make_optimizer: clip and decay_to apply to 'adam' only")
        return optax.lbfgs(memory_size=20, linesearch=optax.scale_by_zoom_linesearch(max_linesearch_steps=20))
    if method != "adam":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    lr = learning_rate
    if decay_to is not None:
        if n_iter is None:
            raise ValueError("make_optimizer: decay_to needs n_iter")
        lr = optax.cosine_decay_schedule(learning_rate, max(int(n_iter), 1), alpha=decay_to)
    adam = optax.adam(lr)
    return adam if clip is None else optax.chain(optax.clip_by_global_norm(clip), adam)


def _where(cond, a, b):
    return jax.tree.map(lambda x, y: jnp.where(cond, x, y), a, b)


def _all_finite(tree) -> jax.Array:
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]))


def minimize(
    loss_fn: Callable,
    x0,
    *,
    method: str = "lbfgs",
    n_iter: int = 150,
    learning_rate: float = 0.02,
    clip: float | None = None,
    decay_to: float | None = None,
    data: Any = None,
    keep: str = "best",
    callback: Callable | None = None,
    every: int = 10,
) -> MinimizeResult:
    """Minimise ``loss_fn`` from the pytree ``x0`` with ``n_iter`` optimiser steps in one ``lax.scan``.

    Args:
      loss_fn: ``loss_fn(x) -> scalar``, or ``loss_fn(x, d)`` when ``data`` is given.
      x0: start, any pytree of float arrays (the unconstrained variables; see
        :mod:`jaxtire.fit.transforms` for bounds).
      method: ``"lbfgs"`` or ``"adam"``; ``learning_rate``, ``clip`` (global-norm gradient
        clipping) and ``decay_to`` (cosine decay) as :func:`make_optimizer`.
      n_iter: number of iterations (static).
      data: ``None``; a pytree passed to ``loss_fn`` every iteration (an argument, not a compiled
        constant, when the caller jits over it); or a function ``data(i)`` of the iteration
        index (an int32 tracer) giving a new batch each iteration (``"adam"`` only).
      keep: ``"best"`` (lowest finite loss seen) or ``"last"``.
      callback: ``callback(i, loss, x)`` called on the host (``jax.debug.callback``) every
        ``every`` iterations and at the last, e.g. for progress printing.

    Returns:
      :class:`MinimizeResult` ``(params, loss, losses, first_nonfinite)``.
    """
    if keep not in ("best", "last"):
        raise ValueError(f"keep must be 'best' or 'last', got {keep!r}")
    n_iter = int(n_iter)
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    batches = callable(data)
    if method == "lbfgs" and batches:
        raise ValueError("minimize: 'lbfgs' needs a fixed objective; use 'adam' with per-iteration data")
    opt = make_optimizer(method, learning_rate, n_iter=n_iter, clip=clip, decay_to=decay_to)

    def objective(i):
        if data is None:
            return loss_fn
        d = data(i) if batches else data
        return lambda x: loss_fn(x, d)

    if method == "lbfgs":
        f = objective(0)
        value_and_grad = optax.value_and_grad_from_state(f)

    def report(i, value, x):
        if callback is None:  # report is only scheduled when a callback was given
            raise ValueError("minimize: report called without a callback")
        if i % every == 0 or i == n_iter - 1:
            callback(int(i), value, x)

    def step(carry, i):
        x, state, best_x, best, bad = carry
        if method == "lbfgs":
            value, grad = value_and_grad(x, state=state)
            updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
        else:
            value, grad = jax.value_and_grad(objective(i))(x)
            updates, state = opt.update(grad, state, x)
        ok = jnp.isfinite(value) & _all_finite(grad)
        bad = jnp.where((bad < 0) & ~ok, i, bad)
        improved = ok & (value < best)
        best = jnp.where(improved, value, best)
        best_x = _where(improved, x, best_x)
        new_x = optax.apply_updates(x, updates)
        new_x = _where(_all_finite(new_x), new_x, best_x)  # never step into NaN
        if callback is not None:
            jax.debug.callback(report, i, value, x)
        return (new_x, state, best_x, best, bad), value

    dtype = jax.eval_shape(objective(0), x0).dtype
    init = (x0, opt.init(x0), x0, jnp.asarray(jnp.inf, dtype), jnp.asarray(-1, jnp.int32))
    (x, _, best_x, best, bad), losses = jax.lax.scan(step, init, jnp.arange(n_iter, dtype=jnp.int32))
    last = objective(n_iter - 1)(x)
    if keep == "last":
        return MinimizeResult(x, last, losses, bad)
    take_last = jnp.isfinite(last) & (last < best)
    return MinimizeResult(_where(take_last, x, best_x), jnp.where(take_last, last, best), losses, bad)
