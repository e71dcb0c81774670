"""Designs of experiments: where in the unit hypercube ``[0, 1)^d`` each run of a study samples its ``d``
random factors (:mod:`sims.studies.variation` maps the unit values to the distributions).

* ``"random"``: independent uniform draws (numpy's PCG64 generator);
* ``"sobol"``: a scrambled Sobol' sequence (``scipy.stats.qmc.Sobol``, Owen scrambling; balanced when the
  number of runs is a power of 2);
* ``"lhs"``: a Latin hypercube (``scipy.stats.qmc.LatinHypercube``: each factor's range cut into ``n``
  equal strata, one run in each);
* ``"saltelli"``: the ``A``, ``B`` and ``A_B^(i)`` matrices of Saltelli's scheme for Sobol' indices
  (:func:`saltelli`): ``A`` and ``B`` the two halves of one scrambled Sobol' sequence of dimension ``2 d``
  and ``A_B^(i)`` equal to ``A`` with its column ``i`` taken from ``B``; ``n (d + 2)`` runs in all, in the
  row order ``A, B, A_B^(1), ..., A_B^(d)`` (Saltelli et al. 2010, *Comput. Phys. Commun.* 181, 259).
  With ``second_order`` the ``B_A^(i)`` matrices follow (``B`` with its column ``i`` from ``A``; Saltelli
  2002, *Comput. Phys. Commun.* 145, 280): ``n (2 d + 2)`` runs, the first ``n (d + 2)`` the same;
* ``"morris"``: ``r`` one-at-a-time trajectories of ``d + 1`` runs each for Morris' elementary effects
  (:func:`morris`; Morris 1991, *Technometrics* 33, 161; the sampling of SALib's ``morris.sample``).

Only the ``A`` and ``B`` rows of a Saltelli design and the first row of each Morris trajectory are
independent draws of the factors (:func:`population_rows`): the other rows repeat their coordinates by
construction.  The statistics of a study (:mod:`sims.studies.statistics`) are taken over those rows.

Every design is a deterministic function of ``(n, d, seed)`` and its options (bitwise on rerun).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

from jaxtire.validation import ValidationError, check_choice, check_int

DESIGNS = ("random", "sobol", "lhs", "saltelli", "morris")
#: The designs whose rows are built from one another (no grid variations, no correlation for Morris).
STRUCTURED = ("saltelli", "morris")
#: The default number of grid levels ``p`` of a Morris design (SALib's ``num_levels``).
MORRIS_LEVELS = 4


def _sobol(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    eng = qmc.Sobol(d, scramble=True, rng=rng)
    if n & (n - 1) == 0:
        return eng.random_base2(int(np.log2(n)))
    with warnings.catch_warnings():  # "balance properties ... require n to be a power of 2": documented
        warnings.simplefilter("ignore", UserWarning)
        return eng.random(n)


def unit_design(design: str, n: int, d: int, seed: int) -> np.ndarray:
    """``(n, d)`` float64 points in ``[0, 1)^d`` of ``design`` (``"random"``, ``"sobol"`` or ``"lhs"``; the
    structured designs: :func:`saltelli`, :func:`morris`, or :func:`points` for any), seeded by ``seed``."""
    check_choice("design", design, DESIGNS[:3], source="unit_design")
    check_int("n", n, 1, source="unit_design")
    check_int("seed", seed, 0, source="unit_design")
    if d == 0:
        return np.zeros((n, 0))
    rng = np.random.default_rng(seed)
    if design == "random":
        return rng.random((n, d))
    if design == "sobol":
        return _sobol(n, d, rng)
    return qmc.LatinHypercube(d, rng=rng).random(n)


def saltelli(n: int, d: int, seed: int, second_order: bool = False) -> np.ndarray:
    """Saltelli's design: ``(n (d + 2), d)`` rows ``A, B, A_B^(1), ..., A_B^(d)``, with ``second_order``
    ``(n (2 d + 2), d)`` rows ending ``B_A^(1), ..., B_A^(d)`` (module docstring).  ``n`` must be a power of 2
    (the base Sobol' sequence's balance)."""
    check_int("n", n, 2, source="saltelli")
    if n & (n - 1):
        raise ValidationError(f"saltelli: runs = {n} must be a power of 2 (e.g. {1 << (n.bit_length() - 1)})")
    if d < 1:
        raise ValidationError("saltelli: a Sobol' sensitivity design needs at least one random factor")
    base = _sobol(n, 2 * d, np.random.default_rng(seed))
    a, b = base[:, :d], base[:, d:]
    blocks = [a, b, _swap_columns(a, b)] + ([_swap_columns(b, a)] if second_order else [])
    return np.concatenate(blocks)


def _swap_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(d n, d)``: ``d`` copies of ``a`` (``(n, d)``), copy ``i`` with its column ``i`` from ``b``."""
    n, d = a.shape
    out = np.repeat(a[None], d, axis=0)
    out[np.arange(d), :, np.arange(d)] = b.T
    return out.reshape(d * n, d)


def saltelli_rows(n: int, d: int, second_order: bool = False) -> int:
    """The number of runs of :func:`saltelli`: ``n (d + 2)``, ``n (2 d + 2)`` with ``second_order``."""
    return n * ((2 * d + 2) if second_order else (d + 2))


def split_saltelli(values: np.ndarray, n: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outputs ``f`` (``(n (d + 2), ...)`` or more, run order of :func:`saltelli`) split into ``f_A``
    ``(n, ...)``, ``f_B`` ``(n, ...)`` and ``f_AB`` ``(d, n, ...)``."""
    values = np.asarray(values)
    return values[:n], values[n : 2 * n], values[2 * n : n * (d + 2)].reshape((d, n) + values.shape[1:])


def split_second_order(values: np.ndarray, n: int, d: int) -> np.ndarray:
    """``f_BA`` ``(d, n, ...)``: the outputs of the ``B_A^(i)`` rows of a second-order :func:`saltelli`."""
    values = np.asarray(values)
    return values[n * (d + 2) : n * (2 * d + 2)].reshape((d, n) + values.shape[1:])


def morris_step(levels: int) -> float:
    """Morris' step ``Delta = p / (2 (p - 1))`` on the grid ``{0, 1/(p-1), ..., 1}`` of ``p = levels`` levels
    (SALib's ``compute_delta``)."""
    return levels / (2.0 * (levels - 1))


def morris(r: int, d: int, seed: int, levels: int = MORRIS_LEVELS) -> np.ndarray:
    """Morris' design: ``r`` trajectories of ``d + 1`` rows each, ``(r (d + 1), d)`` unit points.

    Each trajectory is Morris' (1991) randomised orientation of the ``(d + 1) x d`` matrix ``B`` (ones below
    the diagonal): ``B* = (J x* + (Delta / 2) [(2 B - J) D* + J]) P*`` on the grid ``x in {0, 1/(p-1), ...,
    1}``, with ``x*`` a random grid point of the levels ``<= 1 - Delta``, ``D*`` random signs, ``P*`` a random
    permutation, ``J`` ones and ``Delta = p / (2 (p - 1))`` (:func:`morris_step`): consecutive rows differ in
    one factor by ``+- Delta``, each factor once.  The grid level ``x = j / (p - 1)`` is the unit value
    ``u = (j + 1/2) / p``, the midpoint of the ``j``-th of ``p`` equiprobable strata (so an unbounded
    distribution stays finite); one step moves ``u`` by ``Delta (p - 1) / p`` (1/2 for ``p = 4``).  ``levels``
    must be even (then every level is equally likely in every row)."""
    check_int("runs", r, 2, source="morris")
    check_int("levels", levels, 2, 64, source="morris")
    if levels % 2:
        raise ValidationError(f"morris: levels = {levels} must be even (e.g. {levels + 1})")
    if d < 1:
        raise ValidationError("morris: a Morris screening design needs at least one random factor")
    rng = np.random.default_rng(seed)
    delta = morris_step(levels)
    b = np.tril(np.ones((d + 1, d)), -1)
    x0 = rng.integers(0, levels // 2, size=(r, 1, d)) / (levels - 1)
    signs = rng.choice([-1.0, 1.0], size=(r, 1, d))
    grid = x0 + 0.5 * delta * ((2.0 * b - 1.0) * signs + 1.0)
    perm = np.argsort(rng.random((r, d)), axis=1)
    grid = np.take_along_axis(grid, perm[:, None, :], axis=2)
    return ((np.rint(grid * (levels - 1)) + 0.5) / levels).reshape(r * (d + 1), d)


def design_rows(design: str, runs: int, d: int, *, second_order: bool = False) -> int:
    """The number of rows of ``design`` for ``runs`` (base rows of ``"saltelli"``, trajectories of
    ``"morris"``) and ``d`` random factors, per grid cell."""
    if design == "saltelli":
        return saltelli_rows(runs, d, second_order)
    if design == "morris":
        return runs * (d + 1)
    return runs


def points(design: str, runs: int, d: int, seed: int, *, second_order: bool = False, levels: int = MORRIS_LEVELS):
    """The unit points of any of :data:`DESIGNS` (``second_order``: :func:`saltelli`'s; ``levels``:
    :func:`morris`'s)."""
    if design == "saltelli":
        return saltelli(runs, d, seed, second_order)
    if design == "morris":
        return morris(runs, d, seed, levels)
    return unit_design(design, runs, d, seed)


def population_rows(design: str, runs: int, d: int, rows: np.ndarray) -> np.ndarray:
    """Which of the design rows ``rows`` (the table's ``run`` indices) are independent draws of the factors:
    every row, but the ``A`` and ``B`` rows (``run < 2 n``) of a Saltelli design and the first row of each
    Morris trajectory (``run % (d + 1) == 0``).  A boolean mask."""
    rows = np.asarray(rows)
    if design == "saltelli":
        return rows < 2 * runs
    if design == "morris":
        return rows % (d + 1) == 0
    return np.ones(rows.shape, bool)


#: What :func:`population_rows` keeps, per design (said in ``summary.json`` and the report).
POPULATION = {
    "saltelli": "the 2 n independent A and B rows of the Saltelli design (the A_B / B_A rows repeat their coordinates)",
    "morris": "the first row of each Morris trajectory (r independent draws, each factor at one of the p grid "
    "levels: a screening design, its percentiles are of the factors discretised to p levels)",
}


__all__ = [
    "DESIGNS",
    "MORRIS_LEVELS",
    "POPULATION",
    "STRUCTURED",
    "design_rows",
    "morris",
    "morris_step",
    "points",
    "population_rows",
    "saltelli",
    "saltelli_rows",
    "split_saltelli",
    "split_second_order",
    "unit_design",
]
