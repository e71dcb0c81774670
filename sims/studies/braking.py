"""The fleet CLI's braking Monte Carlo (``python -m sims``) as a :class:`~sims.studies.study.Study`: payload
factor on mass and yaw inertia, friction factor on ``mu_x`` and ``mu_y`` of both axles, stiffness factor on
``k_x`` and ``k_y`` (the ranges of a :class:`sims.run.fleet.Sampling`), a surface drawn uniformly, ABS on with
probability ``abs_fraction``, an initial yaw rate ``N(0, yaw_rate0^2)``.  The CLI draws its fleet from this
study (:func:`sims.studies.study.inputs`, the studies' one sampler), so ``python -m sims study`` of the file
``--save-study`` writes runs the CLI's very vehicles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sims.run.fleet import Sampling
from sims.scenarios.braking import SURFACES, V0, YAW_RATE0
from sims.scenarios.config import check_config
from sims.studies.study import Study
from sims.studies.variation import Variation, sampling_variations


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


__all__ = ["monte_carlo_study"]
