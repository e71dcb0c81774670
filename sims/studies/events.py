"""Failure events of a study: a metric and a threshold, its probability with an interval, by plain Monte
Carlo or a rare-event estimator (:mod:`sims.studies.rare`).

A study file names the event in an ``[event]`` table::

    [event]
    when = "distance > 60"      # "<metric> <op> <number>" (op: > >= < <=), a flag ("spun"), "not <flag>"
    estimator = "subset"        # monte_carlo (default), cross_entropy, form, subset
    target = 0.1                # stop once the 95 % interval's relative half-width is <= 0.1 (0: spend runs)
    batch = 1000                # vehicles per batch (per level of the rare-event estimators)
    level = 0.1                 # conditional probability per intermediate level (cross_entropy, subset)

The study's ``runs`` is the budget of vehicle runs.  The *limit state* of an event is negative on failure:
``g = t - m`` for ``m > t`` and ``m >= t``, ``g = m - t`` for ``m < t`` and ``m <= t``; a flag ``f`` is
``f > 0.5`` and ``not f`` is ``f < 0.5``.  A strict inequality turns the tie ``m = t`` into a tiny positive
``g`` (an integer metric such as ``cone_hits > 0`` fails from 1 hit on, not at 0).

With ``estimator = "monte_carlo"`` the study runs its design as always, in chunks of ``batch`` vehicles,
and stops early once ``target`` is met; the event's probability is the share of failed rows with the
Clopper-Pearson interval (a ``"saltelli"`` design counts its independent ``A`` and ``B`` rows only).  The
other estimators sample the study's random factors in their standard-normal space
(:func:`sims.studies.variation.from_normal`: the distributions and the copula mapped through) and run only
the vehicles they ask for; ``form`` needs a smooth metric (its design point comes from the metric's
pathwise gradient), ``cross_entropy`` and ``subset`` need a continuous one (a flag has no levels to climb:
use e.g. a peak yaw or sideslip metric with its threshold).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from jaxtire.validation import ValidationError, check_choice, check_int, check_range
from sims.studies import rare

#: The estimators a study can name, and the function of :mod:`sims.studies.rare` behind each.
ESTIMATORS = {
    "monte_carlo": rare.monte_carlo,
    "cross_entropy": rare.cross_entropy,
    "form": rare.form_importance,
    "subset": rare.subset_simulation,
}
_KEYS = ("when", "estimator", "target", "batch", "level")
_OPS = (">=", "<=", ">", "<")
_PATTERN = re.compile(r"^\s*(not\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:(>=|<=|>|<)\s*(\S+))?\s*$")
#: ``g`` of a tie under a strict inequality (not a failure).
TIE = 1e-9


class Event(NamedTuple):
    """A failure event: ``metric`` ``op`` ``threshold`` (``when`` the text it came from), estimated by
    ``estimator`` with batches of ``batch`` vehicles until the relative half-width ``target`` (0: the budget),
    ``level`` the intermediate levels' conditional probability."""

    when: str
    metric: str
    op: str
    threshold: float
    estimator: str = "monte_carlo"
    target: float = 0.0
    batch: int = 1000
    level: float = 0.1

    def limit_state(self, values):
        """``g`` (negative: failure) of the metric ``values`` (numpy or JAX arrays; module docstring)."""
        xp = np if isinstance(values, (np.ndarray, float, int)) else _jnp()
        m, t = values, self.threshold
        if self.op == ">=":
            return t - m
        if self.op == "<=":
            return m - t
        g = t - m if self.op == ">" else m - t
        return xp.where(g < 0, g, xp.maximum(g, TIE))

    def failed(self, values) -> np.ndarray:
        """Whether each value of the metric is a failure (``g <= 0``)."""
        return np.asarray(self.limit_state(np.asarray(values, np.float64))) <= 0.0


def _jnp():
    import jax.numpy as jnp  # (JAX arrays only: the event module itself is numpy)

    return jnp


def parse_threshold(text: str, source: str) -> float:
    """The number of a threshold written in a study file's string (an event's, a criterion's), finite."""
    try:
        v = float(text)
    except ValueError:
        raise ValidationError(f"{source}: threshold {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ValidationError(f"{source}: the threshold must be finite")
    return v


def check_event(d: Mapping[str, Any] | Event, metrics: Mapping[str, Any], source: str = "Study: event") -> Event:
    """The :class:`Event` of a study file's ``[event]`` table ``d`` (module docstring), its metric one of
    ``metrics`` (name -> :class:`sims.scenarios.base.Metric`)."""
    if isinstance(d, Event):
        d = d._asdict()
        d.pop("metric"), d.pop("op"), d.pop("threshold")
    if not isinstance(d, Mapping):
        raise ValidationError(f'{source} must be a table (when = "distance > 60", estimator = ...), got {d!r}')
    unknown = set(d) - set(_KEYS)
    if unknown:
        raise ValidationError(f"{source}: unknown key(s) {sorted(unknown)}; allowed {list(_KEYS)}")
    when = d.get("when")
    if not isinstance(when, str):
        raise ValidationError(f'{source}: when = {when!r} must be a string such as "distance > 60" or "spun"')
    hit = _PATTERN.match(when)
    if hit is None:
        raise ValidationError(
            f"{source}: when = {when!r} is not '<metric> <op> <number>' (op one of {' '.join(_OPS)}), "
            "'<flag>' or 'not <flag>'"
        )
    negate, name, op, num = hit.groups()
    if name not in metrics:
        raise ValidationError(
            f"{source}: when = {when!r}: {name!r} is not a metric of the scenario ({', '.join(metrics)})"
        )
    kind = metrics[name].kind
    if op is None:
        if kind != "flag":
            raise ValidationError(f"{source}: when = {when!r}: {name!r} is a value; give a threshold ({name} > ...)")
        op, threshold = ("<" if negate else ">"), 0.5
    else:
        if negate:
            raise ValidationError(f"{source}: when = {when!r}: 'not' applies to a flag alone ('not passed')")
        threshold = parse_threshold(num, f"{source}: when = {when!r}")
    estimator = d.get("estimator", "monte_carlo")
    if not isinstance(estimator, str):
        raise ValidationError(f"{source}: estimator = {estimator!r} must be a string")
    check_choice("estimator", estimator, tuple(ESTIMATORS), source=source)
    target = d.get("target", 0.0)
    if isinstance(target, bool) or not isinstance(target, (int, float)):
        raise ValidationError(f"{source}: target = {target!r} must be a number")
    check_range("target", float(target), 0.0, 10.0, source=source)
    batch = d.get("batch", 1000)
    check_int("batch", batch, 10, 10_000_000, source=source)
    level = d.get("level", 0.1)
    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise ValidationError(f"{source}: level = {level!r} must be a number")
    check_range("level", float(level), 0.0, 0.5, lo_incl=False, source=source)
    if estimator == "subset" and round(batch * level) * round(1.0 / level) != batch:
        raise ValidationError(
            f"{source}: batch = {batch} must be a multiple of 1 / level = {round(1.0 / level)} (subset simulation's chains)"
        )
    if estimator == "form" and not metrics[name].smooth:
        raise ValidationError(
            f"{source}: estimator 'form' needs a smooth metric (its design point follows the pathwise gradient); "
            f"{name!r} is not: use cross_entropy or subset, or a smooth metric"
        )
    if estimator in ("cross_entropy", "subset") and kind == "flag":
        raise ValidationError(
            f"{source}: estimator {estimator!r} climbs levels of a continuous metric; {name!r} is a flag: "
            "use a value metric with a threshold (e.g. a peak yaw or sideslip) or monte_carlo"
        )
    return Event(when.strip(), name, op, threshold, estimator, float(target), int(batch), float(level))


def estimate(event: Event, limit_state, dim: int, runs: int, seed: int) -> rare.Estimate:
    """The event's probability by its rare-event estimator on ``limit_state`` (a :class:`rare.LimitState` in
    ``dim`` standard-normal factors), at most about ``runs`` evaluations (the estimators finish the level or
    batch they are in), ``seed`` its random stream."""
    fn: Callable[..., rare.Estimate] = ESTIMATORS[event.estimator]  # type: ignore[assignment]
    kw: dict[str, Any] = dict(n=event.batch, seed=seed, target=event.target, max_runs=runs)
    if event.estimator == "cross_entropy":
        kw["rho"] = event.level
    elif event.estimator == "subset":
        kw["p0"] = event.level
    return fn(limit_state, dim, **kw)


def summary(event: Event, est: rare.Estimate, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``event`` section of a study's ``summary.json``: the event (``when``, its ``metric``, ``op`` and
    ``threshold``), estimator,
    ``p``, ``se``, the 95 % interval, its relative half-width, runs, effective sample size, levels and the
    history ``[[runs, p, low, high], ...]``."""
    out: dict[str, Any] = dict(
        when=event.when,
        metric=event.metric,
        op=event.op,
        threshold=event.threshold,
        estimator=event.estimator,
        method=est.method,
        p=est.p,
        se=est.se,
        low=est.low,
        high=est.high,
        half_width=est.half_width,
        target=event.target,
        runs=est.runs,
        ess=est.ess,
        levels=list(est.levels),
        history=[list(h) for h in est.history],
    )
    out.update(extra or {})
    return out


__all__ = ["ESTIMATORS", "Event", "TIE", "check_event", "estimate", "parse_threshold", "summary"]
