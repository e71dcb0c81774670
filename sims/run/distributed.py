"""One Monte Carlo over several hosts: ``jax.distributed``, a global device mesh, one result shard per host.

Nothing here opens a socket or defines a protocol: :func:`jax.distributed.initialize` connects the
processes (the coordinator is process 0), JAX's own SPMD runtime runs the fleet program over the mesh of
*every* process's devices, and each process writes the rows its devices computed to its own file.
Merging is a plain concatenation of those files, done by any process afterwards (or offline).

Run (the same command on every host, ``PROCESS_ID`` 0 .. N-1; on SLURM / Cloud TPU / MPI launchers the
three arguments can be omitted and are detected)::

    from sims.run import distributed
    distributed.initialize("host0:1234", num_processes=N, process_id=PROCESS_ID)   # before any JAX work
    fleet, _ = sample_fleet(key, base, n)          # the same full inputs on every process (deterministic)
    info = distributed.monte_carlo("runs/mc", fleet, state0, driver, n_steps, dt=0.005,
                                   driver_axes=None, reducer=BrakingReducer())
    distributed.barrier("mc-written")
    if info.process_index == 0:
        merged = distributed.merge("runs/mc")       # {"final_state.vx": (n,), ..., "vehicle": (n,)}

Every process passes the whole fleet (cheap to rebuild from a PRNG key) and contributes the rows of its
own devices; with ``local_inputs=True`` it passes only its rows instead (:func:`process_rows` says which),
so no host ever holds the whole fleet.  On CPU, cross-process collectives use Gloo (set by
:func:`initialize`); the fleet program itself needs none (vehicles are independent), only the barrier
does.  The merged result equals the single-process run of the same inputs (checked by
``tests/sims/run/test_distributed.py`` with two processes on localhost).

Files in ``out_dir``: ``shard-PPPPP-of-NNNNN.npz`` (this process's rows of every output leaf, named like
``final_state.vx``, plus ``vehicle``, the global vehicle indices) and ``shard-PPPPP-of-NNNNN.json``
(run id, leaf names, rows, process).  :func:`merge` checks that the shards of one run cover every vehicle
exactly once and returns the concatenation in vehicle order (``merge_tree`` as the rollout's pytree).
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any, NamedTuple

import jax
import numpy as np

from sims.run.fleet import global_rollout
from sims.run.longrun import _names
from sims.run.mesh import global_mesh, local_rows, process_rows
from sims.run.sharding import batch_size
from sims.run.spec import RunSpec, run_spec
from sims.vehicles.params import fleet_axes


class ShardInfo(NamedTuple):
    """What :func:`monte_carlo` wrote: ``path`` of the shard file, global vehicle rows ``[start, stop)``,
    ``process_index`` / ``process_count``, ``n_vehicles`` of the whole run and its ``run_id``."""

    path: str
    start: int
    stop: int
    process_index: int
    process_count: int
    n_vehicles: int
    run_id: str


def initialize(
    coordinator_address: str | None = None, num_processes: int | None = None, process_id: int | None = None, **kw
) -> None:
    """:func:`jax.distributed.initialize` (call before any other JAX work); on CPU also selects the Gloo
    collectives so barriers and cross-process gathers work.  A second call is a no-op."""
    if is_initialized():
        return
    # config flags are dynamic attributes JAX's stubs lack; config.read() raises for them (jax 0.10)
    jax_platforms = jax.config.jax_platforms  # type: ignore[attr-defined]
    platforms = os.environ.get("JAX_PLATFORMS", "") or str(jax_platforms or "")
    if platforms in ("", "cpu") or "cpu" in platforms.split(","):
        try:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        except Exception:  # pragma: no cover - older jax
            pass
    jax.distributed.initialize(
        coordinator_address=coordinator_address, num_processes=num_processes, process_id=process_id, **kw
    )


def is_initialized() -> bool:
    try:
        from jax._src import distributed as _d

        return _d.global_state.client is not None
    except Exception:  # pragma: no cover
        return False


def shutdown() -> None:
    """:func:`jax.distributed.shutdown` if initialised."""
    if is_initialized():
        jax.distributed.shutdown()


def barrier(name: str) -> None:
    """Wait until every process reaches ``barrier(name)`` (a no-op with one process)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def monte_carlo(
    out_dir,
    params,
    state0,
    controls,
    n_steps: int,
    spec: RunSpec | None = None,
    *,
    driver_axes=0,
    reducer=None,
    reducer_axes=None,
    local_inputs: bool = False,
    n_vehicles: int | None = None,
    run_id: str = "run",
    **fields,
) -> ShardInfo:
    """Run :func:`sims.run.fleet.fleet_rollout` over the global mesh and write this process's rows.

    ``params`` (a fleet), ``state0``, ``controls`` and ``reducer`` are the whole run's inputs, identical on
    every process (or, with ``local_inputs=True``, only this process's rows of the batched leaves, with
    ``n_vehicles`` the whole fleet size).  ``spec``: the run's :class:`~sims.run.spec.RunSpec`, or its fields as
    keywords (``dt`` required), as :func:`sims.run.fleet.fleet_rollout`.  Returns a :class:`ShardInfo`.
    """
    spec = run_spec(spec, "monte_carlo", **fields).check(params, "monte_carlo", n_steps=n_steps)
    axes = (fleet_axes(params), 0, driver_axes, reducer_axes)
    args = (params, state0, controls, reducer)
    if local_inputs:
        if n_vehicles is None:
            raise ValueError("local_inputs=True needs n_vehicles (the size of the whole fleet)")
        n = int(n_vehicles)
    else:
        n = batch_size(args, axes)
    rows = process_rows(n, global_mesh())
    if local_inputs and batch_size(args, axes) != min(rows[1], n) - rows[0]:
        raise ValueError(
            f"local_inputs: this process holds rows {rows[0]}..{min(rows[1], n)} of {n}, "
            f"got {batch_size(args, axes)} rows"
        )
    kw = dict(driver_axes=driver_axes, reducer_axes=reducer_axes)
    out, rows = global_rollout(args, n_steps, spec, n=n, local_inputs=local_inputs, **kw)
    start, stop, _ = rows
    keep = max(0, min(stop, n) - start)
    names = _names(out)
    arrays: dict[str, Any] = {nm: local_rows(x)[:keep] for nm, x in zip(names, jax.tree.leaves(out), strict=False)}
    arrays["vehicle"] = np.arange(start, start + keep)
    pid, npr = jax.process_index(), jax.process_count()
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"shard-{pid:05d}-of-{npr:05d}")
    tmp = stem + ".npz.tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, stem + ".npz")
    meta = dict(
        run_id=run_id,
        process_index=pid,
        process_count=npr,
        start=start,
        stop=start + keep,
        n_vehicles=n,
        names=names,
        treedef=str(jax.tree.structure(out)),
        n_steps=n_steps,
        dt=spec.dt,
    )
    with open(stem + ".json.tmp", "w") as jf:
        json.dump(meta, jf, indent=1)
    os.replace(stem + ".json.tmp", stem + ".json")
    return ShardInfo(stem + ".npz", start, start + keep, pid, npr, n, run_id)


def merge(out_dir, run_id: str | None = None) -> dict:
    """All shards of one run in ``out_dir`` concatenated in vehicle order: ``{leaf name: array}`` plus
    ``vehicle``.  Raises ``ValueError`` when shards are missing, overlap or belong to different runs."""
    metas = []
    for path in sorted(glob.glob(os.path.join(out_dir, "shard-*-of-*.json"))):
        with open(path) as f:
            metas.append((path, json.load(f)))
    if run_id is not None:
        metas = [(p, m) for p, m in metas if m["run_id"] == run_id]
    if not metas:
        raise ValueError(f"no result shards in {out_dir}")
    keys = {(m["run_id"], m["process_count"], m["n_vehicles"], tuple(m["names"])) for _, m in metas}
    if len(keys) != 1:
        raise ValueError(f"{out_dir} mixes shards of different runs: {sorted(k[:3] for k in keys)}")
    run, count, n, names = keys.pop()
    if len(metas) != count:
        raise ValueError(f"run {run!r}: {len(metas)} of {count} shards present in {out_dir}")
    metas.sort(key=lambda pm: pm[1]["start"])
    expect = 0
    parts = []
    for path, m in metas:
        if m["start"] != expect and m["stop"] > m["start"]:
            raise ValueError(f"run {run!r}: shard {path} starts at vehicle {m['start']}, expected {expect}")
        expect = max(expect, m["stop"])
        with np.load(path[: -len(".json")] + ".npz") as z:
            parts.append({k: z[k] for k in z.files})
    if expect != n:
        raise ValueError(f"run {run!r}: shards cover vehicles 0..{expect}, expected {n}")
    return {k: np.concatenate([p[k] for p in parts], axis=0) for k in list(names) + ["vehicle"]}


def merge_tree(out_dir, like, run_id: str | None = None):
    """:func:`merge` rebuilt into the pytree structure of ``like`` (e.g. a single-process
    :class:`~sims.run.rollout.RolloutResult`, or ``jax.eval_shape`` of one)."""
    merged = merge(out_dir, run_id)
    names = _names(like)
    return jax.tree.unflatten(jax.tree.structure(like), [merged[nm] for nm in names])
