"""Parameter variation: any numeric leaf of the vehicle, the tire scales, the driver, the road and the
scenario settings, named by a dotted path and drawn from a distribution.

Paths (each validated against the range table of its field):

* ``vehicle.chassis.<field>``: a :class:`~sims.vehicles.params.Chassis` field
  (:data:`~sims.vehicles.params.CHASSIS_RANGES`), e.g. ``vehicle.chassis.brake_bias_front``;
* ``vehicle.chassis.tire_scale_front.<f>`` / ``tire_scale_rear.<f>`` (``f`` in ``mu_x, mu_y, k_x, k_y``,
  :data:`~sims.vehicles.params.TIRE_SCALE_RANGE`), and ``vehicle.tire_scale.<f>``: both axles at once;
* ``vehicle.surface`` (alias ``road.surface``): the surface under all four wheels, by name or id (a
  ``choice`` or ``grid``); ``road.grade`` / ``road.bank`` [rad]: the grade and bank of the road under the car
  (:class:`~sims.roads.contact.Contact`, :data:`~sims.roads.contact.CONTACT_FIELDS`);
* ``driver.<field>``: a field of the scenario's driver (:data:`sims.drivers.DRIVER_RANGES`);
* ``scenario.<setting>``: a key of the scenario's ``settings`` (validated by
  :data:`sims.scenarios.config.SCENARIO_RANGES` where it names one, and by the scenario's own setup).

``by = "value"`` draws the value itself; ``by = "factor"`` draws a factor on the nominal value (the
base vehicle's, the scenario driver's, the scenario setting's default).

Distributions (:class:`Variation`), each mapped from a unit value ``u`` in [0, 1) of the design
(:mod:`sims.studies.designs`) by its inverse distribution function, truncated to ``[low, high]`` as
``x = F^{-1}(F(low) + u (F(high) - F(low)))``:

* ``uniform``: ``low``, ``high``;
* ``normal``: ``mean``, ``sd``, optional ``low`` / ``high`` (default: the field's range for values,
  ``(0, inf)`` for factors);
* ``lognormal``: ``median`` and ``sigma`` (the standard deviation of ``ln x``), optional bounds;
* ``choice``: ``values`` with optional ``weights`` (normalised; names accepted for surfaces);
* ``grid``: ``values``, deterministic: the study runs the cross product of every grid variation's values
  (as OpenSCENARIO's deterministic distributions), each cell with the same draws of the random factors
  (common random numbers).

Correlation (optional): a Gaussian copula over the continuous random factors, ``z = Phi^{-1}(u) L^T``
with ``L L^T = C`` the given correlation matrix and ``u' = Phi(z)`` (rank correlation close to ``C``;
with a Sobol' or Latin hypercube design the stratification of each factor is kept, of pairs not).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special

from jaxtire.surfaces import PRESET_NAMES as SURFACE_NAMES
from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError, check_choice, check_range
from sims.drivers import DRIVER_RANGES
from sims.roads.contact import CONTACT_FIELDS, broadcast_contact
from sims.run.fleet import Sampling, broadcast, surface_ids_of
from sims.scenarios.config import SCENARIO_RANGES
from sims.studies.designs import STRUCTURED, points
from sims.vehicles.params import CHASSIS_RANGES, TIRE_SCALE_RANGE, TireScale, VehicleParams, validate_params

DISTRIBUTIONS = ("uniform", "normal", "lognormal", "choice", "grid")
_ALIASES = {"road.surface": "vehicle.surface"}
_ANY = (-math.inf, math.inf, True, True)


class Variation(NamedTuple):
    """One varied quantity: ``path`` (module docstring), ``dist`` (one of :data:`DISTRIBUTIONS`), ``by``
    (``"value"`` or ``"factor"``) and the distribution's parameters (``low``, ``high``, ``mean``, ``sd``,
    ``median``, ``sigma``, ``values``, ``weights``; unused ones ``None`` / empty); ``also``: further vehicle
    paths that take the same draw (e.g. ``mass`` with ``also = ["vehicle.chassis.yaw_inertia"]`` for a
    payload factor, ``tire_scale.mu_x`` with ``mu_y``)."""

    path: str
    dist: str = "uniform"
    by: str = "value"
    low: float | None = None
    high: float | None = None
    mean: float | None = None
    sd: float | None = None
    median: float | None = None
    sigma: float | None = None
    values: tuple = ()
    weights: tuple = ()
    also: tuple = ()

    @property
    def random(self) -> bool:
        """Drawn from the design (every distribution but ``grid``)."""
        return self.dist != "grid"


class Target(NamedTuple):
    """Where a path points: ``kind`` (``chassis``, ``tire_scale``, ``surface``, ``contact``, ``driver``,
    ``setting``), ``field`` (chassis field, ``"front.mu_x"`` / ``"both.mu_x"``, contact field, driver field,
    setting key) and the allowed
    range of the value ``(low, high, low incl., high incl.)``."""

    kind: str
    field: str
    range: tuple


def resolve(path: str, settings: Mapping[str, Any] | None = None) -> Target:
    """The :class:`Target` of a dotted ``path``; a ``ValidationError`` listing the allowed paths otherwise.
    ``settings``: the scenario's settings (to check ``scenario.<key>``; ``None``: not checked)."""
    p = _ALIASES.get(path, path)
    parts = p.split(".")
    src = "Variation"
    if p == "vehicle.surface":
        return Target("surface", "surface_ids", (0, len(SURFACE_NAMES) - 1, True, True))
    if len(parts) == 2 and parts[0] == "road" and parts[1] in CONTACT_FIELDS:
        return Target("contact", parts[1], CONTACT_FIELDS[parts[1]].range)
    if len(parts) == 3 and parts[:2] == ["vehicle", "chassis"] and parts[2] in CHASSIS_RANGES:
        return Target("chassis", parts[2], CHASSIS_RANGES[parts[2]])
    if len(parts) == 4 and parts[:2] == ["vehicle", "chassis"] and parts[2] in ("tire_scale_front", "tire_scale_rear"):
        check_choice(f"{path}: tire scale", parts[3], TireScale._fields, source=src)
        return Target("tire_scale", f"{parts[2][len('tire_scale_') :]}.{parts[3]}", TIRE_SCALE_RANGE)
    if len(parts) == 3 and parts[:2] == ["vehicle", "tire_scale"]:
        check_choice(f"{path}: tire scale", parts[2], TireScale._fields, source=src)
        return Target("tire_scale", f"both.{parts[2]}", TIRE_SCALE_RANGE)
    if len(parts) == 2 and parts[0] == "driver" and parts[1] in DRIVER_RANGES:
        return Target("driver", parts[1], DRIVER_RANGES[parts[1]])
    if len(parts) == 2 and parts[0] == "scenario":
        if settings is not None and parts[1] not in settings:
            raise ValidationError(
                f"{src}: path {path!r}: the scenario has no setting {parts[1]!r}; its settings: {', '.join(settings)}"
            )
        return Target("setting", parts[1], SCENARIO_RANGES.get(parts[1], _ANY))
    raise ValidationError(
        f"{src}: path {path!r} names nothing that can be varied; allowed: vehicle.chassis.<field> "
        f"({', '.join(CHASSIS_RANGES)}), vehicle.chassis.tire_scale_front.<f> / tire_scale_rear.<f> / "
        f"vehicle.tire_scale.<f> (f: {', '.join(TireScale._fields)}), vehicle.surface, road.grade, road.bank, "
        f"driver.<field> ({', '.join(DRIVER_RANGES)}), scenario.<setting>"
    )


def _surface(v) -> int:
    return surface_id(v) if isinstance(v, str) else int(v)


def check_variation(v: Variation, settings: Mapping[str, Any] | None = None) -> Variation:
    """``v`` with its parameters checked (and surface names turned into ids); a ``ValidationError`` naming
    the path, the parameter, the value and what is allowed otherwise."""
    src = f"Variation {v.path!r}"
    tgt = resolve(v.path, settings)
    check_choice("dist", v.dist, DISTRIBUTIONS, source=src)
    check_choice("by", v.by, ("value", "factor"), source=src)
    for q in v.also:
        if tgt.kind not in ("chassis", "tire_scale") or resolve(q).kind not in ("chassis", "tire_scale"):
            raise ValidationError(f"{src}: also = {q!r}: only vehicle chassis / tire scale paths can share a draw")
    if tgt.kind == "surface":
        if v.dist not in ("choice", "grid") or v.by != "value":
            raise ValidationError(f"{src}: a surface is chosen by name: dist = 'choice' or 'grid', by = 'value'")
        try:
            ids = tuple(_surface(s) for s in v.values)
        except (ValueError, TypeError) as e:
            raise ValidationError(f"{src}: {e}") from None
        v = v._replace(values=ids)
    bounds = tgt.range if v.by == "value" else (0.0, math.inf, False, True)
    if v.dist in ("choice", "grid"):
        if not v.values:
            raise ValidationError(f"{src}: dist = {v.dist!r} needs a non-empty list 'values'")
        check_range("values", [float(x) for x in v.values], bounds[0], bounds[1], bounds[2], bounds[3], source=src)
        if v.weights:
            if len(v.weights) != len(v.values):
                raise ValidationError(
                    f"{src}: {len(v.weights)} weights for {len(v.values)} values (give one weight per value)"
                )
            w = check_range("weights", [float(x) for x in v.weights], 0.0, math.inf, source=src)
            if w.sum() <= 0:
                raise ValidationError(f"{src}: weights sum to 0 (give at least one positive weight)")
        return v
    if v.dist == "uniform":
        if v.low is None or v.high is None:
            raise ValidationError(f"{src}: dist = 'uniform' needs 'low' and 'high'")
    elif v.dist == "normal":
        if v.mean is None or v.sd is None:
            raise ValidationError(f"{src}: dist = 'normal' needs 'mean' and 'sd'")
        check_range("sd", float(v.sd), 0.0, math.inf, lo_incl=False, source=src)
    else:
        if v.median is None or v.sigma is None:
            raise ValidationError(f"{src}: dist = 'lognormal' needs 'median' and 'sigma' (sd of ln x)")
        check_range("median", float(v.median), 0.0, math.inf, lo_incl=False, source=src)
        check_range("sigma", float(v.sigma), 0.0, math.inf, lo_incl=False, source=src)
    for name in ("low", "high"):
        if getattr(v, name) is not None:
            check_range(name, float(getattr(v, name)), bounds[0], bounds[1], bounds[2], bounds[3], source=src)
    lo, hi = _bounds(v, bounds)
    if not lo < hi:
        raise ValidationError(f"{src}: low = {lo:g} must be below high = {hi:g} (swap them?)")
    return v


def _bounds(v: Variation, bounds: tuple) -> tuple[float, float]:
    lo = bounds[0] if v.low is None else float(v.low)
    hi = bounds[1] if v.high is None else float(v.high)
    if v.dist == "lognormal":
        lo = max(lo, 0.0)
    return lo, hi


def from_unit(v: Variation, u: np.ndarray, settings: Mapping[str, Any] | None = None) -> np.ndarray:
    """The draws of the random variation ``v`` (float64) at the unit values ``u`` (module docstring)."""
    tgt = resolve(v.path, settings)
    bounds = tgt.range if v.by == "value" else (0.0, math.inf, False, True)
    if v.dist == "choice":
        w = np.asarray(v.weights if v.weights else [1.0] * len(v.values), float)
        edges = np.cumsum(w) / w.sum()
        idx = np.minimum(np.searchsorted(edges, u, side="right"), len(v.values) - 1)
        return np.asarray(v.values, float)[idx]
    lo, hi = _bounds(v, bounds)
    if v.dist == "uniform":
        return lo + u * (hi - lo)
    if v.dist == "normal":
        mu, s = float(v.mean or 0.0), float(v.sd or 1.0)  # both checked by check_variation
        cdf = lambda x: special.ndtr((x - mu) / s)  # noqa: E731
        return mu + s * special.ndtri(cdf(lo) + u * (cdf(hi) - cdf(lo)))
    m, s = math.log(float(v.median or 1.0)), float(v.sigma or 1.0)  # both checked by check_variation
    cdf = lambda x: special.ndtr((math.log(x) - m) / s) if x > 0 else 0.0  # noqa: E731
    return np.exp(m + s * special.ndtri(cdf(lo) + u * (cdf(hi) - cdf(lo))))


def copula(u: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """Gaussian copula: ``Phi(Phi^{-1}(u) L^T)`` with ``L`` the Cholesky factor of the correlation matrix
    ``corr`` (must be symmetric positive definite with a unit diagonal)."""
    z = special.ndtri(np.clip(u, 1e-12, 1 - 1e-12))
    return special.ndtr(z @ _cholesky(corr, u.shape[1]).T)


def _cholesky(corr, d: int) -> np.ndarray:
    """The Cholesky factor ``L`` of the ``d x d`` correlation matrix ``corr`` (checked: symmetric, unit
    diagonal, positive definite)."""
    corr = np.asarray(corr, float)
    if corr.shape != (d, d) or not np.allclose(corr, corr.T) or not np.allclose(np.diag(corr), 1.0):
        raise ValidationError(f"correlation: a symmetric {d}x{d} matrix with a unit diagonal needed")
    try:
        return np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        raise ValidationError("correlation: the matrix is not positive definite (lower some |rho|)") from None


def from_normal(
    variations: Sequence[Variation],
    z: np.ndarray,
    correlation: Sequence[Sequence[Any]] = (),
    settings: Mapping[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """The factors (path -> ``(n,)`` float64) at the standard-normal points ``z`` ``(n, d)`` of the random
    variations: the space of the rare-event estimators (:mod:`sims.studies.rare`).  ``x_i = F_i^-1(Phi((z
    L^T)_i))`` with :func:`from_unit` as ``F_i^-1`` and ``L`` the copula's Cholesky factor (the identity
    without ``correlation``): the same map as :func:`draw`'s, from normal instead of unit coordinates."""
    vs = [check_variation(v, settings) for v in variations]
    grid = [v.path for v in vs if not v.random]
    if grid:
        raise ValidationError(f"variations: {grid} are grids; a rare-event estimator samples random factors only")
    z = np.asarray(z, np.float64)
    if z.ndim != 2 or z.shape[1] != len(vs):
        raise ValidationError(f"from_normal: points of shape (n, {len(vs)}) needed, got {z.shape}")
    corr = correlation_matrix(vs, correlation)
    if corr is not None:
        z = z @ _cholesky(corr, len(vs)).T
    unit = special.ndtr(z)
    return {v.path: from_unit(v, unit[:, i], settings) for i, v in enumerate(vs)}


def correlation_matrix(variations: Sequence[Variation], pairs: Sequence[Sequence[Any]]) -> np.ndarray | None:
    """The correlation matrix over the *random* variations from ``pairs`` ``[path_a, path_b, rho]``
    (``None`` without pairs); ``choice`` factors cannot be correlated."""
    if not pairs:
        return None
    rnd = [v.path for v in variations if v.random]
    choice = {v.path for v in variations if v.dist == "choice"}
    corr = np.eye(len(rnd))
    for pair in pairs:
        if len(pair) != 3:
            raise ValidationError(f"correlation: each entry is [path_a, path_b, rho], got {pair!r}")
        a, b, rho = pair
        for p in (a, b):
            if p not in rnd:
                raise ValidationError(f"correlation: {p!r} is not a random variation of the study ({', '.join(rnd)})")
            if p in choice:
                raise ValidationError(
                    f"correlation: {p!r} is a 'choice'; only continuous distributions can be correlated"
                )
        r = float(check_range(f"rho({a}, {b})", float(rho), -1.0, 1.0, False, False, source="correlation"))
        i, j = rnd.index(a), rnd.index(b)
        corr[i, j] = corr[j, i] = r
    return corr


class Draws(NamedTuple):
    """The factors of every run: ``columns`` path -> ``(n,)`` float64 (surface ids as floats), ``n`` runs,
    ``grid_cells`` (cells of the deterministic grid), ``runs`` per cell, ``design``."""

    columns: dict[str, np.ndarray]
    n: int
    grid_cells: int
    runs: int
    design: str


def draw(
    variations: Sequence[Variation],
    runs: int,
    seed: int,
    design: str = "random",
    correlation: Sequence[Sequence[Any]] = (),
    settings: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Draws:
    """Every run's factors: the design's unit points (``runs`` per grid cell; ``"saltelli"``: ``runs (d +
    2)`` rows, ``"morris"``: ``runs (d + 1)``, no grid; ``options``: :func:`~sims.studies.designs.points`'s)
    mapped through each variation's distribution, correlated by the copula when ``correlation`` pairs are
    given (not with ``"morris"``: its steps must move one factor), the grid's cross product outermost."""
    vs = [check_variation(v, settings) for v in variations]
    paths = [v.path for v in vs]
    dup = {p for p in paths if paths.count(p) > 1}
    if dup:
        raise ValidationError(f"variations: {sorted(dup)} varied twice (give each path once)")
    rnd = [v for v in vs if v.random]
    grid = [v for v in vs if not v.random]
    if design in STRUCTURED and grid:
        raise ValidationError(f"variations: a {design!r} design cannot be combined with 'grid' variations")
    if design == "morris" and correlation:
        raise ValidationError("variations: correlation with a 'morris' design: its steps must move one factor")
    u = points(design, runs, len(rnd), seed, **dict(options or {}))
    corr = correlation_matrix(rnd, correlation)
    if corr is not None:
        u = copula(u, corr)
    base = {v.path: from_unit(v, u[:, i], settings) for i, v in enumerate(rnd)}
    cells = list(itertools.product(*(v.values for v in grid))) or [()]
    m = u.shape[0]
    cols = {p: np.tile(x, len(cells)) for p, x in base.items()}
    for j, v in enumerate(grid):
        cols[v.path] = np.repeat(np.asarray([float(c[j]) for c in cells]), m)
    ordered = {p: cols[p] for p in paths}
    return Draws(ordered, m * len(cells), len(cells), m, design)


def _set(old, x, by: str):
    """The new per-vehicle value: ``old x`` (factor) or ``x`` (value), in ``old``'s dtype and shape."""
    old = jnp.asarray(old)
    x = jnp.asarray(x, old.dtype)
    return old * x if by == "factor" else jnp.broadcast_to(x, old.shape)


def vary_vehicle(
    base: VehicleParams,
    n: int,
    values: Mapping[str, Any],
    by: Mapping[str, str],
    also: Mapping[str, tuple] | None = None,
) -> VehicleParams:
    """The fleet of ``n`` copies of the single vehicle ``base`` with the vehicle paths of ``values`` (each
    ``(n,)``) applied (``by[path]``: ``"value"`` or ``"factor"``; ``also[path]``: further paths the same
    draw applies to).  Pure JAX in ``values`` (the studies
    differentiate through it); validated (:func:`~sims.vehicles.params.validate_params`) when concrete."""
    ch = broadcast(base.chassis, n)
    contact = broadcast_contact(base.contact, n)
    also = also or {}
    rep: dict[str, Any] = {}
    scales = {"front": ch.tire_scale_front, "rear": ch.tire_scale_rear}
    targets = [(p, q, x) for p, x in values.items() for q in (p, *also.get(p, ()))]
    for path, q, x in targets:
        tgt = resolve(q)
        if tgt.kind == "chassis":
            rep[tgt.field] = _set(rep.get(tgt.field, getattr(ch, tgt.field)), x, by[path])
        elif tgt.kind == "tire_scale":
            axle, f = tgt.field.split(".")
            for a in ("front", "rear") if axle == "both" else (axle,):
                scales[a] = scales[a]._replace(**{f: _set(getattr(scales[a], f), x, by[path])})
        elif tgt.kind == "contact":
            contact = contact._replace(**{tgt.field: _set(getattr(contact, tgt.field), x, by[path])})
        elif tgt.kind == "surface":
            ids = jnp.round(jnp.asarray(x)).astype(jnp.int32)
            contact = contact._replace(surface_ids=jnp.broadcast_to(ids[:, None], (n, 4)))
    ch = ch._replace(**rep, tire_scale_front=scales["front"], tire_scale_rear=scales["rear"])
    fleet = base._replace(chassis=ch, contact=contact)
    if all(not isinstance(x, jax.core.Tracer) for x in values.values()):
        validate_params(fleet, source="study vehicle")
    return fleet


def sampling_variations(sampling: Sampling = Sampling()) -> tuple[Variation, ...]:
    """The variations of a :class:`sims.run.fleet.Sampling` (uniform factors): payload on mass (and yaw inertia),
    friction on ``mu_x`` (and ``mu_y``) and stiffness on ``k_x`` (and ``k_y``) of both axles, one surface of
    ``sampling.surfaces`` (names or ids) under all four wheels, drawn uniformly."""
    surfaces = tuple(sampling.surfaces) if isinstance(sampling.surfaces, (tuple, list)) else (sampling.surfaces,)
    surface_ids_of(surfaces)  # names or ids, each checked (the error names the bad one); kept as given
    factors = (  # (path, range, the path that takes the same draw)
        ("vehicle.chassis.mass", sampling.mass, "vehicle.chassis.yaw_inertia"),
        ("vehicle.tire_scale.mu_x", sampling.mu, "vehicle.tire_scale.mu_y"),
        ("vehicle.tire_scale.k_x", sampling.stiffness, "vehicle.tire_scale.k_y"),
    )
    return (
        *(Variation(p, "uniform", "factor", low=r[0], high=r[1], also=(a,)) for p, r, a in factors),
        Variation("vehicle.surface", "choice", values=surfaces),
    )


def sample(base: VehicleParams, n: int, sampling: Sampling = Sampling(), seed: int = 0) -> tuple[VehicleParams, Draws]:
    """``(fleet, draws)``: ``n`` vehicles around the single vehicle ``base`` (any preset, with or without a
    driveline) varied by :func:`sampling_variations` through the studies' sampler (:func:`draw`, a random design
    of ``seed``; :func:`vary_vehicle`).  The CLI's Monte Carlo runs draw their fleets here; deterministic given
    ``seed``.  (Loops that draw a new fleet inside ``jit``, as the controller tuning does per iteration, use
    :func:`sims.run.fleet.sample_fleet`'s ``jax.random`` stream instead: a design is drawn on the host.)"""
    vs = sampling_variations(sampling)
    d = draw(vs, n, seed)
    fleet = vary_vehicle(base, n, d.columns, {v.path: v.by for v in vs}, {v.path: v.also for v in vs})
    return fleet, d


class Wrapping:
    """What a study's wrapper of a scenario (its field ``scenario``) passes through: ``name``, the lazily built
    data (``prepare``), ``settings``, ``metrics``, ``ranges`` and ``done``; a wrapper overrides what it adds
    (:class:`Varied`, :class:`sims.studies.channels.WithChannels`)."""

    scenario: Any

    @property
    def name(self) -> str:
        return self.scenario.name

    def prepare(self) -> None:
        """The wrapped scenario's lazily built data (:meth:`sims.scenarios.lap.TransientLap.prepare`)."""
        if hasattr(self.scenario, "prepare"):
            self.scenario.prepare()

    @property
    def settings(self) -> dict[str, Any]:
        return self.scenario.settings

    @property
    def metrics(self):
        return self.scenario.metrics

    @property
    def ranges(self) -> Mapping[str, Any]:
        return getattr(self.scenario, "ranges", {})

    def done(self, acc):
        fn = getattr(self.scenario, "done", None)
        return None if fn is None else fn(acc)


@dataclasses.dataclass(frozen=True)
class Varied(Wrapping):
    """A scenario whose driver fields ``driver`` (``((field, by), ...)``) are set per vehicle from the
    settings ``"driver.<field>"`` (a value or a factor on the scenario driver's own field); every other
    setting, the metrics, ``evaluate`` and ``done`` are the wrapped ``scenario``'s (the scenario protocol
    of :mod:`sims.scenarios.base`).  The driver's own validation (``DRIVER_RANGES``) checks concrete values."""

    scenario: Any
    driver: tuple = ()

    @property
    def settings(self) -> dict[str, Any]:
        extra = {f"driver.{f}": 1.0 for f, _ in self.driver}
        return {**self.scenario.settings, **extra}

    def _own(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in settings.items() if not k.startswith("driver.")}

    def setup(self, params, settings):
        s = self.scenario.setup(params, self._own(settings))
        drv = s.driver
        if self.driver:
            fields = {g.name for g in dataclasses.fields(drv)} if dataclasses.is_dataclass(drv) else set()
            missing = [f for f, _ in self.driver if f not in fields]
            if missing:
                raise ValidationError(
                    f"study: the driver of {self.name!r} ({type(drv).__name__}) has no field(s) {missing}; "
                    f"its fields: {', '.join(sorted(fields))}"
                )
            drv = dataclasses.replace(
                drv, **{f: _set(getattr(drv, f), settings[f"driver.{f}"], by) for f, by in self.driver}
            )
        return s._replace(driver=drv)

    def evaluate(self, acc, setup, settings):
        return self.scenario.evaluate(acc, setup, self._own(settings))


__all__ = [
    "DISTRIBUTIONS",
    "Varied",
    "Wrapping",
    "vary_vehicle",
    "Draws",
    "sample",
    "sampling_variations",
    "Target",
    "Variation",
    "check_variation",
    "copula",
    "correlation_matrix",
    "draw",
    "from_normal",
    "from_unit",
    "resolve",
]
