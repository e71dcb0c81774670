"""Vehicle parameter identification from a logged trajectory by ``grad`` through ``lax.scan`` rollouts.

Given a :class:`VehicleLog` (states, the driver's controls and optionally measured wheel loads at a fixed
step ``dt``), :func:`identify` finds the chassis / tire parameters (:data:`PARAMETERS`: mass, CG
position, CG height, yaw inertia, per-axle cornering stiffness scale, slip stiffness scale, grip) that
make the simulator reproduce the log::

    L(theta) = sum_channels mean_{windows, steps} (sim - log)^2 / scale_c^2

Truncated backprop: the log is cut into windows of ``window`` steps.  ``restart="log"`` (default)
starts every window from the *logged* state (multiple shooting: windows are independent, run as one
``vmap``; no gradient flows from one window into the next, and one bad stretch of data cannot make
the whole long rollout diverge).  ``restart="chain"`` carries the *simulated* state from one window
into the next through ``jax.lax.stop_gradient`` (a ``lax.scan`` over windows), i.e. truncated
backpropagation through time over one long rollout.  Channels: ``vx``, ``vy``, ``yaw_rate``,
``omega`` (each step's state after the step), ``fz`` (the model's wheel loads at the start of each
step vs the logged loads, when the log has them); ``scale_c`` is the RMS of the logged channel (at
least :data:`CHANNEL_FLOOR`), so the loss is dimensionless.

Parameters are optimised through the bound transform of :mod:`jaxtire.fit`
(:func:`jaxtire.fit.from_unconstrained`: a scaled sigmoid into ``(lower, upper)``) with
:func:`jaxtire.fit.minimize` (the project's one optimisation loop: Adam with a cosine schedule and
global-norm clipping, one ``lax.scan``), so every iterate is
physical; the best iterate is returned.  The default bounds are relative to the start value
(:data:`RELATIVE_BOUNDS`).

Data validation (:func:`make_log`) raises ``ValueError`` naming the channel and rows for an empty log,
channels of different lengths, NaN / inf values, negative wheel loads (ISO: compression positive) or a
wrong wheel count.

CLI::

    python -m sims identify [--noise 0.005] [--iters 150] [--window 50] [--restart log|chain]
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit import compiler_options, from_unconstrained, minimize, to_unconstrained
from sims.run.rollout import rollout
from sims.studies._progress import iteration_callback
from sims.vehicles import get_model
from sims.vehicles.params import Controls, VehicleParams, VehicleState, validate_params

__all__ = [
    "CHANNELS",
    "DEFAULT_PARAMETERS",
    "EXAMPLE_TRUTH",
    "PARAMETERS",
    "RELATIVE_BOUNDS",
    "IdentifyReport",
    "IdentifyResult",
    "VehicleLog",
    "example_truth",
    "excitation_controls",
    "get_parameter",
    "identify",
    "log_loss",
    "make_log",
    "set_parameters",
    "synthetic_log",
]

#: Residual channels of the loss.
CHANNELS = ("vx", "vy", "yaw_rate", "omega", "fz")
#: Smallest normalising scale per channel (SI units), so a channel that is ~0 in the log (``vy`` on a
#: straight) is not blown up.
CHANNEL_FLOOR = {"vx": 1.0, "vy": 0.05, "yaw_rate": 0.02, "omega": 1.0, "fz": 100.0}


# ---------------------------------------------------------------------------------------------
# Log
# ---------------------------------------------------------------------------------------------


class VehicleLog(NamedTuple):
    """A logged run at a fixed step: ``states`` (:class:`VehicleState`, leaves with a leading time axis of
    ``n`` samples, ``states[k]`` at ``t = k dt``), ``controls`` (:class:`Controls`, leading axis ``n - 1``:
    the inputs held over ``[t_k, t_k+1]``), ``fz`` the measured wheel loads [N] ``(n - 1, wheels)`` at the
    start of each step or ``None``, ``dt`` [s]."""

    states: VehicleState
    controls: Controls
    fz: Any
    dt: float

    @property
    def n_steps(self) -> int:
        return int(np.shape(self.states.vx)[0]) - 1


def _rows(mask) -> str:
    idx = np.flatnonzero(np.asarray(mask).reshape(np.shape(mask)[0], -1).any(axis=1))
    shown = ", ".join(str(int(i)) for i in idx[:5])
    more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
    return f"row{'s' if len(idx) > 1 else ''} {shown}{more}"


def make_log(
    states: VehicleState, controls: Controls, dt: float, fz=None, *, n_wheels: int | None = None
) -> VehicleLog:
    """A validated :class:`VehicleLog` (numpy float arrays).

    ``states`` has ``n >= 2`` rows, ``controls`` and ``fz`` ``n - 1`` (a controls / loads row per step;
    ``n`` rows are accepted too and the last one dropped).  Raises ``ValueError`` naming the channel for:
    an empty log, mismatched lengths, NaN / inf, negative loads, a wrong wheel count, ``dt <= 0``.
    """
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ValueError(f"log: dt = {dt!r} is not a number of seconds") from None
    if not (math.isfinite(dt) and 0.0 < dt <= 1.0):
        raise ValueError(f"log: dt = {dt} must be in (0, 1] s")
    if not isinstance(states, VehicleState):
        raise ValueError(f"log: states must be a VehicleState, got {type(states).__name__}")
    if not isinstance(controls, Controls):
        raise ValueError(f"log: controls must be a Controls, got {type(controls).__name__}")

    def arr(name, v):
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"log: channel {name!r} is not numeric") from None
        if a.ndim == 0:
            raise ValueError(f"log: channel {name!r} is a scalar; need one row per sample")
        return a

    # the tires' contact deflections are not measured: a log without them (VehicleState's default 0.0) gets zeros
    defl = ("defl_x", "defl_y")
    # the driveline state (VehicleState.drive) is None for cars without a driveline: not a channel; the full
    # vehicle's body state (VehicleState.body) is not identified (the planar model's fields are)
    fields = [f for f in VehicleState._fields if f != "body" and getattr(states, f, None) is not None]
    st = {f: arr(f, getattr(states, f)) for f in fields if f not in defl or np.ndim(getattr(states, f))}
    n = st["vx"].shape[0]
    if n == 0:
        raise ValueError("log: no rows (states.vx has length 0)")
    if n < 2:
        raise ValueError(f"log: need at least 2 samples (one step), got {n}")
    for f, a in st.items():
        if a.shape[0] != n:
            raise ValueError(
                f"log: states.{f} has {a.shape[0]} rows but states.vx has {n}; every channel "
                f"needs the same number of rows"
            )
    nw = st["omega"].shape[1] if st["omega"].ndim == 2 else None
    if st["omega"].ndim != 2 or (n_wheels is not None and nw != n_wheels) or nw not in (2, 4):
        raise ValueError(
            f"log: states.omega must have shape (rows, 2 or 4 wheels)"
            f"{'' if n_wheels is None else f' with {n_wheels} wheels'}, got {st['omega'].shape}"
        )
    for f in defl:
        st.setdefault(f, np.zeros_like(st["omega"]))
    for f, a in st.items():
        if f in defl and a.shape != st["omega"].shape:
            raise ValueError(f"log: states.{f} must have states.omega's shape {st['omega'].shape}, got {a.shape}")
        if f not in ("omega", *defl) and a.ndim != 1:
            raise ValueError(f"log: states.{f} must be 1-D (rows,), got shape {a.shape}")
    ct = {f: arr(f, getattr(controls, f)) for f in Controls._fields}
    for f, a in ct.items():
        if a.shape[0] == n:
            ct[f] = a = a[:-1]
        if a.shape[0] != n - 1:
            raise ValueError(
                f"log: controls.{f} has {a.shape[0]} rows; expected {n - 1} (one per step) or {n} (states has {n} rows)"
            )
        if f == "brake":
            if a.ndim not in (1, 2) or (a.ndim == 2 and a.shape[1] != nw):
                raise ValueError(f"log: controls.brake must be (rows,) or (rows, {nw}), got {a.shape}")
        elif a.ndim != 1:
            raise ValueError(f"log: controls.{f} must be 1-D (rows,), got shape {a.shape}")
    if fz is not None:
        fz = arr("fz", fz)
        if fz.shape[0] == n:
            fz = fz[:-1]
        if fz.ndim != 2 or fz.shape[0] != n - 1 or fz.shape[1] != nw:
            raise ValueError(
                f"log: fz has shape {fz.shape}; expected ({n - 1}, {nw}) (one row of wheel loads "
                f"per step) or ({n}, {nw})"
            )
    named = [(f"states.{f}", a) for f, a in st.items()] + [(f"controls.{f}", a) for f, a in ct.items()]
    if fz is not None:
        named.append(("fz", fz))
    for name, a in named:
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"log: channel {name!r} has NaN/inf at {_rows(bad)}; drop or fill those rows")
    if fz is not None:
        bad = fz < 0
        if bad.any():
            raise ValueError(
                f"log: wheel loads fz must be >= 0 N (ISO: compression positive); got "
                f"{fz[bad].ravel()[0]:g} at {_rows(bad)} (flip the sign of SAE-convention data)"
            )
    if (ct["brake"] < 0).any() or (ct["brake"] > 1).any():
        raise ValueError(
            f"log: controls.brake must be in [0, 1]; bad at {_rows((ct['brake'] < 0) | (ct['brake'] > 1))}"
        )
    return VehicleLog(VehicleState(**st), Controls(**ct), fz, dt)


def excitation_controls(
    n_steps: int, dt: float, *, steer_small: float = 0.03, steer_large: float = 0.1, brake: float = 0.6
) -> Controls:
    """An open-loop identification manoeuvre of ``n_steps`` steps (times scale with the duration ``T``):
    throttle 0.4 (mass: drive force / acceleration) for the first 15 %; a 0.8 Hz sine steer of
    ``steer_small`` rad (cornering stiffnesses, linear range) to 50 %; a steer step of ``steer_large``
    rad (at the grip limit: friction) to 75 %; coasting to 80 %, then straight braking at ``brake``
    pedal (slip stiffness, longitudinal load transfer: CG height) to the end.  Controls are smoothed over 0.1 s."""
    t = np.arange(n_steps) * dt
    T = n_steps * dt
    steer = np.where((t >= 0.15 * T) & (t < 0.5 * T), steer_small * np.sin(2 * np.pi * 0.8 * (t - 0.15 * T)), 0.0)
    steer = np.where((t >= 0.5 * T) & (t < 0.75 * T), steer_large, steer)
    throttle = np.where(t < 0.15 * T, 0.4, np.where(t < 0.75 * T, 0.12, 0.0))
    br = np.where(t >= 0.8 * T, brake, 0.0)
    k = max(1, int(round(0.1 / dt)))
    ker = np.ones(k) / k
    sm = lambda a: np.convolve(np.concatenate([np.full(k - 1, a[0]), a]), ker, mode="valid")  # noqa: E731
    return Controls(sm(steer), sm(throttle), sm(br))


def synthetic_log(
    params: VehicleParams,
    *,
    speed: float = 20.0,
    n_steps: int = 600,
    dt: float = 0.01,
    model="double_track",
    controls: Controls | None = None,
    noise: float = 0.0,
    seed: int = 0,
    with_loads: bool = True,
) -> VehicleLog:
    """A log of ``params`` (the hidden truth) driving :func:`excitation_controls` (or ``controls``) from
    ``speed`` [m/s]; gaussian noise of ``noise`` x the channel's RMS added to every logged channel."""
    m = get_model(model)
    if controls is None:
        controls = excitation_controls(n_steps, dt)
    dtype = jnp.asarray(params.chassis.mass).dtype
    c = jax.tree.map(lambda a: jnp.asarray(a, dtype), controls)
    s0 = m.init_state(params, speed)
    res = rollout(params, s0, c, n_steps, dt=dt, model=m, record="all")
    tr = res.trajectory
    states = jax.tree.map(
        lambda a, b: np.concatenate([np.asarray(a), np.asarray(b)[None]], axis=0), tr["state"], res.final_state
    )
    fz = np.asarray(tr["telemetry"].fz, dtype=np.float64)
    rng = np.random.default_rng(seed)
    if noise > 0:

        def noisy(a):
            a = np.asarray(a, np.float64)
            return a + noise * np.sqrt(np.mean(a * a)) * rng.standard_normal(a.shape)

        states = states._replace(
            **{f: noisy(getattr(states, f)) for f in ("vx", "vy", "yaw_rate", "omega", "ax", "ay")}
        )
        fz = np.maximum(noisy(fz), 0.0)
    ctrl = jax.tree.map(lambda a: np.asarray(a, np.float64), controls)
    return make_log(states, ctrl, dt, fz if with_loads else None, n_wheels=m.n_wheels)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

#: Identifiable parameters: name -> description.  ``cg_to_front`` keeps the wheelbase (``cg_to_rear =
#: L - a``); ``mass`` keeps the dynamic index (``yaw_inertia`` scales with it) unless ``yaw_inertia`` is
#: identified too; ``mu`` scales ``mu_x`` and ``mu_y`` of both axles; ``k_x`` both axles' slip stiffness.
PARAMETERS: dict[str, str] = {
    "mass": "mass [kg]",
    "yaw_inertia": "yaw inertia [kg m^2]",
    "cg_to_front": "CG to front axle [m]",
    "cg_height": "CG height [m]",
    "k_y_front": "front cornering stiffness scale [-]",
    "k_y_rear": "rear cornering stiffness scale [-]",
    "k_x": "slip stiffness scale [-]",
    "mu": "grip scale [-]",
}
DEFAULT_PARAMETERS = ("mass", "cg_to_front", "cg_height", "k_y_front", "k_y_rear", "mu")
#: Default bounds as factors on the start value (``cg_to_front``: fraction of the wheelbase).
RELATIVE_BOUNDS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(("mass", "yaw_inertia"), (0.5, 2.0)),
    "cg_to_front": (0.2, 0.8),
    "cg_height": (0.3, 2.0),
    **dict.fromkeys(("k_y_front", "k_y_rear", "k_x"), (0.4, 2.5)),
    "mu": (0.4, 2.0),
}


def get_parameter(params: VehicleParams, name: str):
    """The value of identifiable parameter ``name`` in ``params``."""
    ch = params.chassis
    if name in ("mass", "yaw_inertia", "cg_to_front", "cg_height"):
        return getattr(ch, name)
    if name == "k_y_front":
        return ch.tire_scale_front.k_y
    if name == "k_y_rear":
        return ch.tire_scale_rear.k_y
    if name == "k_x":
        return ch.tire_scale_front.k_x
    if name == "mu":
        return ch.tire_scale_front.mu_x
    raise ValueError(f"unknown parameter {name!r}; allowed {', '.join(PARAMETERS)}")


def set_parameters(params: VehicleParams, values: Mapping[str, Any]) -> VehicleParams:
    """``params`` with the identifiable ``values`` replaced (traceable; semantics of :data:`PARAMETERS`).
    Ratios (``mu_y / mu_x``, rear / front ``k_x``) of the start are kept."""
    ch = params.chassis
    upd: dict[str, Any] = {}
    sf, sr = ch.tire_scale_front, ch.tire_scale_rear
    for k, v in values.items():
        if k == "mass":
            upd["mass"] = v
            if "yaw_inertia" not in values:
                upd["yaw_inertia"] = ch.yaw_inertia * v / ch.mass
        elif k == "yaw_inertia":
            upd["yaw_inertia"] = v
        elif k == "cg_to_front":
            L = ch.cg_to_front + ch.cg_to_rear
            upd["cg_to_front"], upd["cg_to_rear"] = v, L - v
        elif k == "cg_height":
            upd["cg_height"] = v
        elif k == "k_y_front":
            sf = sf._replace(k_y=v)
        elif k == "k_y_rear":
            sr = sr._replace(k_y=v)
        elif k == "k_x":
            r = v / ch.tire_scale_front.k_x
            sf, sr = sf._replace(k_x=sf.k_x * r), sr._replace(k_x=sr.k_x * r)
        elif k == "mu":
            r = v / ch.tire_scale_front.mu_x
            sf, sr = sf.with_friction(r), sr.with_friction(r)
        else:
            raise ValueError(f"unknown parameter {k!r}; allowed {', '.join(PARAMETERS)}")
    return params._replace(chassis=ch._replace(**upd, tire_scale_front=sf, tire_scale_rear=sr))


def _bounds(start: VehicleParams, names, bounds):
    out = {}
    for k in names:
        if bounds and k in bounds:
            lo, hi = (float(b) for b in bounds[k])
        else:
            f0, f1 = RELATIVE_BOUNDS[k]
            if k == "cg_to_front":
                L = float(start.chassis.cg_to_front + start.chassis.cg_to_rear)
                lo, hi = f0 * L, f1 * L
            else:
                v = float(get_parameter(start, k))
                lo, hi = f0 * v, f1 * v
        x = float(get_parameter(start, k))
        if not (lo < hi and lo <= x <= hi):
            raise ValueError(f"identify: start {k} = {x:g} is outside its bounds [{lo:g}, {hi:g}]")
        out[k] = (lo, hi)
    return out


# ---------------------------------------------------------------------------------------------
# Loss
# ---------------------------------------------------------------------------------------------


def _windows(log: VehicleLog, window: int, dtype):
    """Stack the log into ``(n_windows, ...)`` windows of ``window`` steps (a trailing partial window is dropped)."""
    nw = log.n_steps // window
    n = nw * window
    f = lambda a: jnp.asarray(np.asarray(a)[:n].reshape((nw, window) + np.shape(a)[1:]), dtype)  # noqa: E731
    start = jax.tree.map(lambda a: jnp.asarray(np.asarray(a)[:n:window], dtype), log.states)
    target = jax.tree.map(lambda a: f(np.asarray(a)[1 : n + 1]), log.states)
    ctrl = jax.tree.map(f, log.controls)
    fz = None if log.fz is None else f(log.fz)
    return start, target, ctrl, fz


def _scales(log: VehicleLog, channels):
    out = {}
    for c in channels:
        a = np.asarray(log.fz if c == "fz" else getattr(log.states, c))
        out[c] = max(float(np.sqrt(np.mean(a * a))), CHANNEL_FLOOR[c])
    return out


def log_loss(params: VehicleParams, log_windows, scales: dict, *, dt: float, model, restart: str = "log"):
    """The identification loss (module docstring) of ``params`` on windowed log data (from ``_windows``)."""
    start, target, ctrl, fz = log_windows
    m = get_model(model)

    def window(s0, c):
        res = rollout(params, s0, c, jnp.shape(c.steer)[0], dt=dt, model=m, record=_record_sim)
        tr = res.trajectory
        states = jax.tree.map(lambda a, b: jnp.concatenate([a[1:], b[None]], axis=0), tr["state"], res.final_state)
        return states, tr["fz"], res.final_state

    if restart == "log":
        sim, sim_fz, _ = jax.vmap(window)(start, ctrl)
    elif restart == "chain":

        def body(s, xs):
            c = xs
            states, f, final = window(s, c)
            return jax.lax.stop_gradient(final), (states, f)

        first = jax.tree.map(lambda a: a[0], start)
        _, (sim, sim_fz) = jax.lax.scan(body, first, ctrl)
    else:
        raise ValueError(f"restart = {restart!r}; allowed 'log' or 'chain'")
    loss: jax.Array | float = 0.0
    for c, sc in scales.items():
        if c == "fz":
            if fz is None:
                continue
            r = (sim_fz - fz) / sc
        else:
            r = (getattr(sim, c) - getattr(target, c)) / sc
        loss = loss + jnp.mean(r * r)
    return loss


def _record_sim(t, s, c, tel):
    return {"state": s, "fz": tel.fz}


# ---------------------------------------------------------------------------------------------
# Identification
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class IdentifyReport:
    """Result of :func:`identify`: start / identified (/ true, when given) per parameter, losses, timing."""

    parameters: dict  # name -> (start, identified)
    true: dict | None  # name -> true value, if known
    bounds: dict
    loss_start: float
    loss_final: float
    losses: np.ndarray
    iterations: int
    window: int
    n_windows: int
    restart: str
    compile_seconds: float
    seconds: float

    @property
    def rel_error(self) -> dict | None:
        if self.true is None:
            return None
        return {k: self.parameters[k][1] / self.true[k] - 1.0 for k in self.parameters}

    def __str__(self) -> str:
        lines = [
            f"jaxtire identify ({self.iterations} Adam iterations, {self.n_windows} windows x {self.window} "
            f"steps, restart={self.restart}; compile {self.compile_seconds:.1f} s, run {self.seconds:.1f} s)",
            f"  loss: start {self.loss_start:.4e}, final {self.loss_final:.4e}",
        ]
        w = max(len(k) for k in self.parameters)
        head = f"  {'parameter':>{w}} {'start':>11} {'identified':>11}"
        if self.true is not None:
            head += f" {'true':>11} {'error':>9}"
        lines.append(head)
        err = self.rel_error
        for k, (a, b) in self.parameters.items():
            row = f"  {k:>{w}} {a:11.5g} {b:11.5g}"
            if self.true is not None and err is not None:
                row += f" {self.true[k]:11.5g} {100 * err[k]:+8.3f}%"
            lines.append(row)
        return "\n".join(lines)


class IdentifyResult(NamedTuple):
    params: VehicleParams  # start with the identified values
    values: dict  # name -> identified value (float)
    report: IdentifyReport


def identify(
    log: VehicleLog,
    start: VehicleParams,
    *,
    parameters: Sequence[str] = DEFAULT_PARAMETERS,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    window: int = 50,
    restart: str = "log",
    channels: Sequence[str] = CHANNELS,
    n_iter: int = 80,
    lr: float = 0.1,
    clip: float = 1.0,
    model="double_track",
    true: VehicleParams | None = None,
    fast_compile: bool = True,
    verbose: bool = False,
    progress=None,
) -> IdentifyResult:
    """Identify ``parameters`` of ``start`` (everything else is taken as known) from ``log``.

    ``window`` steps per window (truncated backprop; ``restart`` ``"log"`` or ``"chain"``, module
    docstring); ``channels`` of the loss (``"fz"`` is skipped when the log has no loads); Adam with
    learning rate ``lr`` (cosine-decayed to 5 %) on the unconstrained parameters, gradients clipped to global
    norm ``clip``; ``true`` (the hidden params of a synthetic log) only fills the report's error column.
    ``verbose`` prints the loss and values every 10 iterations; ``progress`` (anything with ``update(n)``,
    e.g. a tqdm bar) is advanced by the iterations done.
    Runs in the dtype of ``start`` (use ``jax.enable_x64`` and float64 params for float64).
    """
    if not isinstance(log, VehicleLog):
        raise ValueError(f"identify: log must be a VehicleLog (see make_log), got {type(log).__name__}")
    if not isinstance(start, VehicleParams):
        raise ValueError(f"identify: start must be VehicleParams, got {type(start).__name__}")
    validate_params(start, source="identify start")
    m = get_model(model)
    if np.shape(log.states.omega)[1] != m.n_wheels:
        raise ValueError(
            f"identify: the log has {np.shape(log.states.omega)[1]} wheel states but model {m.name!r} has {m.n_wheels}"
        )
    for k in parameters:
        if k not in PARAMETERS:
            raise ValueError(f"identify: unknown parameter {k!r}; allowed {', '.join(PARAMETERS)}")
    if not parameters:
        raise ValueError("identify: no parameters to identify")
    for c in channels:
        if c not in CHANNELS:
            raise ValueError(f"identify: unknown channel {c!r}; allowed {', '.join(CHANNELS)}")
    if restart not in ("log", "chain"):
        raise ValueError(f"identify: restart = {restart!r}; allowed 'log' or 'chain'")
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"identify: window = {window!r} must be an integer >= 1")
    if log.n_steps < window:
        raise ValueError(f"identify: the log has {log.n_steps} steps, fewer than one window of {window}")
    if not isinstance(n_iter, int) or n_iter < 1:
        raise ValueError(f"identify: n_iter = {n_iter!r} must be an integer >= 1")
    bd = _bounds(start, parameters, bounds)
    dtype = jnp.asarray(start.chassis.mass).dtype
    chans = tuple(c for c in channels if not (c == "fz" and log.fz is None))
    scales = _scales(log, chans)
    data = _windows(log, window, dtype)
    n_windows = int(jnp.shape(data[2].steer)[0])

    def unpack(u):
        return {k: from_unconstrained(u[k], *bd[k]).astype(dtype) for k in parameters}

    def loss_fn(u, d):
        return log_loss(set_parameters(start, unpack(u)), d, scales, dt=log.dt, model=m, restart=restart)

    def line(i, loss, u):
        vals = {k: float(v) for k, v in unpack(u).items()}
        return f"  iter {i:4d} loss {float(loss):.4e} " + " ".join(f"{k}={v:.4g}" for k, v in vals.items())

    def run(u, d):  # the shared optimisation loop of jaxtire.fit, one lax.scan over the iterations
        return minimize(
            loss_fn,
            u,
            method="adam",
            n_iter=n_iter,
            learning_rate=lr,
            clip=clip,
            decay_to=0.05,
            data=d,
            keep="best",
            callback=iteration_callback(line if verbose else None, progress),
        )

    u = {k: jnp.asarray(to_unconstrained(float(get_parameter(start, k)), *bd[k]), dtype) for k in parameters}
    t0 = time.perf_counter()
    run_c = jax.jit(run, compiler_options=compiler_options(fast_compile)).lower(u, data).compile()
    t1 = time.perf_counter()
    res = run_c(u, data)
    losses = np.asarray(res.losses)
    seconds = time.perf_counter() - t1
    if int(res.first_nonfinite) >= 0:
        raise FloatingPointError(f"identify: non-finite loss or gradient at iteration {int(res.first_nonfinite)}")
    best_u, best = res.params, float(res.loss)
    values = {k: float(v) for k, v in unpack(best_u).items()}
    start_vals = {k: float(get_parameter(start, k)) for k in parameters}
    true_vals = None if true is None else {k: float(get_parameter(true, k)) for k in parameters}
    rep = IdentifyReport(
        {k: (start_vals[k], values[k]) for k in parameters},
        true_vals,
        bd,
        float(losses[0]),
        best,
        losses,
        n_iter,
        window,
        n_windows,
        restart,
        t1 - t0,
        seconds,
    )
    return IdentifyResult(set_parameters(start, {k: jnp.asarray(v, dtype) for k, v in values.items()}), values, rep)


#: Hidden truth of the CLI / README example, relative to the hatchback preset.
EXAMPLE_TRUTH = {"mass": 1.12, "cg_to_front": 1.08, "cg_height": 1.1, "k_y_front": 0.85, "k_y_rear": 1.15, "mu": 0.9}


def example_truth(base: VehicleParams, factors: Mapping[str, float] = EXAMPLE_TRUTH) -> VehicleParams:
    """``base`` with each parameter of ``factors`` multiplied by its factor (the hidden truth of a demo)."""
    return set_parameters(base, {k: get_parameter(base, k) * f for k, f in factors.items()})
