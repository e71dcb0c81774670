"""The limit search: per vehicle, the highest value of a setting (the entry speed) at which a scenario passes.

As a CarMaker TestManager limit search, by bisection, but over the whole fleet at once: every iteration
is one :func:`~sims.scenarios.base.run_scenario` of the fleet with each vehicle at the midpoint of its
own bracket (one compiled program, reused), and each vehicle's bracket halves::

    lo_i passes, hi_i fails;  m_i = (lo_i + hi_i) / 2;  passes(m_i) ? lo_i = m_i : hi_i = m_i

until every bracket is narrower than ``tol`` (or ``max_iter``).  The ends are run first: a vehicle that
fails already at ``low`` has no passing value (``passed_value = nan``), one that passes at ``high`` has
no failing value (``failed_value = inf``, ``passed_value = high``).  The result is a bracket per
vehicle, a pass just below and a fail just above the limit; pass/fail need not be monotonic in the
setting, so the bisection finds *a* limit within the bracket, the standard's way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from jaxtire.validation import ValidationError, check_int
from sims.run.fleet import RunStats, fleet_size
from sims.scenarios.base import resolve_scenario, run_scenario
from sims.scenarios.config import check_speed
from sims.vehicles.params import VehicleParams


class LimitResult(NamedTuple):
    """Per vehicle (numpy ``(n,)``): ``passed_value`` the highest value run that passed (``nan``: none),
    ``failed_value`` the lowest value above it that failed (``inf``: none up to ``high``); ``runs`` the
    fleet runs made, ``history`` ``[(values (n,), passed (n,)), ...]`` in order, ``stats`` their summed
    :class:`~sims.run.fleet.RunStats`."""

    passed_value: np.ndarray
    failed_value: np.ndarray
    runs: int
    history: list
    stats: RunStats


def limit_search(
    scenario,
    params: VehicleParams,
    low,
    high,
    *,
    setting: str = "speed",
    settings: Mapping[str, Any] | None = None,
    tol: float = 0.5 / 3.6,
    max_iter: int = 20,
    **run_kw,
) -> LimitResult:
    """Bisect ``setting`` of ``scenario`` (an object or a catalogue name) between ``low`` and ``high``
    (scalars or per vehicle) for every vehicle of the fleet ``params`` (module docstring) to a bracket
    narrower than ``tol``; ``settings``: the other settings; ``run_kw``: the keywords of
    :func:`~sims.scenarios.base.run_scenario` (``devices``, ``chunk_steps``, ``compiler_options``, ...)."""
    sc = resolve_scenario(scenario)
    src = f"limit_search({sc.name!r})"
    if setting not in sc.settings:
        raise ValidationError(
            f"{src}: setting = {setting!r} is not a setting of the scenario; it has {sorted(sc.settings)}"
        )
    if settings and setting in settings:
        raise ValidationError(f"{src}: settings must not contain the searched setting {setting!r} (give low and high)")
    check_int("max_iter", max_iter, 1, 100, source=src)
    n = fleet_size(params)
    lo = np.broadcast_to(np.asarray(low, float), (n,)).copy()
    hi = np.broadcast_to(np.asarray(high, float), (n,)).copy()
    if "speed" in setting:
        check_speed("low", lo, src)
        check_speed("high", hi, src)
    if np.any(lo >= hi):
        i = int(np.argmax(lo >= hi))
        raise ValidationError(f"{src}: low = {lo[i]:g} must be below high = {hi[i]:g} (low > high: swap them)")
    if not (np.isfinite(tol) and tol > 0):
        raise ValidationError(f"{src}: tol = {tol!r} must be a positive number (same unit as {setting})")
    history: list = []
    totals = [0.0, 0.0, 0, 0.0]

    def run(values):
        m, st = run_scenario(sc, params, {**(settings or {}), setting: values}, **run_kw)
        ok = np.asarray(m["passed"]) > 0.5
        history.append((values.copy(), ok))
        totals[0] += st.compile_s
        totals[1] += st.run_s
        totals[2] += st.steps
        totals[3] += st.vehicle_steps_per_s * st.run_s
        return ok

    ok_lo, ok_hi = run(lo), run(hi)
    passed = np.where(ok_lo, lo, np.nan)
    failed = np.where(ok_lo, np.where(ok_hi, np.inf, hi), lo)
    passed = np.where(ok_lo & ok_hi, hi, passed)
    active = ok_lo & ~ok_hi
    for _ in range(max_iter):
        if not np.any(active & (failed - passed > tol)):
            break
        mid = np.where(active, 0.5 * (passed + failed), np.where(np.isfinite(passed), passed, lo))
        ok = run(mid)
        passed = np.where(active & ok, mid, passed)
        failed = np.where(active & ~ok, mid, failed)
    stats = RunStats(totals[0], totals[1], int(totals[2]), n, totals[3] / max(totals[1], 1e-9))
    return LimitResult(passed, failed, len(history), history, stats)
