"""Honest statistics of a Monte Carlo study: every estimate with its 95 % interval, and flags where the
runs are too few to give one.

Per *value* metric (continuous): ``n``, the mean with its standard error ``s / sqrt(n)`` (``s`` the sample
standard deviation, ``n - 1`` in the denominator) and the Student-t interval ``mean +- t_{0.975, n-1} s /
sqrt(n)``, and each asked percentile ``p`` with a **distribution-free** interval from order statistics:
with the sorted values ``x_(1) <= ... <= x_(n)`` and ``B ~ Binomial(n, p)`` the number of runs below the
true quantile ``xi_p``,

    P(x_(l) <= xi_p < x_(u)) = P(l <= B <= u - 1) = F_B(u - 1) - F_B(l - 1)

for any ranks ``l < u``; :func:`quantile_interval` takes ``l = F_B^{-1}(alpha / 2)`` and ``u = F_B^{-1}(1 -
alpha / 2) + 1``, the narrowest equal-tailed pair whose coverage is at least ``1 - alpha`` for every
continuous distribution (e.g. Hahn & Meeker, *Statistical Intervals*, 1991, section 5.2).  Its exact
coverage (``coverage`` in the output) is reported: it is above 95 % by the binomial's discreteness (0.96
at n = 100, 0.951 at n = 10 000).  When ``l < 1`` or ``u > n`` the runs are too few for that percentile:
the interval is open on that side (``-inf`` / ``inf``) and the percentile is flagged ``"too_few_runs"``
(the rule: more than ``log(alpha/2) / log(1 - min(p, 1 - p))`` runs, 72 for p5 / p95).

Per *flag* metric (0/1, e.g. ``passed``, ``spun``): the rate ``k / n`` with the Clopper-Pearson interval
``[Beta^{-1}(alpha/2; k, n - k + 1), Beta^{-1}(1 - alpha/2; k + 1, n - k)]`` (exact, conservative), and for
``k = 0`` (or ``k = n``) additionally the one-sided 95 % bound ``1 - alpha^{1/n}`` (about ``3 / n``, the
"rule of three").

Every interval above assumes independent runs.  A study's rows are not all that: a Saltelli design's
``A_B^(i)`` rows copy ``d - 1`` coordinates of its ``A`` rows, a Morris trajectory moves one factor at a
time.  A study therefore adds only the rows that are independent draws of the factors
(:func:`sims.studies.designs.population_rows`: the ``2 n`` rows ``A`` and ``B`` of a Saltelli design, the
first row of each Morris trajectory, every row of the other designs) and ``summary.json``'s ``population``
says which (``rows`` of ``of``, ``method``).  Counted over all ``n (d + 2)`` rows, a Saltelli study's
percentile intervals held the true quantile in 85 % of synthetic studies instead of 96 %
(``tests/sims/studies/test_statistics.py``).  The ``A`` and ``B`` rows are the two halves of one
scrambled Sobol' sequence: each row uniform, the rows negatively dependent (stratified), so for a smooth
metric the intervals are conservative (as for ``design = "sobol"``).

Streaming (:class:`Accumulator`): a study too large for memory adds its metrics chunk by chunk.  The
moments are exact and mergeable (count, mean, sum of squared deviations, combined by Chan et al.'s
pairwise update, in float64); for the order statistics each chunk's values are **kept** (float32 copies,
4 bytes per vehicle and metric: 400 MB for 10^8 vehicles) rather than summarised in an approximate
sketch, so every percentile and its interval are exact.  Non-finite values (a vehicle that never
stopped: ``inf``) are counted separately (``n_nonfinite``) and left out of the moments; percentiles use
them (``inf`` sorts last).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special
from scipy import stats as sps

from jaxtire.validation import ValidationError

#: Default percentiles [%] of every value metric.
PERCENTILES = (5.0, 50.0, 95.0)
#: Confidence level of every interval.
CONFIDENCE = 0.95
#: Fewer runs than this: the mean's interval is flagged (the t interval leans on the central limit theorem).
MIN_RUNS_MEAN = 30


def check_percentiles(percentiles: Sequence[float], source: str = "percentiles") -> tuple[float, ...]:
    """The percentiles as floats, each in (0, 100) exclusive, else a ``ValidationError``."""
    out = []
    for p in percentiles:
        v = float(p)
        if not 0.0 < v < 100.0:
            raise ValidationError(f"{source}: percentile {p!r} is outside (0, 100) (give percent, e.g. 95)")
        out.append(v)
    return tuple(out)


def quantile_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """``(l, u, coverage)``: the 1-based order-statistic ranks of the distribution-free interval
    ``[x_(l), x_(u)]`` for the quantile ``q`` in (0, 1) of ``n`` runs, and its exact coverage
    ``F_B(u - 1) - F_B(l - 1)`` (``B ~ Binomial(n, q)``; module docstring).  ``l`` may be 0 and ``u`` may be
    ``n + 1`` (too few runs: that side is open, the coverage then counts it as infinite)."""
    alpha = 1.0 - confidence
    b = sps.binom(n, q)
    lo = int(b.ppf(alpha / 2.0))
    hi = int(b.ppf(1.0 - alpha / 2.0)) + 1
    lo, hi = max(lo, 0), min(hi, n + 1)
    cover = float((1.0 if hi > n else b.cdf(hi - 1)) - (0.0 if lo < 1 else b.cdf(lo - 1)))
    return lo, hi, cover


def quantile_interval(sorted_x: np.ndarray, q: float, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """The ``q`` quantile (0 < q < 1) of the sorted sample ``sorted_x`` (linear interpolation, numpy's
    default) with its distribution-free interval (:func:`quantile_ranks`); a dict ``value, low, high,
    coverage, flag`` (``flag`` ``None`` or ``"too_few_runs"``)."""
    n = int(sorted_x.shape[0])
    if n == 0:
        return dict(value=math.nan, low=math.nan, high=math.nan, coverage=math.nan, flag="no_runs")
    lo, hi, cover = quantile_ranks(n, q, confidence)
    pos = q * (n - 1)
    i = int(math.floor(pos))
    j = min(i + 1, n - 1)
    a, b = float(sorted_x[i]), float(sorted_x[j])
    value = a if a == b else a + (pos - i) * (b - a)
    low = float(sorted_x[lo - 1]) if lo >= 1 else -math.inf
    high = float(sorted_x[hi - 1]) if hi <= n else math.inf
    flag = None if (lo >= 1 and hi <= n) else "too_few_runs"
    return dict(value=value, low=low, high=high, coverage=cover, flag=flag)


def rate_interval(k: int, n: int, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """Rate ``k / n`` with its Clopper-Pearson interval and, for ``k = 0`` (``k = n``), the one-sided upper
    (lower) bound ``1 - alpha^{1/n}`` (``alpha^{1/n}``); a dict ``k, n, rate, low, high, upper_one_sided,
    lower_one_sided, flag``."""
    alpha = 1.0 - confidence
    if n == 0:
        nan = math.nan
        return dict(k=0, n=0, rate=nan, low=nan, high=nan, upper_one_sided=nan, lower_one_sided=nan, flag="no_runs")
    low = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha / 2.0))
    high = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - alpha / 2.0))
    up = 1.0 - alpha ** (1.0 / n) if k == 0 else None
    dn = alpha ** (1.0 / n) if k == n else None
    return dict(k=int(k), n=int(n), rate=k / n, low=low, high=high, upper_one_sided=up, lower_one_sided=dn, flag=None)


def _moments(x: np.ndarray) -> tuple[int, float, float]:
    """``(count, mean, M2)`` of the finite values of ``x`` in float64 (``M2 = sum (x - mean)^2``)."""
    x = x[np.isfinite(x)].astype(np.float64, copy=False)
    n = int(x.size)
    if n == 0:
        return 0, 0.0, 0.0
    m = float(x.mean())
    return n, m, float(np.square(x - m).sum())


def merge_moments(a: tuple[int, float, float], b: tuple[int, float, float]) -> tuple[int, float, float]:
    """Chan, Golub & LeVeque's pairwise update of ``(count, mean, M2)``: the moments of the union, exact."""
    na, ma, sa = a
    nb, mb, sb = b
    n = na + nb
    if n == 0:
        return 0, 0.0, 0.0
    d = mb - ma
    return n, ma + d * nb / n, sa + sb + d * d * na * nb / n


class Accumulator:
    """Statistics of a study built chunk by chunk (module docstring): ``add(metrics)`` with a dict of
    per-vehicle arrays (one chunk), ``merge(other)`` (another host's or chunk's accumulator), ``summary()``.

    ``kinds``: metric name -> ``"value"`` or ``"flag"`` (from the scenario's :class:`Metric` table)."""

    def __init__(self, kinds: Mapping[str, str], percentiles=PERCENTILES, confidence: float = CONFIDENCE):
        for name, kind in kinds.items():
            if kind not in ("value", "flag"):
                raise ValidationError(f"Accumulator: metric {name!r} kind = {kind!r} is not 'value' or 'flag'")
        self.kinds = dict(kinds)
        self.percentiles = check_percentiles(percentiles)
        self.confidence = float(confidence)
        self.moments = {k: (0, 0.0, 0.0) for k in kinds}
        self.nonfinite = dict.fromkeys(kinds, 0)
        self.events = dict.fromkeys(kinds, 0)
        self.chunks: dict[str, list[np.ndarray]] = {k: [] for k in kinds}
        self.n = 0

    def add(self, metrics: Mapping[str, Any]) -> Accumulator:
        """Add one chunk (every metric of ``kinds`` an array of the same length); returns ``self``."""
        sizes = {np.shape(np.asarray(metrics[k]))[0] for k in self.kinds}
        if len(sizes) != 1:
            raise ValidationError(f"Accumulator.add: the metrics of one chunk differ in length: {sorted(sizes)}")
        for k, kind in self.kinds.items():
            x = np.asarray(metrics[k]).reshape(-1)
            if kind == "flag":
                self.events[k] += int(np.count_nonzero(x))
            else:
                x32 = x.astype(np.float32)
                self.moments[k] = merge_moments(self.moments[k], _moments(x))
                self.nonfinite[k] += int(x.size - np.count_nonzero(np.isfinite(x32)))
                self.chunks[k].append(x32)
        self.n += sizes.pop()
        return self

    def merge(self, other: Accumulator) -> Accumulator:
        """Fold ``other`` (same metrics) into ``self``; returns ``self``."""
        if other.kinds != self.kinds:
            raise ValidationError("Accumulator.merge: the two accumulators have different metrics")
        for k in self.kinds:
            self.moments[k] = merge_moments(self.moments[k], other.moments[k])
            self.nonfinite[k] += other.nonfinite[k]
            self.events[k] += other.events[k]
            self.chunks[k].extend(other.chunks[k])
        self.n += other.n
        return self

    def values(self, name: str) -> np.ndarray:
        """Every kept value of the value metric ``name`` (float32, run order)."""
        parts = self.chunks[name]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per metric a JSON-ready dict (:func:`summarise_value` / :func:`rate_interval` with ``kind``)."""
        out: dict[str, dict[str, Any]] = {}
        for k, kind in self.kinds.items():
            if kind == "flag":
                out[k] = dict(kind="flag", **rate_interval(self.events[k], self.n, self.confidence))
            else:
                out[k] = summarise_value(
                    self.values(k),
                    self.percentiles,
                    self.confidence,
                    moments=self.moments[k],
                )
        return out


def summarise_value(x, percentiles=PERCENTILES, confidence: float = CONFIDENCE, *, moments=None) -> dict[str, Any]:
    """Statistics of one value metric ``x`` (module docstring): ``n``, ``n_nonfinite``, ``mean``, ``std``,
    ``sem``, ``mean_low`` / ``mean_high``, ``percentiles`` (``"p5": {value, low, high, coverage, flag}``)
    and ``flags`` (what is not computed from enough runs).  ``moments``: precomputed ``(count, mean, M2)``
    of the finite values (:class:`Accumulator`)."""
    x = np.asarray(x).reshape(-1)
    n_f, mean, m2 = _moments(x) if moments is None else moments
    flags = []
    std = math.sqrt(m2 / (n_f - 1)) if n_f >= 2 else math.nan
    sem = std / math.sqrt(n_f) if n_f >= 2 else math.nan
    if n_f >= 2:
        t = float(sps.t.ppf(0.5 + confidence / 2.0, n_f - 1))
        m_lo, m_hi = mean - t * sem, mean + t * sem
    else:
        m_lo = m_hi = math.nan
        flags.append("mean: fewer than 2 finite runs, no standard error")
    if 2 <= n_f < MIN_RUNS_MEAN:
        flags.append(f"mean: only {n_f} finite runs (< {MIN_RUNS_MEAN}), the t interval is approximate")
    xs = np.sort(x)
    pct = {}
    for p in percentiles:
        d = quantile_interval(xs, p / 100.0, confidence)
        pct[f"p{p:g}"] = d
        if d["flag"]:
            flags.append(f"p{p:g}: {d['flag']} ({x.size} runs; its interval is open on one side)")
    return dict(
        kind="value",
        n=int(x.size),
        n_nonfinite=int(x.size - n_f),
        mean=mean if n_f else math.nan,
        std=std,
        sem=sem,
        mean_low=m_lo,
        mean_high=m_hi,
        percentiles=pct,
        flags=flags,
    )


def summarise(metrics: Mapping[str, Any], kinds: Mapping[str, str], percentiles=PERCENTILES, **kw) -> dict:
    """Statistics of a whole study held in memory: :class:`Accumulator` with one chunk."""
    return Accumulator(kinds, percentiles, **kw).add(metrics).summary()


def convergence(x, kind: str, n_points: int = 12, q: float = 0.5, confidence: float = CONFIDENCE) -> dict[str, list]:
    """Estimate and interval against the number of runs ``n`` (the first ``n`` runs, ``n`` on a geometric
    grid up to ``len(x)``): the mean (value metrics, with its t interval), the ``q`` quantile with its
    order-statistic interval, or the rate (flag metrics, Clopper-Pearson).  A dict of lists ``n``,
    ``estimate``, ``low``, ``high`` (and ``quantile``, ``q_low``, ``q_high`` for value metrics)."""
    x = np.asarray(x).reshape(-1)
    total = x.size
    ns = sorted({int(v) for v in np.geomspace(min(10, total), total, n_points)} | {total}) if total else []
    out: dict[str, list] = dict(n=ns, estimate=[], low=[], high=[], quantile=[], q_low=[], q_high=[])
    for m in ns:
        head = x[:m]
        if kind == "flag":
            r = rate_interval(int(np.count_nonzero(head)), m, confidence)
            out["estimate"].append(r["rate"])
            out["low"].append(r["low"])
            out["high"].append(r["high"])
            continue
        s = summarise_value(head, (), confidence)
        out["estimate"].append(s["mean"])
        out["low"].append(s["mean_low"])
        out["high"].append(s["mean_high"])
        d = quantile_interval(np.sort(head), q, confidence)
        out["quantile"].append(d["value"])
        out["q_low"].append(d["low"])
        out["q_high"].append(d["high"])
    return out


__all__ = [
    "CONFIDENCE",
    "PERCENTILES",
    "Accumulator",
    "check_percentiles",
    "convergence",
    "merge_moments",
    "quantile_interval",
    "quantile_ranks",
    "rate_interval",
    "summarise",
    "summarise_value",
]
