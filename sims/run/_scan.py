"""The one scan/substep core of :mod:`sims.run` (private): every runner steps a model through here.

* :func:`record_fn`: the one record schema of every run (rollout trajectories, fleet runs, long-run
  chunks).  ``record`` is ``None`` (nothing), ``"state"``, ``"telemetry"``
  (:class:`~sims.vehicles.core.Telemetry`), ``"all"`` -> ``{"t", "state", "controls", "telemetry"}``, or
  a callable ``record(t, state, controls, telemetry) -> pytree``.  Entry ``k`` is taken at
  ``t = t0 + k every dt``: the state at the start of that step and the controls applied over it.
* :func:`scan_steps`: ``n_steps`` steps of ``step(params, state, controls, dt) -> (state, telemetry)``
  (a :func:`sims.vehicles.integrators.make_step_with_telemetry`, substeps inside) with a driver or
  open-loop controls, an optional in-scan reducer and records.
* :func:`run_steps`: :func:`scan_steps` with the records decimated by ``every`` (an outer scan).
* :func:`chunk_fns`: the batched-run factory: jitted, vmapped ``(init, chunk)`` functions of one static
  configuration, cached, optionally in cache-sized vehicle blocks (:func:`blocked`).  Used by
  :class:`sims.run.fleet.FleetRun` and :func:`sims.run.longrun.long_run`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxtire.validation import ValidationError, check_int
from sims.run.chunked import chunked
from sims.vehicles.params import Controls

RECORDS = {
    "state": lambda t, s, c, tel: s,
    "telemetry": lambda t, s, c, tel: tel,
    "all": lambda t, s, c, tel: {"t": t, "state": s, "controls": c, "telemetry": tel},
}


def check_steps(source: str, every: int, **counts) -> None:
    """Static step counts (``n_steps``, ``chunk_steps``, ...) and ``every``: Python integers >= 1, ``every``
    dividing each count (:class:`jaxtire.validation.ValidationError` naming ``source`` otherwise)."""
    for name, v in {**counts, "every": every}.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValidationError(f"{source}: {name} = {v!r} must be an integer >= 1")
        check_int(name, v, 1, source=source)
    for name, v in counts.items():
        if v % every:
            raise ValidationError(f"{source}: every = {every} must divide {name} = {v}")


def record_fn(record):
    """The record function for ``record`` (module docstring), ``None`` for no records; ``ValueError`` otherwise."""
    if record is None:
        return None
    if callable(record):
        return record
    try:
        return RECORDS[record]
    except (KeyError, TypeError):
        raise ValueError(f"record = {record!r}; allowed None, 'state', 'telemetry', 'all' or a callable") from None


def scan_steps(params, state, dstate, acc, k0, controls, n_steps: int, *, dt: float, step, reducer, record, t0):
    """``n_steps`` steps from step index ``k0`` (not jitted, not validated); returns ``(state, dstate, acc), ys``.

    ``controls``: a driver (``dstate`` its state) or open-loop :class:`Controls` with a leading time axis
    of ``n_steps`` (the scan's ``xs``); ``record`` a function from :func:`record_fn` or ``None``.
    """
    open_loop = isinstance(controls, Controls)
    dtype = jnp.result_type(state.vx)

    def body(carry, x):
        s, d, a, k = carry
        t = jnp.asarray(t0, dtype) + k.astype(dtype) * dt
        if open_loop:
            c = x
        else:
            c, d = controls(t, s, params, d, dt)
        new, tel = step(params, s, c, dt)
        if reducer is not None:
            a = reducer.update(a, t, s, c, tel, new, params, dt)
        y = record(t, s, c, tel) if record is not None else None
        return (new, d, a, k + 1), y

    xs = controls if open_loop else None
    (s, d, a, _), ys = jax.lax.scan(
        body, (state, dstate, acc, jnp.asarray(k0, jnp.int32)), xs, length=None if open_loop else n_steps
    )
    return (s, d, a), ys


def run_steps(
    params, state, dstate, acc, k0, controls, n_steps: int, *, every: int = 1, dt: float, step, reducer, record, t0
):
    """:func:`scan_steps` with one record every ``every`` steps (``every`` divides ``n_steps``)."""
    kw = dict(dt=dt, step=step, reducer=reducer, t0=t0)
    if every == 1 or record is None:
        return scan_steps(params, state, dstate, acc, k0, controls, n_steps, record=record, **kw)
    open_loop = isinstance(controls, Controls)

    def outer(carry, xs):
        s, d, a, k = carry
        c_first = jax.tree.map(lambda v: v[:1], xs) if open_loop else controls
        c_rest = jax.tree.map(lambda v: v[1:], xs) if open_loop else controls
        (s, d, a), y = scan_steps(params, s, d, a, k, c_first, 1, record=record, **kw)
        (s, d, a), _ = scan_steps(params, s, d, a, k + 1, c_rest, every - 1, record=None, **kw)
        return (s, d, a, k + every), jax.tree.map(lambda v: v[0], y)

    n_out = n_steps // every
    xs = jax.tree.map(lambda v: v.reshape((n_out, every) + v.shape[1:]), controls) if open_loop else None
    (s, d, a, _), ys = jax.lax.scan(
        outer, (state, dstate, acc, jnp.asarray(k0, jnp.int32)), xs, length=None if open_loop else n_out
    )
    return (s, d, a), ys


def blocked(fn, block, in_axes):
    """``fn`` over blocks of at most ``block`` vehicles, the blocks as equal as possible (little padding)."""
    if block is None:
        return fn

    def run(*args):
        n = jnp.shape(jax.tree.leaves(args[1])[0])[0]  # the state's leading (vehicle) axis
        n_blocks = -(-n // block)
        size = -(-n // n_blocks)
        size = -(-size // 8) * 8  # whole vector lanes
        return chunked(fn, chunk=size, in_axes=in_axes)(*args)

    return run


#: How many chunk configurations :func:`chunk_fns` keeps (each holds its compiled programs); a run holds its own.
CHUNK_CACHE = 32


@functools.lru_cache(maxsize=CHUNK_CACHE)
def chunk_fns(spec, chunk_steps: int, t0: float, p_axes, driver_axes, reducer_axes, block=None):
    """Jitted, vmapped ``(init, chunk)`` for one static configuration: a checked
    :class:`~sims.run.spec.RunSpec` ``spec`` (its model, step, records and compiler options), chunks of
    ``chunk_steps`` steps from time ``t0``, the vmap axes of the params, driver and reducer, and ``block``
    vehicles per cache-sized block (the last :data:`CHUNK_CACHE` configurations cached: fleets of one structure
    share a compiled program).

    ``init(params, state, driver, reducer) -> (dstate, acc)``;
    ``chunk(params, state, dstate, acc, driver, reducer, k0) -> ((state, dstate, acc), records)`` runs
    ``chunk_steps`` steps from step ``k0`` (``records`` ``None`` when ``spec.record`` is ``None``).
    """
    step = spec.step()
    rec = record_fn(spec.record)

    def init_one(p, s, d, r):
        return d.init(p, s), (r.init(p, s) if r is not None else None)

    def chunk_one(p, s, dstate, acc, d, r, k0):
        return run_steps(
            p, s, dstate, acc, k0, d, chunk_steps, every=spec.every, dt=spec.dt, step=step, reducer=r, record=rec, t0=t0
        )

    opts = spec.options()
    init = jax.jit(jax.vmap(init_one, in_axes=(p_axes, 0, driver_axes, reducer_axes)), compiler_options=opts)
    axes = (p_axes, 0, 0, 0, driver_axes, reducer_axes, None)
    chunk = jax.jit(blocked(jax.vmap(chunk_one, in_axes=axes), block, axes), compiler_options=opts)
    return init, chunk
