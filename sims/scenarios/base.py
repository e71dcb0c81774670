"""The scenario protocol: what every manoeuvre of the catalogue (:mod:`sims.scenarios.catalog`) is.

A *scenario* is a driver + an in-scan reducer + pass/fail criteria, with named settings (entry speed,
grade, ...) and named per-vehicle metrics.  Every scenario runs the same two ways::

    metrics, stats = run_scenario(scenario, fleet, {"speed": 80 / 3.6})   # host loop: chunks, early stop
    metrics = scenario_metrics(scenario, fleet, settings)                  # one traceable program (jax.grad)

* :class:`Metric` describes one output: ``name``, ``unit``, ``kind`` (``"value"``: a continuous number,
  summarised by mean and percentiles; ``"flag"``: 0/1, summarised as a rate), ``smooth`` (differentiable
  with respect to the parameters, so pathwise gradients are meaningful) and ``doc``.
* :class:`Setup` is everything one run needs: the fleet ``params``, the batched initial ``state0``, the
  batched ``driver`` and ``reducer`` (every leaf with a leading vehicle axis, :func:`per_vehicle`), the
  ``model``, the step ``dt`` [s] and the horizon ``n_steps`` (both static).
* :class:`Scenario` (a :class:`typing.Protocol`; scenarios are frozen dataclasses, their fields the static
  options such as ``dt``, ``max_time``, ``model``):

  - ``name``: the registry name; ``settings``: every setting and its default (SI units);
    ``metrics``: the :class:`Metric` tuple, always with ``passed``;
  - ``setup(params, settings) -> Setup``: ``settings`` holds every key of ``self.settings``, each a scalar
    or one value per vehicle (:func:`resolve_settings` fills and checks them); pure JAX in the values, so
    a study can take ``jax.grad`` through setup, rollout and evaluation;
  - ``evaluate(acc, setup, settings) -> dict``: the per-vehicle metrics ``(n,)`` from the reducer's final
    accumulator (``passed`` applies the criteria);
  - ``done(acc) -> (n,) bool`` or ``None``: which vehicles have finished (early stop in
    :func:`run_scenario`; vehicles that finished are no longer simulated once few remain).

Driver protocol (:mod:`sims.drivers`): an immutable pytree with ``init(params, state) -> dstate`` and
``__call__(t, state, params, dstate, dt) -> (Controls, dstate)``.  Reducer protocol
(:mod:`sims.run.rollout`): ``init(params, state) -> acc`` and ``update(acc, t, state, controls,
telemetry, next_state, params, dt) -> acc``, folded over every step inside the scan.  Both are usually
:func:`sims.drivers.pytree_dataclass` classes, seen one vehicle at a time (``vmap``).

Settings are validated once, at the boundary (:func:`resolve_settings`: unknown names, values outside
:attr:`ScenarioBase.ranges`, speeds with a km/h hint); inside ``jit`` nothing raises.
"""

from __future__ import annotations

import collections
import dataclasses
import math
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.validation import ValidationError, check_range, is_concrete
from sims.run.fleet import FleetRun, RunStats, broadcast, fleet_rollout, fleet_size
from sims.run.rollout import RolloutResult
from sims.scenarios.config import check_speed
from sims.vehicles.params import VehicleParams, fleet_axes

#: The two kinds of metric.
KINDS = ("value", "flag")


class Metric(NamedTuple):
    """One per-vehicle output of a scenario: ``name``, ``unit`` (``"m"``, ``"s"``, ``"-"``, ...), ``kind``
    (``"value"`` continuous, ``"flag"`` 0/1), ``smooth`` (differentiable w.r.t. the parameters), ``doc``."""

    name: str
    unit: str
    kind: str
    smooth: bool
    doc: str


class Setup(NamedTuple):
    """Everything one run of a scenario on a fleet needs (built by ``Scenario.setup``).

    ``params`` the fleet (chassis batched on axis 0; ``params.road`` may be set), ``state0`` the batched
    initial states, ``driver`` and ``reducer`` batched per vehicle (every leaf with a leading axis of the
    fleet size), ``model`` a model name or :class:`sims.vehicles.Model`, ``dt`` [s] and ``n_steps`` static."""

    params: VehicleParams
    state0: Any
    driver: Any
    reducer: Any
    model: Any
    dt: float
    n_steps: int

    def rollout(self, n_steps: int | None = None, **run) -> RolloutResult:
        """This set-up run as one traceable fleet program: :func:`sims.run.fleet.fleet_rollout` of its fleet,
        start, driver and reducer (batched per vehicle) with its ``dt`` and ``model`` for ``n_steps`` steps
        (default its own), ``run`` further fields of the run and its placement (``record``, ``integrator``,
        ``compiler_options``, ``devices``, ...)."""
        n = self.n_steps if n_steps is None else n_steps
        kw = dict(dt=self.dt, model=self.model, reducer=self.reducer, driver_axes=0, reducer_axes=0)
        return fleet_rollout(self.params, self.state0, self.driver, n, **kw, **run)


@runtime_checkable
class Scenario(Protocol):
    """The protocol of a catalogue scenario (module docstring)."""

    name: str
    settings: Mapping[str, float]
    metrics: tuple[Metric, ...]

    def setup(self, params: VehicleParams, settings: Mapping[str, Any]) -> Setup: ...

    def evaluate(self, acc, setup: Setup, settings: Mapping[str, Any]) -> dict[str, Any]: ...

    def done(self, acc) -> Any: ...


#: The "passed" metric every scenario has.
PASSED = Metric("passed", "-", "flag", False, "1 when the vehicle met every pass criterion of the scenario")


class ScenarioBase:
    """Defaults for scenario classes (a mixin of the frozen dataclasses of the catalogue).

    ``ranges``: allowed ``(low, high)`` of each setting (inclusive; SI units), checked by
    :func:`resolve_settings`; settings whose name contains ``speed`` also get the plausibility check of
    :func:`check_speed`.  ``done`` returns ``None`` (run to the horizon)."""

    name: str = ""
    settings: Mapping[str, float] = {}
    metrics: tuple[Metric, ...] = ()
    ranges: Mapping[str, tuple[float, float]] = {}

    def done(self, acc):
        return None

    def metric(self, name: str) -> Metric:
        """The :class:`Metric` called ``name`` (``KeyError`` listing the names)."""
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"{self.name}: no metric {name!r}; metrics: {', '.join(m.name for m in self.metrics)}")


def resolve_settings(scenario, params: VehicleParams, settings: Mapping[str, Any] | None = None) -> dict:
    """Every setting of ``scenario``: the given ``settings`` over the defaults, each an array of shape
    ``(n,)`` (``n`` the fleet size) in the fleet's float dtype.

    Raises :class:`~jaxtire.validation.ValidationError` for an unknown name (listing the known ones), a
    value that is not a scalar or one per vehicle, a concrete value outside ``scenario.ranges`` or a
    speed outside :func:`check_speed`.  Traced values pass unchecked (inside ``jit`` / ``grad``)."""
    given = dict(settings or {})
    src = f"scenario {scenario.name!r}"
    unknown = sorted(set(given) - set(scenario.settings))
    if unknown:
        raise ValidationError(
            f"{src}: unknown setting(s) {unknown}; its settings are {sorted(scenario.settings)} "
            f"(with defaults {dict(scenario.settings)})"
        )
    n = fleet_size(params)
    dtype = jnp.asarray(params.chassis.mass).dtype
    out = {}
    for k, default in scenario.settings.items():
        v = given.get(k, default)
        if is_concrete(v):
            arr = np.asarray(v, dtype=float)
            if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n):
                raise ValidationError(
                    f"{src}: setting {k} must be a scalar or {n} values (one per vehicle), got shape {arr.shape}"
                )
            check_setting(scenario, k, arr, src)
        out[k] = jnp.broadcast_to(jnp.asarray(v, dtype), (n,))
    return out


def check_setting(scenario, name: str, value, source: str, label: str | None = None) -> None:
    """A concrete value (or values) of the setting ``name`` of ``scenario``: a speed within
    :func:`check_speed`, and within ``scenario.ranges``; the error names ``label`` (default ``name``)."""
    arr = np.asarray(value, dtype=float)
    label = label or name
    if "speed" in name:
        check_speed(label, arr, source)
    lo, hi = getattr(scenario, "ranges", {}).get(name, (-math.inf, math.inf))
    check_range(label, arr, lo, hi, source=source)


def per_vehicle(tree, n: int, dtype=None, **fields):
    """``tree`` (a driver or reducer) with every leaf copied per vehicle (:func:`sims.run.fleet.broadcast`),
    cast to ``dtype`` when given, and the dataclass ``fields`` (scalars or ``(n,)``) set per vehicle."""
    out = broadcast(tree, n)
    if dtype is not None:
        out = jax.tree.map(
            lambda x: jnp.asarray(x, dtype) if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) else x, out
        )
    if fields:
        d = dtype or jnp.result_type(float)
        out = dataclasses.replace(out, **{k: jnp.broadcast_to(jnp.asarray(v, d), (n,)) for k, v in fields.items()})
    return out


#: The catalogue's registry, name -> scenario (filled by :mod:`sims.scenarios.catalog`, which imports every
#: scenario module; ``import sims.scenarios`` does).  Read it through :func:`sims.scenarios.catalog.get`.
REGISTRY: dict[str, Any] = {}


def resolve_scenario(scenario):
    """A scenario object as it is, or the one registered under the name ``scenario`` (``KeyError`` listing the
    names; ``TypeError`` for anything else)."""
    if isinstance(scenario, str):
        if scenario not in REGISTRY:
            raise KeyError(f"unknown scenario {scenario!r}; the catalogue has: {', '.join(sorted(REGISTRY))}")
        sc = REGISTRY[scenario]
        if hasattr(sc, "prepare"):  # its lazily built data (the lap's default oval: no JAX work at import)
            sc.prepare()
        return sc
    if not (hasattr(scenario, "setup") and hasattr(scenario, "evaluate")):
        raise TypeError(f"expected a scenario name or a Scenario, got {type(scenario).__name__}")
    return scenario


def run_scenario(
    scenario,
    params: VehicleParams,
    settings: Mapping[str, Any] | None = None,
    *,
    devices=None,
    chunk_steps: int = 200,
    compiler_options=None,
    progress=None,
    block="auto",
    integrator: str = "semi_implicit_euler",
    substeps: int = 1,
) -> tuple[dict[str, np.ndarray], RunStats]:
    """Run ``scenario`` (a :class:`Scenario` or its catalogue name) on the fleet ``params``.

    :func:`resolve_settings`, ``scenario.setup``, a :class:`sims.run.fleet.FleetRun` over every local device
    (``devices=None``; an int: the first ``k``) in chunks of ``chunk_steps`` steps, stopping early once
    ``scenario.done`` says every vehicle has finished, then ``scenario.evaluate``.  Returns ``(metrics,
    RunStats)``: one numpy array ``(n,)`` per metric and the timings (``compile_s`` apart from ``run_s``).
    ``progress``: anything with ``update(steps)``."""
    sc = resolve_scenario(scenario)
    vals = resolve_settings(sc, params, settings)
    s = jitted_setup(sc, params, vals)
    run = FleetRun(
        s.params,
        s.state0,
        s.driver,
        dt=s.dt,
        reducer=s.reducer,
        model=s.model,
        integrator=integrator,
        substeps=substeps,
        chunk_steps=min(chunk_steps, s.n_steps),
        driver_axes=0,
        reducer_axes=0,
        compiler_options=compiler_options,
        block=block,
        devices=devices,
    )
    done = active = None
    if _has_done(sc, s):
        active = lambda acc: ~np.asarray(sc.done(acc), bool)  # noqa: E731
        done = lambda acc: bool(np.all(np.asarray(sc.done(acc), bool)))  # noqa: E731
    run.compile()
    _, _, acc, stats = run.run(s.n_steps, progress=progress, done=done, active=active)
    out = sc.evaluate(acc, s, vals)
    return {k: np.asarray(v) for k, v in out.items()}, stats


def jitted_setup(scenario, params: VehicleParams, settings: Mapping[str, Any]) -> Setup:
    """``scenario.setup(params, settings)`` with its arrays built by one jitted program (the static ``model``,
    ``dt`` and ``n_steps`` taken from the trace): building a path or a driver op by op would compile every
    small operation once.  A setup must therefore be traceable (the protocol asks for pure JAX).

    The program closes over the scenario, so it is cached under the scenario *and* the contents of its fields
    that do not take part in its equality (``compare=False``: geometry, profiles, drivers; :func:`_data_key`):
    two laps of different circuits or speed profiles with equal options once shared the first one's program."""
    if hasattr(scenario, "prepare"):  # lazily built data (a default geometry) in place before the fingerprint
        scenario.prepare()
    key = _data_key(scenario)
    try:
        fn, static = _SETUPS[(scenario, key)]
        _SETUPS.move_to_end((scenario, key))
    except (KeyError, TypeError):  # TypeError: a scenario with unhashable fields is traced every time
        fn, static = _setup_program(scenario)
        if key is not None:
            try:
                _SETUPS[(scenario, key)] = (fn, static)
            except TypeError:
                pass
            while len(_SETUPS) > SETUP_CACHE_SIZE:  # the least recently used goes
                _SETUPS.popitem(last=False)
    p, state0, driver, reducer = fn(params, dict(settings))
    return Setup(p, state0, driver, reducer, static["model"], static["dt"], static["n_steps"])


#: How many scenario set-up programs :func:`jitted_setup` keeps (least recently used first out): the cache keys
#: hold the scenarios' data (circuits, profiles), so an unbounded cache grew with every circuit a session drove.
SETUP_CACHE_SIZE = 32
#: The jitted setup of each (hashable) scenario and its data (:func:`_data_key`) and the static values its
#: trace found, at most :data:`SETUP_CACHE_SIZE` of them.
_SETUPS: collections.OrderedDict[Any, tuple] = collections.OrderedDict()


def _data_key(scenario) -> tuple | None:
    """A fingerprint of the values in the fields of ``scenario`` (a dataclass, and the dataclasses in its
    compared fields, e.g. the scenario a study's wrapper holds) that its equality leaves out: each leaf's
    shape, dtype and bytes; ``None`` (do not cache) when a leaf is not concrete."""
    if not dataclasses.is_dataclass(scenario):
        return ()
    parts: list = []
    for f in dataclasses.fields(scenario):
        value = getattr(scenario, f.name)
        if f.compare:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                sub = _data_key(value)
                if sub is None:
                    return None
                parts.append(sub)
            continue
        for leaf in jax.tree.leaves(value):
            if not is_concrete(leaf):
                return None
            a = np.asarray(leaf)
            if a.dtype == object:  # not array data: no content to compare, no cache
                return None
            parts.append((f.name, a.shape, str(a.dtype), a.tobytes()))
    return tuple(parts)


def _setup_program(scenario):
    static: dict[str, Any] = {}

    def arrays(p, v):
        s = scenario.setup(p, v)
        static.update(model=s.model, dt=s.dt, n_steps=s.n_steps)
        return s.params, s.state0, s.driver, s.reducer

    return jax.jit(arrays), static


def _has_done(sc, setup: Setup) -> bool:
    """Whether ``sc.done`` gives per-vehicle flags (``None``: the scenario runs to its horizon)."""
    init = jax.vmap(lambda r, p, x: r.init(p, x), in_axes=(0, fleet_axes(setup.params), 0))
    acc = jax.eval_shape(init, setup.reducer, setup.params, setup.state0)
    return jax.eval_shape(sc.done, acc) is not None


def scenario_metrics(
    scenario,
    params: VehicleParams,
    settings: Mapping[str, Any] | None = None,
    *,
    n_steps: int | None = None,
    compiler_options=None,
    block="auto",
) -> dict[str, Any]:
    """The metrics of ``scenario`` on ``params`` as one traceable computation: setup,
    :func:`sims.run.fleet.fleet_rollout` for ``n_steps`` steps (default the scenario's horizon; no early
    stop, no host loop) and evaluate; ``jax.grad`` / ``jit`` / ``vmap`` go through it (the studies'
    pathwise gradients of the ``smooth`` metrics).  Returns ``{name: (n,) array}``."""
    sc = resolve_scenario(scenario)
    vals = resolve_settings(sc, params, settings)
    s = sc.setup(params, vals)
    res = s.rollout(n_steps, compiler_options=compiler_options, block=block)
    return sc.evaluate(res.reduced, s, vals)
