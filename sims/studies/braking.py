"""The fleet CLI's braking runs as :class:`~sims.studies.study.Study` presets.

The Monte Carlo (``python -m sims``, :func:`monte_carlo_study`): payload
factor on mass and yaw inertia, friction factor on ``mu_x`` and ``mu_y`` of both axles, stiffness factor on
``k_x`` and ``k_y`` (the ranges of a :class:`sims.run.fleet.Sampling`), a surface drawn uniformly, ABS on with
probability ``abs_fraction``, an initial yaw rate ``N(0, yaw_rate0^2)``.  The CLI draws its fleet from this
study (:func:`sims.studies.study.inputs`, the studies' one sampler), so ``python -m sims study`` of the file
``--save-study`` writes runs the CLI's very vehicles.

The braking table (``python -m sims --scenario braking-table``, :func:`table_study`, :func:`braking_table`): per
preset, one study of the braking scenario on the grid surface x ``abs_on`` (locked, ABS), one run a cell, at
the fixed initial yaw rate ``yaw_rate0``; the rows add each cell's locked-wheel reference distance
(:func:`sims.scenarios.braking.reference_distance`) and :func:`sims.scenarios.braking.format_table` prints them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sims.run.fleet import Sampling
from sims.scenarios.braking import SURFACES, V0, YAW_RATE0, reference_distance
from sims.scenarios.config import check_config
from sims.studies import study as sm
from sims.studies.study import Study
from sims.studies.tables import run_table
from sims.studies.variation import Variation, sampling_variations
from sims.vehicles import presets
from sims.vehicles.params import replace_chassis


def monte_carlo_study(
    vehicles: int = 10_000,
    *,
    preset: str = "hatchback",
    surfaces=SURFACES,
    abs_fraction: float = 0.5,
    speed: float = V0,
    yaw_rate0: float = YAW_RATE0,
    seed: int = 0,
    sampling: Sampling = Sampling(),
    tire: str | None = None,
    name: str = "braking-monte-carlo",
    options: Mapping[str, Any] | None = None,
) -> Study:
    """The :class:`Study` of the fleet CLI's braking Monte Carlo (module docstring); ``speed`` [m/s];
    ``options`` the braking scenario's static options (``dt``, ``model``, ``max_time``).  Arguments outside
    :data:`sims.scenarios.config.SCENARIO_RANGES` raise :class:`~jaxtire.validation.ValidationError`."""
    check_config("monte_carlo_study", n=vehicles, abs_fraction=abs_fraction, yaw_rate0=yaw_rate0, speed=speed)
    vary = (
        *sampling_variations(sampling._replace(surfaces=tuple(surfaces))),
        Variation("scenario.abs_on", "choice", values=(0.0, 1.0), weights=(1.0 - abs_fraction, abs_fraction)),
        Variation("scenario.yaw_rate0", "normal", mean=0.0, sd=yaw_rate0, low=-10.0, high=10.0),
    )
    return Study(
        scenario="braking",
        preset=preset,
        tire=tire,
        settings={"speed": speed},
        vary=vary,
        runs=vehicles,
        seed=seed,
        name=name,
        options=dict(options or {}),
    )


def table_study(
    preset: str = "hatchback",
    surfaces=SURFACES,
    *,
    speed: float = V0,
    yaw_rate0: float = YAW_RATE0,
    tire: str | None = None,
    options: Mapping[str, Any] | None = None,
    chassis: Mapping[str, float] | None = None,
) -> Study:
    """The :class:`Study` of one preset's rows of the braking table (module docstring): the grid ``abs_on`` in
    ``(0, 1)`` x ``surfaces``, one run a cell, from ``speed`` [m/s] with the initial yaw rate ``yaw_rate0``
    [rad/s]; ``options`` the braking scenario's static options (``dt``, ``model``, ``max_time``); ``chassis``
    fixed chassis fields (e.g. ``{"drag_area": 0.0}``, one-value grids)."""
    check_config("table_study", yaw_rate0=yaw_rate0, speed=speed)
    fixed = tuple(Variation(f"vehicle.chassis.{k}", "grid", values=(float(v),)) for k, v in (chassis or {}).items())
    vary = (
        *fixed,
        Variation("scenario.abs_on", "grid", values=(0.0, 1.0)),  # outermost: locked rows, then the ABS rows
        Variation("vehicle.surface", "grid", values=tuple(surfaces)),
    )
    return Study(
        scenario="braking",
        preset=preset,
        tire=tire,
        settings={"speed": speed, "yaw_rate0": yaw_rate0},
        vary=vary,
        runs=1,
        name=f"braking-table-{preset}",
        options=dict(options or {}),
    )


def braking_table(preset_names=presets.PRESET_NAMES, surfaces=SURFACES, *, run=None, **kw) -> list[dict]:
    """The braking table: one row per preset x surface x mode (``locked``, ``abs``) with the braking metrics
    (``distance``, ``stop_time``, ``stopped``, ``spun``) and the locked-wheel ``reference`` distance [m]; each
    preset's :func:`table_study` (``kw``: that function's keywords) run by :func:`sims.studies.tables.run_table`
    (``run``: its keywords, ``compiler_options``, ``devices``, ``on_study``)."""

    def rows(study: Study, col) -> list[dict]:
        base = sm._vehicle(study)  # the reference's vehicle: the preset with the table's fixed chassis fields
        base = base._replace(chassis=replace_chassis(base.chassis, **kw.get("chassis", None) or {}))
        return [
            dict(
                preset=study.preset,
                surface=str(col["vehicle.surface_name"][i]),
                mode="abs" if col["scenario.abs_on"][i] else "locked",
                distance=float(col["distance"][i]),
                stop_time=float(col["stop_time"][i]),
                stopped=bool(col["stopped"][i]),
                spun=bool(col["spun"][i]),
                reference=reference_distance(base, str(col["vehicle.surface_name"][i]), study.settings["speed"]),
            )
            for i in range(len(col["run"]))
        ]

    return run_table((table_study(name, surfaces, **kw) for name in preset_names), rows, **(run or {}))


__all__ = ["braking_table", "monte_carlo_study", "table_study"]
