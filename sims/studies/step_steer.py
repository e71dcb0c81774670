"""The fleet CLI's step-steer table (``python -m sims --scenario step-steer``) as
:class:`~sims.studies.study.Study` presets: per preset, the catalogue's
:class:`~sims.scenarios.step_steer.StepSteerScenario` on the grid of surfaces (one run a surface), with the
amplitude calibrated to the target lateral acceleration and the yaw rate kept every step (the procedure of
:func:`sims.scenarios.step_steer.step_steer`, as a study)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sims.studies.study import Study
from sims.studies.tables import run_table
from sims.studies.variation import Variation
from sims.vehicles import presets

#: The surfaces of the step-steer table (the CLI's default) and its run length [s] and step [s].
TABLE_SURFACES = ("asphalt_dry",)
DURATION = 5.0
DT = 0.002


def table_study(
    preset: str,
    surfaces=TABLE_SURFACES,
    *,
    dt: float = DT,
    tire: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Study:
    """The :class:`Study` of one preset's rows of the step-steer table: the scenario at its default settings
    (80 km/h, 4 m/s^2) on each of ``surfaces`` (a grid), calibrated (``calibrate``), the yaw rate kept every
    step ``dt`` [s] over :data:`DURATION`; ``options`` further static options (``model``)."""
    opts = {"calibrate": True, "dt": float(dt), "spacing": float(dt), "duration": DURATION, **dict(options or {})}
    return Study(
        scenario="step_steer",
        preset=preset,
        tire=tire,
        vary=(Variation("vehicle.surface", "grid", values=tuple(surfaces)),),
        runs=1,
        name=f"step-steer-{preset}",
        options=opts,
    )


def step_steer_table(
    preset_names=presets.PRESET_NAMES,
    surfaces=TABLE_SURFACES,
    *,
    dt: float = DT,
    tire: str | None = None,
    options: Mapping[str, Any] | None = None,
    run=None,
) -> list[dict]:
    """Rows ``preset, surface, amplitude_deg, ay_ss, response_time, peak_time, overshoot``: per preset, its
    :func:`table_study` run by :func:`sims.studies.tables.run_table` (``run``: its keywords,
    ``compiler_options``, ``devices``, ``on_study``)."""

    def rows(study: Study, col) -> list[dict]:
        return [
            dict(
                preset=study.preset,
                surface=str(col["vehicle.surface_name"][i]),
                amplitude_deg=float(np.degrees(col["amplitude"][i])),
                ay_ss=float(col["ay_ss"][i]),
                response_time=float(col["response_time"][i]),
                peak_time=float(col["peak_time"][i]),
                overshoot=float(col["overshoot"][i]),
            )
            for i in range(len(col["run"]))
        ]

    studies = (table_study(name, surfaces, dt=dt, tire=tire, options=options) for name in preset_names)
    return run_table(studies, rows, **(run or {}))


__all__ = ["DT", "DURATION", "TABLE_SURFACES", "step_steer_table", "table_study"]
