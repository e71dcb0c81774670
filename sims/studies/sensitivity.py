"""Sensitivities of a study's metrics to its varied parameters: variance-based Sobol' indices over the
whole distribution, Morris screening, and pathwise gradients vehicle by vehicle.

**Sobol' indices** (:func:`sobol`): for a metric ``Y = f(X_1, ..., X_d)`` of independent factors, the
first-order index ``S_i = V[E(Y | X_i)] / V(Y)`` (the share of the variance explained by ``X_i`` alone),
the total index ``S_Ti = E[V(Y | X_~i)] / V(Y)`` (its share including every interaction) and, on request,
the second-order index ``S_jk = V[E(Y | X_j, X_k)] / V(Y) - S_j - S_k`` (the share of the ``j``-``k``
interaction alone).  They are estimated from Saltelli's design (:func:`sims.studies.designs.saltelli`:
``f_A``, ``f_B``, ``f_AB``, and ``f_BA`` for the second order) with Saltelli et al. (2010)'s estimator of
``S_i``, Jansen's of ``S_Ti`` (:func:`indices`; the same as ``scipy.stats.sobol_indices``'s default,
checked in the tests) and Saltelli (2002)'s of ``S_jk`` (:func:`second_order_indices`; SALib's
``calc_second_order``), and their 95 % intervals by a BCa bootstrap over the ``n`` base rows
(``scipy.stats.bootstrap``, seeded: ``SobolResult.bootstrap`` takes no seed, and a study must reproduce
bitwise), clipped to ``[0, 1]`` (the clipped bounds are listed in the result).  SciPy rather than SALib:
SciPy is already a dependency of JAX, released and tested on a fixed schedule, and works on precomputed
outputs, which a fleet run gives; SALib would add a package (with its pandas and matplotlib pins) for the
same estimators.  A flag metric (0/1) has indices of its probability; constant metrics have none (``NaN``,
flagged).

**Morris screening** (:func:`morris`): on the ``r`` one-at-a-time trajectories of
:func:`sims.studies.designs.morris`, each factor's elementary effects ``EE_i = Delta y / Delta u_i`` and
their ``mu``, ``mu*`` (mean absolute effect: the ranking of importance) and ``sigma`` (non-linearity and
interactions), as SALib's ``morris.analyze``; ``r (d + 1)`` runs instead of Sobol's ``n (d + 2)`` with
``n`` in the hundreds, to screen many factors before a Sobol' study of the few that matter.

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
from sims.studies.designs import saltelli_rows, split_saltelli, split_second_order


def indices(f_a: np.ndarray, f_b: np.ndarray, f_ab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S_T)``, each ``(d,)``: Saltelli et al. (2010)'s first-order estimator ``S_i = mean(f_B (f_AB^(i) -
    f_A)) / V`` and Jansen's total ``S_Ti = mean((f_A - f_AB^(i))^2) / (2 V)``, ``V`` the variance of ``f_A``
    and ``f_B`` together, every output first centred on the mean of ``f_A`` and ``f_B`` (less cancellation;
    the estimators of ``scipy.stats.sobol_indices``'s default method)."""
    f_a, f_b, f_ab, var = _centred(f_a, f_b, f_ab)
    first = np.mean(f_b * (f_ab - f_a), axis=-1) / var
    total = 0.5 * np.mean((f_a - f_ab) ** 2, axis=-1) / var
    return first, total


def _centred(f_a, f_b, *rest):
    """``f_A``, ``f_B`` and ``rest`` less the mean of ``f_A`` and ``f_B``, then that pool's variance ``V``."""
    pool = np.concatenate([f_a, f_b])
    mean = np.mean(pool)
    return (f_a - mean, f_b - mean, *(f - mean for f in rest), np.var(pool))


def pairs(d: int) -> list[tuple[int, int]]:
    """The factor pairs ``(j, k)``, ``j < k``, in the order of :func:`second_order_indices`."""
    return [(j, k) for j in range(d) for k in range(j + 1, d)]


def second_order_indices(f_a, f_b, f_ab, f_ba) -> np.ndarray:
    """Second-order indices ``S_jk``, one per pair of :func:`pairs`: Saltelli (2002)'s estimator as SALib's
    ``sobol.analyze(calc_second_order=True)``, ``S_jk = mean(f_BA^(j) f_AB^(k) - f_A f_B) / V - S_j - S_k``
    (``f_BA^(j)`` and ``f_AB^(k)`` share exactly ``x_j`` and ``x_k``, so the mean estimates the closed
    variance ``V[E(Y | X_j, X_k)]``), ``S_j`` as :func:`indices`, the outputs centred likewise."""
    first, _ = indices(f_a, f_b, f_ab)
    f_a, f_b, f_ab, f_ba, var = _centred(f_a, f_b, f_ab, f_ba)
    closed = [np.mean(f_ba[j] * f_ab[k] - f_a * f_b) / var for j, k in pairs(f_ab.shape[0])]
    return np.array([c - first[j] - first[k] for c, (j, k) in zip(closed, pairs(f_ab.shape[0]), strict=True)])


def _all_indices(y: np.ndarray, n: int, d: int, second_order: bool, idx=slice(None)) -> np.ndarray:
    """First, total (and second-order) indices of the base rows ``idx``, concatenated (the bootstrap's
    statistic)."""
    f_a, f_b, f_ab = (f[..., idx] for f in split_saltelli(y, n, d))
    out = list(indices(f_a, f_b, f_ab))
    if second_order:
        out.append(second_order_indices(f_a, f_b, f_ab, split_second_order(y, n, d)[:, idx]))
    return np.concatenate(out)


def _clip(value: float, bound: str, where: str, clipped: list) -> float:
    """``value`` clipped to [0, 1]; a clip is noted in ``clipped`` (``where``, ``bound``, the raw value)."""
    c = min(max(value, 0.0), 1.0)
    if c != value:
        clipped.append(dict(factor=where, bound=bound, raw=value))
    return c


def sobol(
    values: np.ndarray,
    n: int,
    names: Sequence[str],
    *,
    second_order: bool = False,
    confidence: float = 0.95,
    n_resamples: int = 999,
    seed: int = 0,
) -> dict[str, Any]:
    """First-order and total Sobol' indices (and with ``second_order`` the second-order ones) of one metric
    from its ``values`` in the run order of :func:`~sims.studies.designs.saltelli` (``n (d + 2)`` runs, ``n (2
    d + 2)`` with ``second_order``; ``d = len(names)``), with BCa bootstrap intervals over the ``n`` base
    rows, **clipped to [0, 1]** (the indices' range; a bootstrap bound outside it says only that the index
    is near that end).  A dict ``{name: {first, first_low, first_high, total, total_low, total_high}}``, with
    ``second_order`` a list ``[{factors: [a, b], second, second_low, second_high}]``, ``clipped`` (every
    clipped bound: ``factor``, ``bound``, its ``raw`` value), ``interval`` (how the intervals were made) and
    ``flags``.  The point estimates are not clipped (a small negative one is the estimator's noise about 0)."""
    d = len(names)
    y = np.asarray(values, np.float64).reshape(-1)
    rows = saltelli_rows(n, d, second_order)
    if y.size != rows:
        need = "n (2 d + 2)" if second_order else "n (d + 2)"
        raise ValidationError(f"sobol: {y.size} values for n = {n} and d = {d} factors (need {need} = {rows})")
    if not np.all(np.isfinite(y)):
        return {"flags": ["not every run is finite: no Sobol' indices"]}
    if np.ptp(y) == 0.0:
        return {"flags": ["the metric is constant over the design: no Sobol' indices"]}
    est = _all_indices(y, n, d, second_order)
    with warnings.catch_warnings():  # a degenerate BCa resample warns and gives NaN: flagged below
        warnings.simplefilter("ignore")
        boot = sps.bootstrap(
            (np.arange(n),),
            lambda idx: _all_indices(y, n, d, second_order, idx),
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    lo, hi = boot.confidence_interval.low, boot.confidence_interval.high
    clipped: list[dict[str, Any]] = []

    def entry(key: str, i: int, where: str) -> dict[str, float]:
        return {
            key: float(est[i]),
            f"{key}_low": _clip(float(lo[i]), f"{key}_low", where, clipped),
            f"{key}_high": _clip(float(hi[i]), f"{key}_high", where, clipped),
        }

    out: dict[str, Any] = {
        name: {**entry("first", i, name), **entry("total", d + i, name)} for i, name in enumerate(names)
    }
    if second_order:
        out["second_order"] = [
            dict(factors=[names[j], names[k]], **entry("second", 2 * d + m, f"{names[j]} x {names[k]}"))
            for m, (j, k) in enumerate(pairs(d))
        ]
    out["clipped"] = clipped
    out["interval"] = (
        f"{confidence:.0%} BCa bootstrap over the {n} base rows ({n_resamples} resamples), clipped to [0, 1]"
    )
    flags = []
    if not np.all(np.isfinite(lo) & np.isfinite(hi)):
        flags.append("some bootstrap intervals are undefined (NaN): too few distinct runs")
    if n < 64:
        flags.append(f"only n = {n} base runs: the indices and their bootstrap intervals are rough")
    out["flags"] = flags
    return out


def sobol_factors(res: Mapping[str, Any]) -> list[str]:
    """The factor names of a :func:`sobol` result (its entries with a ``first`` index)."""
    return [k for k, v in res.items() if isinstance(v, Mapping) and "first" in v]


def elementary_effects(values: np.ndarray, unit: np.ndarray, r: int, d: int) -> np.ndarray:
    """``(r, d)`` elementary effects of a :func:`~sims.studies.designs.morris` design's outputs ``values`` at
    its unit points ``unit`` (``(r (d + 1), d)``): along each trajectory, the one factor ``i`` that moves
    between consecutive rows and ``EE_i = (y_{k+1} - y_k) / (u_{k+1, i} - u_{k, i})`` (metric units per unit
    of the factor's probability scale ``u``: for ``y = sum_i a_i u_i``, ``EE_i = a_i``; as SALib's
    ``morris.analyze``, which divides by the step on its ``[0, 1]`` grid)."""
    y = np.asarray(values, np.float64).reshape(r, d + 1)
    du = np.diff(np.asarray(unit, np.float64).reshape(r, d + 1, d), axis=1)  # (r, d steps, d factors)
    which = np.argmax(np.abs(du), axis=2)
    step = np.take_along_axis(du, which[..., None], axis=2)[..., 0]
    ee = np.empty((r, d))
    ee[np.arange(r)[:, None], which] = np.diff(y, axis=1) / step
    return ee


def morris(values: np.ndarray, unit: np.ndarray, names: Sequence[str], *, confidence: float = 0.95) -> dict[str, Any]:
    """Morris screening of one metric (Morris 1991; Campolongo, Cariboni & Saltelli 2007's ``mu*``) from its
    ``values`` in the run order of the design's ``unit`` points (:func:`~sims.studies.designs.morris`,
    ``r`` trajectories): per factor the elementary effects' (:func:`elementary_effects`) mean ``mu``, mean
    absolute value ``mu*`` (the importance: large ``mu*``, an influential factor) and standard deviation
    ``sigma`` (``n - 1``; large: non-linear or interacting), ``mu`` and ``mu*`` with Student-t intervals over
    the ``r`` independent trajectories (``mean +- t_{0.975, r-1} s / sqrt(r)``; SALib's bootstrap
    ``mu_star_conf`` is the same half-width for large ``r``).  A dict ``{name: {mu, mu_low, mu_high,
    mu_star, mu_star_low, mu_star_high, sigma}}``, ``ranking`` (names by ``mu*``, largest first) and
    ``flags``."""
    d = len(names)
    y = np.asarray(values, np.float64).reshape(-1)
    if y.size % (d + 1) or y.size != np.shape(unit)[0]:
        raise ValidationError(f"morris: {y.size} values for {np.shape(unit)[0]} design rows of d + 1 = {d + 1}")
    r = y.size // (d + 1)
    if not np.all(np.isfinite(y)):
        return {"flags": ["not every run is finite: no elementary effects"]}
    ee = elementary_effects(y, unit, r, d)
    t = float(sps.t.ppf(0.5 + confidence / 2.0, r - 1))

    def interval(x: np.ndarray, key: str) -> dict[str, float]:
        m, half = float(x.mean()), t * float(x.std(ddof=1)) / np.sqrt(r)
        return {key: m, f"{key}_low": m - half, f"{key}_high": m + half}

    out: dict[str, Any] = {
        name: {
            **interval(ee[:, i], "mu"),
            **interval(np.abs(ee[:, i]), "mu_star"),
            "sigma": float(ee[:, i].std(ddof=1)),
        }
        for i, name in enumerate(names)
    }
    out["ranking"] = sorted(names, key=lambda k: -out[k]["mu_star"])
    out["flags"] = [f"only r = {r} trajectories: mu* and sigma are rough"] if r < 10 else []
    return out


def pathwise(
    fn: Callable[[dict[str, Any]], dict[str, Any]],
    values: Mapping[str, Any],
    metrics: Sequence[str],
    with_values: bool = False,
    progress=None,
):
    """``{metric: {path: (n,) d metric_k / d path_k}}`` for every name in ``metrics`` and every entry of
    ``values`` (each an ``(n,)`` array), by reverse mode through ``fn(values) -> {metric: (n,)}``
    (one forward pass, one backward pass per metric); with ``with_values``, ``(fn(values), gradients)``.
    ``progress``: anything with ``update(n)``, advanced by one after the forward pass and after each
    backward pass (``1 + len(metrics)`` in all)."""
    vals = {k: jnp.asarray(v) for k, v in values.items()}
    out, back = jax.vjp(fn, vals)
    jax.block_until_ready(out)
    tick = progress.update if progress is not None else lambda n: None
    tick(1)
    res: dict[str, dict[str, np.ndarray]] = {}
    for m in metrics:
        ct = {k: (jnp.ones_like(v) if k == m else jnp.zeros_like(v)) for k, v in out.items()}
        (g,) = back(ct)
        res[m] = {k: np.asarray(x) for k, x in g.items()}
        tick(1)
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


__all__ = [
    "elementary_effects",
    "indices",
    "morris",
    "pairs",
    "pathwise",
    "second_order_indices",
    "sobol",
    "sobol_factors",
    "summarise_gradients",
]
