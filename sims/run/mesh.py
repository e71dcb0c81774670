"""The vehicle mesh, the placement of fleet pytrees on it and the per-device dispatch (private; re-exported by
:mod:`sims.run.sharding`, used by :class:`sims.run.fleet.FleetRun`, :mod:`sims.run.longrun` and
:class:`sims.envs.devices.DeviceEnv`); the global mesh of every process's devices and the global arrays on it
(:func:`sims.run.fleet.fleet_rollout` with ``hosts=True``, :mod:`sims.run.distributed`)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtire.validation import check_int

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


def padded_size(n: int, mesh: Mesh | None) -> int:
    """``n`` rounded up to a multiple of the device count of ``mesh`` (``n`` itself without one)."""
    return n if mesh is None else -(-n // mesh.devices.size) * mesh.devices.size


def place(tree, axes, mesh: Mesh | None, n_to: int):
    """``tree`` padded to ``n_to`` rows (:func:`pad`) and split over ``mesh`` (:func:`shard`); unchanged without a
    mesh.  The one placement of a fleet pytree (:class:`sims.run.fleet.FleetRun`, ``fleet_rollout``, ``long_run``)."""
    return tree if mesh is None else shard(pad(tree, axes, n_to), mesh, axes)


def unpad(tree, n: int):
    """Every leaf of ``tree`` cut to its first ``n`` rows (the padding of :func:`place` dropped); every leaf must have
    the vehicle axis first (the outputs of a vmapped fleet program)."""
    return jax.tree.map(lambda x: x[:n], tree)


def device_mesh(devices, source: str) -> Mesh | None:
    """The 1-D mesh of a ``devices`` argument, ``None`` for a single device.

    ``None``: every local device of the default backend (of ``jax.default_device`` when one is set); an integer
    ``k``: the first ``k`` of them (checked, the error names ``source``); or a sequence of devices."""
    if devices is None or isinstance(devices, int):
        default = getattr(jax.config, "jax_default_device", None)
        platform = getattr(default, "platform", default)  # a Device, a platform name or None
        local = jax.local_devices(backend=platform)
        if devices is not None:
            check_int("devices", devices, 1, len(local), source=source)
        devs = local if devices is None else local[:devices]
    else:
        devs = list(devices)
        if not devs:
            raise ValueError(f"{source}: devices is an empty sequence")
    if len(devs) == 1:
        return None
    return fleet_mesh(devs)


def block_of(x, device):
    """The part of ``x`` on ``device`` (its block of a split array, its copy of a replicated one); ``x`` itself
    when it is not an array spread over several devices (a step index, ``None``)."""
    if not isinstance(x, jax.Array) or len(x.sharding.device_set) < 2:
        return x
    return next(s.data for s in x.addressable_shards if s.device == device)


def split_call(fn: Callable | list, args: tuple, mesh: Mesh | None, seen: set):
    """``fn(*args)`` with ``args`` placed on ``mesh`` (:func:`shard`): ``fn`` (one function, or one compiled program
    per device) called on each device's block of ``args`` (:func:`block_of`), every output leaf reassembled as one
    array split over the mesh along its leading axis.  No communication: ``fn`` must treat its rows independently.
    Without a mesh (one device) it is the plain call ``fn(*args)``.

    The calls are dispatched one after the other without waiting (asynchronous dispatch), so the devices run
    at once.  A signature not in ``seen`` (a set the caller keeps) runs from one thread per device instead, so the
    per-device compiles of a jitted ``fn`` overlap; it is then added to ``seen``."""
    if mesh is None:
        if isinstance(fn, list):
            raise ValueError("split_call: one program per device needs a mesh")
        return fn(*args)
    devs = list(mesh.devices.flat)
    fns = fn if isinstance(fn, list) else [fn] * len(devs)
    local = [jax.tree.map(lambda x, d=d: block_of(x, d), args) for d in devs]
    key = (id(fns[0]), tuple(jnp.shape(x) for x in jax.tree.leaves(local[0])))
    if isinstance(fn, list) or key in seen:
        outs = [f(*a) for f, a in zip(fns, local, strict=True)]  # asynchronous: the devices run at once
    else:
        with concurrent.futures.ThreadPoolExecutor(len(devs)) as pool:
            outs = list(pool.map(lambda fa: fa[0](*fa[1]), zip(fns, local, strict=True)))
        seen.add(key)
    spread = NamedSharding(mesh, P(mesh.axis_names[0]))

    def whole(*xs):
        # a block computed from inputs that are all replicated (e.g. a reducer's initial accumulator built
        # from its unbatched fields) can land on the first device: each block moves to its own device
        xs = tuple(jax.device_put(x, d) for x, d in zip(xs, devs, strict=True))
        shape = (sum(x.shape[0] for x in xs),) + xs[0].shape[1:]
        return jax.make_array_from_single_device_arrays(shape, spread, list(xs))

    return jax.tree.map(whole, *outs)


def global_mesh(axis_name: str = AXIS) -> Mesh:
    """A 1-D mesh over every device of every process, grouped by process (so each process's rows are
    one contiguous block)."""
    devs = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    return Mesh(np.array(devs), (axis_name,))


def process_rows(n: int, mesh: Mesh | None = None) -> tuple[int, int, int]:
    """``(start, stop, n_padded)``: the rows of a fleet of ``n`` (padded to a multiple of the device
    count) that this process's devices hold."""
    mesh = mesh if mesh is not None else global_mesh()
    devs = list(mesh.devices.flat)
    n_pad = -(-n // len(devs)) * len(devs)
    per = n_pad // len(devs)
    mine = [i for i, d in enumerate(devs) if d.process_index == jax.process_index()]
    if not mine or mine != list(range(mine[0], mine[-1] + 1)):
        raise ValueError("this process's devices must form one contiguous block of the mesh")
    return mine[0] * per, (mine[-1] + 1) * per, n_pad


def to_global(tree, axes, mesh: Mesh, rows: tuple[int, int, int], local_inputs: bool, n: int):
    """``tree`` as global arrays on the mesh of every process (:func:`global_mesh`): its batched leaves (``axes``
    0) sharded over the vehicles, this process contributing its ``rows`` (``(start, stop, n_padded)`` of
    :func:`process_rows`; the whole fleet given, or only these rows with ``local_inputs``), padded with copies of
    the last vehicle; the shared leaves replicated."""
    start, stop, n_pad = rows
    leaves, treedef = jax.tree.flatten(tree)
    out = []
    for leaf, ax in zip(leaves, _flat_axes(tree, axes), strict=False):
        x = np.asarray(jax.device_get(leaf))
        if ax == 0:
            if not local_inputs:
                x = x[start : min(stop, n)]
            if x.shape[0] < stop - start:  # the padding rows (copies of the last vehicle)
                x = np.concatenate([x, np.repeat(x[-1:], stop - start - x.shape[0], axis=0)], axis=0)
            sh = NamedSharding(mesh, P(mesh.axis_names[0]))
            out.append(jax.make_array_from_process_local_data(sh, x, (n_pad,) + x.shape[1:]))
        else:
            out.append(jax.make_array_from_process_local_data(NamedSharding(mesh, P()), x, x.shape))
    return jax.tree.unflatten(treedef, out)


def local_rows(x) -> np.ndarray:
    """This process's rows of a global array sharded on axis 0 (its addressable shards, in order)."""
    shards = sorted(x.addressable_shards, key=lambda s: s.index[0].start or 0)
    seen, parts = set(), []
    for s in shards:
        key = (s.index[0].start, s.index[0].stop)
        if key in seen:  # replicated copies on several local devices
            continue
        seen.add(key)
        parts.append(np.asarray(s.data))
    return np.concatenate(parts, axis=0)
