"""The static configuration of every run: one :class:`RunSpec`, read by every runner of :mod:`sims.run`.

===================  ==========================  =====================================================
field                default                     meaning
===================  ==========================  =====================================================
``dt``               (required)                  step [s], in ``(0, 1]``
``model``            ``"double_track"``          the vehicle model: a name of :data:`sims.vehicles.MODELS`
                                                 or a :class:`~sims.vehicles.core.Model`
``integrator``       ``"semi_implicit_euler"``   ``"semi_implicit_euler"`` (``"euler"``), ``"rk4"`` or a
                                                 callable (:mod:`sims.vehicles.integrators`)
``substeps``         ``1``                       integration substeps of ``dt / substeps`` per step,
                                                 an integer in ``[1, 1000]``
``record``           ``None``                    what a run keeps per step: ``None``, ``"state"``,
                                                 ``"telemetry"``, ``"all"`` or a callable
                                                 ``record(t, state, controls, telemetry)``
                                                 (:mod:`sims.run._scan`)
``every``            ``1``                       one record every ``every`` steps (divides the steps)
``compiler_options`` ``()``                      XLA options of the compiled run, as sorted
                                                 ``(name, value)`` pairs (a dict is accepted)
===================  ==========================  =====================================================

Every field is static (part of the compiled program's key), so a spec is hashable: two runs of one spec and
one fleet structure share a compiled program.  The runners take the spec, or its fields as keywords::

    spec = RunSpec(dt=0.005, substeps=2, record="telemetry")
    rollout(params, state0, driver, 400, spec)            # the same as
    rollout(params, state0, driver, 400, dt=0.005, substeps=2, record="telemetry")

Bad fields raise :class:`jaxtire.validation.ValidationError` (or ``ValueError`` for an unknown name) naming the
field, the value and what is allowed, when the spec is made (:func:`run_spec`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jaxtire.fit import compiler_options
from jaxtire.validation import is_concrete
from sims.run._scan import check_steps, record_fn
from sims.run.placement import Placement, placement, whole_or_fields
from sims.vehicles import get_model
from sims.vehicles.integrators import check_dt, check_substeps, get_integrator, make_step_with_telemetry
from sims.vehicles.params import VehicleParams, validate_params

__all__ = ["RunSpec", "fast_compile_options", "run_config", "run_spec"]


def fast_compile_options() -> dict:
    """XLA options that roughly halve compile time and double run time (for tests and short runs):
    :data:`jaxtire.fit.FAST_COMPILE_OPTIONS` where the backend takes them (CPU), ``{}`` elsewhere."""
    return dict(compiler_options(True) or {})


class RunSpec(NamedTuple):
    """What one step of a run is and what the run keeps (the table of the module docstring); static and
    hashable.  Make one with :func:`run_spec` (checked) or directly (checked where a runner takes it)."""

    dt: float
    model: Any = "double_track"
    integrator: Any = "semi_implicit_euler"
    substeps: int = 1
    record: Any = None
    every: int = 1
    compiler_options: tuple = ()

    def step(self, telemetry: str = "first"):
        """The model's step ``step(params, state, controls, dt) -> (state, telemetry)`` with this spec's
        integrator and substeps (:func:`sims.vehicles.integrators.make_step_with_telemetry`)."""
        return make_step_with_telemetry(get_model(self.model), self.integrator, self.substeps, telemetry=telemetry)

    def options(self) -> dict | None:
        """The compiler options as the dict ``jax.jit`` takes (``None`` when there are none)."""
        return dict(self.compiler_options) or None

    def check(self, params=None, source: str = "rollout", **counts) -> RunSpec:
        """This spec with ``dt`` a float, every field checked, and the step counts ``counts`` (``n_steps=...``,
        ``chunk_steps=...``) integers >= 1 that ``every`` divides; with concrete ``params``, the params validated
        and the model's :meth:`~sims.vehicles.core.Model.check_step` warning where ``dt / substeps`` is too
        coarse for them."""
        check_steps(source, self.every, **counts)
        dt = check_dt(self.dt)
        check_substeps(self.substeps)
        get_integrator(self.integrator)
        model = get_model(self.model)
        record_fn(self.record)
        spec = self._replace(dt=dt, compiler_options=_options(self.compiler_options))
        if isinstance(params, VehicleParams) and is_concrete(params):
            validate_params(params)
            model.check_step(params, dt / self.substeps)
        return spec


def _options(options) -> tuple:
    """``compiler_options`` as sorted ``(name, value)`` pairs (a dict, pairs or ``None``)."""
    if not options:
        return ()
    items = options.items() if isinstance(options, dict) else options
    return tuple(sorted(items))


def run_spec(spec: RunSpec | None = None, source: str = "rollout", **fields) -> RunSpec:
    """The :class:`RunSpec` of a runner call: ``spec`` itself, or one made of the keyword ``fields``
    (``dt=...``, ``model=...``; not both; ``TypeError`` naming an unknown field or a missing ``dt``:
    :func:`~sims.run.placement.whole_or_fields`).  Checked by :meth:`RunSpec.check`, where the runner knows its
    params and step counts."""
    if spec is None and fields.keys() <= set(RunSpec._fields) and "dt" not in fields:
        raise TypeError(f"{source}() needs dt (the step [s]), or a RunSpec")
    return whole_or_fields(RunSpec, spec, source, **fields)


def run_config(spec: RunSpec | None, where: Placement | None, source: str, **fields) -> tuple[RunSpec, Placement]:
    """A fleet runner's configuration: its :class:`RunSpec` (``spec``, or the spec's fields among ``fields``)
    and its checked :class:`~sims.run.placement.Placement` (``where``, or the placement's fields ``devices``,
    ``block`` among ``fields``), as :func:`run_spec` and :func:`~sims.run.placement.placement` make them."""
    where_fields = {k: fields.pop(k) for k in Placement._fields if k in fields}
    return run_spec(spec, source, **fields), placement(where, source, **where_fields)
