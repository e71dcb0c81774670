"""Sensitivities of a study's metrics to its varied parameters: variance-based Sobol' indices over the
whole distribution, and pathwise gradients vehicle by vehicle.

**Sobol' indices** (:func:`sobol`): for a metric ``Y = f(X_1, ..., X_d)`` of independent factors, the
first-order index ``S_i = V[E(Y | X_i)] / V(Y)`` (the share of the variance explained by ``X_i`` alone)
and the total index ``S_Ti = E[V(Y | X_~i)] / V(Y)`` (its share including every interaction).  They are
estimated from Saltelli's design (:func:`sims.studies.designs.saltelli`: ``f_A``, ``f_B``, ``f_AB``) with
Saltelli et al. (2010)'s estimator of ``S_i`` and Jansen's of ``S_Ti`` (:func:`indices`; the same as
``scipy.stats.sobol_indices``'s default, checked in the tests), and their 95 % intervals by a BCa
bootstrap over the ``n`` base rows (``scipy.stats.bootstrap``, seeded: ``SobolResult.bootstrap`` takes no
seed, and a study must reproduce bitwise).  SciPy rather than SALib: SciPy is already a dependency of
JAX, released and tested on a fixed schedule, and works on precomputed outputs, which a fleet run gives;
SALib would add a package (with its pandas and matplotlib pins) for the same two estimators.  A flag metric (0/1) has
indices of its probability; constant metrics have none (``NaN``, flagged).

**Pathwise gradients** (:func:`pathwise`): for each smooth metric ``m`` (``Metric.smooth``) and each varied
continuous parameter ``x``, ``d m_k / d x_k`` of every vehicle ``k``, by one reverse-mode pass through the
whole scenario (setup, rollout, evaluate; :func:`sims.scenarios.base.scenario_metrics`).  The vehicles are
independent, so the gradient of ``sum_k m_k`` with respect to the ``(n,)`` array of the parameter is the
vector of every vehicle's own derivative.  Summarised per pair as mean, standard deviation and
p5 / p50 / p95 across the fleet (:func:`summarise_gradients`).  A factor variation's derivative is with
respect to the factor.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats as sps

from jaxtire.validation import ValidationError
from sims.studies.designs import split_saltelli


def indices(f_a: np.ndarray, f_b: np.ndarray, f_ab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S_T)``, each ``(d,)``: Saltelli et al. (2010)'s first-order estimator ``S_i = mean(f_B (f_AB^(i) -
    f_A)) / V`` and Jansen's total ``S_Ti = mean((f_A - f_AB^(i))^2) / (2 V)``, ``V`` the variance of ``f_A``
    and ``f_B`` together, every output first centred on the mean of ``f_A`` and ``f_B`` (less cancellation;
    the estimators of ``scipy.stats.sobol_indices``'s default method)."""
    mean = np.mean(np.concatenate([f_a, f_b]))
    f_a, f_b, f_ab = f_a - mean, f_b - mean, f_ab - mean
    var = np.var(np.concatenate([f_a, f_b]))
    first = np.mean(f_b * (f_ab - f_a), axis=-1) / var
    total = 0.5 * np.mean((f_a - f_ab) ** 2, axis=-1) / var
    return first, total


def sobol(
    values: np.ndarray,
    n: int,
    names: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 999,
    seed: int = 0,
) -> dict[str, Any]:
    """First-order and total Sobol' indices of one metric from its ``values`` in the run order of
    :func:`~sims.studies.designs.saltelli` (``n (d + 2)`` runs, ``d = len(names)``), with bootstrap
    intervals.  A dict ``{name: {first, first_low, first_high, total, total_low, total_high}}`` plus
    ``"flags"``."""
    d = len(names)
    y = np.asarray(values, np.float64).reshape(-1)
    if y.size != n * (d + 2):
        raise ValidationError(
            f"sobol: {y.size} values for n = {n} and d = {d} factors (need n (d + 2) = {n * (d + 2)})"
        )
    flags: list[str] = []
    if not np.all(np.isfinite(y)):
        return {"flags": ["not every run is finite: no Sobol' indices"]}
    if np.ptp(y) == 0.0:
        return {"flags": ["the metric is constant over the design: no Sobol' indices"]}
    f_a, f_b, f_ab = split_saltelli(y, n, d)
    first, total = indices(f_a, f_b, f_ab)

    def stat(idx):
        return np.concatenate(indices(f_a[idx], f_b[idx], f_ab[:, idx]))

    with warnings.catch_warnings():  # a degenerate BCa resample warns and gives NaN: flagged below
        warnings.simplefilter("ignore")
        boot = sps.bootstrap(
            (np.arange(n),),
            stat,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    lo, hi = boot.confidence_interval.low, boot.confidence_interval.high
    out: dict[str, Any] = {
        name: dict(
            first=float(first[i]),
            first_low=float(lo[i]),
            first_high=float(hi[i]),
            total=float(total[i]),
            total_low=float(lo[d + i]),
            total_high=float(hi[d + i]),
        )
        for i, name in enumerate(names)
    }
    if not np.all(np.isfinite(lo) & np.isfinite(hi)):
        flags.append("some bootstrap intervals are undefined (NaN): too few distinct runs")
    if n < 64:
        flags.append(f"only n = {n} base runs: the indices and their bootstrap intervals are rough")
    out["flags"] = flags
    return out


def pathwise(
    fn: Callable[[dict[str, Any]], dict[str, Any]],
    values: Mapping[str, Any],
    metrics: Sequence[str],
    with_values: bool = False,
):
    """``{metric: {path: (n,) d metric_k / d path_k}}`` for every name in ``metrics`` and every entry of
    ``values`` (each an ``(n,)`` array), by reverse mode through ``fn(values) -> {metric: (n,)}``
    (one forward pass, one backward pass per metric); with ``with_values``, ``(fn(values), gradients)``."""
    vals = {k: jnp.asarray(v) for k, v in values.items()}
    out, back = jax.vjp(fn, vals)
    res: dict[str, dict[str, np.ndarray]] = {}
    for m in metrics:
        ct = {k: (jnp.ones_like(v) if k == m else jnp.zeros_like(v)) for k, v in out.items()}
        (g,) = back(ct)
        res[m] = {k: np.asarray(x) for k, x in g.items()}
    return ({k: np.asarray(v) for k, v in out.items()}, res) if with_values else res


def summarise_gradients(grads: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per metric and parameter: ``n`` (finite derivatives), ``mean``, ``std``, ``p5``, ``p50``, ``p95``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for m, per in grads.items():
        out[m] = {}
        for p, g in per.items():
            g = np.asarray(g, np.float64)
            fin = g[np.isfinite(g)]
            q = np.percentile(fin, [5, 50, 95]) if fin.size else [np.nan] * 3
            out[m][p] = dict(
                n=int(fin.size),
                mean=float(fin.mean()) if fin.size else float("nan"),
                std=float(fin.std(ddof=1)) if fin.size > 1 else float("nan"),
                p5=float(q[0]),
                p50=float(q[1]),
                p95=float(q[2]),
            )
    return out


__all__ = ["pathwise", "sobol", "summarise_gradients"]
