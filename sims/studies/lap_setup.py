"""Car setups optimised by gradient through the quasi-steady lap (:mod:`sims.vehicles.qss`).

A :class:`LapSetup` holds the setup parameters a race engineer moves, each a scalar (or a batch)::

    brake_bias_front      front share of the brake torque [-]
    lift_area             ClA [m^2]; the wing moves the drag with it: CdA = CdA_0 + (ClA - ClA_0) / WING_LD
    aero_balance_front    front share of the downforce [-]
    roll_stiffness_front  front share of the roll stiffness [-]
    mass                  [kg] (ballast)
    weight_front          static front axle share b / L [-] (the CG moves along the wheelbase)
    mu_scale              multiplier of the tires' friction scales (mu_x, mu_y) [-]
    k_scale               multiplier of the tires' slip-stiffness scales (k_x, k_y) [-]

:func:`apply_setup` writes one into the vehicle's :class:`~sims.vehicles.params.Chassis`; :func:`lap_time`
is the lap time as a function of it (differentiable: ``jax.grad``); :func:`optimise_setup` minimises it
over chosen fields inside bounds with the project's one optimisation loop
(:func:`jaxtire.fit.loop.minimize`, optax Adam or L-BFGS, bounds by :mod:`jaxtire.fit.transforms`), then
re-runs the lap at the optimum and at each single-parameter change to say what each move gained.

The point-mass lap does not see the tires' slip stiffness (only their peak friction), so ``k_scale``
has a (near) zero gradient there; the transient lap does see it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.fit.loop import minimize
from jaxtire.fit.transforms import from_unconstrained, to_unconstrained
from jaxtire.validation import ValidationError
from sims.roads.circuits import Track
from sims.vehicles.params import TireScale, VehicleParams
from sims.vehicles.qss import solve_lap

#: Incremental lift-to-drag ratio of the wing [-] (a race-car rear wing adds ~4-5 N of downforce per N of
#: drag near its design point; Katz, *Race Car Aerodynamics*, 1995, ch. 6).
WING_LD = 4.5


class LapSetup(NamedTuple):
    """Setup parameters (module docstring)."""

    brake_bias_front: Any
    lift_area: Any
    aero_balance_front: Any
    roll_stiffness_front: Any
    mass: Any
    weight_front: Any
    mu_scale: Any = 1.0
    k_scale: Any = 1.0


#: Default bounds of :func:`optimise_setup` (field -> (low, high)).
BOUNDS: dict[str, tuple[float, float]] = {
    "brake_bias_front": (0.4, 0.8),
    "lift_area": (0.5, 5.0),
    "aero_balance_front": (0.3, 0.6),
    "roll_stiffness_front": (0.3, 0.7),
    "mass": (600.0, 1000.0),
    "weight_front": (0.35, 0.55),
    "mu_scale": (0.8, 1.2),
    "k_scale": (0.7, 1.3),
}

#: The fields :func:`optimise_setup` moves by default (the ones with a trade-off).
FREE = ("brake_bias_front", "lift_area", "aero_balance_front", "roll_stiffness_front", "weight_front")


def setup_of(params: VehicleParams) -> LapSetup:
    """The :class:`LapSetup` of ``params`` as it is (``mu_scale = k_scale = 1``)."""
    ch = params.chassis
    one = jnp.ones_like(ch.mass)
    return LapSetup(
        ch.brake_bias_front,
        ch.lift_area,
        ch.aero_balance_front,
        ch.roll_stiffness_front,
        ch.mass,
        ch.cg_to_rear / (ch.cg_to_front + ch.cg_to_rear),
        one,
        one,
    )


def apply_setup(params: VehicleParams, setup: LapSetup) -> VehicleParams:
    """``params`` with ``setup`` written into its chassis (relative to ``params``: the wing's drag follows the
    lift change, the tire scales are multiplied)."""
    ch = params.chassis
    L = ch.cg_to_front + ch.cg_to_rear
    sf, sr = ch.tire_scale_front, ch.tire_scale_rear
    scale = lambda s: TireScale(
        s.mu_x * setup.mu_scale, s.mu_y * setup.mu_scale, s.k_x * setup.k_scale, s.k_y * setup.k_scale
    )  # noqa: E731
    ch = ch._replace(
        brake_bias_front=setup.brake_bias_front,
        lift_area=setup.lift_area,
        drag_area=ch.drag_area + (setup.lift_area - ch.lift_area) / WING_LD,
        aero_balance_front=setup.aero_balance_front,
        roll_stiffness_front=setup.roll_stiffness_front,
        mass=setup.mass,
        cg_to_front=(1.0 - setup.weight_front) * L,
        cg_to_rear=setup.weight_front * L,
        tire_scale_front=scale(sf),
        tire_scale_rear=scale(sr),
    )
    return params._replace(chassis=ch)


def lap_time(setup: LapSetup, params: VehicleParams, line: Track, **kw):
    """The QSS lap time [s] (:func:`sims.vehicles.qss.solve_lap`) of ``params`` with ``setup``."""
    return solve_lap(apply_setup(params, setup), line, **kw).lap_time


class SetupResult(NamedTuple):
    """:func:`optimise_setup`'s answer: ``start`` and ``best`` setups, their re-run lap times [s]
    ``time_start`` and ``time_best``, ``gains`` field -> lap time [s] gained by moving that field alone from
    its start to its best value (re-run laps; positive = faster), ``moves`` field -> (start, best), and the
    optimiser's ``losses`` per iteration."""

    start: LapSetup
    best: LapSetup
    time_start: float
    time_best: float
    gains: dict
    moves: dict
    losses: Any


def optimise_setup(
    params: VehicleParams,
    line: Track,
    fields=FREE,
    bounds: dict | None = None,
    *,
    method: str = "adam",
    n_iter: int = 30,
    learning_rate: float = 0.1,
    solve_kw: dict | None = None,
    compiler_options=None,
) -> SetupResult:
    """Minimise the QSS lap time over ``fields`` of the :class:`LapSetup` within ``bounds`` (default
    :data:`BOUNDS`) by gradient (module docstring): ``n_iter`` steps of ``method`` (``"adam"``, or ``"lbfgs"``)
    on the bounded fields' unconstrained images.  ``compiler_options``: of the re-run laps' compile.  Raises :class:`~jaxtire.validation.ValidationError` for an
    unknown field or a start outside its bounds."""
    bounds = {**BOUNDS, **(bounds or {})}
    fields = tuple(fields)
    for f in fields:
        if f not in LapSetup._fields:
            raise ValidationError(f"optimise_setup: unknown setup field {f!r}; allowed: {', '.join(LapSetup._fields)}")
    start = setup_of(params)
    for f in fields:
        v, (lo, hi) = float(getattr(start, f)), bounds[f]
        if not lo < v < hi:
            raise ValidationError(f"optimise_setup: the start {f} = {v} is outside its bounds ({lo}, {hi})")
    kw = solve_kw or {}

    def assemble(u):
        vals = {f: from_unconstrained(u[f], *bounds[f]) for f in fields}
        return start._replace(**vals)

    def loss(u):
        return lap_time(assemble(u), params, line, **kw)

    u0 = {f: to_unconstrained(getattr(start, f), *bounds[f]) for f in fields}
    res = minimize(loss, u0, method=method, n_iter=n_iter, learning_rate=learning_rate)
    best = assemble(res.params)
    run = jax.jit(lambda s: lap_time(s, params, line, **kw), compiler_options=compiler_options)
    t0, t1 = float(run(start)), float(run(best))
    gains = {f: t0 - float(run(start._replace(**{f: getattr(best, f)}))) for f in fields}
    moves = {f: (float(getattr(start, f)), float(getattr(best, f))) for f in fields}
    return SetupResult(start, best, t0, t1, gains, moves, res.losses)
