"""Pass criteria of a study and their verdicts, decided on the 95 % intervals, and a plain description.

A study file states what would make the result acceptable::

    criteria = ["p95(distance) < 60", "rate(passed) >= 0.99", "P < 1e-4", "mean(max_yaw) < 0.05"]

``<stat>(<metric>) <op> <number>``: ``stat`` a percentile the study reports (``p5``, ``p50``, ``p95``, ...:
``percentiles``), ``mean`` (a value metric), ``rate`` (a flag) or ``P`` alone (the ``[event]``'s
probability); ``op`` one of ``< <= > >=``.  Each criterion gets a verdict from the statistic's interval
(the percentile's distribution-free interval, the mean's ``+- 1.96`` standard errors, the rate's and the
event's Clopper-Pearson or estimator interval):

* ``pass``: the whole interval satisfies the inequality;
* ``fail``: the whole interval violates it;
* ``undecided``: the interval straddles the threshold (more runs would decide it), with the point estimate's
  side given.

The study's verdict is ``fail`` if any criterion fails, else ``undecided`` if any is undecided, else
``pass``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from jaxtire.validation import ValidationError
from sims.studies.events import parse_threshold
from sims.studies.table import SETTING_UNITS

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_PATTERN = re.compile(r"^\s*(p\d+(?:\.\d+)?|mean|rate)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*(<=|>=|<|>)\s*(\S+)\s*$")
_EVENT = re.compile(r"^\s*P\s*(<=|>=|<|>)\s*(\S+)\s*$")


class Criterion(NamedTuple):
    """One criterion: ``text``, ``stat`` (``"p95"``, ``"mean"``, ``"rate"``, ``"P"``), ``metric`` (``None`` for
    ``P``), ``op``, ``threshold``."""

    text: str
    stat: str
    metric: str | None
    op: str
    threshold: float


def check_criterion(text: str, metrics: Mapping[str, Any], percentiles: Sequence[float], event: bool) -> Criterion:
    """A criterion string (module docstring) checked against the study's ``metrics`` (name -> Metric),
    ``percentiles`` and whether it has an ``event``; one-line errors naming the criterion."""
    src = f"Study: criteria: {text!r}"
    if not isinstance(text, str):
        raise ValidationError(f'Study: criteria: {text!r} must be a string such as "p95(distance) < 60"')
    ev = _EVENT.match(text)
    if ev:
        if not event:
            raise ValidationError(f"{src}: 'P' is the [event]'s probability; the study has no [event]")
        return Criterion(text.strip(), "P", None, ev.group(1), parse_threshold(ev.group(2), src))
    hit = _PATTERN.match(text)
    if hit is None:
        raise ValidationError(
            f"{src} is not '<stat>(<metric>) <op> <number>' (stat p<q>, mean, rate; op < <= > >=) or 'P < <number>'"
        )
    stat, name, op, num = hit.groups()
    if name not in metrics:
        raise ValidationError(f"{src}: {name!r} is not a metric of the study ({', '.join(metrics)})")
    kind = metrics[name].kind
    if stat == "rate" and kind != "flag":
        raise ValidationError(f"{src}: rate() takes a flag; {name!r} is a value (use mean or a percentile)")
    if stat != "rate" and kind == "flag":
        raise ValidationError(f"{src}: {name!r} is a flag: use rate({name})")
    if stat.startswith("p") and float(stat[1:]) not in [float(q) for q in percentiles]:
        raise ValidationError(f"{src}: {stat} is not one of the study's percentiles {list(percentiles)}")
    return Criterion(text.strip(), stat, name, op, parse_threshold(num, src))


def _interval(c: Criterion, summary: Mapping[str, Any]) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of the criterion's statistic in a study summary."""
    if c.stat == "P":
        e = summary["event"]
        return e["p"], e["low"], e["high"]
    s = summary["statistics"][c.metric]
    if c.stat == "rate":
        return s["rate"], s["low"], s["high"]
    if c.stat == "mean":
        half = 1.959963984540054 * s["sem"]
        return s["mean"], s["mean"] - half, s["mean"] + half
    key = next(k for k in s["percentiles"] if float(k[1:]) == float(c.stat[1:]))
    p = s["percentiles"][key]
    return p["value"], p["low"], p["high"]


def verdict(c: Criterion, summary: Mapping[str, Any]) -> dict[str, Any]:
    """``{text, estimate, low, high, verdict, note}`` of one criterion (module docstring)."""
    if c.stat != "P" and c.metric not in summary.get("statistics", {}):
        nan = math.nan
        note = "no statistics of the metric (a rare-event estimator's rows are not a population sample)"
        return dict(text=c.text, estimate=nan, low=nan, high=nan, verdict="undecided", note=note)
    est, low, high = (float(x) if x is not None else math.nan for x in _interval(c, summary))
    ok = _OPS[c.op]
    if math.isnan(low) or math.isnan(high):
        v, note = "undecided", "no interval (too few runs or no finite value)"
    elif ok(low, c.threshold) and ok(high, c.threshold):
        v, note = "pass", "the whole 95 % interval meets it"
    elif not ok(low, c.threshold) and not ok(high, c.threshold):
        v, note = "fail", "the whole 95 % interval misses it"
    else:
        side = "meets" if not math.isnan(est) and ok(est, c.threshold) else "misses"
        v, note = "undecided", f"the interval straddles {c.threshold:g}; the estimate {side} it: more runs decide"
    return dict(text=c.text, estimate=est, low=low, high=high, verdict=v, note=note)


def verdicts(criteria: Sequence[Criterion], summary: Mapping[str, Any]) -> dict[str, Any]:
    """``{verdict, criteria: [...]}``: every criterion's verdict and the study's (module docstring)."""
    rows = [verdict(c, summary) for c in criteria]
    vs = {r["verdict"] for r in rows}
    overall = "fail" if "fail" in vs else "undecided" if "undecided" in vs else "pass"
    return dict(verdict=overall if rows else None, criteria=rows)


def _distribution(v) -> str:
    """A variation's distribution in words."""
    g = lambda x: f"{x:g}"  # noqa: E731
    if v.dist == "uniform":
        return f"uniform {g(v.low)}..{g(v.high)}" if v.low is not None and v.high is not None else "uniform"
    if v.dist in ("normal", "lognormal"):
        centre = (
            f"mean {g(v.mean or 0.0)} sd {g(v.sd or 1.0)}"
            if v.dist == "normal"
            else (f"median {g(v.median or 1.0)} sigma {g(v.sigma or 1.0)}")
        )
        cut = f" within [{g(v.low)}, {g(v.high)}]" if v.low is not None and v.high is not None else ""
        return f"{v.dist} {centre}{cut}"
    return f"{'one' if v.dist == 'choice' else 'each'} of {list(v.values)}"


def describe(study, summary: Mapping[str, Any]) -> str:
    """One paragraph saying what the study ran: scenario and vehicle, the fixed settings, what was varied and
    how, the runs and design, the event or limit search (for the report's first lines)."""
    veh = f"the {study.preset.replace('_', ' ')} preset"
    if study.tire:
        veh += f" on the tire {study.tire}"
    if study.surface:
        veh += f" on {study.surface.replace('_', ' ')}"
    parts = [f"Scenario {study.scenario} with {veh}"]
    if study.settings:
        unit = lambda k: "" if SETTING_UNITS.get(k, "-") == "-" else " " + SETTING_UNITS[k]  # noqa: E731
        kmh = lambda k, v: f" ({v * 3.6:.0f} km/h)" if SETTING_UNITS.get(k) == "m/s" else ""  # noqa: E731
        parts.append("settings " + ", ".join(f"{k} = {v:g}{unit(k)}{kmh(k, v)}" for k, v in study.settings.items()))
    if study.options:
        parts.append("options " + ", ".join(f"{k} = {v}" for k, v in study.options.items()))
    text = "; ".join(parts) + "."
    vary = []
    for v in study.vary:
        how = _distribution(v)
        paths = " and ".join([v.path, *v.also])
        vary.append(f"{paths} ({how}{', a factor on the nominal value' if v.by == 'factor' else ''})")
    if vary:
        text += " Varied: " + "; ".join(vary) + "."
    text += f" {summary['runs']} runs, design {study.design}, seed {study.seed}."
    if study.event:
        text += f" Failure event: {study.event.get('when')} ({study.event.get('estimator', 'monte_carlo')})."
    if getattr(study, "limit", None):
        text += f" Limit search of {study.limit.get('setting', 'speed')} per vehicle."
    return text


__all__ = ["Criterion", "check_criterion", "describe", "verdict", "verdicts"]
