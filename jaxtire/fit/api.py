"""The fitting entry points: :func:`fit`, :func:`fit_simple`, :func:`fit_many`, start tires and synthetic data.

Optimiser: ``optax.lbfgs`` (zoom line search; default of :func:`fit`, 150 iterations per
stage) or ``optax.adam`` (default of :func:`fit_many`, learning rate 0.02, 1000 iterations per
stage) for a fixed number of iterations (:func:`jaxtire.fit.loop.minimize`), in float64
(``jax.enable_x64`` only inside the entry points, restored on exit).  The best iterate seen is
returned.  Each stage is one compiled program (:mod:`jaxtire.fit.objectives`); :func:`fit_many`
runs the same programs ``vmap``-ed over a fleet.  A single fit is compile-bound (about 4 stages
x 3-5 s on a 2-core CPU), so on CPU it compiles with
:data:`jaxtire.fit.loop.FAST_COMPILE_OPTIONS` (``fast_compile=True``).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypedDict, Unpack

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit.data import COLUMNS, MEASURED, MeasurementSet, measurement_set, row_weights
from jaxtire.fit.loop import METHODS, compiler_options
from jaxtire.fit.objectives import fleet_jit, fleet_rmse, predict, stage_jit
from jaxtire.fit.reports import (
    PEAK_SEARCH_MAX,
    FitReport,
    FitResult,
    FleetReport,
    FleetResult,
    StageReport,
    converged_at,
    extrapolated_peaks,
    peak_slips,
    rmse_tables,
)
from jaxtire.fit.stages import (
    STAGES,
    fit_coefficients,
    model_tables,
    stage_bounds,
    stage_coefficients,
)
from jaxtire.fit.stages import (
    plan as make_plan,
)
from jaxtire.params import MFParams
from jaxtire.simple import SimpleParams, default_simple_params
from jaxtire.tir import PAC2002_UNUSED, default_tire
from jaxtire.tire import coefficient_names, get_coefficient, model_name, nominal_load, replace_coefficients
from jaxtire.validation import check_range

__all__ = [
    "GENERIC_COEFFICIENTS",
    "SWEEP_MIN",
    "SWEEP_PAST_PEAK",
    "FitOptions",
    "fit",
    "fit_many",
    "fit_simple",
    "generic_ranges",
    "generic_tire",
    "perturbed_tires",
    "sweep_end",
    "synthetic_data",
    "validity_ranges",
]


def _to_float64(params):
    """``params`` with float64 leaves; float32 leaves go through their shortest decimal form, so a
    value read as 0.3135 stays 0.3135 (not 0.31349998...) in the fitted ``.tir``."""

    def up(x):
        a = np.asarray(x)
        if a.dtype == np.float32:
            a = np.array([float(str(v)) for v in a.ravel()], dtype=np.float64).reshape(a.shape)
        return jnp.asarray(a, jnp.float64)

    return jax.tree.map(up, params)


def _default_iters(n_iter, method: str) -> int:
    if method not in METHODS:
        raise ValueError(f"method must be 'lbfgs' or 'adam', got {method!r}")
    n = (150 if method == "lbfgs" else 1000) if n_iter is None else int(n_iter)
    if n < 1:
        raise ValueError(f"n_iter must be >= 1, got {n}")
    return n


def _device_data(data: MeasurementSet, w) -> dict:
    d = {c: jnp.asarray(np.asarray(getattr(data, c)), jnp.float64) for c in COLUMNS}
    d["w"] = jnp.asarray(w, jnp.float64)
    return d


class FitOptions(TypedDict, total=False):
    """The keyword options :func:`fit` and :func:`fit_many` share, each optional.

    Attributes:
      stages: stage names in order (default: all stages of the model; a stage without rows is skipped).
      coefs: per-stage override of the free coefficients, e.g. ``{"Fy0": ("PDY1", "PKY1")}``.
      bounds: per-coefficient ``(lower, upper)`` overriding :data:`DEFAULT_BOUNDS` /
        :data:`SIMPLE_BOUNDS` (``±inf`` for one- or un-bounded, see :func:`from_unconstrained`).
      load_weights: None, ``"equal"``, ``{load [N]: weight}`` or callable ``w(fz)``; see the module doc.
      n_iter: optimiser iterations per stage (fixed; default 150 for L-BFGS, 1000 for Adam).
      learning_rate: step size of ``method="adam"`` (default 0.02).
    """

    stages: Sequence[str] | None
    coefs: Mapping[str, Sequence[str]] | None
    bounds: Mapping[str, tuple[float, float]] | None
    load_weights: Any
    n_iter: int | None
    learning_rate: float


class _Request(NamedTuple):
    """A checked fit request: data, start, iterations, row weights, the plan and its bounds, step size."""

    data: MeasurementSet
    start: Any
    n_iter: int
    weights: np.ndarray
    plan: tuple
    bounds: tuple
    learning_rate: float
    ranges: str  # how the validity ranges were set for the fit (FitReport.ranges)


#: The validity ranges a fit widens to cover its data (file key -> data column); pressure is not a column.
RANGE_COLUMNS = {"FZ": "fz", "KPU": "kappa", "ALP": "alpha", "CAM": "gamma"}


def _ranges_cover(start, data: MeasurementSet) -> tuple[Any, str]:
    """``start`` with its validity ranges widened to cover ``data`` (MF; other models unchanged), and a note.

    ``mf_forces`` clamps its inputs to the file's ranges (``limits="clamp"``): a fit whose data leave the
    start's ranges would be fitting the clamped model (every load above ``FZMAX`` evaluated at ``FZMAX``).
    So each range ``[XMIN, XMAX]`` becomes ``[min(XMIN, data min), max(XMAX, data max)]`` before the
    first stage; the note (``FitReport.ranges``) names what was widened."""
    if model_name(start) != "mf":
        return start, "model without validity ranges"
    changes, moved = {}, []
    for key, col in RANGE_COLUMNS.items():
        x = np.asarray(getattr(data, col), dtype=np.float64)
        for end, pick in (("MIN", np.minimum), ("MAX", np.maximum)):
            old = np.asarray(get_coefficient(start, key + end), dtype=np.float64)
            new = pick(old, x.min() if end == "MIN" else x.max())
            if np.any(new != old):
                changes[key + end] = jnp.asarray(new, jnp.result_type(get_coefficient(start, key + end)))
                moved.append(
                    f"{key}{end} {float(np.max(old) if end == 'MAX' else np.min(old)):.4g} -> "
                    f"{float(np.max(new) if end == 'MAX' else np.min(new)):.4g}"
                )
    if not moved:
        return start, "evaluated within the start's validity ranges (the data lie inside them)"
    note = "evaluated with the start's validity ranges widened to the data's: " + ", ".join(moved)
    return replace_coefficients(start, changes), note


def _request(caller: str, data, start, method: str, options: FitOptions, **data_kw) -> _Request:
    """Check ``options`` (``TypeError`` for an unknown one, as for a misspelt keyword), validate ``data``
    (:func:`measurement_set` with ``data_kw``), default the start (:func:`generic_tire` at the median load),
    the iterations and the row weights (per tire for batched data) and make the plan over all rows."""
    unknown = set(options) - set(FitOptions.__annotations__)
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword argument(s) {sorted(unknown)}")
    data = measurement_set(*data, **data_kw)
    if start is None:
        start = generic_tire(fnomin=float(np.median(data.fz)))
    start, ranges = _ranges_cover(start, data)
    n_iter = _default_iters(options.get("n_iter"), method)
    fz, lw = np.asarray(data.fz), options.get("load_weights")
    w = row_weights(fz, lw) if fz.ndim == 1 else np.stack([row_weights(f, lw) for f in fz])
    flat = MeasurementSet(*(np.asarray(getattr(data, c)).ravel() for c in COLUMNS))
    plan, bounds_t = make_plan(flat, start, options.get("stages"), options.get("coefs"), options.get("bounds"))
    lr = float(options.get("learning_rate", 0.02))
    return _Request(data, start, n_iter, w, plan, bounds_t, lr, ranges)


def fit(
    data: MeasurementSet,
    start: MFParams | SimpleParams | None = None,
    *,
    method: str = "lbfgs",
    fast_compile: bool = True,
    set_ranges: bool = True,
    progress=None,
    **options: Unpack[FitOptions],
) -> FitResult:
    """Fit the coefficients of ``start`` to ``data`` in stages; returns ``FitResult(params, report)``.

    Args:
      data: a :class:`MeasurementSet` (validated again here).
      start: starting :class:`MFParams` (MF 6.1, default :func:`generic_tire` at the data's median
        load; ``FNOMIN``, ``UNLOADED_RADIUS`` and every coefficient outside the stages are kept) or
        :class:`~jaxtire.simple.SimpleParams` (the simple model, stages :data:`SIMPLE_STAGES`).
      method: ``"lbfgs"`` (optax L-BFGS, zoom line search) or ``"adam"`` (``learning_rate``).
      fast_compile: compile with :data:`FAST_COMPILE_OPTIONS` on CPU (compile ~3x faster, run ~2x slower).
      set_ranges: (MF) set the validity ranges ``FZMIN ... CAMMAX`` of the result to the data's
        (:func:`validity_ranges`); they change no force (ranges only flag or, on request, clamp).
      progress: optional callable ``progress(stage_name, i, n_stages)`` called before each stage
        (the command line drives a tqdm bar with it).
      **options: ``stages``, ``coefs``, ``bounds``, ``load_weights``, ``n_iter``, ``learning_rate``
        (:class:`FitOptions`).

    Channels: NaN in ``fx``, ``fy`` or ``mz`` means "not measured"; a stage with no measured rows
    is skipped and its coefficients stay as in ``start`` (``report.skipped``, ``report.absent``).

    The fitted params have float64 leaves; x64 is enabled only inside this call.
    """
    data, start, n_iter, w, plan, bounds_t, learning_rate, ranges = _request(
        "fit", data, start, method, options, allow_missing=True
    )
    stages = options.get("stages")
    table = model_tables(start)[0]
    wanted = tuple(table) if stages is None else tuple(stages)
    skipped = tuple(s for s in wanted if s not in {p.name for p in plan})
    absent = tuple(c for c in MEASURED if not np.isfinite(np.asarray(getattr(data, c))).any())
    with jax.enable_x64(True):
        params = _to_float64(start)
        d = _device_data(data, w)
        runner = stage_jit(fast_compile)
        t0 = time.perf_counter()
        l0, lf, hist = [], [], []
        for i, stage in enumerate(plan):
            if progress is not None:
                progress(stage.name, i, len(plan))
            params, a, b, h = runner(
                params,
                d,
                stage=stage,
                bounds=stage_bounds(bounds_t, stage),
                n_iter=int(n_iter),
                method=method,
                learning_rate=learning_rate,
            )
            l0.append(float(a))
            lf.append(float(b))
            hist.append(np.asarray(h))
        seconds = time.perf_counter() - t0
        extrapolated = extrapolated_peaks(params, data)  # the fitted curves' peaks past the data's sweeps
        if set_ranges and model_name(start) == "mf":
            params = params.replace(**{k: jnp.asarray(v, jnp.float64) for k, v in validity_ranges(data).items()})
        channels = tuple(c for s in plan for c in s.channels)
        rmse, peak, by_load, n_rows = rmse_tables(params, data, channels, fast_compile)
    stage_reports = tuple(
        StageReport(s.name, s.coefs, int(n_iter), l0[i], lf[i], converged_at(hist[i], lf[i]))
        for i, s in enumerate(plan)
    )
    coef_vals = {
        k: (float(get_coefficient(start, k)), float(get_coefficient(params, k))) for s in plan for k in s.coefs
    }
    report = FitReport(
        stage_reports,
        coef_vals,
        rmse,
        peak,
        by_load,
        n_rows,
        int(n_iter) * len(plan),
        float(sum(lf)),
        seconds,
        method,
        skipped,
        absent,
        ranges + ("; the result's ranges set to the data's" if set_ranges and model_name(start) == "mf" else ""),
        extrapolated,
    )
    return FitResult(params, report)


def validity_ranges(data: MeasurementSet) -> dict[str, float]:
    """The data's validity ranges as ``.tir`` keys: ``FZMIN/FZMAX`` [N] (min / max load),
    ``KPUMIN/KPUMAX`` [-], ``ALPMIN/ALPMAX`` [rad], ``CAMMIN/CAMMAX`` [rad]; each minimum is at most 0
    and each maximum at least 0 (except the loads), as the ``.tir`` bounds require."""
    g = {k: np.asarray(getattr(data, k), dtype=np.float64) for k in ("fz", "kappa", "alpha", "gamma")}
    out = {"FZMIN": float(g["fz"].min()), "FZMAX": float(g["fz"].max())}
    for key, col in (("KPU", "kappa"), ("ALP", "alpha"), ("CAM", "gamma")):
        out[key + "MIN"] = float(min(g[col].min(), 0.0))
        out[key + "MAX"] = float(max(g[col].max(), 0.0))
    return out


def fit_simple(data: MeasurementSet, start: SimpleParams | None = None, **kwargs) -> FitResult:
    """Fit the simple B, C, D, E model (:mod:`jaxtire.simple`) to ``data``: :func:`fit` with a
    :class:`~jaxtire.simple.SimpleParams` start (default: its passenger-car defaults with ``fz0``
    the data's median load).  Stages :data:`SIMPLE_STAGES`: ``"pure"`` (both curves and the load
    sensitivity from pure-slip Fx and Fy, plus ``c_gamma`` with camber), ``"Mz0"`` (``trail``),
    ``"combined"`` (``slide_ratio``, ``beta`` of the friction-ellipse breakaway)."""
    data = measurement_set(*data)
    if start is None:
        start = default_simple_params().replace(fz0=float(np.median(data.fz)))
    return fit(data, start, **kwargs)


def fit_many(
    data: MeasurementSet,
    start: MFParams | SimpleParams | None = None,
    *,
    method: str = "adam",
    fast_compile: bool = False,
    **options: Unpack[FitOptions],
) -> FleetResult:
    """Fit a fleet in one compiled program (all stages, ``vmap``-ed): tire ``i`` is fitted to row ``i`` of ``data``.

    ``data`` leaves have shape ``(n_tires, n_rows)``; ``start`` is one tire (shared start) or a
    batch with leading axis ``n_tires``.  Same options and staging as :func:`fit`; the plan
    (which stages run, which coefficients are free) is decided from the whole fleet.  Returns
    ``FleetResult(params, report)`` with batched float64 params; the report times compilation and
    running separately.  Defaults differ from :func:`fit`: ``method="adam"`` (a fixed amount of work
    per iteration, no data-dependent line-search loops, so every lane does the same arithmetic as
    a single fit) and ``fast_compile=False`` (a fleet is run-bound).
    """
    data, start, n_iter, w, plan, bounds_t, learning_rate, _ = _request(
        "fit_many", data, start, method, options, batched=True
    )
    n = data.kappa.shape[0]
    with jax.enable_x64(True):
        params = jax.tree.map(
            lambda x: jnp.broadcast_to(x, (n,) + jnp.shape(x)[1:] if jnp.ndim(x) else (n,)), _to_float64(start)
        )
        d = _device_data(data, w)
        static = dict(plan=plan, bounds=bounds_t, n_iter=int(n_iter), method=method, learning_rate=learning_rate)
        t0 = time.perf_counter()
        compiled = fleet_jit(fast_compile).lower(params, d, **static).compile()
        t1 = time.perf_counter()
        params, lf = compiled(params, d)
        jax.block_until_ready(params)
        compile_s, run_s = t1 - t0, time.perf_counter() - t1
        channels = tuple(c for s in plan for c in s.channels)
        rm, pk = jax.jit(
            jax.vmap(functools.partial(fleet_rmse, channels=channels)), compiler_options=compiler_options(True)
        )(params, d)
        rm, pk, lf = np.asarray(rm), np.asarray(pk), np.asarray(lf)
    report = FleetReport(
        n,
        {c: rm[:, i] for i, c in enumerate(channels)},
        {c: pk[:, i] for i, c in enumerate(channels)},
        lf.sum(axis=1),
        int(n_iter) * len(plan),
        compile_s,
        run_s,
        method,
    )
    return FleetResult(params, report)


# ---------------------------------------------------------------------------------------------
# Start values and synthetic data
# ---------------------------------------------------------------------------------------------

#: Round-number coefficients of a generic passenger-car tire (a neutral start, not any real tire).
GENERIC_COEFFICIENTS: dict[str, float] = {
    "PCX1": 1.65,
    "PDX1": 1.2,
    "PDX2": -0.1,
    "PEX1": 0.3,
    "PKX1": 25.0,
    "PCY1": 1.4,
    "PDY1": 1.0,
    "PDY2": -0.1,
    "PEY1": -0.5,
    "PKY1": -20.0,
    "PKY2": 2.0,
    "PKY4": 2.0,
    "PKY6": -1.0,
    "QBZ1": 10.0,
    "QBZ9": 10.0,
    "QCZ1": 1.2,
    "QDZ1": 0.1,
    "QEZ1": -1.0,
    "RBX1": 10.0,
    "RBX2": 8.0,
    "RCX1": 1.0,
    "RBY1": 8.0,
    "RBY2": 5.0,
    "RCY1": 1.0,
    "RVY1": 0.01,
    "RVY4": 10.0,
    "RVY5": 1.9,
    "RVY6": 10.0,
}


def generic_ranges(fnomin: float, unloaded_radius: float) -> dict[str, float]:
    """``FNOMIN``, ``UNLOADED_RADIUS`` and the load range of :func:`generic_tire`: the template's ratios,
    ``FZMIN = 0.025 FNOMIN``, ``FZMAX = 2.5 FNOMIN`` (the TNO 205/60 R15 file: 100 N and 10 kN at 4 kN).

    The slip, camber and pressure ranges of the template (``|kappa| <= 1.5``, ``|alpha| <= 1.5`` rad,
    ``|gamma| <= 0.175`` rad, 0.1-10 bar) are dimensionless or do not scale with size and are kept.
    Raises :class:`~jaxtire.validation.ValidationError` for a non-positive or non-finite value."""
    check_range("fnomin", fnomin, 0.0, math.inf, False, False, source="generic_tire")
    check_range("unloaded_radius", unloaded_radius, 0.0, math.inf, False, False, source="generic_tire")
    f = float(fnomin)
    return {"FNOMIN": f, "UNLOADED_RADIUS": float(unloaded_radius), "FZMIN": 0.025 * f, "FZMAX": 2.5 * f}


def generic_tire(fnomin: float = 4000.0, unloaded_radius: float = 0.3, *, like: MFParams | None = None) -> MFParams:
    """A neutral starting tire: :data:`GENERIC_COEFFICIENTS`, every other fitted coefficient 0.

    ``like`` (e.g. the measured tire's file) supplies ``FNOMIN``, ``UNLOADED_RADIUS``,
    pressures, speeds, scaling factors, FITTYP, the file layout, its validity ranges and all coefficients no
    stage fits.  Without ``like`` the template is the bundled TNO 205/60 R15 file
    (``jaxtire/data/TNO_car205_60R15.tir``, MF 6.2) with ``fnomin`` and ``unloaded_radius`` and the load
    range that follows them (:func:`generic_ranges`: ``FZMIN = 0.025 fnomin``, ``FZMAX = 2.5 fnomin``): a fit
    from it is saved as that file (header, units in SI radians, dimension, inertia, vertical,
    validity-range sections, pressure / overturning / rolling-resistance / turn-slip coefficients
    of that tire) with the fitted values, ranges and R0 / FNOMIN written in place.  For a PAC2002 /
    MF 5.2 ``like`` the MF 6.x-only terms (:data:`jaxtire.tir.PAC2002_UNUSED`) are left as they are.
    """
    fitted = {k for s in STAGES for k in stage_coefficients(s, camber=True)}
    if like is None:
        # the documented template: the bundled TNO 205/60 R15 file (jaxtire/data), so a fitted tire is
        # written as that file (its sections, units, inertia, ranges) with the new values in place
        base = default_tire(dtype=jnp.float32)
        base = base.replace(
            **{k: jnp.asarray(v, base.coef[k].dtype) for k, v in generic_ranges(fnomin, unloaded_radius).items()}
        )
    else:
        base = like
        if base.is_mf52:  # PAC2002 / MF 5.2: leave the MF 6.x-only terms as the file has them
            fitted -= set(PAC2002_UNUSED)
    changes = {k: jnp.asarray(GENERIC_COEFFICIENTS.get(k, 0.0), jnp.result_type(base.coef[k])) for k in fitted}
    return base.replace(**changes)


#: Default sweeps of :func:`synthetic_data`: ``SWEEP_PAST_PEAK`` times the slip at the peak, within
#: ``[SWEEP_MIN, PEAK_SEARCH_MAX]`` (|kappa| [-], |alpha| [rad]).
SWEEP_PAST_PEAK = 1.25
SWEEP_MIN = 0.3


def sweep_end(peak_slip: float) -> float:
    """End of a default slip sweep past a peak at ``peak_slip`` (|kappa| [-] or |alpha| [rad]):
    ``min(max(SWEEP_PAST_PEAK * peak_slip, SWEEP_MIN), PEAK_SEARCH_MAX)``, a quarter past the peak, so the data
    measure the friction ``mu = max |F0| / Fz`` and the fall beyond it (a passenger-car tire peaks near 0.1-0.2
    and keeps the 0.3 sweep)."""
    return float(min(max(SWEEP_PAST_PEAK * float(peak_slip), SWEEP_MIN), PEAK_SEARCH_MAX))


def synthetic_data(
    params: MFParams,
    *,
    loads: Sequence[float] | None = None,
    n_slip: int = 50,
    kappa_max: float | None = None,
    alpha_max: float | None = None,
    combined_alpha: Sequence[float] = (0.05, 0.12),
    gamma: float = 0.0,
    noise: float = 0.01,
    seed: int = 0,
) -> MeasurementSet:
    """Noisy measurements from ``params`` (MF: combined-slip model; or the simple model; ``vx`` nominal).

    Per load: a pure kappa sweep (``|kappa| <= kappa_max``), a pure alpha sweep (``|alpha| <= alpha_max``
    rad) and a kappa sweep at each ``combined_alpha`` [rad], ``n_slip`` points each; gaussian noise of
    ``noise`` times the peak |value| of each channel at that load.  ``loads`` [N] default to
    0.5, 1, 1.5 and 2 x ``FNOMIN`` (simple model: ``fz0``).  ``kappa_max`` and ``alpha_max`` default to
    sweeps past the tire's peaks, :func:`sweep_end` of the peak slips (:func:`~jaxtire.fit.reports.peak_slips`
    over the loads): 0.3 for a passenger-car tire, 0.49 rad for the PAC2002 city-bus tire (peak mu_y at 0.39 rad),
    whose lateral friction a sweep to 0.3 rad leaves unmeasured.  ``params`` may be batched (leading tire
    axis): the result then has ``(tires, rows)`` arrays for :func:`fit_many` (sweeps past every tire's peaks).
    """
    batched = np.ndim(nominal_load(params)) > 0
    with jax.enable_x64(True):
        p = params.astype(jnp.float64)
        fnom = np.asarray(nominal_load(p), dtype=np.float64)
    rig = (  # the loads [N]: (loads,), or (tires, loads) for a batch
        np.multiply.outer(fnom, [0.5, 1.0, 1.5, 2.0])
        if loads is None
        else np.broadcast_to(np.asarray(loads, dtype=np.float64), np.shape(fnom) + (len(loads),))
    )
    if kappa_max is None or alpha_max is None:
        k_pk, a_pk = peak_slips(p, rig, gamma)
        kappa_max = sweep_end(k_pk) if kappa_max is None else kappa_max
        alpha_max = sweep_end(a_pk) if alpha_max is None else alpha_max
    kap = np.linspace(-kappa_max, kappa_max, n_slip)
    alp = np.linspace(-alpha_max, alpha_max, n_slip)
    k_rows, a_rows = [kap, np.zeros(n_slip)], [np.zeros(n_slip), alp]
    for a in combined_alpha:
        k_rows.append(kap)
        a_rows.append(np.full(n_slip, a))
    per_load = len(k_rows) * n_slip
    n_loads = rig.shape[-1]
    kappa = np.tile(np.concatenate(k_rows), n_loads)
    alpha = np.tile(np.concatenate(a_rows), n_loads)
    case = np.repeat(np.arange(n_loads), per_load)
    with jax.enable_x64(True):

        def clean(p, rig_loads):
            fz = rig_loads[case]
            d = {
                "kappa": jnp.asarray(kappa),
                "alpha": jnp.asarray(alpha),
                "gamma": jnp.full(kappa.shape, gamma),
                "fz": fz,
            }
            o = predict(p, d, True)
            return fz, o["fx"], o["fy"], o["mz"]

        fz, fx, fy, mz = (
            np.array(x)
            for x in jax.jit(jax.vmap(clean) if batched else clean, compiler_options=compiler_options(True))(
                p, jnp.asarray(rig)
            )
        )
    rng = np.random.default_rng(seed)
    for f in (fx, fy, mz):
        for j in range(n_loads):
            m = case == j
            pk = np.max(np.abs(f[..., m]), axis=-1, keepdims=True)
            f[..., m] += noise * pk * rng.standard_normal(f[..., m].shape)
    b = lambda x: np.broadcast_to(x, fz.shape).copy()  # noqa: E731
    return measurement_set(b(kappa), b(alpha), b(np.full_like(kappa, gamma)), fz, fx, fy, mz, batched=batched)


def perturbed_tires(params, n: int, *, spread: float = 0.1, seed: int = 0):
    """A batch of ``n`` synthetic tires: every non-zero fittable coefficient of ``params`` (MF or
    simple) scaled by an independent factor uniform in ``[1 - spread, 1 + spread]``, clipped into
    the default bounds; everything else repeated."""
    table, bd = model_tables(params)
    fittable = set(fit_coefficients(table))
    rng = np.random.default_rng(seed)
    names = coefficient_names(params)
    out = {}
    for k in names:
        v = np.asarray(get_coefficient(params, k), dtype=np.float64)
        if k in fittable and v != 0:
            out[k] = np.clip(v * rng.uniform(1 - spread, 1 + spread, n), *bd[k])
        else:
            out[k] = np.full(n, v)
        out[k] = jnp.asarray(out[k], jnp.result_type(get_coefficient(params, k)))
    return replace_coefficients(params, out)
