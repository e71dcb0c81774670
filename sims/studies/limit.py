"""The limit search as a study: per vehicle of the design, the highest value of a setting at which the
scenario passes (:func:`sims.scenarios.limit.limit_search`), with percentile intervals over the fleet.

A study file asks for it with a ``[limit]`` table::

    [limit]
    setting = "speed"      # the scenario setting searched (default "speed")
    low = 15.0             # the bracket [SI units]: low should pass, high fail
    high = 30.0
    tol = 0.1              # the bracket's width at the end (default 0.5 km/h for a speed, else 1 % of high - low)
    max_iter = 20

Each row is then one vehicle of the design and its metrics are ``limit`` (the highest value that passed,
``nan`` when ``low`` already fails) and ``limit_fail`` (the lowest value above it that failed, ``inf`` when
``high`` passes): the limit lies between them, within ``tol``.  Their percentiles with distribution-free
intervals, histograms and convergence are the study's usual statistics; an ``[event]`` may use them
(``when = "limit < 20"``).  The searched setting must not be varied or fixed in ``[settings]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxtire.validation import ValidationError, check_int
from sims.scenarios.base import Metric
from sims.scenarios.limit import limit_search

_KEYS = ("setting", "low", "high", "tol", "max_iter")


def check_limit(
    d: Mapping[str, Any], scenario, settings: Mapping[str, Any], varied, source: str = "Study: limit"
) -> dict:
    """The ``[limit]`` table ``d`` with its defaults (module docstring), checked against ``scenario``'s
    settings, the study's fixed ``settings`` and ``varied`` paths."""
    if not isinstance(d, Mapping):
        raise ValidationError(f"{source} must be a table (setting, low, high, tol, max_iter), got {d!r}")
    unknown = set(d) - set(_KEYS)
    if unknown:
        raise ValidationError(f"{source}: unknown key(s) {sorted(unknown)}; allowed {list(_KEYS)}")
    setting = d.get("setting", "speed")
    if not isinstance(setting, str) or setting not in scenario.settings:
        raise ValidationError(
            f"{source}: setting = {setting!r} is not a setting of {scenario.name!r} ({', '.join(scenario.settings)})"
        )
    if setting in settings or f"scenario.{setting}" in varied:
        raise ValidationError(f"{source}: the searched setting {setting!r} cannot also be fixed or varied")
    vals = {}
    for key in ("low", "high"):
        v = d.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
            raise ValidationError(f"{source}: {key} = {v!r} must be a finite number (the bracket, SI units)")
        vals[key] = float(v)
    if not vals["low"] < vals["high"]:
        raise ValidationError(f"{source}: low = {vals['low']:g} must be below high = {vals['high']:g} (swap them?)")
    tol = d.get("tol", 0.5 / 3.6 if "speed" in setting else 0.01 * (vals["high"] - vals["low"]))
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < float(tol) < vals["high"] - vals["low"]:
        raise ValidationError(f"{source}: tol = {tol!r} must be a positive number below high - low")
    max_iter = d.get("max_iter", 20)
    check_int("max_iter", max_iter, 1, 100, source=source)
    return dict(setting=setting, low=vals["low"], high=vals["high"], tol=float(tol), max_iter=int(max_iter))


def limit_metrics(limit: Mapping[str, Any]) -> dict[str, Metric]:
    """The metrics of a limit-search study (module docstring), in the searched setting's unit."""
    s = limit["setting"]
    unit = "m/s" if "speed" in s else "-"
    return {
        "limit": Metric("limit", unit, "value", False, f"highest {s} that passed (nan: none from low)"),
        "limit_fail": Metric(
            "limit_fail", unit, "value", False, f"lowest {s} above it that failed (inf: none to high)"
        ),
    }


def run_limit(limit: Mapping[str, Any], scenario, params, settings: Mapping[str, Any], **run_kw):
    """``({"limit", "limit_fail"}, RunStats)`` of the fleet ``params`` (one limit search over all of it)."""
    s = limit["setting"]
    res = limit_search(
        scenario,
        params,
        limit["low"],
        limit["high"],
        setting=s,
        settings={k: v for k, v in settings.items() if k != s},
        tol=limit["tol"],
        max_iter=limit["max_iter"],
        **run_kw,
    )
    return {"limit": np.asarray(res.passed_value), "limit_fail": np.asarray(res.failed_value)}, res.stats


__all__ = ["check_limit", "limit_metrics", "run_limit"]
