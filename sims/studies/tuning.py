"""Controller tuning by ``grad`` through fleet rollouts: the ABS slip controller and a lane-change path follower.

Both tuners optimise controller gains by gradient descent through a ``lax.scan`` rollout
(:func:`sims.run.rollout.rollout`), ``vmap``-ed over a small randomised fleet that is re-drawn at every
iteration (stochastic gradient over surfaces, payloads, tire friction / stiffness and speeds), with
:func:`jaxtire.fit.minimize` (the project's one optimisation loop; Adam, cosine-decayed learning rate,
global-norm clipping).  Every gain is optimised through the bound transform of :mod:`jaxtire.fit`
(:func:`jaxtire.fit.pack` / :func:`~jaxtire.fit.unpack`: scaled sigmoid into its ``(lower, upper)``
range), so every iterate is a valid controller.  The result is judged on *held-out*
fleets (PRNG seeds never used for training), untuned against tuned.

ABS (:func:`tune_abs`).  The gains of :class:`sims.drivers.StraightBraking` (``target_slip``,
``min_slip``, ``slip_offset``, ``bandwidth``, ``zeta``; :data:`ABS_GAINS`) are float
pytree leaves, so ``grad`` reaches them directly.  Objective: the mean over the fleet of the stopping
distance (path length ``integral |v| dt``) relative to the ideal ``v0^2 / (2 mu g)`` of that vehicle
(``mu`` = surface grip x tire friction scale), so every surface weighs alike.  A vehicle that has not
stopped at the end of the fixed horizon adds ``v_T^2 / (2 a_mean)`` (its mean deceleration so far),
a smooth estimate of the rest.

Lane change (:func:`tune_lateral`).  :class:`sims.drivers.LaneChangeDriver` follows a single lane
change of ``width`` [m] over ``length`` [m] (a cosine-shaped ``y_ref(x)``) with curvature feed-forward plus
preview / heading / yaw-rate feedback::

    e_y   = y - y_ref(x),   e_psi = wrap(psi - atan(y_ref'(x))),   kappa_ref = y_ref'' / (1 + y_ref'^2)^1.5
    steer = L kappa_ref - k_y (e_y + t_preview V e_psi) - k_psi e_psi - k_r (r - V kappa_ref)

with a proportional speed hold.  Objective: ``mean e_y^2 / (0.1 m)^2 + w_effort mean (d steer/dt)^2 /
(0.1 rad/s)^2`` over the fleet and the run (tracking error with a steering-rate penalty).

CLI::

    python -m sims tune [--vehicles 6] [--iters 40] [--lateral] [--seed 0] [--heldout 3]
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.fit import compiler_options, minimize, pack, unpack
from jaxtire.surfaces import lookup, surface_id
from jaxtire.validation import ValidationError, check_range
from sims.drivers import LaneChangeDriver, StraightBraking, lane_reference
from sims.run.fleet import Sampling
from sims.run.fleet import sample_fleet as _sample
from sims.run.rollout import rollout
from sims.studies._progress import iteration_callback
from sims.vehicles import get_model, presets
from sims.vehicles.params import VehicleParams, fleet_axes

__all__ = [
    "ABS_BOUNDS",
    "ABS_GAINS",
    "BrakingSetup",
    "LANE_BOUNDS",
    "LANE_GAINS",
    "LaneSetup",
    "TuneReport",
    "TuneResult",
    "abs_gains",
    "braking_loss",
    "evaluate_abs",
    "evaluate_lateral",
    "lane_costs",
    "lane_gains",
    "lane_loss",
    "stopping_distances",
    "sample_fleet",
    "tune_abs",
    "tune_lateral",
]

# ---------------------------------------------------------------------------------------------
# Randomised fleets
# ---------------------------------------------------------------------------------------------

#: Surfaces of the ABS tuning fleet by default (those a car stops on within the 5 s horizon from 22 m/s).
BRAKING_SURFACES = ("asphalt_dry", "concrete", "asphalt_wet", "cobbles", "gravel", "dirt")


class FleetDraw(NamedTuple):
    """What :func:`sample_fleet` drew per vehicle: mass factor (payload), tire friction factor, tire
    stiffness factor, surface id, initial speed [m/s] and the effective friction ``grip x mu``."""

    mass_factor: Any
    mu_factor: Any
    stiffness_factor: Any
    surface_id: Any
    speed: Any
    friction: Any


def sample_fleet(
    key,
    base: VehicleParams,
    n: int,
    *,
    surfaces: Sequence[str],
    mass=(0.9, 1.3),
    mu=(0.85, 1.1),
    stiffness=(0.85, 1.15),
    speed=(15.0, 22.0),
) -> tuple[VehicleParams, FleetDraw]:
    """``n`` vehicles around ``base`` drawn by :func:`sims.run.fleet.sample_fleet` (payload ``mass``, tire
    friction ``mu`` and ``stiffness`` factors, one surface per vehicle from ``surfaces``, names or ids),
    plus an initial speed U(speed) [m/s].  Deterministic given ``key``."""
    if not surfaces:
        raise ValueError("surfaces: need at least one surface")
    check_range("speed", [float(v) for v in speed], 0.0, 200.0, lo_incl=False, source="sample_fleet")
    ids = tuple(surface_id(s) if isinstance(s, str) else int(s) for s in surfaces)
    k_fleet, k_speed = jax.random.split(key)
    fleet, drawn = _sample(k_fleet, base, n, Sampling(mass=mass, mu=mu, stiffness=stiffness, surfaces=ids))
    dtype = jnp.asarray(base.chassis.mass).dtype
    v0 = jax.random.uniform(k_speed, (n,), dtype, float(speed[0]), float(speed[1]))
    friction = lookup(base.surfaces, drawn.surface_id).grip * drawn.mu_factor * base.chassis.tire_scale_front.mu_x
    return fleet, FleetDraw(drawn.mass_factor, drawn.mu_factor, drawn.stiffness_factor, drawn.surface_id, v0, friction)


# ---------------------------------------------------------------------------------------------
# Gains and bounds
# ---------------------------------------------------------------------------------------------

#: Tuned gains of :class:`sims.drivers.StraightBraking`.
ABS_GAINS = ("target_slip", "min_slip", "slip_offset", "bandwidth", "zeta")
#: ``(lower, upper)`` of each ABS gain.
ABS_BOUNDS: dict[str, tuple[float, float]] = {
    "target_slip": (0.02, 0.25),
    "min_slip": (0.003, 0.05),
    "slip_offset": (0.0, 1.0),
    "bandwidth": (5.0, 80.0),
    "zeta": (0.2, 2.0),
}


def abs_gains(drv: StraightBraking | None = None) -> dict[str, float]:
    """The ABS gains of ``drv`` (default: :class:`StraightBraking`'s defaults, the *untuned* controller)."""
    drv = StraightBraking() if drv is None else drv
    return {k: float(getattr(drv, k)) for k in ABS_GAINS}


def _check_gains(gains: Mapping[str, float], bounds: Mapping[str, tuple[float, float]], what: str) -> dict:
    """``gains`` as floats, each inside its ``bounds`` (through :mod:`jaxtire.validation`)."""
    unknown = set(gains) - set(bounds)
    if unknown:
        raise ValidationError(f"{what}: unknown gain(s) {sorted(unknown)}; allowed {sorted(bounds)}")
    return {k: float(check_range(k, v, *bounds[k], source=what)) for k, v in gains.items()}


# ---------------------------------------------------------------------------------------------
# Braking objective
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FleetSetup:
    """What every tuning scenario shares: a randomised fleet of ``preset`` cars on ``tire`` (a jaxtire tire
    pytree, ``None`` for the bundled tire, ``"mf"`` or ``"simple"``) on ``surfaces``, initial ``speed`` [m/s],
    payload ``mass``, tire friction ``mu`` and ``stiffness`` factors (uniform ranges, drawn by
    :func:`sample_fleet`), ``horizon`` [s] at step ``dt`` [s] on ``model``."""

    preset: str = "hatchback"
    tire: Any = None
    model: str = "double_track"
    dt: float = 0.01
    horizon: float = 5.0
    surfaces: tuple = BRAKING_SURFACES
    speed: tuple = (15.0, 22.0)
    mass: tuple = (0.9, 1.3)
    mu: tuple = (0.85, 1.1)
    stiffness: tuple = (0.85, 1.15)

    @property
    def n_steps(self) -> int:
        return max(1, int(round(self.horizon / self.dt)))

    def base(self) -> VehicleParams:
        return presets.get(self.preset, tire=self.tire)

    def fleet(self, key, n: int, base: VehicleParams | None = None):
        """``(fleet, FleetDraw)`` of ``n`` vehicles around ``base`` (default :meth:`base`)."""
        return sample_fleet(
            key,
            self.base() if base is None else base,
            n,
            surfaces=self.surfaces,
            mass=self.mass,
            mu=self.mu,
            stiffness=self.stiffness,
            speed=self.speed,
        )


@dataclasses.dataclass(frozen=True)
class BrakingSetup(FleetSetup):
    """The ABS tuning / evaluation scenario: a randomised fleet of ``preset`` cars with ``tire`` tires
    braking at full pedal with ABS from ``speed`` [m/s] (uniform range) on ``surfaces``, ``horizon`` [s]
    at step ``dt`` [s] on ``model``; payload ``mass``, tire friction ``mu`` and stiffness factors
    (uniform ranges), yaw-rate disturbance ``yaw_rate0`` [rad/s]."""

    yaw_rate0: float = 0.01


@dataclasses.dataclass(frozen=True)
class _PathLength:
    """Reducer: path length ``integral |v| dt`` [m] (differentiable also at standstill)."""

    def init(self, params, state):
        return jnp.zeros_like(state.vx)

    def update(self, acc, t, state, controls, tel, new, params, dt):
        v2 = new.vx * new.vx + new.vy * new.vy
        return acc + (jnp.sqrt(v2 + 1e-6) - 1e-3) * dt


jax.tree_util.register_dataclass(_PathLength, data_fields=[], meta_fields=[])


def _stop_one(gains, p, v0, *, setup: BrakingSetup, n_steps: int):
    m = get_model(setup.model)
    s0 = m.init_state(p, v0, yaw_rate=setup.yaw_rate0)
    dtype = jnp.result_type(s0.vx)
    drv = StraightBraking(abs_on=jnp.asarray(1.0, dtype), **{k: jnp.asarray(v, dtype) for k, v in gains.items()})
    res = rollout(p, s0, drv, n_steps, dt=setup.dt, model=m, reducer=_PathLength())
    fs = res.final_state
    v_end = jnp.sqrt(fs.vx * fs.vx + fs.vy * fs.vy + 1e-6) - 1e-3
    a_mean = jnp.maximum((v0 - v_end) / (n_steps * setup.dt), 0.5)
    return res.reduced + v_end * v_end / (2.0 * a_mean), v_end


def stopping_distances(
    gains: Mapping[str, Any], fleet: VehicleParams, speed, setup: BrakingSetup, n_steps: int | None = None
):
    """Per-vehicle stopping distance [m] (plus the end-speed tail estimate, module docstring) and end speed
    of ``fleet`` braking with ABS ``gains`` (a dict of :data:`ABS_GAINS`, missing ones at their defaults);
    differentiable in the gains.  ``n_steps`` defaults to the setup's horizon."""
    n_steps = setup.n_steps if n_steps is None else n_steps
    fn = lambda p, v: _stop_one(dict(gains), p, v, setup=setup, n_steps=n_steps)  # noqa: E731
    return jax.vmap(fn, in_axes=(fleet_axes(fleet), 0))(fleet, speed)


def braking_loss(u: dict, fleet: VehicleParams, draw: FleetDraw, setup: BrakingSetup):
    """Mean over the fleet of stopping distance / ideal ``v0^2 / (2 mu g)`` for unconstrained gains ``u``;
    returns ``(loss, distances)``."""
    gains = unpack(u, ABS_BOUNDS)
    d, _ = stopping_distances(gains, fleet, draw.speed, setup)
    ideal = draw.speed**2 / (2.0 * draw.friction * GRAVITY)
    return jnp.mean(d / ideal), d


# ---------------------------------------------------------------------------------------------
# Lane change
# ---------------------------------------------------------------------------------------------


#: Tuned gains of :class:`LaneChangeDriver` and their bounds.
LANE_GAINS = ("k_y", "k_psi", "t_preview", "k_r")
LANE_BOUNDS: dict[str, tuple[float, float]] = {
    "k_y": (0.0, 1.0),
    "k_psi": (0.0, 3.0),
    "t_preview": (0.0, 1.5),
    "k_r": (0.0, 0.5),
}


@dataclasses.dataclass(frozen=True)
class LaneSetup(FleetSetup):
    """The lane-change scenario: ``preset`` cars on ``surfaces`` at ``speed`` [m/s] (uniform range) change
    lane by ``width`` [m] over ``length`` [m] starting at ``x0`` [m]; ``horizon`` [s] at step ``dt`` [s];
    randomised payload / friction / stiffness as :class:`BrakingSetup`; ``w_effort`` weighs the
    steering-rate penalty."""

    horizon: float = 4.0
    surfaces: tuple = ("asphalt_dry", "concrete", "asphalt_wet")
    speed: tuple = (16.0, 22.0)
    stiffness: tuple = (0.8, 1.2)
    x0: float = 10.0
    length: float = 40.0
    width: float = 3.5
    w_effort: float = 0.05


@dataclasses.dataclass(frozen=True)
class _LaneCost:
    """Reducer: sums of ``e_y^2`` and ``(d steer / dt)^2`` and the previous steer."""

    x0: Any
    length: Any
    width: Any

    def init(self, params, state):
        z = jnp.zeros_like(state.vx)
        return (z, z, z, z)

    def update(self, acc, t, state, controls, tel, new, params, dt):
        se, ss, prev, k = acc
        y, _, _ = lane_reference(new.x, self.x0, self.length, self.width)
        steer = jnp.asarray(controls.steer)
        rate = jnp.where(k > 0, (steer - prev) / dt, 0.0)
        return (se + (new.y - y) ** 2, ss + rate * rate, steer, k + 1.0)


jax.tree_util.register_dataclass(_LaneCost, data_fields=["x0", "length", "width"], meta_fields=[])


def lane_costs(gains: Mapping[str, Any], fleet: VehicleParams, speed, setup: LaneSetup):
    """Per-vehicle ``(rms e_y [m], rms steer rate [rad/s])`` over the run of the lane change with
    :class:`LaneChangeDriver` ``gains``; differentiable in the gains."""
    m = get_model(setup.model)

    def one(p, v0):
        s0 = m.init_state(p, v0)
        dtype = jnp.result_type(s0.vx)
        f = lambda v: jnp.asarray(v, dtype)  # noqa: E731
        drv = LaneChangeDriver(
            **{k: f(v) for k, v in gains.items()},
            x0=f(setup.x0),
            length=f(setup.length),
            width=f(setup.width),
            target_speed=v0,
        )
        red = _LaneCost(f(setup.x0), f(setup.length), f(setup.width))
        res = rollout(p, s0, drv, setup.n_steps, dt=setup.dt, model=m, reducer=red)
        se, ss, _, k = res.reduced
        return jnp.sqrt(se / k), jnp.sqrt(ss / k)

    return jax.vmap(one, in_axes=(fleet_axes(fleet), 0))(fleet, speed)


def lane_loss(u: dict, fleet: VehicleParams, draw: FleetDraw, setup: LaneSetup):
    """``mean(e_y^2) / 0.1^2 + w_effort mean(steer_rate^2) / 0.1^2`` over the fleet.

    Returns ``(loss, (rms_e, rms_rate))``: scalars, loss dimensionless, ``rms_e`` [m], ``rms_rate`` [rad/s].
    """
    gains = unpack(u, LANE_BOUNDS)
    e, r = lane_costs(gains, fleet, draw.speed, setup)
    return jnp.mean(e * e) / 0.01 + setup.w_effort * jnp.mean(r * r) / 0.01, (e, r)


def lane_gains(drv: LaneChangeDriver | None = None) -> dict[str, float]:
    """The gains of ``drv`` (default: :class:`LaneChangeDriver`'s defaults, the *untuned* controller)."""
    drv = LaneChangeDriver() if drv is None else drv
    return {k: float(getattr(drv, k)) for k in LANE_GAINS}


# ---------------------------------------------------------------------------------------------
# Tuning loop and report
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TuneReport:
    """Result of :func:`tune_abs` / :func:`tune_lateral`: gains before and after, the training loss per
    iteration, held-out metric per seed (untuned, tuned), timings."""

    controller: str
    gains: dict  # name -> (start, tuned)
    losses: np.ndarray  # training loss per iteration (each on a freshly drawn fleet)
    metric: str  # what heldout holds
    heldout: dict  # seed -> (untuned, tuned) of the metric (mean over that seed's fleet)
    n_vehicles: int
    iterations: int
    compile_seconds: float
    seconds: float

    @property
    def heldout_mean(self) -> tuple[float, float]:
        v = np.asarray(list(self.heldout.values()), dtype=np.float64).reshape(-1, 2)
        return float(v[:, 0].mean()), float(v[:, 1].mean())

    def __str__(self) -> str:
        a, b = self.heldout_mean
        lines = [
            f"jaxtire tuning: {self.controller} ({self.iterations} Adam iterations on fleets of "
            f"{self.n_vehicles}, compile {self.compile_seconds:.1f} s, run {self.seconds:.1f} s)",
            f"  training loss: first {self.losses[0]:.4g}, last {self.losses[-1]:.4g}, "
            f"mean of last 5 {np.mean(self.losses[-5:]):.4g}",
            "  gains (untuned -> tuned):",
        ]
        w = max(len(k) for k in self.gains)
        for k, (x0, x1) in self.gains.items():
            lines.append(f"    {k:>{w}} {x0:10.5g} -> {x1:<10.5g}")
        lines.append(f"  held-out {self.metric} (mean over each seed's fleet): untuned -> tuned")
        for s, (x0, x1) in self.heldout.items():
            lines.append(f"    seed {s:>5}: {x0:9.4f} -> {x1:9.4f}  ({100 * (x1 / x0 - 1):+.2f} %)")
        lines.append(f"    mean      : {a:9.4f} -> {b:9.4f}  ({100 * (b / a - 1):+.2f} %)")
        return "\n".join(lines)


class TuneResult(NamedTuple):
    gains: dict  # tuned gains, floats
    report: TuneReport


#: The keywords of the tuning loop (:func:`tune_abs`, :func:`tune_lateral`) and their defaults: fleet
#: size per iteration, Adam iterations, learning rate (unconstrained gains), gradient clip (global norm),
#: training seed, held-out seeds, fast XLA compile, ``verbose`` (the loss every 10 iterations) and
#: ``progress`` (anything with ``update(n)``, e.g. a tqdm bar, advanced by the iterations done).
TUNING_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    dict(
        n_vehicles=6,
        n_iter=40,
        lr=0.1,
        clip=1.0,
        seed=0,
        heldout_seeds=(1001, 1002, 1003),
        fast_compile=True,
        verbose=False,
        progress=None,
    )
)


def _run_tuning(
    loss_fn, start: dict, fixed: dict, bounds: dict, setup, *, what: tuple, metric_fn, **loop
) -> TuneResult:
    """Adam on the unconstrained gains ``start`` (``fixed`` held) through :func:`jaxtire.fit.minimize` (the
    project's one optimisation loop), a new fleet each iteration (``fold_in(PRNGKey(seed), i)``), then the
    held-out fleets; ``what`` = (controller, metric) names of the report, ``loop`` :data:`TUNING_DEFAULTS`."""
    unknown = set(loop) - set(TUNING_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown tuning keywords {sorted(unknown)}; allowed {sorted(TUNING_DEFAULTS)}")
    o = {**TUNING_DEFAULTS, **loop}
    n_iter, n_vehicles, seed = o["n_iter"], o["n_vehicles"], o["seed"]
    if not isinstance(n_iter, int) or n_iter < 1:
        raise ValueError(f"n_iter = {n_iter!r} must be an integer >= 1")
    if not isinstance(n_vehicles, int) or n_vehicles < 1:
        raise ValueError(f"n_vehicles = {n_vehicles!r} must be an integer >= 1")
    clash = set(o["heldout_seeds"]) & {seed}
    if clash:
        raise ValueError(f"held-out seeds {sorted(clash)} equal the training seed; pick others")
    dtype = jnp.result_type(float)
    u_fixed = pack(fixed, bounds, dtype)
    u0 = pack(start, bounds, dtype)
    key = jax.random.PRNGKey(seed)
    opts = compiler_options(o["fast_compile"])

    def loss(u, fl, dr):
        return loss_fn({**u, **u_fixed}, fl, dr, setup)

    def line(i, value, u):
        return f"  iter {i:4d} loss {float(value):.5f}"

    def run(u, base, key):  # base and key as arguments: no large constants baked into the program
        return minimize(
            lambda uu, d: loss(uu, *d)[0],
            u,
            method="adam",
            n_iter=n_iter,
            learning_rate=o["lr"],
            clip=o["clip"],
            decay_to=0.1,
            data=lambda i: setup.fleet(jax.random.fold_in(key, i), n_vehicles, base),
            keep="last",
            callback=iteration_callback(line if o["verbose"] else None, o["progress"]),
        )

    base = setup.base()
    t0 = time.perf_counter()
    run_c = jax.jit(run, compiler_options=opts).lower(u0, base, key).compile()
    t1 = time.perf_counter()
    res = run_c(u0, base, key)
    if int(res.first_nonfinite) >= 0:
        raise FloatingPointError(f"non-finite loss or gradient at iteration {int(res.first_nonfinite)}")
    u = res.params
    tuned = {**fixed, **{k: float(v) for k, v in unpack(u, bounds).items()}}
    evaluate = jax.jit(loss, compiler_options=opts)
    heldout = {}
    for s in o["heldout_seeds"]:
        fl, dr = setup.fleet(jax.random.PRNGKey(s), n_vehicles)
        heldout[int(s)] = (metric_fn(evaluate(u0, fl, dr)), metric_fn(evaluate(u, fl, dr)))
    t2 = time.perf_counter()
    full = {**start, **fixed}
    gains = {k: (full[k], tuned[k]) for k in bounds}
    rep = TuneReport(what[0], gains, np.asarray(res.losses), what[1], heldout, n_vehicles, n_iter, t1 - t0, t2 - t1)
    return TuneResult(tuned, rep)


def tune_abs(
    setup: BrakingSetup = BrakingSetup(),
    *,
    start: Mapping[str, float] | None = None,
    gains: Sequence[str] = ABS_GAINS,
    **loop,
) -> TuneResult:
    """Tune the ABS gains of :class:`StraightBraking` (``gains``, a subset of :data:`ABS_GAINS`; the
    others stay at ``start``) to minimise the fleet's relative stopping distance (module docstring).

    ``start`` defaults to the driver's defaults (the untuned controller).  ``loop``: the keywords of
    :data:`TUNING_DEFAULTS` (``n_vehicles``, ``n_iter``, ``lr``, ``clip``, ``seed``, ``heldout_seeds``,
    ``fast_compile``, ``verbose``, ``progress``).  Each iteration draws a new fleet of ``n_vehicles`` from
    ``setup`` (key ``fold_in(PRNGKey(seed), i)``); the report's held-out metric is the mean stopping
    distance [m] of fleets drawn with ``heldout_seeds``, untuned vs tuned.
    """
    full = _check_gains({**abs_gains(), **(start or {})}, ABS_BOUNDS, "tune_abs start")
    for k in gains:
        if k not in ABS_GAINS:
            raise ValueError(f"tune_abs: unknown gain {k!r}; allowed {ABS_GAINS}")
    fixed = {k: v for k, v in full.items() if k not in gains}
    free = {k: full[k] for k in gains}
    what = ("ABS (StraightBraking)", "stopping distance [m]")
    return _run_tuning(
        braking_loss, free, fixed, ABS_BOUNDS, setup, what=what, metric_fn=lambda out: float(jnp.mean(out[1])), **loop
    )


def tune_lateral(setup: LaneSetup = LaneSetup(), *, start: Mapping[str, float] | None = None, **loop) -> TuneResult:
    """Tune the :class:`LaneChangeDriver` gains (:data:`LANE_GAINS`) to minimise the lane-change tracking
    error with a steering-rate penalty (module docstring); held-out metric: the loss itself.  ``loop``: the
    keywords of :data:`TUNING_DEFAULTS`, as :func:`tune_abs`."""
    full = _check_gains({**lane_gains(), **(start or {})}, LANE_BOUNDS, "tune_lateral start")
    what = ("lane change (LaneChangeDriver)", "loss (e_y^2/0.1^2 + w steer_rate^2/0.1^2)")
    return _run_tuning(lane_loss, full, {}, LANE_BOUNDS, setup, what=what, metric_fn=lambda out: float(out[0]), **loop)


# ---------------------------------------------------------------------------------------------
# Evaluation (forward only, longer horizons)
# ---------------------------------------------------------------------------------------------


def _eval_fn(kind: str, setup, n_steps: int):
    """One jitted forward evaluation per (scenario, setup, steps), shared by untuned and tuned gains (cached
    when ``setup`` is hashable, i.e. its tire is a name or ``None``)."""
    try:
        return _eval_fn_cached(kind, setup, n_steps)
    except TypeError:  # a setup holding a tire pytree: not hashable
        return _eval_fn_uncached(kind, setup, n_steps)


def _eval_fn_uncached(kind: str, setup, n_steps: int):
    if kind == "abs":
        return jax.jit(lambda g, fl, v: stopping_distances(g, fl, v, setup, n_steps))
    return jax.jit(lambda g, fl, v: lane_costs(g, fl, v, setup))


_eval_fn_cached = functools.lru_cache(maxsize=8)(_eval_fn_uncached)


def evaluate_abs(
    gains: Mapping[str, float],
    setup: BrakingSetup,
    seeds: Sequence[int],
    n_vehicles: int,
    *,
    horizon: float | None = None,
) -> dict[int, np.ndarray]:
    """Per seed, the stopping distances [m] of that seed's fleet with ABS ``gains`` (forward only;
    ``horizon`` [s] default twice the setup's, so every vehicle stops and no tail estimate enters)."""
    n_steps = int(round((2.0 * setup.horizon if horizon is None else horizon) / setup.dt))
    fn = _eval_fn("abs", setup, n_steps)
    g = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in gains.items()}
    out = {}
    for s in seeds:
        fl, dr = setup.fleet(jax.random.PRNGKey(s), n_vehicles)
        d, v_end = fn(g, fl, dr.speed)
        out[int(s)] = np.asarray(d)
    return out


def evaluate_lateral(gains: Mapping[str, float], setup: LaneSetup, seeds: Sequence[int], n_vehicles: int):
    """Per seed, ``(rms lateral error [m], rms steer rate [rad/s])`` arrays of that seed's fleet."""
    fn = _eval_fn("lane", setup, setup.n_steps)
    g = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in gains.items()}
    out = {}
    for s in seeds:
        fl, dr = setup.fleet(jax.random.PRNGKey(s), n_vehicles)
        e, r = fn(g, fl, dr.speed)
        out[int(s)] = (np.asarray(e), np.asarray(r))
    return out


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------
