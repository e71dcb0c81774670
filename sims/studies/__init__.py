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

from sims.studies.study import Study, StudyResult, as_study, check, gradients, load
from sims.studies.study import run as run_study
from sims.studies.variation import Variation


def run(study, *, out="studies", folder=None, write: bool = True, fmt: str = "auto", **kw) -> StudyResult:
    """Run a Monte Carlo study (a :class:`Study`, a study-file dict or a TOML path) with
    :func:`sims.studies.study.run` (``kw``: ``devices``, ``progress``, ``compiler_options``) and, with
    ``write``, write its run folder under ``out`` (or exactly ``folder``;
    :func:`sims.studies.report.write_folder`).  A run that writes saves every batch in the folder's
    ``chunks/`` as it goes (:mod:`sims.studies.journal`): run again on the same unfinished folder, it resumes
    from the last saved batch with the same numbers.  Returns the :class:`StudyResult` (``.frame()`` the
    pandas table, ``.summary``, ``.folder``)."""
    from sims.studies import report  # report pulls matplotlib: only a run that writes needs it

    if not write:
        return run_study(study, **kw)
    study = as_study(study)
    check(study)
    path = report.start_folder(study, out=out, folder=folder)
    result = run_study(study, journal=path / report.CHUNKS, **kw)
    report.write_folder(result, folder=path, fmt=fmt)
    return result


__all__ = ["Study", "StudyResult", "Variation", "as_study", "check", "gradients", "load", "run"]
