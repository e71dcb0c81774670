"""Cache-sized chunking of batched computations: ``lax.map`` over blocks of the batch axis.

Why: a big fleet step compiles (on XLA:CPU) into a few dozen fused loops, and the intermediates
between them are materialised as whole-batch arrays.  For a million vehicles each such array is
4 MB, so every step streams hundreds of megabytes through DRAM.  Processing the batch in blocks of
a few thousand vehicles keeps every intermediate in L1/L2; running a whole ``lax.scan`` rollout
*per block* additionally keeps the state of the block in cache for all the steps (the state makes
one round trip to memory per rollout instead of one per step).  Results are identical to the
unchunked computation (same per-element arithmetic; checked in ``tests/sims/test_chunked.py``).

::

    run = chunked(fn, chunk=4096, in_axes=(fleet_axes(params), 0, 0))
    out = run(params, state, controls)          # == fn(params, state, controls)

``fn`` must map over the leading axis independently (no cross-vehicle reductions).  A batch that
is not a multiple of ``chunk`` is padded with copies of its last element (never NaN-producing
zeros) and the padding is dropped from the result.  On a GPU chunking is rarely useful (the whole
batch is one kernel); use it on CPU for batches above ~50 000.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

#: A block size that keeps the double-track step's intermediates in a 1-2 MB L2 cache.
DEFAULT_CHUNK = 4096


def _batch_size(args, axes) -> int:
    sizes = set()
    for a, ax in zip(args, axes, strict=False):
        for leaf, lax_ in zip(*_leaves_with_axes(a, ax), strict=False):
            if lax_ is not None:
                sizes.add(jnp.shape(leaf)[0])
    if len(sizes) != 1:
        raise ValueError(f"chunked: batched arguments must share one leading size, got {sorted(sizes)}")
    return sizes.pop()


def _leaves_with_axes(tree, axes):
    """Leaves of ``tree`` and, for each, its axis (0 or None) from the prefix spec ``axes``."""
    leaves, treedef = jax.tree.flatten(tree)
    if axes is None or isinstance(axes, int):
        return leaves, [axes] * len(leaves)
    full = jax.tree.map(
        lambda ax, sub: [ax] * len(jax.tree.leaves(sub)), axes, tree, is_leaf=lambda x: x is None or isinstance(x, int)
    )
    flat_axes = [a for group in jax.tree.leaves(full, is_leaf=lambda x: isinstance(x, list)) for a in group]
    if len(flat_axes) != len(leaves):  # pragma: no cover - malformed spec
        raise ValueError("chunked: in_axes does not match the argument structure")
    return leaves, flat_axes


def _split(tree, axes, n: int, chunk: int):
    leaves, flat_axes = _leaves_with_axes(tree, axes)
    m = -(-n // chunk)
    pad = m * chunk - n
    out_b: list[jax.Array | None] = []
    out_s: list[Any] = []
    for leaf, ax in zip(leaves, flat_axes, strict=False):
        if ax is None:
            out_b.append(None)
            out_s.append(leaf)
            continue
        if ax != 0:
            raise ValueError("chunked: only in_axes of 0 or None are supported")
        x = jnp.asarray(leaf)
        if pad:
            x = jnp.concatenate([x, jnp.repeat(x[-1:], pad, axis=0)], axis=0)
        out_b.append(x.reshape((m, chunk) + x.shape[1:]))
        out_s.append(None)
    return jax.tree.structure(tree), out_b, out_s


def chunked(fn: Callable, chunk: int = DEFAULT_CHUNK, in_axes: Any = 0) -> Callable:
    """``fn`` applied block by block along the leading axis (``lax.map``); same results as ``fn``.

    ``in_axes``: a ``vmap``-style prefix of the positional arguments, 0 (split) or ``None`` (passed
    whole to every block); every output is taken to have the batch as its leading axis.  A batch of at
    most ``chunk`` runs ``fn`` directly.
    """
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk = {chunk!r} must be a positive integer")

    def run(*args):
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(f"chunked: in_axes has {len(axes)} entries for {len(args)} arguments")
        n = _batch_size(args, axes)
        if n <= chunk:
            return fn(*args)
        parts = [_split(a, ax, n, chunk) for a, ax in zip(args, axes, strict=False)]
        batched = [p[1] for p in parts]

        def body(xs):
            rebuilt = []
            for (treedef, _, shared), b in zip(parts, xs, strict=False):
                leaves = [s if bb is None else bb for bb, s in zip(b, shared, strict=False)]
                rebuilt.append(jax.tree.unflatten(treedef, leaves))
            return fn(*rebuilt)

        out = jax.lax.map(body, batched)
        return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:])[:n], out)

    return run
