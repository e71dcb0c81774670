"""Fixed-step integrators for the vehicle models: semi-implicit Euler and RK4, with substeps.

A model's ``rates(params, state, controls, h)`` returns the derivatives of the velocity states
(``vx, vy, yaw_rate, omega, ax, ay`` and the tires' contact deflections ``defl_x, defl_y``), already linearly implicit for the step ``h`` (see
:mod:`sims.vehicles.core`), with zero pose rates.  The pose kinematics (ground frame)::

    dX/dt = vx cos(psi) - vy sin(psi),   dY/dt = vx sin(psi) + vy cos(psi),   dpsi/dt = r

* :func:`semi_implicit_euler` (symplectic Euler): velocities first,
  ``v' = v + h dv/dt``, then the pose from the *new* velocities, ``psi' = psi + h r'`` and
  ``X' = X + h (vx' cos(psi_m) - vy' sin(psi_m))`` with ``psi_m = psi + h r' / 2`` (exact for a
  steady circle up to O(h^2)).  One model evaluation per step.
* :func:`rk4`: the classical four-stage Runge-Kutta on the full state (the stiff slip modes keep the
  step-``h`` implicit preconditioning in every stage, so it stays stable where explicit RK4 would not;
  it is 4th order on the non-stiff chassis motion).  Four model evaluations per step.

:func:`make_step` wraps either in ``substeps`` equal substeps per ``dt`` (``lax.fori_loop``) and
returns a pure ``step(params, state, controls, dt) -> state``; controls are held over the step.

Accuracy of the default (semi-implicit Euler, 5 ms, float32): the 100-0 km/h braking distance (locked
and ABS) and the coast-down deceleration of every preset are within 0.5 % (measured: 0.36 % at most) of
the same model at 0.1 ms in float64 (``tests/sims/vehicles/test_accuracy.py``).  The step-size error
left is first order and comes from the implicit treatment of the stiff tire modes (:mod:`sims.vehicles.core`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxtire.numerics import sincos  # vectorisable float32 sin/cos
from jaxtire.validation import ValidationError, check_int, check_range
from sims.vehicles.params import VehicleState


def pose_rates(state: VehicleState):
    """``(dX/dt, dY/dt, dpsi/dt)`` of the pose from the body-frame velocities [m/s, m/s, rad/s]."""
    s, c = sincos(state.yaw)
    return state.vx * c - state.vy * s, state.vx * s + state.vy * c, state.yaw_rate


def _axpy(state, deriv, h):
    return jax.tree.map(lambda x, d: x + h * d, state, deriv)


def semi_implicit_euler(model, params, state: VehicleState, controls, h):
    """One symplectic-Euler step of length ``h`` [s]; returns ``(state, telemetry)``."""
    d, tel = model.rates(params, state, controls, h)
    v = _axpy(state, d, h)  # every velocity-level state (the pose rates of d are zero; set below)
    yaw = state.yaw + h * v.yaw_rate
    mid = state.yaw + 0.5 * h * v.yaw_rate
    s, c = sincos(mid)
    return v._replace(x=state.x + h * (v.vx * c - v.vy * s), y=state.y + h * (v.vx * s + v.vy * c), yaw=yaw), tel


_RK4_C = (0.0, 0.5, 0.5, 1.0)
_RK4_B = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)


def rk4(model, params, state: VehicleState, controls, h):
    """One classical RK4 step of length ``h`` [s]; returns ``(state, telemetry of the first stage)``.

    The four stages run as a ``lax.scan`` (one copy of the model in the compiled program)."""

    def f(s):
        d, tel = model.rates(params, s, controls, h)
        dx, dy, dpsi = pose_rates(s)
        return d._replace(x=dx, y=dy, yaw=dpsi), tel

    k1, tel = f(state)
    dtype = jnp.result_type(state.vx)
    cs = jnp.asarray(_RK4_C[1:], dtype)
    bs = jnp.asarray(_RK4_B[1:], dtype)

    def stage(carry, cb):
        k_prev, acc = carry
        c, b = cb
        k, _ = f(_axpy(state, k_prev, c * h))
        return (k, _axpy(acc, k, b)), None

    acc0 = jax.tree.map(lambda k: _RK4_B[0] * k, k1)
    (_, acc), _ = jax.lax.scan(stage, (k1, acc0), (cs, bs))
    return _axpy(state, acc, h), tel


INTEGRATORS = {"semi_implicit_euler": semi_implicit_euler, "euler": semi_implicit_euler, "rk4": rk4}


def get_integrator(name):
    """The integrator function for ``name`` (``"semi_implicit_euler"``/``"euler"``, ``"rk4"``) or a callable."""
    if callable(name):
        return name
    try:
        return INTEGRATORS[name]
    except KeyError:
        raise ValueError(f"unknown integrator {name!r}; allowed: {', '.join(INTEGRATORS)}") from None


def check_dt(dt, name: str = "dt") -> float:
    """``dt`` [s] as a float in ``(0, 1]`` (:class:`jaxtire.validation.ValidationError` otherwise)."""
    return float(check_range(name, dt, 0.0, 1.0, lo_incl=False, source="step"))


def check_substeps(substeps) -> int:
    """``substeps`` as an integer in ``[1, 1000]`` (a bool or float is refused: it is a static argument)."""
    if not isinstance(substeps, int) or isinstance(substeps, bool):
        raise ValidationError(f"step: substeps = {substeps!r} must be an integer in [1, 1000]")
    return check_int("substeps", substeps, 1, 1000, source="step")


#: Which substep's telemetry a step returns: ``"first"`` (the runners' records: the state at the start of the
#: step and what the tires did over its first substep) or ``"last"`` (the RL environments' observations: the
#: tires one substep before the state the step returns).
TELEMETRY_POINTS = ("first", "last")


@functools.cache
def make_step_with_telemetry(model, integrator="semi_implicit_euler", substeps: int = 1, telemetry: str = "first"):
    """``step(params, state, controls, dt) -> (state, telemetry)`` with ``substeps`` substeps of ``dt / substeps``
    and the telemetry of the ``telemetry`` substep (:data:`TELEMETRY_POINTS`).  The one step function of every
    runner (:mod:`sims.run`) and of the RL environments (:mod:`sims.envs.base`); ``dt`` may be traced."""
    integ = get_integrator(integrator)
    substeps = check_substeps(substeps)
    if telemetry not in TELEMETRY_POINTS:
        raise ValueError(f"telemetry = {telemetry!r}; allowed: {', '.join(TELEMETRY_POINTS)}")

    def step(params, state, controls, dt):
        h = dt / substeps
        if substeps == 1:
            return integ(model, params, state, controls, h)
        if telemetry == "last":
            # one traced copy of the model (a loop carrying the telemetry) keeps the compile time down
            shape = jax.eval_shape(lambda s: integ(model, params, s, controls, h)[1], state)
            tel0 = jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), shape)
            return jax.lax.fori_loop(0, substeps, lambda i, c: integ(model, params, c[0], controls, h), (state, tel0))
        new, tel = integ(model, params, state, controls, h)
        new = jax.lax.fori_loop(1, substeps, lambda i, s: integ(model, params, s, controls, h)[0], new)
        return new, tel

    return step


@functools.cache
def make_step(model, integrator="semi_implicit_euler", substeps: int = 1):
    """A pure ``step(params, state, controls, dt) -> state`` for ``model`` (e.g.
    :data:`sims.vehicles.double_track.MODEL`) with the chosen integrator and substeps."""
    swt = make_step_with_telemetry(model, integrator, substeps)

    def step(params, state, controls, dt):
        return swt(params, state, controls, dt)[0]

    return step
