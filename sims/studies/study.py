"""A Monte Carlo study: one model (:class:`Study`) behind the study file (TOML) and the Python API.

A study names the scenario (:mod:`sims.scenarios.catalog`), the vehicle (a preset and optionally a tire
file), the fixed scenario settings, the variations (:class:`~sims.studies.variation.Variation`), the
number of runs, the seed and the design, the metrics and percentiles.  :func:`run` draws the factors,
runs the fleet (:func:`sims.scenarios.base.run_scenario`: every local device; in chunks of ``chunk``
vehicles when given, the statistics accumulated as it goes), and returns a :class:`StudyResult`
(results table, ``summary`` dict, sensitivities); :func:`sims.studies.report.write_folder` writes the run
folder.  A study file (every key optional but ``scenario``)::

    name = "wet-braking"
    scenario = "braking"
    runs = 256              # per grid cell; with design = "saltelli" the base rows (n (d + 2) runs),
                            # with "morris" the trajectories (r (d + 1) runs)
    seed = 1
    design = "sobol"        # random, sobol, lhs, saltelli, morris
    second_order = false    # saltelli: also the second-order Sobol' indices (n (2 d + 2) runs)
    levels = 4              # morris: grid levels p (even)
    metrics = ["distance", "passed"]     # default: every metric of the scenario
    percentiles = [5, 50, 95]
    gradients = 16          # pathwise gradients of the smooth metrics on the first 16 vehicles
    chunk = 0               # vehicles per chunk (0: the whole fleet at once)

    [vehicle]
    preset = "hatchback"    # or sports_car, kart, race_car
    tire = "path/to/file.tir"            # optional: both axles (default: the preset's tire)
    surface = "asphalt_wet"              # optional: under all four wheels

    [settings]              # fixed scenario settings (SI units)
    speed = 27.78

    [options]               # static options of the scenario (its dataclass fields)
    max_time = 10.0
    model = "double_track"  # or single_track

    [[vary]]
    path = "vehicle.tire_scale.mu_x"
    dist = "uniform"
    by = "factor"
    low = 0.8
    high = 1.1

``correlation = [["path_a", "path_b", 0.5]]`` correlates two random factors (Gaussian copula).  An
``[event]`` table (:mod:`sims.studies.events`) names a failure, ``when = "distance > 60"``, whose probability
the summary gives with its 95 % interval, by plain Monte Carlo or a rare-event estimator (``estimator =
"cross_entropy"``, ``"form"``, ``"subset"``), with adaptive stopping (``target``) and ``runs`` the budget.
Unknown keys are errors naming the key and listing the allowed ones.

Run with a ``journal`` (a folder; :func:`sims.studies.run` gives the run folder's ``chunks/``), every batch of
vehicles is saved as it finishes and a rerun after a kill resumes from the last saved batch with the same
numbers (:mod:`sims.studies.journal`).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import socket
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jaxtire
from jaxtire.surfaces import PRESET_NAMES as SURFACE_NAMES
from jaxtire.surfaces import surface_id
from jaxtire.tir import load_tir
from jaxtire.validation import ValidationError, check_choice, check_int
from sims.run import distributed
from sims.scenarios import catalog
from sims.scenarios.base import check_setting, run_scenario, scenario_metrics
from sims.scenarios.config import SCENARIO_COUNTS, SCENARIO_RANGES, check_config
from sims.studies import designs, events, rare, sensitivity, table
from sims.studies import statistics as stats
from sims.studies._progress import NO_BAR, PHASES, FleetBar, Phases
from sims.studies.channels import WithChannels, channel_names, check_metric
from sims.studies.criteria import check_criterion, describe, verdicts
from sims.studies.journal import Journal
from sims.studies.limit import check_limit, limit_metrics, run_limit
from sims.studies.variation import (
    Draws,
    Variation,
    Varied,
    check_variation,
    draw,
    from_normal,
    resolve,
    vary_vehicle,
)
from sims.vehicles import MODELS, presets

_VEHICLE_KEYS = ("preset", "tire", "surface")


@dataclasses.dataclass(frozen=True)
class Study:
    """A study (module docstring).  ``preset``, ``tire`` (a ``.tir`` path, ``None``: the preset's own tire,
    ``"simple"``: the simple tire model) and ``surface`` (a surface name under all four wheels, default the
    preset's) describe the vehicle; ``settings`` fixes scenario settings; ``vary`` the variations; ``runs``, ``seed``,
    ``design`` (``second_order``: Saltelli's design for second-order Sobol' indices too; ``levels``: the
    Morris design's grid levels); ``options``: the scenario's static options (``dt``, ``max_time``, ...: its dataclass
    fields); ``metrics`` (empty: all), ``percentiles`` [%]; ``gradients``: vehicles whose pathwise
    gradients are taken (0: none); ``chunk``: vehicles per chunk (0: one fleet); ``name`` of the run
    folder; ``event``: a failure event's table (:mod:`sims.studies.events`; empty: none); ``metric``: metrics
    from recorded channels (:mod:`sims.studies.channels`); ``limit``: a limit search per vehicle
    (:mod:`sims.studies.limit`; empty: none); ``criteria``: pass criteria decided on the intervals
    (:mod:`sims.studies.criteria`)."""

    scenario: str = "braking"
    preset: str = "hatchback"
    tire: str | None = None
    surface: str | None = None
    settings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    vary: tuple[Variation, ...] = ()
    correlation: tuple = ()
    runs: int = 256
    seed: int = 0
    design: str = "random"
    second_order: bool = False
    levels: int = designs.MORRIS_LEVELS
    metrics: tuple[str, ...] = ()
    percentiles: tuple[float, ...] = stats.PERCENTILES
    gradients: int = 0
    chunk: int = 0
    name: str = "study"
    event: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    metric: tuple = ()
    limit: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    criteria: tuple[str, ...] = ()

    def __post_init__(self):
        src = "Study"
        _check_types(self, src)
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (normalising a frozen dataclass)
        set_("vary", tuple(v if isinstance(v, Variation) else _variation(v) for v in self.vary))
        set_("correlation", tuple(tuple(c) for c in self.correlation))
        set_("metrics", tuple(self.metrics))
        set_("percentiles", stats.check_percentiles(self.percentiles, source=f"{src}: percentiles"))
        set_("settings", {str(k): float(v) for k, v in dict(self.settings).items()})
        set_("options", dict(self.options))
        set_("event", dict(self.event))
        set_("metric", tuple(self.metric))
        set_("limit", dict(self.limit))
        set_("criteria", tuple(self.criteria))
        check_int("runs", self.runs, 1, 100_000_000, source=src)
        check_int("seed", self.seed, 0, 2**63 - 1, source=src)
        check_int("gradients", self.gradients, 0, 1_000_000, source=src)
        check_int("chunk", self.chunk, 0, 100_000_000, source=src)
        check_choice("design", self.design, designs.DESIGNS, source=src)
        check_int("levels", self.levels, 2, 64, source=src)
        if self.second_order and self.design != "saltelli":
            raise ValidationError(f"{src}: second_order = true needs design = 'saltelli', not {self.design!r}")
        if self.levels != designs.MORRIS_LEVELS and self.design != "morris":
            raise ValidationError(f"{src}: levels = {self.levels} is for design = 'morris', not {self.design!r}")
        try:
            presets.check_name(self.preset)
        except ValueError as e:
            raise ValidationError(f"{src}: preset: {e}") from None
        if self.tire is not None and self.tire not in presets.TIRE_MODELS and not Path(self.tire).is_file():
            raise ValidationError(f"{src}: tire = {self.tire!r}: no such file (give a .tir path, 'mf' or 'simple')")
        if self.surface is not None:
            check_choice("surface", self.surface, SURFACE_NAMES, source=src)
        if not self.name or any(c in self.name for c in "/\\\0"):
            raise ValidationError(f"{src}: name = {self.name!r} must be a plain folder name")

    # ---- the study file ----
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Study:
        """A study from the dict of a study file (module docstring)."""
        d = dict(d)
        fields = {f.name for f in dataclasses.fields(cls)} - set(_VEHICLE_KEYS)
        veh = d.pop("vehicle", {})
        if not isinstance(veh, Mapping):
            raise ValidationError("study file: [vehicle] must be a table (preset, tire, surface)")
        unknown = set(veh) - set(_VEHICLE_KEYS)
        if unknown:
            raise ValidationError(
                f"study file: unknown key(s) {sorted(unknown)} in [vehicle]; allowed {list(_VEHICLE_KEYS)}"
            )
        unknown = set(d) - fields
        if unknown:
            raise ValidationError(
                f"study file: unknown key(s) {sorted(unknown)}; allowed {sorted(fields | {'vehicle'})}"
            )
        if "scenario" not in d:
            raise ValidationError("study file: 'scenario' is required (e.g. scenario = \"braking\")")
        return cls(**d, **veh)

    def to_dict(self) -> dict[str, Any]:
        """The study as a study-file dict (every value resolved, defaults included)."""
        d: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in _VEHICLE_KEYS:
                continue
            v = getattr(self, f.name)
            if f.name == "metric":
                v = [dict(c._asdict() if hasattr(c, "_asdict") else c) for c in v]
            if f.name == "vary":
                v = [{k: x for k, x in var._asdict().items() if x not in (None, ())} for var in v]
            d[f.name] = v
        d["vehicle"] = {k: getattr(self, k) for k in _VEHICLE_KEYS if getattr(self, k) is not None}
        return d


def _real(name: str, v, src: str) -> float:
    """A study file's number: an int or float (not a bool, a string or a list), finite."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ValidationError(f"{src}: {name} = {v!r} must be a number")
    if not math.isfinite(float(v)):
        raise ValidationError(f"{src}: {name} = {v!r} must be finite")
    return float(v)


def _strings(name: str, v, src: str) -> None:
    if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise ValidationError(f"{src}: {name} = {v!r} must be a list of strings")


def _check_types(study: Study, src: str) -> None:
    """The types of a study's fields, as a study file gives them (one line naming the key; the values' ranges
    are checked after): strings, tables, lists of strings and numbers where they belong."""
    for key in ("scenario", "preset", "design", "name"):
        v = getattr(study, key)
        if not isinstance(v, str):
            raise ValidationError(f"{src}: {key} = {v!r} must be a string")
    for key in ("tire", "surface"):
        v = getattr(study, key)
        if v is not None and not isinstance(v, str):
            raise ValidationError(f"{src}: {key} = {v!r} must be a string")
    if not isinstance(study.second_order, bool):
        raise ValidationError(f"{src}: second_order = {study.second_order!r} must be true or false")
    for key in ("settings", "options", "event", "limit"):
        v = getattr(study, key)
        if not isinstance(v, Mapping):
            raise ValidationError(f"{src}: {key} = {v!r} must be a table (key = value)")
    for k, v in study.settings.items():
        _real(f"settings.{k}", v, src)
    _strings("metrics", study.metrics, src)
    _strings("criteria", study.criteria, src)
    if isinstance(study.metric, (str, bytes, Mapping)) or not isinstance(study.metric, (list, tuple)):
        raise ValidationError(f"{src}: metric = {study.metric!r} must be a list of [[metric]] tables")
    if isinstance(study.vary, (str, bytes, Mapping)) or not isinstance(study.vary, (list, tuple)):
        raise ValidationError(f"{src}: vary = {study.vary!r} must be a list of [[vary]] tables")


def _variation(d: Mapping[str, Any]) -> Variation:
    if not isinstance(d, Mapping) or "path" not in d:
        raise ValidationError(f"study: each [[vary]] entry needs a 'path', got {d!r}")
    if not isinstance(d["path"], str):
        raise ValidationError(f"study: [[vary]] path = {d['path']!r} must be a string (a dotted path)")
    src = f"study: [[vary]] {d['path']!r}"
    unknown = set(d) - set(Variation._fields)
    if unknown:
        raise ValidationError(f"{src}: unknown key(s) {sorted(unknown)}; allowed {list(Variation._fields)}")
    for key in ("dist", "by"):
        if key in d and not isinstance(d[key], str):
            raise ValidationError(f"{src}: {key} = {d[key]!r} must be a string")
    for key in ("low", "high", "mean", "sd", "median", "sigma"):
        if d.get(key) is not None:
            _real(key, d[key], src)
    for key in ("values", "weights"):
        if key in d:
            if not isinstance(d[key], (list, tuple)):
                raise ValidationError(f"{src}: {key} = {d[key]!r} must be a list")
            for x in d[key]:
                if not (key == "values" and isinstance(x, str)):  # values: numbers, or names (surfaces)
                    _real(key, x, src)
    if "also" in d:
        _strings("also", d["also"], src)
    d = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()}
    return Variation(**d)


def load(path) -> Study:
    """The :class:`Study` of a TOML study file (a relative ``tire`` path is taken from the working folder,
    else from the study file's folder)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            d = tomllib.load(f)
    except OSError as e:
        raise ValidationError(f"study file {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValidationError(f"study file {path}: not valid TOML: {e}") from None
    veh = d.get("vehicle")
    if isinstance(veh, dict) and isinstance(veh.get("tire"), str) and veh["tire"] not in presets.TIRE_MODELS:
        tire = Path(veh["tire"])
        if not tire.is_absolute() and not tire.is_file() and (path.parent / tire).is_file():
            veh["tire"] = str(path.parent / tire)  # a tire file beside the study file
    return Study.from_dict(d)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return repr(f) if math.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps(study: Study) -> str:
    """The study file (TOML) of ``study``: :func:`load` of it gives back an equal study (floats in their
    shortest round-trip form)."""
    d = study.to_dict()
    lines = [
        f"{k} = {_toml_value(v)}"
        for k, v in d.items()
        if not isinstance(v, (dict, list, Mapping)) or k in ("metrics", "percentiles", "correlation", "criteria")
    ]
    for table_name in ("vehicle", "settings", "options", "event", "limit"):
        if table_name in ("event", "limit") and not d[table_name]:
            continue
        lines += ["", f"[{table_name}]"] + [f"{k} = {_toml_value(v)}" for k, v in d[table_name].items()]
    for c in d["metric"]:
        lines += ["", "[[metric]]"] + [f"{k} = {_toml_value(v)}" for k, v in c.items() if v is not None]
    for var in d["vary"]:
        lines += ["", "[[vary]]"] + [f"{k} = {_toml_value(v)}" for k, v in var.items()]
    return "\n".join(lines) + "\n"


def as_study(study: Study | Mapping[str, Any] | str | Path) -> Study:
    """A :class:`Study` from a study, a study-file dict or a TOML path (a run folder: its ``study.toml``)."""
    if isinstance(study, (str, Path)):
        path = Path(study)
        return load(path / "study.toml" if path.is_dir() else path)
    if isinstance(study, Mapping):
        return Study.from_dict(study)
    return study


# ---- running ----
class StudyResult:
    """What :func:`run` returns: ``study``, ``columns`` (the results table as a column dict; :meth:`frame`
    the :class:`pandas.DataFrame`), ``summary`` (JSON-ready: statistics, sensitivities, timings, version),
    ``accumulator`` (:class:`~sims.studies.statistics.Accumulator`), ``gradients`` (per-vehicle pathwise
    derivatives ``{metric: {path: (k,)}}`` or ``{}``), ``folder`` (set by :func:`sims.studies.report.write_folder`)
    and ``phases`` (the run's :class:`~sims.studies._progress.Phases`: its clock and bars, continued by the
    writing of the folder)."""

    def __init__(self, study, columns, summary, accumulator, gradients, kinds, phases=None):
        self.study, self.columns, self.summary = study, columns, summary
        self.accumulator, self.gradients, self.kinds = accumulator, gradients, kinds
        self.phases = phases if phases is not None else Phases(False)
        self.folder: Path | None = None

    def population(self) -> np.ndarray:
        """Which rows of the table are independent draws, the statistics' sample (:func:`_population`)."""
        return _population(self.study, self.columns["run"])

    def frame(self):
        """The results table as a :class:`pandas.DataFrame` (one row per vehicle)."""
        return table.to_frame(self.columns)


def _vehicle(study: Study):
    tire: Any = study.tire
    if tire is not None and tire not in presets.TIRE_MODELS:
        tire = load_tir(tire)
    ids = None if study.surface is None else surface_id(study.surface)
    return presets.get(study.preset, tire=tire, surface_ids=ids)


def _inputs(study: Study, scenario, base, cols: Mapping[str, Any], n: int):
    """``(fleet params, settings)`` of ``n`` vehicles from the drawn columns ``cols`` (path -> (n,)): pure JAX
    in the column values (differentiated by the pathwise gradients)."""
    by = {v.path: v.by for v in study.vary}
    veh = {p: x for p, x in cols.items() if resolve(p).kind in ("chassis", "tire_scale", "surface", "contact")}
    params = vary_vehicle(base, n, veh, by, {v.path: v.also for v in study.vary})
    dtype = jnp.asarray(params.chassis.mass).dtype
    nominal = {**scenario.settings, **study.settings}
    settings: dict[str, Any] = {k: jnp.full((n,), v, dtype) for k, v in nominal.items()}
    for p, x in cols.items():
        tgt = resolve(p)
        if tgt.kind == "setting":
            x = jnp.asarray(x, dtype)
            settings[tgt.field] = settings[tgt.field] * x if by[p] == "factor" else x
        elif tgt.kind == "driver":
            settings[f"driver.{tgt.field}"] = jnp.asarray(x, dtype)
    return params, settings


class StudyInputs(NamedTuple):
    """What a study runs, before it runs: ``params`` the fleet (one vehicle per row), ``settings`` the
    scenario's per-vehicle settings (name -> ``(n,)``, driver fields as ``"driver.<field>"``), ``draws`` the
    design's factor columns (:class:`~sims.studies.variation.Draws`)."""

    params: Any
    settings: dict[str, Any]
    draws: Draws


def inputs(study: Study | Mapping[str, Any] | str | Path) -> StudyInputs:
    """The fleet and per-vehicle settings of every row of ``study``: its design's draws through its variations
    (:func:`~sims.studies.variation.draw`, :func:`~sims.studies.variation.vary_vehicle`), exactly what
    :func:`run` simulates.  For a front end that drives the scenario itself (the fleet CLI's braking Monte
    Carlo): one sampler for studies and the CLI."""
    study = as_study(study)
    scenario, _, draws, _ = _prepare(study)
    params, settings = _inputs(study, scenario, _vehicle(study), draws.columns, draws.n)
    return StudyInputs(params, settings, draws)


def _check_options(inner, options: Mapping[str, Any]) -> None:
    """A study's ``options`` against the scenario's static fields: each value of its default's type (a number
    for a number, a string for a string, true or false for a flag), ``dt``/``max_time``/counts in their ranges,
    ``model`` a model name."""
    src = f"Study: options of {inner.name!r}"
    flags = {k for k in options if isinstance(getattr(inner, k), bool)}
    numbers = {k: v for k, v in options.items() if isinstance(getattr(inner, k), (int, float)) and k not in flags}
    for k, v in options.items():
        default = getattr(inner, k)
        if isinstance(default, str) and not isinstance(v, str):
            raise ValidationError(f"{src}: {k} = {v!r} must be a string (default {default!r})")
        if k in flags and not isinstance(v, bool):
            raise ValidationError(f"{src}: {k} = {v!r} must be true or false (default {str(default).lower()})")
        if k in numbers:
            _real(k, v, src)
    if "model" in options:
        check_choice("model", options["model"], MODELS, source=src)
    check_config(src, **{k: v for k, v in numbers.items() if k in SCENARIO_RANGES or k in SCENARIO_COUNTS})


def check(study: Study) -> None:
    """Every check :func:`run` makes before it runs (scenario, options, settings, metrics, variations, event),
    without drawing or running anything."""
    _prepare(study, with_draws=False)


def _prepare(study: Study, with_draws: bool = True):
    try:
        inner: Any = catalog.get(study.scenario)  # a frozen dataclass (the catalogue's scenarios are)
    except KeyError as e:
        raise ValidationError(f"Study: scenario: {e.args[0]}") from None
    if study.options:
        is_dc = dataclasses.is_dataclass(inner)  # (a stored bool: Any stays Any for the checker)
        if not is_dc:
            raise ValidationError(
                f"Study: options need a dataclass scenario; {inner.name!r} is a {type(inner).__name__}"
            )
        fields = {f.name for f in dataclasses.fields(inner)} - {"name", "settings", "metrics", "ranges"}
        unknown = set(study.options) - fields
        if unknown:
            raise ValidationError(
                f"Study: options {sorted(unknown)} are not static options of {inner.name!r}; its options: {', '.join(sorted(fields))}"
            )
        _check_options(inner, study.options)
        inner = dataclasses.replace(inner, **study.options)
    drv = tuple((resolve(v.path).field, v.by) for v in study.vary if v.path.startswith("driver."))
    scenario: Any = Varied(inner, drv)
    unknown = set(study.settings) - set(inner.settings)
    if unknown:
        raise ValidationError(
            f"Study: settings {sorted(unknown)} are not settings of {inner.name!r}; its settings: {', '.join(inner.settings)}"
        )
    for k, v in study.settings.items():  # the values' ranges (the types: Study); per vehicle at the run
        check_setting(inner, k, v, "Study", f"settings.{k}")
    metrics = {m.name: m for m in inner.metrics}
    custom = tuple(check_metric(c, inner.metrics, channel_names(inner)) for c in study.metric)
    dup = sorted({c.name for c in custom if [d.name for d in custom].count(c.name) > 1})
    if dup:
        raise ValidationError(f"Study: [[metric]] {dup} defined twice")
    if custom:
        scenario = WithChannels(scenario, custom)
        metrics.update({c.name: c.metric for c in custom})
    if study.limit:
        if custom:
            raise ValidationError("Study: a [limit] search reports the limit only; [[metric]] tables do not apply")
        metrics = limit_metrics(check_limit(study.limit, inner, study.settings, {v.path for v in study.vary}))
    names = study.metrics or tuple(metrics)
    for m in names:
        if m not in metrics:
            raise ValidationError(f"Study: metric {m!r} is not one of {inner.name!r}'s: {', '.join(metrics)}")
    event = events.check_event(study.event, metrics) if study.event else None
    for c in study.criteria:
        check_criterion(c, {m: metrics[m] for m in names}, study.percentiles, event is not None)
    if event is not None and event.metric not in names:
        names = (*names, event.metric)
    if event is not None and event.estimator != "monte_carlo":
        _check_rare(study, event)
    elif (
        event is not None
        and event.target > 0
        and (study.design in designs.STRUCTURED or any(not v.random for v in study.vary))
    ):
        raise ValidationError(
            "Study: event target (adaptive stopping) needs a random, sobol or lhs design without grid variations "
            "(the rows run in order and would stop before the later cells)"
        )
    for var in study.vary:
        check_variation(var, inner.settings)
    if not with_draws:
        return scenario, {m: metrics[m] for m in names}, None, event
    opts = dict(second_order=study.second_order, levels=study.levels)
    draws = draw(study.vary, study.runs, study.seed, study.design, study.correlation, inner.settings, opts)
    return scenario, {m: metrics[m] for m in names}, draws, event


def _limit(study: Study, scenario) -> dict | None:
    """The study's ``[limit]`` table with its defaults (:func:`sims.studies.limit.check_limit`), ``None``."""
    if not study.limit:
        return None
    return check_limit(study.limit, scenario, study.settings, {v.path for v in study.vary})


def _check_rare(study: Study, event) -> None:
    """A study a rare-event estimator can sample: random factors only (no grid), at least one, design random."""
    src = f"Study: event estimator {event.estimator!r}"
    grid = [v.path for v in study.vary if not v.random]
    if grid:
        raise ValidationError(f"{src} samples random factors; {grid} are grids (one study per grid value)")
    if not study.vary:
        raise ValidationError(f"{src} needs at least one random [[vary]] factor")
    if study.design != "random":
        raise ValidationError(f"{src} draws its own points; design = {study.design!r} must be 'random'")


def _rows(draws: Draws, lo: int, hi: int) -> dict[str, np.ndarray]:
    return {p: x[lo:hi] for p, x in draws.columns.items()}


def _table_columns(draws_cols, metrics, lo, hi, names) -> dict[str, np.ndarray]:
    cols: dict[str, np.ndarray] = {"run": np.arange(lo, hi)}
    for p, x in draws_cols.items():
        cols[p] = x
        if resolve(p).kind == "surface":
            cols["vehicle.surface_name"] = np.asarray(SURFACE_NAMES, object)[np.round(x).astype(int)]
    for m in names:
        cols[m] = np.asarray(metrics[m])
    return cols


def _nominal(path: str, base, settings: Mapping[str, float]) -> list[tuple[str, float]]:
    """``[(leaf path, nominal value)]`` of the varied ``path``: a chassis field's or a setting's value, a tire
    scale's (per axle when ``vehicle.tire_scale.<f>``'s front and rear differ); none for a driver field (its
    nominal value is made by the scenario's set-up, per vehicle)."""
    tgt = resolve(path)
    ch = base.chassis
    if tgt.kind == "chassis":
        return [(path, float(getattr(ch, tgt.field)))]
    if tgt.kind == "contact":
        return [(path, float(getattr(base.contact, tgt.field)))]
    if tgt.kind == "setting":
        return [(path, float(settings[tgt.field]))]
    if tgt.kind != "tire_scale":
        return []
    axle, f = tgt.field.split(".")
    axles = ("front", "rear") if axle == "both" else (axle,)
    values = {a: float(getattr(getattr(ch, f"tire_scale_{a}"), f)) for a in axles}
    if len(set(values.values())) == 1:
        return [(path, values[axles[0]])]
    return [(f"vehicle.chassis.tire_scale_{a}.{f}", v) for a, v in values.items()]


def _absolute(study: Study, scenario, base) -> dict[str, list[tuple[str, float]]]:
    """The leaves each factor (``by = "factor"``) scales, with their nominal values: ``{factor path: [(leaf
    path, nominal)]}`` (its path and its ``also`` paths, :func:`_nominal`): the absolute-value columns of the
    table (:func:`_finish_columns`)."""
    nominal = {**scenario.settings, **study.settings}
    return {
        v.path: [lx for q in (v.path, *v.also) for lx in _nominal(q, base, nominal)]
        for v in study.vary
        if v.by == "factor"
    }


def _finish_columns(columns, flags, companions) -> dict[str, np.ndarray]:
    """The results table as written: every factor column followed by its absolute values (``companions``,
    :func:`_absolute`: a column ``"<leaf path> [<unit>]"``, :func:`sims.studies.table.absolute_name`, of float64
    ``nominal x factor``) and the flag metrics ``flags`` as booleans (``x != 0``)."""
    out: dict[str, np.ndarray] = {}
    for k, x in columns.items():
        out[k] = np.asarray(x) != 0 if k in flags else x
        for leaf, nominal in companions.get(k, ()):
            out[table.absolute_name(leaf)] = np.asarray(x, np.float64) * nominal
    return out


def _units(study: Study, columns, metrics, companions) -> dict[str, str]:
    """The unit of every column of the table (``summary.json``'s ``units``, the table's metadata): ``-`` for
    the row index, factors, flags and the estimator's batch, the SI unit of a value's path
    (:func:`sims.studies.table.unit`), the metrics' own, ``""`` for names (``vehicle.surface_name``)."""
    by = {v.path: v.by for v in study.vary}
    absolute = {table.absolute_name(leaf): table.unit(leaf) for leaves in companions.values() for leaf, _ in leaves}
    out = {}
    for k in columns:
        if k in metrics:
            out[k] = metrics[k].unit
        elif k in by:
            out[k] = "-" if by[k] == "factor" else table.unit(k)
        else:
            out[k] = absolute.get(k, "" if k == "vehicle.surface_name" else "-")
    return out


def _sensitivity(study: Study, columns, names, bar=NO_BAR) -> dict[str, Any]:
    """The design's sensitivity indices per metric: Sobol' (``"saltelli"``, with ``second_order``) or Morris
    (``"morris"``); ``bar`` advanced per metric."""
    factors = [v.path for v in study.vary]
    out: dict[str, Any] = {}
    if study.design == "saltelli":
        out["sobol"] = {}
        for m in names:
            out["sobol"][m] = sensitivity.sobol(
                columns[m], study.runs, factors, second_order=study.second_order, seed=study.seed
            )
            bar.update(1)
    elif study.design == "morris":
        unit = designs.morris(study.runs, len(factors), study.seed, study.levels)
        out["morris"] = {}
        for m in names:
            out["morris"][m] = sensitivity.morris(columns[m], unit, factors)
            bar.update(1)
    return out


def run(
    study: Study | Mapping[str, Any] | str | Path,
    *,
    devices=None,
    progress=True,
    compiler_options=None,
    journal: str | Path | None = None,
) -> StudyResult:
    """Run ``study`` (a :class:`Study`, a study-file dict or a path to a TOML study file) and return its
    :class:`StudyResult` (module docstring).  ``devices``: as :func:`sims.scenarios.base.run_scenario`
    (``None``: every local device); ``progress``: a progress bar on stderr for every phase (``False``: none;
    anything with ``update(steps)``: that, for the simulation's steps only); every phase is timed in
    ``summary["timing"]`` (:mod:`sims.studies._progress`); ``compiler_options``: XLA options of the fleet
    program; ``journal``: a
    folder where every batch is saved as it finishes and from which a rerun resumes
    (:mod:`sims.studies.journal`).  Under ``jax.distributed`` with several processes each process runs its
    own block of rows (:func:`sims.run.distributed.process_rows`) and every process gets the one merged
    table (the rows are exchanged through the shared file system folder of ``share_dir``)."""
    phases = Phases(progress is True)
    started = datetime.datetime.now(datetime.UTC)
    with phases.phase("prepare", show=False):
        study = as_study(study)
        phases.label = study.name
        scenario, metrics, draws, event = _prepare(study)
        kinds = {m: metrics[m].kind for m in metrics}
        names = tuple(metrics)
        base = _vehicle(study)
    multi = jax.process_count() > 1
    rare_event = event is not None and event.estimator != "monte_carlo"
    if multi and (journal is not None or rare_event):
        raise ValidationError(
            "Study: a journal or a rare-event estimator runs in one process, not under jax.distributed"
        )
    book = Journal(journal)
    own_steps = progress not in (True, False, None)  # a caller's step counter (anything with update(steps))

    limit = _limit(study, scenario)

    def fleet(cols, n):
        """The metrics of the ``n`` vehicles of the factor columns ``cols`` (timed: set-up, compile, run; with
        the :class:`~sims.studies._progress.FleetBar` bars)."""
        with phases.phase("setup", show=False):
            bar = progress if own_steps else FleetBar(phases, n)
            params, settings = _inputs(study, scenario, base, cols, n)
            try:
                kw = dict(devices=devices, progress=bar, compiler_options=compiler_options)
                if limit is not None:  # a limit search per vehicle: its fleet runs, one bracket per vehicle
                    out, rs = run_limit(limit, scenario, params, settings, **kw)
                else:
                    out, rs = run_scenario(scenario, params, settings, **kw)
            finally:
                if not own_steps:
                    bar.close()
            phases.add("compile", rs.compile_s)
            phases.add("run", rs.run_s)
        return {m: out[m] for m in names}

    acc = stats.Accumulator(kinds, study.percentiles)
    est = None
    if rare_event:
        assert event is not None  # (rare_event says so)
        with phases.phase("estimator", show=False):
            phases.nested = True
            state = VehicleLimitState(study, scenario, base, event, names, book, fleet, compiler_options)
            est = events.estimate(event, state, len(study.vary), study.runs, study.seed)
        columns = table.concat(state.parts)
        kinds, acc = {}, stats.Accumulator({}, study.percentiles)  # rows drawn by the estimator: no population
    else:
        with phases.phase("journal", show=False):
            columns, est = _run_rows(study, draws, event, book, fleet, acc, names, multi, phases)
        if multi:
            with phases.phase("gather", show=False):
                columns, acc = _gather(columns, kinds, study, distributed.process_rows(draws.n))
                if event is not None:
                    est = _rate(event, study, columns)
    if event is not None:
        columns["failed"] = event.failed(columns[event.metric])
    companions = _absolute(study, scenario, base)
    columns = _finish_columns(columns, [m for m in names if metrics[m].kind == "flag"], companions)
    n = int(len(columns["run"]))
    population = _population(study, columns["run"]) if kinds else np.zeros(n, bool)
    summary: dict[str, Any] = dict(
        study=study.name,
        scenario=study.scenario,
        version=jaxtire.__version__,
        date=started.isoformat(timespec="seconds"),
        host=socket.gethostname(),
        seed=study.seed,
        design=study.design,
        runs=n,
        grid_cells=draws.grid_cells,
        dtype=str(jnp.asarray(base.chassis.mass).dtype),
        backend=jax.default_backend(),
        devices=jax.device_count() if devices is None else devices,
        compiler_options=dict(compiler_options or {}),
        metrics={
            m: dict(unit=metrics[m].unit, kind=metrics[m].kind, smooth=bool(metrics[m].smooth), doc=metrics[m].doc)
            for m in names
        },
        units=_units(study, columns, metrics, companions),
        population=dict(rows=int(population.sum()), of=n, method=_population_method(study, rare_event)),
    )
    with phases.phase("statistics", len(names), "metric", show=study.design in designs.STRUCTURED) as bar:
        summary["statistics"] = acc.summary()
        if event is not None and est is not None:
            cells = _cells(event, study, draws, columns) if not rare_event and draws.grid_cells > 1 else []
            summary["event"] = events.summary(event, est, dict(budget=study.runs, cells=cells))
        summary["sensitivity"] = _sensitivity(study, columns, names, bar)
    grads: dict = {}
    if study.gradients and not rare_event:
        k = min(study.gradients, n)
        smooth = sum(bool(metrics[m].smooth) for m in names)
        with phases.phase("gradients", 1 + smooth, "pass", f"gradients of {k} vehicles") as bar:
            grads = gradients(
                study,
                k,
                scenario=scenario,
                base=base,
                draws=draws,
                metrics=metrics,
                compiler_options=compiler_options,
                progress=bar,
            )
        summary["sensitivity"]["gradients"] = sensitivity.summarise_gradients(grads)
    summary["timing"] = dict(phases.timing(PHASES), vehicles_per_s=n / max(phases.seconds.get("run", 0.0), 1e-9))
    if limit is not None:
        summary["limit"] = dict(limit)  # the [limit] table with its defaults (the report's section)
    summary["description"] = describe(study, summary)
    summary["criteria"] = verdicts(
        [check_criterion(c, metrics, study.percentiles, event is not None) for c in study.criteria], summary
    )
    return StudyResult(study, columns, summary, acc, grads, kinds, phases)


def _run_rows(study: Study, draws: Draws, event, book: Journal, fleet, acc, names, multi: bool, phases=None):
    """The study's design run in chunks (``chunk``; with an event ``target``, chunks of the event's ``batch``
    until the target is met); each chunk through the journal, its independent rows (:func:`_population`) added
    to ``acc``, a bar over the vehicles when there are several chunks.  Returns ``(columns, event estimate
    or None)``."""
    n = draws.n
    start, stop = 0, n
    if multi:  # multi-host: this process's block of rows
        start, stop, _ = distributed.process_rows(n)
        stop = min(stop, n)
    adaptive = event is not None and event.target > 0
    chunk = chunk_size(study, event, stop - start)
    phases = phases or Phases(False)
    phases.nested = stop - start > chunk
    bar = phases.bar("vehicles", stop - start, "vehicle") if phases.nested else NO_BAR
    parts, est, hist = [], None, []
    for lo in range(start, stop, chunk):
        hi = min(lo + chunk, stop)
        cols = _rows(draws, lo, hi)
        out = book.call(cols, functools.partial(fleet, cols, hi - lo))
        keep = _population(study, np.arange(lo, hi))
        acc.add({m: np.asarray(out[m])[keep] for m in names})
        parts.append(_table_columns(cols, out, lo, hi, names))
        bar.update(hi - lo)
        if event is not None and not multi:
            est = _rate(event, study, table.concat(parts))
            hist.append((est.runs, est.p, est.low, est.high))
            if adaptive and est.half_width <= event.target:
                break
    bar.close()
    if est is not None:
        est = est._replace(history=tuple(hist))
    return table.concat(parts), est


def chunk_size(study: Study, event, rows: int) -> int:
    """Vehicles per fleet program of a study of ``rows`` rows: a rare-event estimator's block (``batch``;
    ``batch level`` for subset simulation, whose chains step that many at a time), else ``chunk``, the
    event's ``batch`` with adaptive stopping, or every row at once.  (:mod:`sims.studies.replay` re-runs a
    row in a fleet of this size: XLA's code, and so the last bits, depend on the fleet's shape.)"""
    if event is not None and event.estimator != "monte_carlo":
        return round(event.batch * event.level) if event.estimator == "subset" else event.batch
    adaptive = event is not None and event.target > 0
    return study.chunk or (event.batch if adaptive else 0) or max(rows, 1)


def _rate(event, study: Study, columns) -> rare.Estimate:
    """The event's rate over the independent rows of ``columns`` (:func:`_population`), with the
    Clopper-Pearson interval."""
    x = np.asarray(columns[event.metric], np.float64)[_population(study, columns["run"])]
    return rare.binomial(int(np.sum(event.failed(x))), int(x.size))


def _population_method(study: Study, rare_event: bool) -> str:
    """Which rows the statistics are over, in words (``summary.json``'s ``population``)."""
    if rare_event:
        return "none: a rare-event estimator's rows are drawn around the failure, not from the population"
    return designs.POPULATION.get(study.design, "every row")


def _population(study: Study, rows) -> np.ndarray:
    """Which of the design rows ``rows`` are independent draws of the factors, the rows every statistic is
    taken over (:func:`sims.studies.designs.population_rows`: a Saltelli design's ``A`` and ``B`` rows, the
    first row of each Morris trajectory, else every row)."""
    return designs.population_rows(study.design, study.runs, len(study.vary), rows)


def _cells(event, study: Study, draws: Draws, columns) -> list[dict[str, Any]]:
    """The event's rate per grid cell (rows ``c runs .. (c + 1) runs``), with the cell's grid values."""
    grid = [v.path for v in study.vary if not v.random]
    run = np.asarray(columns["run"])
    out = []
    for c in range(draws.grid_cells):
        rows = (run >= c * draws.runs) & (run < (c + 1) * draws.runs)
        if not rows.any():
            continue
        x = np.asarray(columns[event.metric], np.float64)[rows]
        e = rare.binomial(int(np.sum(event.failed(x))), int(x.size))
        values = {p: float(np.asarray(columns[p])[rows][0]) for p in grid}
        out.append(dict(values=values, p=e.p, low=e.low, high=e.high, runs=e.runs))
    return out


class VehicleLimitState:
    """An event's limit state over a study's vehicles (a :class:`sims.studies.rare.LimitState`): standard-normal
    points ``u`` ``(n, d)`` -> the factors (:func:`~sims.studies.variation.from_normal`) -> the fleet in blocks
    of ``batch`` vehicles (``batch level`` for subset simulation, whose chains step that many at a time; the
    last block padded with its first row, so one program serves every block), each block through the
    journal -> ``g`` of the event's metric.  ``value_and_grad`` at one point: the metric's pathwise gradient
    (``jax.vjp`` through the rollout) times ``d factors / d u`` (central differences of the numpy map,
    ``h = 1e-6``).  ``parts`` keeps every evaluated row for the results table."""

    def __init__(self, study: Study, scenario, base, event, names, book: Journal, fleet, compiler_options=None):
        self.study, self.scenario, self.base, self.event = study, scenario, base, event
        self.names, self.book, self.fleet, self.compiler_options = names, book, fleet, compiler_options
        self.block = chunk_size(study, event, 0)
        self.parts: list[dict[str, np.ndarray]] = []
        self.rows = 0

    def columns(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """The factor columns at the standard-normal points ``u`` ``(n, d)``."""
        return from_normal(self.study.vary, u, self.study.correlation, settings=self.scenario.settings)

    def evaluate(self, u: np.ndarray) -> np.ndarray:
        """``g`` at the rows of ``u`` (float64, ``(n,)``)."""
        cols = self.columns(u)
        n, b = u.shape[0], self.block
        values = []
        for lo in range(0, n, b):
            part = {p: x[lo : lo + b] for p, x in cols.items()}
            m = min(b, n - lo)
            padded = {p: np.concatenate([x, np.repeat(x[:1], b - m)]) for p, x in part.items()}
            out = self.book.call(padded, functools.partial(self.fleet, padded, b))
            out = {k: np.asarray(v)[:m] for k, v in out.items()}
            cols_out = _table_columns(part, out, self.rows, self.rows + m, self.names)
            cols_out["batch"] = np.full(m, self.book.count - 1)
            self.parts.append(cols_out)
            self.rows += m
            values.append(np.asarray(out[self.event.metric], np.float64))
        return np.asarray(self.event.limit_state(np.concatenate(values)), np.float64)

    def value_and_grad(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        """``g`` and ``d g / d u`` at one point ``u`` ``(d,)`` (class docstring)."""
        u = np.asarray(u, np.float64)
        cols = self.columns(u[None])
        metric = self.event.metric
        dtype = jnp.asarray(self.base.chassis.mass).dtype

        def fn(vals):
            params, settings = _inputs(self.study, self.scenario, self.base, vals, 1)
            out = scenario_metrics(self.scenario, params, settings, compiler_options=self.compiler_options)
            return {metric: out[metric]}

        paths = list(cols)
        vals = {p: jnp.asarray(x, dtype) for p, x in cols.items()}
        value, grads = sensitivity.pathwise(fn, vals, [metric], with_values=True)
        h = 1e-6
        jac = np.empty((len(paths), u.size))
        for j in range(u.size):
            e = np.zeros_like(u)
            e[j] = h
            up, um = self.columns((u + e)[None]), self.columns((u - e)[None])
            jac[:, j] = [(up[p][0] - um[p][0]) / (2.0 * h) for p in paths]
        dm_du = np.array([float(grads[metric][p][0]) for p in paths]) @ jac
        sign = -1.0 if self.event.op in (">", ">=") else 1.0
        g = float(np.asarray(self.event.limit_state(np.asarray(value[metric], np.float64)))[0])
        return g, sign * dm_du


def gradients(
    study: Study,
    k: int,
    *,
    scenario=None,
    base=None,
    draws=None,
    metrics=None,
    n_steps=None,
    compiler_options=None,
    progress=None,
) -> dict:
    """Pathwise gradients ``{metric: {path: (k,)}}`` of the smooth metrics with respect to every varied
    continuous path (``choice`` and ``grid`` variations and surfaces excluded) for the first ``k`` vehicles of the study, by ``jax.vjp`` through
    :func:`sims.scenarios.base.scenario_metrics` (:func:`sims.studies.sensitivity.pathwise`; ``progress``
    its)."""
    if scenario is None:
        scenario, metrics, draws, _ = _prepare(study)
    base = _vehicle(study) if base is None else base
    smooth = [m for m, meta in metrics.items() if meta.smooth]
    cols = _rows(draws, 0, k)
    discrete = {v.path for v in study.vary if v.dist in ("choice", "grid")}
    cont = {p: x for p, x in cols.items() if p not in discrete and resolve(p).kind != "surface"}
    fixed = {p: x for p, x in cols.items() if p not in cont}
    if not smooth or not cont:
        return {}
    dtype = jnp.asarray(base.chassis.mass).dtype

    def fn(vals):
        params, settings = _inputs(study, scenario, base, {**fixed, **vals}, k)
        out = scenario_metrics(scenario, params, settings, n_steps=n_steps, compiler_options=compiler_options)
        return {m: out[m] for m in smooth}

    return sensitivity.pathwise(fn, {p: jnp.asarray(x, dtype) for p, x in cont.items()}, smooth, progress=progress)


def _gather(columns, kinds, study: Study, rows):
    """Every process's rows, in row order, on every process (multi-host: ``process_allgather`` of each
    column, padded to the equal block size of :func:`~sims.run.distributed.process_rows`)."""
    from jax.experimental import multihost_utils  # only under jax.distributed

    start, stop, _ = rows
    merged = {}
    for k, x in columns.items():
        if x.dtype == object:
            continue
        x = np.asarray(x)
        pad = stop - start - x.shape[0]
        fill = -1 if k == "run" else 0
        x = np.concatenate([x, np.full((pad,) + x.shape[1:], fill, x.dtype)]) if pad > 0 else x
        # as raw bytes (rows, itemsize) uint8: JAX without x64 would cast float64 / int64 columns down
        raw = np.ascontiguousarray(x).view(np.uint8).reshape(x.shape[0], -1)
        got = np.asarray(multihost_utils.process_allgather(raw, tiled=True))
        merged[k] = np.ascontiguousarray(got).view(x.dtype).reshape((-1,) + x.shape[1:])
    keep = merged["run"] >= 0
    order = np.argsort(merged["run"][keep], kind="stable")
    merged = {k: v[keep][order] for k, v in merged.items()}
    if "vehicle.surface" in merged:
        merged["vehicle.surface_name"] = np.asarray(SURFACE_NAMES, object)[
            np.round(merged["vehicle.surface"]).astype(int)
        ]
    keep = _population(study, merged["run"])
    acc = stats.Accumulator(kinds, study.percentiles).add({m: merged[m][keep] for m in kinds})
    return merged, acc


__all__ = [
    "Study",
    "StudyResult",
    "VehicleLimitState",
    "as_study",
    "check",
    "chunk_size",
    "dumps",
    "StudyInputs",
    "gradients",
    "inputs",
    "load",
    "run",
]
