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

Every design is a deterministic function of ``(n, d, seed)`` (bitwise on rerun).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

from jaxtire.validation import ValidationError, check_choice, check_int

DESIGNS = ("random", "sobol", "lhs", "saltelli")


def _sobol(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    eng = qmc.Sobol(d, scramble=True, rng=rng)
    if n & (n - 1) == 0:
        return eng.random_base2(int(np.log2(n)))
    with warnings.catch_warnings():  # "balance properties ... require n to be a power of 2": documented
        warnings.simplefilter("ignore", UserWarning)
        return eng.random(n)


def unit_design(design: str, n: int, d: int, seed: int) -> np.ndarray:
    """``(n, d)`` float64 points in ``[0, 1)^d`` of ``design`` (one of :data:`DESIGNS` but ``"saltelli"``,
    which :func:`saltelli` builds), seeded by ``seed``."""
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


def saltelli(n: int, d: int, seed: int) -> np.ndarray:
    """Saltelli's design: ``(n (d + 2), d)`` rows ``A, B, A_B^(1), ..., A_B^(d)`` (module docstring).  ``n``
    must be a power of 2 (the base Sobol' sequence's balance)."""
    check_int("n", n, 2, source="saltelli")
    if n & (n - 1):
        raise ValidationError(f"saltelli: runs = {n} must be a power of 2 (e.g. {1 << (n.bit_length() - 1)})")
    if d < 1:
        raise ValidationError("saltelli: a Sobol' sensitivity design needs at least one random factor")
    base = _sobol(n, 2 * d, np.random.default_rng(seed))
    a, b = base[:, :d], base[:, d:]
    ab = np.repeat(a[None], d, axis=0)
    ab[np.arange(d), :, np.arange(d)] = b.T
    return np.concatenate([a, b, ab.reshape(d * n, d)])


def split_saltelli(values: np.ndarray, n: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outputs ``f`` (``(n (d + 2), ...)``, run order of :func:`saltelli`) split into ``f_A`` ``(n, ...)``,
    ``f_B`` ``(n, ...)`` and ``f_AB`` ``(d, n, ...)``."""
    values = np.asarray(values)
    return values[:n], values[n : 2 * n], values[2 * n :].reshape((d, n) + values.shape[1:])


__all__ = ["DESIGNS", "saltelli", "split_saltelli", "unit_design"]
