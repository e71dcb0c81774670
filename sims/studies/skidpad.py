"""The fleet CLI's skidpad table (``python -m sims --scenario skidpad``) as :class:`~sims.studies.study.Study`
presets: per preset and surface, the catalogue's :class:`~sims.scenarios.skidpad.Skidpad` on the grid of target
lateral accelerations of :func:`sims.scenarios.skidpad.ay_targets` (one run a level), and the limit and the
understeer gradient of its rows by :func:`sims.scenarios.skidpad.analyse` (the sweep of
:func:`sims.scenarios.skidpad.skidpad`, as a study)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jaxtire.constants import GRAVITY
from sims.scenarios.skidpad import RADIUS, analyse, ay_targets, points_of
from sims.studies import study as sm
from sims.studies.study import Study
from sims.studies.tables import run_table
from sims.studies.variation import Variation
from sims.vehicles import presets

#: The surfaces of the skidpad table (the CLI's default).
TABLE_SURFACES = ("asphalt_dry", "asphalt_wet", "snow")


def table_study(
    preset: str,
    surface: str,
    ays,
    *,
    radius: float = RADIUS,
    tire: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Study:
    """The :class:`Study` of one skidpad sweep: ``preset`` on ``surface`` at each target lateral acceleration of
    ``ays`` [m/s^2] (a grid, one run a level) on the circle of ``radius`` [m]; ``options`` the scenario's other
    static options (``dt``, ``model``, ``duration``, ``settle``)."""
    return Study(
        scenario="skidpad",
        preset=preset,
        tire=tire,
        surface=surface,
        vary=(Variation("scenario.ay_target", "grid", values=tuple(float(a) for a in ays)),),
        runs=1,
        name=f"skidpad-{preset}-{surface}",
        options={"radius": float(radius), **dict(options or {})},
    )


def skidpad_table(
    preset_names=presets.PRESET_NAMES,
    surfaces=TABLE_SURFACES,
    *,
    radius: float = RADIUS,
    n_points: int = 24,
    tire: str | None = None,
    options: Mapping[str, Any] | None = None,
    run=None,
) -> list[dict]:
    """Rows ``preset, surface, ay_limit [m/s^2], ay_limit_g, understeer_deg_per_g``: per preset and surface, its
    :func:`table_study` over :func:`~sims.scenarios.skidpad.ay_targets` (``n_points`` levels) run by
    :func:`sims.studies.tables.run_table` (``run``: its keywords, ``compiler_options``, ``devices``,
    ``on_study``) and :func:`~sims.scenarios.skidpad.analyse` of its rows."""

    wheelbase: dict[str, float] = {}  # per study: of the vehicle its a_y grid was made for

    def studies():
        for name in preset_names:
            for s in surfaces:
                base = sm._vehicle(Study(preset=name, tire=tire, surface=s))  # the study's vehicle
                ays = ay_targets(base, radius=radius, n_points=n_points)
                study = table_study(name, s, ays, radius=radius, tire=tire, options=options)
                wheelbase[study.name] = float(base.chassis.cg_to_front + base.chassis.cg_to_rear)
                yield study

    def rows(study: Study, col) -> list[dict]:
        r = analyse(points_of(col), wheelbase[study.name], radius)
        limit = r.ay_limit
        return [
            dict(
                preset=study.preset,
                surface=study.surface,
                ay_limit=limit,
                ay_limit_g=limit / GRAVITY,
                understeer_deg_per_g=r.understeer_deg_per_g,
            )
        ]

    return run_table(studies(), rows, **(run or {}))


__all__ = ["TABLE_SURFACES", "skidpad_table", "table_study"]
