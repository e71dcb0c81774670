"""The fleet CLI's braking Monte Carlo (``python -m sims``, :func:`sims.scenarios.braking.monte_carlo_fleet`)
as a :class:`~sims.studies.study.Study`: the same distributions as its :class:`sims.run.fleet.Sampling`
(payload factor on mass and yaw inertia, friction factor on ``mu_x`` and ``mu_y`` of both axles, stiffness
factor on ``k_x`` and ``k_y``, a surface drawn uniformly, ABS on with probability ``abs_fraction``, an
initial yaw rate ``N(0, yaw_rate0^2)``), from the study's own random design (so the draws, not the
distributions, differ from the CLI's ``jax.random`` stream; the CLI's default output is unchanged)."""

from __future__ import annotations

from sims.run.fleet import Sampling
from sims.scenarios.braking import SURFACES, V0, YAW_RATE0
from sims.studies.study import Study
from sims.studies.variation import Variation


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
) -> Study:
    """The :class:`Study` of the fleet CLI's braking Monte Carlo (module docstring); ``speed`` [m/s]."""
    vary = (
        Variation(
            "vehicle.chassis.mass",
            "uniform",
            "factor",
            sampling.mass[0],
            sampling.mass[1],
            also=("vehicle.chassis.yaw_inertia",),
        ),
        Variation(
            "vehicle.tire_scale.mu_x",
            "uniform",
            "factor",
            sampling.mu[0],
            sampling.mu[1],
            also=("vehicle.tire_scale.mu_y",),
        ),
        Variation(
            "vehicle.tire_scale.k_x",
            "uniform",
            "factor",
            sampling.stiffness[0],
            sampling.stiffness[1],
            also=("vehicle.tire_scale.k_y",),
        ),
        Variation("vehicle.surface", "choice", values=tuple(surfaces)),
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
    )


__all__ = ["monte_carlo_study"]
