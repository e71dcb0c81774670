"""Studies on fleets.

Monte Carlo studies (:func:`run`, ``python -m sims study STUDY.toml``): :mod:`~sims.studies.study` (the
:class:`Study` model, TOML study files), :mod:`~sims.studies.variation` (any parameter by a dotted path,
distributions, grids, correlation), :mod:`~sims.studies.designs` (random, Sobol', Latin hypercube,
Saltelli), :mod:`~sims.studies.statistics` (intervals, rates, streaming), :mod:`~sims.studies.sensitivity`
(Sobol' indices, pathwise gradients), :mod:`~sims.studies.table` and :mod:`~sims.studies.report` (the run
folder and ``report.html``).

Studies by ``grad`` through rollouts, on :func:`jaxtire.fit.minimize` (the project's one optimisation
loop): :mod:`~sims.studies.identify` (vehicle parameters from a log) and :mod:`~sims.studies.tuning`
(ABS and lane-change controller gains)."""

from __future__ import annotations

from sims.studies.study import Study, StudyResult, gradients, load
from sims.studies.study import run as run_study
from sims.studies.variation import Variation


def run(study, *, out="studies", folder=None, write: bool = True, fmt: str = "auto", **kw) -> StudyResult:
    """Run a Monte Carlo study (a :class:`Study`, a study-file dict or a TOML path) with
    :func:`sims.studies.study.run` (``kw``: ``devices``, ``progress``, ``compiler_options``) and, with
    ``write``, write its run folder under ``out`` (or exactly ``folder``;
    :func:`sims.studies.report.write_folder`).  Returns the :class:`StudyResult` (``.frame()`` the pandas
    table, ``.summary``, ``.folder``)."""
    from sims.studies import report  # report pulls matplotlib: only a run that writes needs it

    result = run_study(study, **kw)
    if write:
        report.write_folder(result, out=out, folder=folder, fmt=fmt)
    return result


__all__ = ["Study", "StudyResult", "Variation", "gradients", "load", "run"]
