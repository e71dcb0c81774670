"""The vehicle mesh and the placement of fleet pytrees on it (private; re-exported by
:mod:`sims.run.sharding`, used by :class:`sims.run.fleet.FleetRun` and :mod:`sims.run.longrun`)."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

AXIS = "vehicles"


def fleet_mesh(devices: Sequence | None = None, axis_name: str = AXIS) -> Mesh:
    """A 1-D :class:`~jax.sharding.Mesh` over ``devices`` (default: all local devices) named ``axis_name``."""
    devs = list(jax.local_devices() if devices is None else devices)
    if not devs:
        raise ValueError("fleet_mesh: no devices")
    return Mesh(np.array(devs), (axis_name,))


def _flat_axes(tree, axes) -> list:
    """One axis (0 or None) per leaf of ``tree`` from the ``vmap``-style prefix ``axes``."""
    n_leaves = len(jax.tree.leaves(tree))
    if axes is None or isinstance(axes, int):
        return [axes] * n_leaves
    full = jax.tree.map(
        lambda ax, sub: [ax] * len(jax.tree.leaves(sub)), axes, tree, is_leaf=lambda x: x is None or isinstance(x, int)
    )
    flat = [a for group in jax.tree.leaves(full, is_leaf=lambda x: isinstance(x, list)) for a in group]
    if len(flat) != n_leaves:
        raise ValueError("in_axes does not match the argument's structure")
    for a in flat:
        if a not in (0, None):
            raise ValueError(f"only in_axes of 0 or None are supported, got {a!r}")
    return flat


def pad(tree, axes, n_to: int):
    """Batched leaves of ``tree`` padded to ``n_to`` rows with copies of their last row."""
    leaves, treedef = jax.tree.flatten(tree)
    out = []
    for leaf, ax in zip(leaves, _flat_axes(tree, axes), strict=False):
        if ax == 0 and jnp.shape(leaf)[0] < n_to:
            x = jnp.asarray(leaf)
            leaf = jnp.concatenate([x, jnp.repeat(x[-1:], n_to - x.shape[0], axis=0)], axis=0)
        out.append(leaf)
    return jax.tree.unflatten(treedef, out)


def shard(tree, mesh: Mesh, axes=0, axis_name: str = AXIS):
    """``tree`` placed on ``mesh``: leaves with axis 0 split over ``axis_name``, the others replicated.

    Batched sizes must be multiples of the mesh size (see :func:`pad`)."""
    leaves, treedef = jax.tree.flatten(tree)
    split, repl = NamedSharding(mesh, P(axis_name)), NamedSharding(mesh, P())
    out = [
        jax.device_put(leaf, split if ax == 0 else repl)
        for leaf, ax in zip(leaves, _flat_axes(tree, axes), strict=False)
    ]
    return jax.tree.unflatten(treedef, out)
