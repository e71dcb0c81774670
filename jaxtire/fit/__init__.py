"""Fit Magic Formula (and simple B, C, D, E) tire coefficients to measured force data.

Quick use::

    import jaxtire
    from jaxtire.fit import fit, generic_tire, load_csv
    result = fit(load_csv("data.csv"), generic_tire(fnomin=4000.0, unloaded_radius=0.31))
    print(result.report); jaxtire.save_tir(result.params, "fitted.tir")

The package, in the order data flows through it:

* :mod:`jaxtire.fit.data`: :class:`MeasurementSet`, CSV in/out, TYDEX and several files
  (:func:`load_files`), load cases, row weights and
  row selection (pure longitudinal / pure lateral / combined);
* :mod:`jaxtire.fit.stages`: which coefficients each stage frees (:data:`STAGES` for MF 6.1,
  :data:`SIMPLE_STAGES` for the simple model), their bounds and the plan of a fit;
* :mod:`jaxtire.fit.transforms`: bounds through unconstrained variables (:func:`from_unconstrained`);
* :mod:`jaxtire.fit.loop`: the project's one optimisation loop (:func:`minimize`, optax L-BFGS
  or Adam in ``lax.scan``) and the fast-compile switch (:func:`compiler_options`);
* :mod:`jaxtire.fit.objectives`: predictions through :func:`jaxtire.tire.tire_forces`, the stage
  loss and the compiled stage / fleet programs;
* :mod:`jaxtire.fit.reports`: :class:`FitReport`, :class:`FleetReport`;
* :mod:`jaxtire.fit.api`: :func:`fit`, :func:`fit_simple`, :func:`fit_many`, :func:`generic_tire`,
  :func:`synthetic_data`, :func:`perturbed_tires`;
* :mod:`jaxtire.fit.outputs`: the fitted ``.tir`` header, residual tables (JSON, CSV) and the plot sheet;
* :mod:`jaxtire.fit.cli`: ``python -m jaxtire.fit [--data A.tdx B.tdx C.csv] [--tir START.tir] --out fitted.tir``.
"""

from jaxtire.fit.api import (
    GENERIC_COEFFICIENTS,
    fit,
    fit_many,
    fit_simple,
    generic_tire,
    perturbed_tires,
    synthetic_data,
    validity_ranges,
)
from jaxtire.fit.cli import main
from jaxtire.fit.data import (
    CAMBER_TOL,
    COLUMNS,
    PURE_TOL_ALPHA,
    PURE_TOL_KAPPA,
    MeasurementSet,
    load_cases,
    load_csv,
    load_files,
    load_tydex,
    measurement_set,
    row_masks,
    row_weights,
    save_csv,
)
from jaxtire.fit.loop import FAST_COMPILE_OPTIONS, MinimizeResult, compiler_options, dual_jit, make_optimizer, minimize
from jaxtire.fit.reports import FitReport, FitResult, FleetReport, FleetResult, StageReport
from jaxtire.fit.stages import CHANNELS, DEFAULT_BOUNDS, SIMPLE_BOUNDS, SIMPLE_STAGES, STAGES, Stage, stage_coefficients
from jaxtire.fit.transforms import from_unconstrained, pack, to_unconstrained, unpack

__all__ = [
    "CAMBER_TOL",
    "CHANNELS",
    "COLUMNS",
    "DEFAULT_BOUNDS",
    "FAST_COMPILE_OPTIONS",
    "GENERIC_COEFFICIENTS",
    "PURE_TOL_ALPHA",
    "PURE_TOL_KAPPA",
    "SIMPLE_BOUNDS",
    "SIMPLE_STAGES",
    "STAGES",
    "FitReport",
    "FitResult",
    "FleetReport",
    "FleetResult",
    "MeasurementSet",
    "MinimizeResult",
    "Stage",
    "StageReport",
    "compiler_options",
    "dual_jit",
    "fit",
    "fit_many",
    "fit_simple",
    "from_unconstrained",
    "generic_tire",
    "load_cases",
    "load_csv",
    "main",
    "make_optimizer",
    "measurement_set",
    "minimize",
    "pack",
    "perturbed_tires",
    "row_masks",
    "row_weights",
    "save_csv",
    "stage_coefficients",
    "synthetic_data",
    "to_unconstrained",
    "unpack",
    "load_files",
    "load_tydex",
    "validity_ranges",
]
