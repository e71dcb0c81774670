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

Integrity.  Every file's sha256 is recorded in the manifest (``records_sha256`` / ``carry_sha256`` of each
completed chunk) and every npz also holds the run's fingerprint (``__run__``: the hash of the configuration,
which includes the jax version and the float dtype, and of the inputs: params, initial state, driver,
reducer) and its place in the run (``__chunk__``: chunk index, first step, end step; the manifest entry of
chunk ``i`` must name ``chunk_{i:06d}.npz`` / ``carry_{i:06d}.npz`` and the files must hold chunk ``i``, so an
entry pointing at another chunk's files is refused naming the entry).  On resume the manifest is checked (parses, right format, chunk indices and step ranges
consecutive, no more chunks than the run has) and so is every file it names (present, checksum, fingerprint,
carry layout, shapes and dtypes, finite floats); a truncated, bit-flipped, foreign or mismatched file raises
:class:`LongRunError` (a ``ValueError``) naming the file and what is wrong.  ``repair=True`` instead
restarts from the last good chunk (the last two carries are kept, so a damaged latest carry costs one
chunk; a damaged records chunk restarts after the last good chunk whose carry survives, else from the
start) -- the rerun is bitwise identical.  Writes go to a unique temporary file in the same directory,
are fsynced and ``os.replace``d; on any failure the temporary file is removed and an ``OSError`` (disk
full, file too large) is reported as :class:`LongRunError` naming the file; nothing the manifest lists is
ever removed or overwritten before the new manifest is on disk.

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
an object with ``init`` / ``update`` as in :func:`sims.run.rollout.rollout`.  ``n_steps`` runs exactly: the
last chunk is partial when ``chunk_steps`` does not divide it (``every`` must divide both).

Placement: a :class:`sims.run.placement.Placement` as :class:`sims.run.fleet.FleetRun`'s (the same code), ``devices``
``None`` every local device, ``k`` the first ``k``, or a sequence of devices.  The fleet, of any size, is padded to a multiple of the device count with
copies of its last vehicle and every device runs the one-device chunk program on its block at once; the carry
files and records hold the ``n`` vehicles only, so the records, the final state and the carry files are bitwise
those of the one-device run and a run may resume on another device count.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import io
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from sims.run._scan import check_steps
from sims.run.fleet import FleetRun, fleet_size
from sims.run.placement import Placement
from sims.run.spec import RunSpec, run_config
from sims.vehicles.params import Controls

MANIFEST = "manifest.json"
FORMAT_VERSION = 3  # 3: every npz holds __chunk__ (index, first step, end step)
KEEP_CARRIES = 2  # the latest carry and the one before (a damaged latest carry then costs one chunk)


class LongRunError(ValueError):
    """A long run's directory cannot be used as is: a damaged, foreign or mismatched checkpoint file, or a
    write that failed (disk full); the message names the file and what is wrong."""


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


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a unique temporary file in the same directory, fsync,
    ``os.replace``, fsync of the directory.  On any failure the temporary file is removed; an ``OSError``
    becomes :class:`LongRunError` naming the file (and saying "disk full" for ``ENOSPC``)."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        try:
            dfd = os.open(d, os.O_RDONLY)
        except OSError:
            dfd = None
        if dfd is not None:
            try:
                os.fsync(dfd)
            except OSError:
                pass
            finally:
                os.close(dfd)
    except OSError as e:
        reasons: dict[int | None, str] = {
            errno.ENOSPC: "disk full",
            errno.EFBIG: "file too large",
            errno.EDQUOT: "disk quota exceeded",
        }
        what = reasons.get(e.errno, e.strerror or type(e).__name__)
        raise LongRunError(
            f"long_run: could not write {path}: {what} ({e}); the run stays resumable from the "
            "last chunk the manifest lists"
        ) from e
    finally:
        if tmp is not None:
            try:
                os.remove(tmp)
            except OSError:
                pass


def _nonfinite(leaves) -> dict:
    """``{leaf index: count of NaN/inf}`` for the float leaves that hold any (as str keys, JSON-ready): an
    accumulator may hold inf by design, so the manifest records what was written and a resume compares."""
    out = {}
    for j, v in enumerate(leaves):
        if np.issubdtype(v.dtype, np.inexact):
            k = int(np.size(v) - np.count_nonzero(np.isfinite(v)))
            if k:
                out[str(j)] = k
    return out


def _remove_stale_temporaries(out_dir) -> None:
    """Remove temporary files a killed writer left (``.NAME.XXXX.tmp``; never a file the manifest lists)."""
    for name in os.listdir(out_dir):
        if (
            name.startswith(".")
            and name.endswith(".tmp")
            and (name.startswith("." + MANIFEST + ".") or name.startswith(".chunk_") or name.startswith(".carry_"))
        ):
            try:
                os.remove(os.path.join(out_dir, name))
            except OSError:
                pass


def _npz_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_savez(path: str, arrays: dict) -> str:
    """Save ``arrays`` atomically; return the file's sha256."""
    data = _npz_bytes(arrays)
    atomic_write(path, data)
    return _sha(data)


def _atomic_json(path: str, obj) -> None:
    atomic_write(path, (json.dumps(obj, indent=1) + "\n").encode())


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


def _config(
    n, n_steps, chunk_steps, dt, every, t0, model, integrator, substeps, record, driver_axes, reducer_axes, names
) -> dict:
    rec = record if record is None or isinstance(record, str) else getattr(record, "__qualname__", "callable")
    return dict(
        jax_version=jax.__version__,
        # config flags are dynamic attributes JAX's stubs lack; config.read() raises for them (jax 0.10)
        x64=bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
        vehicles=n,
        n_steps=n_steps,
        chunk_steps=chunk_steps,
        n_chunks=-(-n_steps // chunk_steps),
        dt=dt,
        every=every,
        t0=t0,
        model=str(getattr(model, "name", model)),
        integrator=str(integrator),
        substeps=substeps,
        record=rec,
        driver_axes=driver_axes,
        reducer_axes=reducer_axes,
        record_names=names,
    )


def read_manifest(out_dir) -> dict | None:
    """The run's manifest, or ``None`` if ``out_dir`` holds none; :class:`LongRunError` if it is not a
    readable long-run manifest (truncated, not JSON, missing fields, inconsistent chunk list)."""
    path = os.path.join(out_dir, MANIFEST)
    if not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            man = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LongRunError(f"{path}: not a valid manifest (damaged or truncated: {e})") from e
    _check_manifest(path, man)
    return man


def _check_manifest(path: str, man) -> None:
    if not isinstance(man, dict):
        raise LongRunError(f"{path}: not a long-run manifest (a JSON {type(man).__name__}, expected an object)")
    if man.get("format") != FORMAT_VERSION:
        raise LongRunError(
            f"{path}: manifest format {man.get('format')!r}, this version reads {FORMAT_VERSION} "
            "(a foreign or older run; use another directory or overwrite=True)"
        )
    for key, typ in (
        ("config", dict),
        ("config_hash", str),
        ("inputs_hash", str),
        ("run_id", str),
        ("completed", list),
        ("done", bool),
    ):
        if not isinstance(man.get(key), typ):
            raise LongRunError(f"{path}: manifest field {key!r} missing or of the wrong type")
    cfg = man["config"]
    n_chunks, chunk_steps, n_steps = cfg.get("n_chunks"), cfg.get("chunk_steps"), cfg.get("n_steps")
    if not all(isinstance(v, int) for v in (n_chunks, chunk_steps, n_steps)):
        raise LongRunError(f"{path}: manifest config lacks n_chunks / chunk_steps / n_steps")
    if len(man["completed"]) > n_chunks:
        raise LongRunError(
            f"{path}: manifest lists {len(man['completed'])} completed chunks, the run has only {n_chunks}"
        )
    for i, c in enumerate(man["completed"]):
        want = [i * chunk_steps, min((i + 1) * chunk_steps, n_steps)]
        if not isinstance(c, dict) or c.get("index") != i or c.get("steps") != want:
            raise LongRunError(f"{path}: completed chunk #{i} is {c!r}, expected index {i} and steps {want}")
        for key, stem in (("records", "chunk"), ("carry", "carry")):
            if key in c and c[key] != f"{stem}_{i:06d}.npz":
                raise LongRunError(
                    f"{path}: completed chunk #{i} (steps {want}) names {key} file {c[key]!r}, "
                    f"expected {stem}_{i:06d}.npz: the entry points at another chunk's file"
                )
        sums_ok = isinstance(c.get("carry_sha256"), str) and isinstance(c.get("carry_nonfinite"), dict)
        if not sums_ok or ("records" in c) != isinstance(c.get("records_sha256"), str):
            raise LongRunError(f"{path}: completed chunk #{i} lacks its checksums")
    if man["done"] != (len(man["completed"]) == n_chunks):
        raise LongRunError(
            f"{path}: manifest says done={man['done']} with {len(man['completed'])} of {n_chunks} chunks"
        )


def _read_verified(out_dir, fname: str, sha: str, run_id: str, entry: dict | None = None) -> dict:
    """The arrays of npz ``fname``, after checking it exists, its sha256, the run fingerprint and (``entry``: the
    manifest's completed-chunk entry) that the file holds that chunk: its ``__chunk__`` (index, first step,
    end step) equals the entry's ``index`` and ``steps``."""
    path = os.path.join(out_dir, fname)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LongRunError(f"{path}: listed in the manifest but cannot be read ({e.strerror or e})") from e
    if _sha(data) != sha:
        raise LongRunError(
            f"{path}: checksum mismatch (sha256 {_sha(data)[:12]}..., manifest says {sha[:12]}...): "
            f"the file is damaged, truncated or from another run"
        )
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # checksum matched, so only a manifest forged around a bad file gets here
        raise LongRunError(f"{path}: unreadable npz ({type(e).__name__}: {e})") from e
    rid = arrays.pop("__run__", None)
    if rid is None or str(rid) != run_id:
        raise LongRunError(
            f"{path}: belongs to another run (fingerprint {str(rid)[:12]}..., this run {run_id[:12]}...)"
        )
    tag = arrays.pop("__chunk__", None)
    if entry is not None:
        want = [entry.get("index"), *entry.get("steps", [None, None])]
        got = None if tag is None else [int(x) for x in np.ravel(tag)]
        if got != want:
            raise LongRunError(
                f"{path}: holds chunk {got} (index, first step, end step) but manifest entry #{want[0]} "
                f"is chunk {want}: the entry points at another chunk's file"
            )
    return arrays


def iter_records(out_dir):
    """Yield ``{name: array, "time": array}`` for each completed chunk, in order (one chunk in memory); each
    file is checked against the manifest's checksum (:class:`LongRunError` if damaged)."""
    man = read_manifest(out_dir)
    if man is None:
        raise FileNotFoundError(f"no {MANIFEST} in {out_dir}")
    for c in man["completed"]:
        if c.get("records"):
            yield _read_verified(out_dir, c["records"], c["records_sha256"], man["run_id"], c)


def load_records(out_dir) -> dict:
    """Every completed chunk's records concatenated along the time axis (axis 1; ``time`` along axis 0)."""
    parts = list(iter_records(out_dir))
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts], axis=0 if k == "time" else 1) for k in parts[0]}


# --------------------------------------------------------------------------------------------------


def long_run(
    out_dir,
    params,
    state0,
    driver,
    n_steps: int,
    spec: RunSpec | None = None,
    *,
    chunk_steps: int = 1000,
    reducer=None,
    driver_axes=None,
    reducer_axes=None,
    t0: float = 0.0,
    progress: bool | Any = True,
    resume: bool = True,
    overwrite: bool = False,
    max_chunks: int | None = None,
    on_chunk: Callable | None = None,
    placement: Placement | None = None,
    repair: bool = False,
    **fields,
) -> LongRunResult:
    """Run ``n_steps`` steps of the fleet ``params`` (chassis batched) in chunks, streaming records to
    ``out_dir`` and resuming from the last completed chunk (see the module docstring): the chunks of
    :meth:`sims.run.fleet.FleetRun.chunks` with a checkpoint after each.

    ``spec``: the run's :class:`~sims.run.spec.RunSpec`, or its fields as keywords (``dt`` required;
    ``record`` defaults to ``"telemetry"`` here; ``compiler_options`` are part of the run's configuration: a
    resume must use the same).  ``max_chunks`` stops after that many chunks in this call (the run stays
    resumable); ``on_chunk(index, manifest)`` is called after each chunk is safely on disk; ``progress`` is
    ``True`` (a tqdm bar), ``False`` or an object with ``update(n)``; ``placement`` where the fleet runs, a
    :class:`~sims.run.placement.Placement` or its fields as keywords (``devices``; ``block`` defaults to ``None``
    here, one batch per device: module docstring, "Placement"); ``repair`` restarts from the last good chunk
    when a checkpoint file is damaged (otherwise :class:`LongRunError`).
    """
    if isinstance(driver, Controls):
        raise ValueError("long_run needs a driver (wrap controls in sims.drivers.Constant or OpenLoop)")
    if spec is None:
        fields.setdefault("record", "telemetry")
    check_steps("long_run", 1, n_steps=n_steps)
    check_steps("long_run", 1, chunk_steps=chunk_steps)
    last_steps = n_steps % chunk_steps or chunk_steps  # the last chunk is partial when chunk_steps does not divide
    if placement is None:
        fields.setdefault("block", None)
    spec, where = run_config(spec, placement, "long_run", **fields)
    where = where.local("long_run")
    spec = spec.check(params, "long_run", chunk_steps=chunk_steps, last_chunk_steps=last_steps)
    n = fleet_size(params)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise LongRunError(f"long_run: out_dir {out_dir} exists and is not a directory")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise LongRunError(f"long_run: cannot create out_dir {out_dir}: {e.strerror or e}") from e
    t_start = time.perf_counter()
    _remove_stale_temporaries(out_dir)

    inputs_hash = _digest((params, state0, driver, reducer))
    # the fleet runner (its placement: padded to a multiple of the device count, split over the mesh, one
    # program a device), one batch per device
    run = FleetRun(
        params,
        state0,
        driver,
        spec,
        reducer=reducer,
        chunk_steps=chunk_steps,
        driver_axes=driver_axes,
        reducer_axes=reducer_axes,
        t0=t0,
        placement=where,
    )
    carry0 = run.start()
    treedef = jax.tree.structure(carry0)
    like = [run.rows(np.asarray(jax.device_get(leaf))) for leaf in jax.tree.leaves(carry0)]

    # the record layout (names), without running anything
    names = _names(run.record_shapes()) if spec.record is not None else []
    dt, every = spec.dt, spec.every
    config = _config(
        n,
        n_steps,
        chunk_steps,
        dt,
        every,
        float(t0),
        spec.model,
        spec.integrator,
        spec.substeps,
        spec.record,
        driver_axes,
        reducer_axes,
        names,
    )
    config["compiler_options"] = {k: str(v) for k, v in spec.compiler_options}
    config["carry_layout"] = [[str(a.dtype), list(a.shape)] for a in like]
    config_hash = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    run_id = hashlib.sha256((config_hash + inputs_hash).encode()).hexdigest()
    man_path = os.path.join(out_dir, MANIFEST)

    man = read_manifest(out_dir) if not overwrite else None
    if man is not None and not resume:
        raise ValueError(f"{out_dir} already holds a run (resume=False); use another directory or overwrite=True")
    if man is not None and (
        man.get("config_hash") != config_hash or man.get("inputs_hash") != inputs_hash or man.get("run_id") != run_id
    ):
        what = "configuration" if man.get("config_hash") != config_hash else "inputs"
        raise LongRunError(
            f"{man_path}: {out_dir} holds a different run ({what} differ: params, initial state, "
            "driver, dt, steps, chunking, dtype or jax version); use another directory or "
            "overwrite=True"
        )

    def load_carry(entry):
        arrays = _read_verified(out_dir, entry["carry"], entry["carry_sha256"], run_id, entry)
        path = os.path.join(out_dir, entry["carry"])
        leaves = []
        for j, l in enumerate(like):
            v = arrays.get(f"leaf_{j:05d}")
            if v is None or v.shape != l.shape or v.dtype != l.dtype:
                got = None if v is None else (str(v.dtype), v.shape)
                raise LongRunError(f"{path}: leaf {j} is {got}, this run's carry needs ({l.dtype}, {l.shape})")
            leaves.append(v)
        if _nonfinite(leaves) != entry.get("carry_nonfinite"):
            raise LongRunError(
                f"{path}: NaN/inf where the run wrote none (non-finite counts per leaf "
                f"{_nonfinite(leaves)}, written {entry.get('carry_nonfinite')}); "
                "refusing to resume from it"
            )
        if len(arrays) != len(like):
            raise LongRunError(f"{path}: {len(arrays)} leaves, this run's carry has {len(like)}")
        return leaves

    def verify(man):
        """Raise LongRunError at the first bad file; return the carry leaves of the last chunk (or None)."""
        for c in man["completed"]:
            if c.get("records"):
                _read_verified(out_dir, c["records"], c["records_sha256"], run_id, c)
        if not man["completed"]:
            return None
        last = man["completed"][-1]
        if man.get("carry") != last.get("carry"):
            raise LongRunError(
                f"{man_path}: current carry {man.get('carry')!r} is not the last chunk's {last.get('carry')!r}"
            )
        return load_carry(last)

    def last_good(man):
        """(chunks to keep, carry leaves) of the longest verified prefix whose carry survives."""
        good = 0
        for c in man["completed"]:
            try:
                if c.get("records"):
                    _read_verified(out_dir, c["records"], c["records_sha256"], run_id, c)
            except LongRunError:
                break
            good += 1
        for k in range(good, 0, -1):
            try:
                return k, load_carry(man["completed"][k - 1])
            except LongRunError:
                continue
        return 0, None

    leaves = None
    if man is not None:
        try:
            leaves = verify(man)
        except LongRunError as e:
            if not repair:
                raise LongRunError(f"{e}; pass repair=True to restart from the last good chunk") from None
            keep, leaves = last_good(man)
            done = man["completed"][:keep]
            man = dict(man, completed=done, carry=done[-1]["carry"] if done else None, done=False)
            _atomic_json(man_path, man)
    if man is None:
        man = dict(
            format=FORMAT_VERSION,
            config=config,
            config_hash=config_hash,
            inputs_hash=inputs_hash,
            run_id=run_id,
            completed=[],
            carry=None,
            done=False,
            created=time.strftime("%Y-%m-%dT%H:%M:%S"),
        )
        _atomic_json(man_path, man)

    start_chunk = len(man["completed"])
    if leaves is not None:
        carry = run.place_rows(jax.tree.unflatten(treedef, [jnp.asarray(v) for v in leaves]))
    else:
        carry = carry0

    n_chunks = config["n_chunks"]
    bar: Any = progress
    own_bar = False
    if progress is True:
        bar = tqdm(
            total=n_steps,
            initial=min(start_chunk * chunk_steps, n_steps),
            unit="step",
            desc=f"{os.path.basename(os.path.normpath(out_dir))} ({n} vehicles)",
            smoothing=0.1,
        )
        own_bar = True
    elif progress is False:
        bar = None
    rec = spec.record is not None
    try:
        done_here = 0
        chunks = run.chunks(n_steps, carry, start_chunk)
        while max_chunks is None or done_here < max_chunks:
            try:
                i, k0, steps_i, carry, ys = next(chunks)
            except StopIteration:
                break
            entry = dict(index=i, steps=[k0, k0 + steps_i])
            if rec:
                arrays = {
                    nm: run.rows(np.asarray(jax.device_get(v)))
                    for nm, v in zip(names, jax.tree.leaves(ys), strict=False)
                }
                arrays["time"] = t0 + (k0 + every * np.arange(steps_i // every)) * dt
                arrays["__run__"] = np.array(run_id)
                arrays["__chunk__"] = np.array([i, k0, k0 + steps_i], np.int64)  # ties the file to its chunk
                fname = f"chunk_{i:06d}.npz"
                entry["records"] = fname
                entry["records_sha256"] = _atomic_savez(os.path.join(out_dir, fname), arrays)
            cname = f"carry_{i:06d}.npz"
            carr = {
                f"leaf_{j:05d}": run.rows(np.asarray(jax.device_get(v))) for j, v in enumerate(jax.tree.leaves(carry))
            }
            leaf_count = len(carr)
            carr["__run__"] = np.array(run_id)
            carr["__chunk__"] = np.array([i, k0, k0 + steps_i], np.int64)
            entry["carry"] = cname
            entry["carry_nonfinite"] = _nonfinite([carr[f"leaf_{j:05d}"] for j in range(leaf_count)])
            entry["carry_sha256"] = _atomic_savez(os.path.join(out_dir, cname), carr)
            man = dict(man, completed=man["completed"] + [entry], carry=cname, done=(i + 1 == n_chunks))
            _atomic_json(man_path, man)
            # only now (the new manifest on disk) may carries older than the last KEEP_CARRIES go
            for c in man["completed"][:-KEEP_CARRIES]:
                old = c.get("carry")
                if old and os.path.exists(os.path.join(out_dir, old)):
                    os.remove(os.path.join(out_dir, old))
            done_here += 1
            if bar is not None:
                bar.update(steps_i)
            if on_chunk is not None:
                on_chunk(i, man)
    finally:
        if own_bar:
            bar.close()
    s, d, a = run.rows(carry)
    return LongRunResult(s, d, a, str(out_dir), man, start_chunk, time.perf_counter() - t_start)


@dataclasses.dataclass
class KillAfter:
    """``on_chunk`` helper for tests and drills: ``SIGKILL`` this process after chunk ``index`` is on disk."""

    index: int

    def __call__(self, i, manifest):
        if i >= self.index:
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
