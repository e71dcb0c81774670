"""Any per-vehicle function over all local devices: the vehicle axis sharded with :mod:`jax.sharding` or
``shard_map``.

A fleet *run* needs none of this: :func:`sims.run.fleet.fleet_rollout`, :class:`sims.run.fleet.FleetRun` and
:func:`sims.run.longrun.long_run` split the fleet over the local devices themselves (``devices=``, one placement,
:mod:`sims.run.mesh`; bitwise the one-device results).  :func:`sharded` is for other per-vehicle functions.

Vehicles never interact, so a fleet splits along its vehicle axis with no communication: each device
steps its own block.  Two equivalent ways are provided, both giving results equal to the one-device
run to float32 rounding (``tests/sims/run/test_sharding.py`` checks this with 8 forced host devices):

* ``method="jit"`` (default): the batched leaves are placed with ``NamedSharding(mesh, P("vehicles"))``,
  the shared ones (base tires, surface table, shared drivers) replicated, and the ordinary jitted
  fleet program is called on them; XLA's SPMD partitioner splits it by the input shardings.
* ``method="shard_map"``: the same function runs per device block under :func:`jax.shard_map`
  (explicitly no collectives).

A fleet whose size is not a multiple of the device count is padded with copies of its last vehicle
and the padding is dropped from every output.

::

    mesh = fleet_mesh()                                   # all local devices, axis "vehicles"
    run = sharded(fn, in_axes=(fleet_axes(fleet), 0, 0))  # any per-vehicle function of batched args
    out = run(fleet, state, controls)

Test on a CPU with ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (set before JAX is imported).
For several hosts see :mod:`sims.run.distributed`, which builds the same mesh over every process's devices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from sims.run.mesh import AXIS, _flat_axes, fleet_mesh, pad, shard


def batch_size(args: Sequence, in_axes: Sequence) -> int:
    """The common leading size of every batched leaf."""
    sizes = set()
    for a, ax in zip(args, in_axes, strict=False):
        for leaf, lax_ in zip(jax.tree.leaves(a), _flat_axes(a, ax), strict=False):
            if lax_ == 0:
                sizes.add(int(jnp.shape(leaf)[0]))
    if len(sizes) != 1:
        raise ValueError(f"batched leaves must share one leading vehicle axis, got sizes {sorted(sizes)}")
    return sizes.pop()


def specs(axes, axis_name: str = AXIS):
    """The ``shard_map`` partition specs of a ``vmap``-style axes prefix: 0 -> ``P(axis_name)``, None -> ``P()``."""
    if axes is None or isinstance(axes, int):
        return P(axis_name) if axes == 0 else P()
    return jax.tree.map(lambda ax: P(axis_name) if ax == 0 else P(), axes, is_leaf=lambda x: x is None)


def split_map(fn: Callable, mesh: Mesh, in_axes: Sequence, axis_name: str = AXIS) -> Callable:
    """``fn`` under :func:`jax.shard_map` over the 1-D ``mesh``: arguments batched per ``in_axes`` (one
    ``vmap``-style prefix per positional argument) split along ``axis_name``, the others replicated, every
    output leaf split along its leading axis.  Each device runs ``fn`` on its own block with no collective,
    so ``fn`` must be independent per vehicle (no cross-vehicle reduction)."""
    return jax.shard_map(fn, mesh=mesh, in_specs=tuple(specs(ax, axis_name) for ax in in_axes), out_specs=P(axis_name))


def _trim(tree, n: int):
    return jax.tree.map(lambda x: x[:n] if jnp.ndim(x) and jnp.shape(x)[0] > n else x, tree)


def sharded(
    fn: Callable,
    mesh: Mesh | None = None,
    in_axes: Any = 0,
    *,
    method: str = "jit",
    axis_name: str = AXIS,
    compiler_options: dict | None = None,
) -> Callable:
    """``fn`` (per-vehicle independent, outputs batched on axis 0) run with its batch sharded over ``mesh``.

    ``in_axes`` is a ``vmap``-style prefix per positional argument (0 batched, ``None`` shared).  Returns
    a callable with ``fn``'s signature whose outputs are sharded over the devices (padding removed).
    ``compiler_options`` go to the outer ``jax.jit`` (XLA options, e.g. a faster-compiling level for tests).
    """
    if method not in ("jit", "shard_map"):
        raise ValueError(f"method = {method!r}; allowed 'jit' or 'shard_map'")

    def run(*args):
        m = mesh if mesh is not None else fleet_mesh(axis_name=axis_name)
        axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(f"in_axes has {len(axes)} entries for {len(args)} arguments")
        n = batch_size(args, axes)
        n_dev = m.devices.size
        n_pad = -(-n // n_dev) * n_dev
        placed = [shard(pad(a, ax, n_pad), m, ax, axis_name) for a, ax in zip(args, axes, strict=False)]
        opts = dict(compiler_options) if compiler_options else None
        if method == "jit":
            out = jax.jit(fn, compiler_options=opts)(*placed)
        else:
            out = jax.jit(split_map(fn, m, axes, axis_name), compiler_options=opts)(*placed)
        return _trim(out, n)

    return run


def gather(tree):
    """Every leaf of a (possibly sharded) result as a host NumPy array."""
    return jax.tree.map(lambda x: np.asarray(jax.device_get(x)), tree)
