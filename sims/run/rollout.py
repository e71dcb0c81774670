"""``lax.scan`` rollouts of a vehicle model with a driver, memory-aware telemetry and in-scan reductions.

::

    res = rollout(params, state0, driver_or_controls, n_steps, dt=0.005, model="double_track",
                  integrator="semi_implicit_euler", substeps=1, record=None, every=1, reducer=None)
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

The whole rollout is one jitted program; ``n_steps``, ``dt``, ``model``, ``integrator``, ``substeps``,
``record`` and ``every`` are static.  It is differentiable end to end (``jax.grad`` of any scalar of
the result with respect to float leaves of the params, state or driver).  Bad arguments (``dt <= 0``,
``n_steps < 1``, invalid params such as a negative mass, surface ids outside the table) raise
``ValueError`` before anything is traced.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.validation import is_concrete
from sims.drivers import check_target_speed
from sims.run._scan import check_steps, record_fn, run_steps
from sims.vehicles import get_model
from sims.vehicles.integrators import check_dt, check_substeps, get_integrator, make_step_with_telemetry
from sims.vehicles.params import Controls, VehicleParams, validate_params


class RolloutResult(NamedTuple):
    """``final_state`` at ``t0 + n_steps dt``; ``trajectory`` (``None`` unless recorded, leading time axis);
    ``reduced`` (the reducer's accumulator, ``None`` without one); ``driver_state``."""

    final_state: Any
    trajectory: Any
    reduced: Any
    driver_state: Any


def check_args(params, n_steps, dt, substeps, integrator, every=1, model=None):
    """Validate the static rollout arguments and concrete params; returns ``(n_steps, dt)``.  With ``model``,
    its :meth:`~sims.vehicles.core.Model.check_step` warns where ``dt / substeps`` is too coarse for it."""
    check_steps("rollout", every, n_steps=n_steps)
    dt = check_dt(dt)
    check_substeps(substeps)
    get_integrator(integrator)
    if isinstance(params, VehicleParams) and is_concrete(params):
        validate_params(params)
        if model is not None:
            get_model(model).check_step(params, float(dt) / substeps)
    return n_steps, dt


def _rollout_impl(params, state0, controls, reducer, t0, *, n_steps, dt, model, integrator, substeps, record, every):
    model = get_model(model)
    step = make_step_with_telemetry(model, integrator, substeps)
    rec = record_fn(record)
    ds = () if isinstance(controls, Controls) else controls.init(params, state0)
    acc = reducer.init(params, state0) if reducer is not None else None
    (s, d, a), ys = run_steps(
        params, state0, ds, acc, 0, controls, n_steps, every=every, dt=dt, step=step, reducer=reducer, record=rec, t0=t0
    )
    return RolloutResult(s, ys, a, d)


_STATIC = ("n_steps", "dt", "model", "integrator", "substeps", "record", "every")

#: XLA:CPU options that roughly halve compile time and double run time (for tests and short runs).
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


def fast_compile_options() -> dict:
    """:data:`FAST_COMPILE` on the CPU backend, ``{}`` elsewhere (the options are XLA:CPU's)."""
    return dict(FAST_COMPILE) if jax.default_backend() == "cpu" else {}


def options_key(compiler_options) -> tuple:
    """A hashable form of a ``compiler_options`` dict (``None`` -> ``()``)."""
    return tuple(sorted((compiler_options or {}).items()))


@functools.cache
def jitted(fn, static_argnames: tuple, options: tuple = ()):
    """``jax.jit(fn, static_argnames=..., compiler_options=dict(options))``, memoised per options."""
    return jax.jit(fn, static_argnames=static_argnames, compiler_options=dict(options) or None)


def rollout(
    params,
    state0,
    controls,
    n_steps: int,
    *,
    dt: float,
    model="double_track",
    integrator="semi_implicit_euler",
    substeps: int = 1,
    record=None,
    every: int = 1,
    reducer=None,
    t0=0.0,
    compiler_options=None,
) -> RolloutResult:
    """Roll one vehicle (or anything :func:`jax.vmap` maps it over) ``n_steps`` steps; see the module docstring.

    ``compiler_options``: XLA options of the compiled rollout (e.g. :func:`fast_compile_options`)."""

    def check_open_loop(n_steps):
        if isinstance(controls, Controls):
            lens = {jnp.shape(v)[0] if jnp.ndim(v) else None for v in jax.tree.leaves(controls)}
            if lens != {n_steps}:
                raise ValueError(f"open-loop controls need a leading time axis of n_steps = {n_steps} on every leaf")

    # locals(): this call's arguments, read by name against this signature (no second list of them)
    a = _rollout_arguments(params, state0, controls, n_steps, locals())
    return _launch(_rollout_impl, _STATIC, a, check_open_loop)


@functools.cache
def _rollout_signature() -> inspect.Signature:
    return inspect.signature(rollout)


def _rollout_arguments(params, state0, controls, n_steps, kw: dict) -> dict:
    """The arguments of a :func:`rollout` call with ``kw`` its keywords (unknown names ignored), every
    keyword not in ``kw`` at its default: the one signature (and set of defaults) of every rollout
    variant (:func:`sims.run.fleet.fleet_rollout` takes rollout's keywords)."""
    sig = _rollout_signature()
    kw = {k: v for k, v in kw.items() if k in sig.parameters and k not in ("params", "state0", "controls", "n_steps")}
    bound = sig.bind(params, state0, controls, n_steps, **kw)
    bound.apply_defaults()
    return dict(bound.arguments)


def _launch(impl, static_names: tuple, a: dict, check, **static) -> RolloutResult:
    """The one entry of the jitted rollouts: validate the :func:`rollout` arguments ``a``
    (:func:`_rollout_arguments`), run ``check(n_steps)`` (the caller's own checks), then call
    ``impl(params, state0, controls, reducer, t0, **static_args)`` jitted with ``static_names`` static and
    ``a["compiler_options"]`` (``static``: more static keywords of ``impl``)."""
    n_steps, dt = check_args(
        a["params"], a["n_steps"], a["dt"], a["substeps"], a["integrator"], a["every"], model=a["model"]
    )
    record_fn(a["record"])
    get_model(a["model"])
    check(n_steps)
    check_target_speed(a["controls"], a["params"])
    args = (a["params"], a["state0"], a["controls"], a["reducer"], a["t0"])
    fn = jitted(impl, static_names, _options_unless_traced(a["compiler_options"], *args))
    run = {k: a[k] for k in ("model", "integrator", "substeps", "record", "every")}
    return fn(*args, n_steps=n_steps, dt=dt, **run, **static)


def _options_unless_traced(compiler_options, *args) -> tuple:
    """Compiler options apply to a top-level jit only: none when called under another transformation."""
    if not is_concrete(args):
        return ()
    return options_key(compiler_options)


@functools.partial(jax.jit, static_argnames=("dt", "model", "integrator", "substeps"))
def _step_jit(params, state, controls, *, dt, model, integrator, substeps):
    return make_step_with_telemetry(get_model(model), integrator, substeps)(params, state, controls, dt)


def step(
    params, state, controls, *, dt: float, model="double_track", integrator="semi_implicit_euler", substeps: int = 1
):
    """One jitted, validated step; returns ``(state, telemetry)``."""
    check_args(params, 1, dt, substeps, integrator, model=model)
    return _step_jit(params, state, controls, dt=check_dt(dt), model=model, integrator=integrator, substeps=substeps)
