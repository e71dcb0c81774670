"""Long fleet runs: chunked ``lax.scan`` with telemetry streamed to disk per chunk, and resume after a kill.

::

    res = long_run("runs/soak", fleet, state0, driver, n_steps=2_000_000, dt=0.005, chunk_steps=2000,
                   record="telemetry", every=10)          # tqdm progress bar on stderr
    # ... killed at any point; the same call again continues from the last completed chunk ...
    tel = load_records("runs/soak")                        # {"fx": (vehicles, records, 4), ..., "time": ...}
    for chunk in iter_records("runs/soak"): ...            # or one chunk at a time (constant memory)

How it works.  One jitted function advances the whole fleet (``vmap`` over vehicles) by
``chunk_steps`` steps in a ``lax.scan`` (:mod:`sims.run._scan`, the same core and record schema as
the rollouts) and returns the chunk's records.  After each chunk the host writes, in this order and each
atomically (temporary file + ``os.replace``):

1. ``chunk_NNNNNN.npz``: the chunk's records (one array per telemetry field, shape
   ``(vehicles, chunk_steps // every, ...)``) and their ``time`` [s];
2. ``carry_NNNNNN.npz``: the scan carry after the chunk (vehicle state, driver state, reducer
   accumulator, as leaves ``leaf_00000``, ...), exact float bits;
3. ``manifest.json``: the run's configuration (and a hash of it and of the inputs), the list of
   completed chunks and the current carry file.  Then the previous carry file is deleted.

So device and host memory stay flat however many steps run (one chunk of records at a time), the
disk holds the records plus one carry, and a kill at any moment loses at most the chunk in flight:
calling :func:`long_run` again with the same arguments reads the manifest, loads the carry and
continues with the next chunk; the result is bitwise identical to an uninterrupted run (same compiled
chunk function, same inputs; ``tests/sims/test_longrun.py`` kills a run midway and checks).  A
manifest with a different configuration or different inputs raises ``ValueError`` instead of mixing
two runs (``overwrite=True`` starts afresh).

``record``: the one record schema of :mod:`sims.run._scan` (as :func:`sims.run.rollout.rollout`):
``None`` (nothing stored; the final state, driver state and reducer still are), ``"telemetry"``
(:class:`sims.vehicles.core.Telemetry`), ``"state"``, ``"all"`` (``t``, ``state``, ``controls``,
``telemetry``) or a callable ``record(t, state, controls, telemetry) -> pytree``; ``every`` decimates (must divide ``chunk_steps``).
``driver`` is a :mod:`sims.drivers` driver (``driver_axes=0`` if its leaves are per vehicle), ``reducer``
an object with ``init`` / ``update`` as in :func:`sims.run.rollout.rollout`.  ``n_steps`` is rounded up to
whole chunks.  ``sharding``: pass ``mesh=sims.run.sharding.fleet_mesh()`` to split the fleet over the local
devices (the carry and records then come back from every device).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from sims.run._scan import check_steps, chunk_fns, record_fn
from sims.run.fleet import fleet_size
from sims.run.sharding import shard
from sims.vehicles import get_model
from sims.vehicles.integrators import check_dt, check_substeps
from sims.vehicles.params import Controls, fleet_axes, validate_params

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


class LongRunResult(NamedTuple):
    """``final_state``, ``driver_state``, ``reduced`` after the run (leading vehicle axis), the run
    directory ``out_dir``, the ``manifest`` dict, ``resumed_from_chunk`` (0 for a fresh run) and the
    wall-clock seconds of this call ``run_s`` (compile included)."""

    final_state: Any
    driver_state: Any
    reduced: Any
    out_dir: str
    manifest: dict
    resumed_from_chunk: int
    run_s: float


# --------------------------------------------------------------------------------------------------
# files

def _names(tree) -> list[str]:
    """A readable, unique name per leaf (``fx``, ``state.vx``, ``telemetry.fz``; ``leaf_00007`` fallback)."""
    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    names = []
    for i, (path, _) in enumerate(paths):
        parts = []
        for k in path:
            for attr in ("name", "key", "idx"):
                if hasattr(k, attr):
                    parts.append(str(getattr(k, attr)))
                    break
        name = ".".join(parts) or f"leaf_{i:05d}"
        names.append(name if name not in names else f"{name}__{i}")
    return names


def _atomic_savez(path: str, arrays: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _atomic_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _digest(trees) -> str:
    h = hashlib.sha256()
    for tree in trees:
        leaves, treedef = jax.tree.flatten(tree)
        h.update(str(treedef).encode())
        for leaf in leaves:
            a = np.asarray(jax.device_get(leaf))
            h.update(str(a.dtype).encode() + str(a.shape).encode())
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _config(n, n_steps, chunk_steps, dt, every, t0, model, integrator, substeps, record, driver_axes,
            reducer_axes, names) -> dict:
    rec = record if record is None or isinstance(record, str) else getattr(record, "__qualname__", "callable")
    return dict(vehicles=n, n_steps=n_steps, chunk_steps=chunk_steps, n_chunks=-(-n_steps // chunk_steps), dt=dt,
                every=every, t0=t0, model=str(getattr(model, "name", model)), integrator=str(integrator),
                substeps=substeps, record=rec, driver_axes=driver_axes, reducer_axes=reducer_axes,
                record_names=names)


def read_manifest(out_dir) -> dict | None:
    """The run's manifest, or ``None`` if ``out_dir`` holds none."""
    path = os.path.join(out_dir, MANIFEST)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def iter_records(out_dir):
    """Yield ``{name: array, "time": array}`` for each completed chunk, in order (one chunk in memory)."""
    man = read_manifest(out_dir)
    if man is None:
        raise FileNotFoundError(f"no {MANIFEST} in {out_dir}")
    for c in man["completed"]:
        if c.get("records"):
            with np.load(os.path.join(out_dir, c["records"])) as z:
                yield {k: z[k] for k in z.files}


def load_records(out_dir) -> dict:
    """Every completed chunk's records concatenated along the time axis (axis 1; ``time`` along axis 0)."""
    parts = list(iter_records(out_dir))
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts], axis=0 if k == "time" else 1) for k in parts[0]}


# --------------------------------------------------------------------------------------------------

def long_run(out_dir, params, state0, driver, n_steps: int, *, dt: float, chunk_steps: int = 1000,
             record="telemetry", every: int = 1, reducer=None, model="double_track",
             integrator="semi_implicit_euler", substeps: int = 1, driver_axes=None, reducer_axes=None,
             t0: float = 0.0, progress: bool | Any = True, resume: bool = True, overwrite: bool = False,
             max_chunks: int | None = None, on_chunk: Callable | None = None, mesh=None,
             compiler_options: dict | None = None) -> LongRunResult:
    """Run ``n_steps`` steps of the fleet ``params`` (chassis batched) in chunks, streaming records to
    ``out_dir`` and resuming from the last completed chunk (see the module docstring).

    ``max_chunks`` stops after that many chunks in this call (the run stays resumable);
    ``on_chunk(index, manifest)`` is called after each chunk is safely on disk; ``progress`` is
    ``True`` (a tqdm bar), ``False`` or an object with ``update(n)``; ``mesh`` a
    :func:`sims.run.sharding.fleet_mesh` to split the fleet over devices; ``compiler_options`` XLA options
    of the chunk program (part of the run's configuration: a resume must use the same).
    """
    if isinstance(driver, Controls):
        raise ValueError("long_run needs a driver (wrap controls in sims.drivers.Constant or OpenLoop)")
    check_steps("long_run", 1, n_steps=n_steps)  # rounded up to whole chunks: every need not divide it
    check_steps("long_run", every, chunk_steps=chunk_steps)
    dt = check_dt(dt)
    check_substeps(substeps)
    get_model(model)
    rec = record_fn(record)
    validate_params(params)
    n = fleet_size(params)
    os.makedirs(out_dir, exist_ok=True)
    t_start = time.perf_counter()

    init, chunk = chunk_fns(get_model(model), integrator, substeps, dt, chunk_steps, float(t0), fleet_axes(params),
                            driver_axes, reducer_axes, record=record, every=every,
                            options=tuple(sorted((compiler_options or {}).items())))
    if mesh is not None:
        n_dev = mesh.devices.size
        if n % n_dev:
            raise ValueError(f"with a mesh the fleet size ({n}) must be a multiple of the device count ({n_dev})")
        params = shard(params, mesh, fleet_axes(params))
        state0 = shard(state0, mesh, 0)
        driver = shard(driver, mesh, driver_axes)
        reducer = shard(reducer, mesh, reducer_axes) if reducer is not None else None
    dstate0, acc0 = init(params, state0, driver, reducer)
    carry0 = (state0, dstate0, acc0)
    treedef = jax.tree.structure(carry0)

    # the record layout (names), without running anything
    probe = jax.eval_shape(chunk, params, state0, dstate0, acc0, driver, reducer, jnp.int32(0))[1]
    names = _names(probe) if rec is not None else []
    config = _config(n, n_steps, chunk_steps, dt, every, float(t0), model, integrator, substeps, record,
                     driver_axes, reducer_axes, names)
    config["compiler_options"] = {k: str(v) for k, v in sorted((compiler_options or {}).items())}
    inputs_hash = _digest((params, state0, driver, reducer))
    config_hash = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()

    man = read_manifest(out_dir) if not overwrite else None
    if man is not None and not resume:
        raise ValueError(f"{out_dir} already holds a run (resume=False); use another directory or overwrite=True")
    if man is not None and (man.get("config_hash") != config_hash or man.get("inputs_hash") != inputs_hash):
        raise ValueError(f"{out_dir} holds a different run (configuration or inputs differ); "
                         "use another directory or overwrite=True")
    if man is None:
        man = dict(format=FORMAT_VERSION, config=config, config_hash=config_hash, inputs_hash=inputs_hash,
                   completed=[], carry=None, done=False, created=time.strftime("%Y-%m-%dT%H:%M:%S"))
        _atomic_json(os.path.join(out_dir, MANIFEST), man)

    start_chunk = len(man["completed"])
    if man["carry"]:
        with np.load(os.path.join(out_dir, man["carry"])) as z:
            leaves = [z[f"leaf_{i:05d}"] for i in range(len(z.files))]
        like = jax.tree.leaves(carry0)
        if len(leaves) != len(like):
            raise ValueError(f"{man['carry']} does not match this run's state layout")
        leaves = [jnp.asarray(v, dtype=jnp.asarray(l).dtype) for v, l in zip(leaves, like)]
        if mesh is not None:
            leaves = [jax.device_put(v, l.sharding) for v, l in zip(leaves, like)]
        carry = jax.tree.unflatten(treedef, leaves)
    else:
        carry = carry0

    n_chunks = config["n_chunks"]
    bar, own_bar = progress, False
    if progress is True:
        bar = tqdm(total=n_chunks * chunk_steps, initial=start_chunk * chunk_steps, unit="step",
                   desc=f"{os.path.basename(os.path.normpath(out_dir))} ({n} vehicles)", smoothing=0.1)
        own_bar = True
    elif progress is False:
        bar = None
    try:
        done_here = 0
        for i in range(start_chunk, n_chunks):
            if max_chunks is not None and done_here >= max_chunks:
                break
            k0 = i * chunk_steps
            s, d, a = carry
            (s, d, a), ys = chunk(params, s, d, a, driver, reducer, jnp.int32(k0))
            carry = (s, d, a)
            entry = dict(index=i, steps=[k0, k0 + chunk_steps])
            if rec is not None:
                arrays = {nm: np.asarray(jax.device_get(v)) for nm, v in zip(names, jax.tree.leaves(ys))}
                arrays["time"] = t0 + (k0 + every * np.arange(chunk_steps // every)) * dt
                fname = f"chunk_{i:06d}.npz"
                _atomic_savez(os.path.join(out_dir, fname), arrays)
                entry["records"] = fname
            cname = f"carry_{i:06d}.npz"
            _atomic_savez(os.path.join(out_dir, cname),
                          {f"leaf_{j:05d}": np.asarray(jax.device_get(v)) for j, v in enumerate(jax.tree.leaves(carry))})
            old = man["carry"]
            man = dict(man, completed=man["completed"] + [entry], carry=cname, done=(i + 1 == n_chunks))
            _atomic_json(os.path.join(out_dir, MANIFEST), man)
            if old and old != cname and os.path.exists(os.path.join(out_dir, old)):
                os.remove(os.path.join(out_dir, old))
            done_here += 1
            if bar is not None:
                bar.update(chunk_steps)
            if on_chunk is not None:
                on_chunk(i, man)
    finally:
        if own_bar:
            bar.close()
    s, d, a = carry
    return LongRunResult(s, d, a, str(out_dir), man, start_chunk, time.perf_counter() - t_start)


@dataclasses.dataclass
class KillAfter:
    """``on_chunk`` helper for tests and drills: ``SIGKILL`` this process after chunk ``index`` is on disk."""

    index: int

    def __call__(self, i, manifest):
        if i >= self.index:
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
