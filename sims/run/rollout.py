"""``lax.scan`` rollouts of a vehicle model with a driver, memory-aware telemetry and in-scan reductions.

::

    res = rollout(params, state0, driver_or_controls, n_steps, RunSpec(dt=0.005, record="state"), reducer=None)
    res = rollout(params, state0, driver_or_controls, n_steps, dt=0.005, record="state")   # the same
    res.final_state, res.trajectory, res.reduced, res.driver_state

* ``driver_or_controls``: a :mod:`sims.drivers` driver (closed loop), or a
  :class:`~sims.vehicles.params.Controls` whose leaves have a leading axis of length ``n_steps``
  (open loop, fed to the scan as its ``xs``).
* ``record``: the one record schema of :mod:`sims.run._scan`: ``None`` stores nothing (constant memory
  in ``n_steps``), ``"state"`` the states, ``"telemetry"`` the step telemetry
  (:class:`~sims.vehicles.core.Telemetry`), ``"all"`` ``{"t", "state", "controls", "telemetry"}``, or a
  callable ``record(t, state, controls, telemetry) -> pytree``; entry ``k`` is taken at ``t = t0 + k
  every dt`` (state at the start of that step, the controls applied over it).  ``every`` decimates.
* ``reducer``: an object with ``init(params, state) -> acc`` and ``update(acc, t, state, controls,
  telemetry, next_state, params, dt) -> acc`` folded over every step inside the scan (e.g. stopping
  distance), so a fleet never stores its trajectories.

The run's configuration is one static :class:`~sims.run.spec.RunSpec` (``dt``, ``model``, ``integrator``,
``substeps``, ``record``, ``every``, ``compiler_options``), given as ``spec`` or as its fields' keywords.  The
whole rollout is one jitted program; ``n_steps`` and the spec are static.  It is differentiable end to end (``jax.grad`` of any scalar of
the result with respect to float leaves of the params, state or driver).  Bad arguments (``dt <= 0``,
``n_steps < 1``, invalid params such as a negative mass, surface ids outside the table) raise
``ValueError`` before anything is traced.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.validation import is_concrete
from sims.drivers import check_target_speed
from sims.run._scan import record_fn, run_steps
from sims.run.spec import RunSpec, run_spec
from sims.vehicles.params import Controls


class RolloutResult(NamedTuple):
    """``final_state`` at ``t0 + n_steps dt``; ``trajectory`` (``None`` unless recorded, leading time axis);
    ``reduced`` (the reducer's accumulator, ``None`` without one); ``driver_state``."""

    final_state: Any
    trajectory: Any
    reduced: Any
    driver_state: Any


def _rollout_impl(params, state0, controls, reducer, t0, *, n_steps: int, spec: RunSpec):
    step = spec.step()
    ds = () if isinstance(controls, Controls) else controls.init(params, state0)
    acc = reducer.init(params, state0) if reducer is not None else None
    (s, d, a), ys = run_steps(
        params,
        state0,
        ds,
        acc,
        0,
        controls,
        n_steps,
        every=spec.every,
        dt=spec.dt,
        step=step,
        reducer=reducer,
        record=record_fn(spec.record),
        t0=t0,
    )
    return RolloutResult(s, ys, a, d)


@functools.cache
def jitted(fn, static_argnames: tuple, options: tuple = ()):
    """``jax.jit(fn, static_argnames=..., compiler_options=dict(options))``, memoised per options."""
    return jax.jit(fn, static_argnames=static_argnames, compiler_options=dict(options) or None)


def rollout(
    params, state0, controls, n_steps: int, spec: RunSpec | None = None, *, reducer=None, t0=0.0, **fields
) -> RolloutResult:
    """Roll one vehicle (or anything :func:`jax.vmap` maps it over) ``n_steps`` steps; see the module docstring.

    ``spec``: the run's :class:`~sims.run.spec.RunSpec`, or its fields as keywords (``dt`` required;
    ``model``, ``integrator``, ``substeps``, ``record``, ``every``, ``compiler_options``)."""
    spec = run_spec(spec, "rollout", **fields)

    def check_open_loop(n_steps):
        if isinstance(controls, Controls):
            lens = {jnp.shape(v)[0] if jnp.ndim(v) else None for v in jax.tree.leaves(controls)}
            if lens != {n_steps}:
                raise ValueError(f"open-loop controls need a leading time axis of n_steps = {n_steps} on every leaf")

    return launch(_rollout_impl, (params, state0, controls, reducer, t0), n_steps, spec, check_open_loop)


def launch(impl, args: tuple, n_steps: int, spec: RunSpec, check, **static) -> RolloutResult:
    """The one entry of the jitted rollouts: check ``spec`` against the params ``args[0]`` and ``n_steps``,
    run ``check(n_steps)`` (the caller's own checks), then call ``impl(*args, n_steps=..., spec=..., **static)``
    jitted with those static and the spec's compiler options (none under another transformation: options
    apply to a top-level jit only)."""
    spec = spec.check(args[0], n_steps=n_steps)
    check(n_steps)
    check_target_speed(args[2], args[0])
    options = spec.compiler_options if is_concrete(args) else ()
    fn = jitted(impl, ("n_steps", "spec", *static), options)
    return fn(*args, n_steps=n_steps, spec=spec, **static)


@functools.partial(jax.jit, static_argnames=("spec",))
def _step_jit(params, state, controls, *, spec: RunSpec):
    return spec.step()(params, state, controls, spec.dt)


def step(params, state, controls, spec: RunSpec | None = None, **fields):
    """One jitted, validated step (``spec`` or its fields as :func:`rollout`; ``record`` and ``every`` unused);
    returns ``(state, telemetry)``."""
    spec = run_spec(spec, "step", **fields).check(params, n_steps=1)
    return _step_jit(params, state, controls, spec=spec)
