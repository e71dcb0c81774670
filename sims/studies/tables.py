"""The fleet CLI's tables (braking, skidpad, step steer) as runs of study presets: :func:`run_table` runs a
sequence of :class:`~sims.studies.study.Study` and gathers each one's rows; :mod:`sims.studies.braking`,
:mod:`sims.studies.skidpad` and :mod:`sims.studies.step_steer` build the studies and read their rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sims.studies import study as sm
from sims.studies.study import Study


def run_table(
    studies: Iterable[Study],
    rows: Callable[[Study, dict], list[dict]],
    *,
    compiler_options=None,
    devices=None,
    on_study: Callable[[Study], Any] | None = None,
) -> list[dict]:
    """The rows of a table: for each of ``studies`` (in order), ``on_study(study)`` (e.g. to save it), then
    :func:`sims.studies.study.run` (no progress bar; ``compiler_options``, ``devices`` as there) and
    ``rows(study, columns)``, the table rows of its results' columns, appended."""
    out: list[dict] = []
    for study in studies:
        if on_study is not None:
            on_study(study)
        res = sm.run(study, progress=False, compiler_options=compiler_options, devices=devices)
        out.extend(rows(study, res.columns))
    return out


__all__ = ["run_table"]
