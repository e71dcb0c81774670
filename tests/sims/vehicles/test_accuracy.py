"""Invariant 3 of issue 14: the default step (5 ms semi-implicit Euler, float32) is within 0.5 % of the
converged result of the same model (0.1 ms, float64) for every preset: 100-0 km/h braking distance,
locked and with ABS, and the coast-down deceleration from 100 km/h.

The four presets run as one vmapped fleet (every leaf, tires included, batched), so each quantity
compiles once per step size."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims.drivers import StraightBraking
from sims.vehicles import double_track as dt
from sims.vehicles import presets
from sims.vehicles.params import Controls

V0 = 100.0 / 3.6
T_BRAKE = 6.0  # every preset stops within 6 s from 100 km/h on dry asphalt
T_COAST = 2.0
TOL = 0.005


def _fleet(dtype=None):
    ps = [presets.get(n, dtype=dtype) for n in presets.PRESET_NAMES]
    return jax.tree.map(lambda *v: jnp.stack([jnp.asarray(x) for x in v]), *ps)


def _distance(p, abs_on, h, n):
    """Path length until the speed first drops below 0.1 m/s (as sims.scenarios.braking measures it)."""
    drv = StraightBraking(abs_on=abs_on)
    s0 = dt.init_state(p, V0)

    def body(c, t):
        s, ds, d, stopped = c
        ctl, ds = drv(t, s, p, ds, h)
        s2 = dt.step(p, s, ctl, h)
        v0, v1 = jnp.hypot(s.vx, s.vy), jnp.hypot(s2.vx, s2.vy)
        d = d + jnp.where(stopped, 0.0, 0.5 * (v0 + v1) * h)
        return (s2, ds, d, stopped | (v1 < 0.1)), None

    t = jnp.arange(n, dtype=s0.vx.dtype) * h
    (_, _, d, stopped), _ = jax.lax.scan(body, (s0, drv.init(p, s0), jnp.zeros_like(s0.vx), False), t)
    return jnp.where(stopped, d, jnp.nan)


def _decel(p, h, n):
    s = jax.lax.scan(lambda s, _: (dt.step(p, s, Controls(), h), None), dt.init_state(p, V0), None, length=n)[0]
    return (V0 - s.vx) / (n * h)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _measure(params, h, n_brake_coast):
    n_brake, n_coast = n_brake_coast
    dtype = params.chassis.mass.dtype
    locked = jax.vmap(lambda p: _distance(p, jnp.zeros((), dtype), h, n_brake))(params)
    abs_ = jax.vmap(lambda p: _distance(p, jnp.ones((), dtype), h, n_brake))(params)
    coast = jax.vmap(lambda p: _decel(p, h, n_coast))(params)
    return jnp.stack([locked, abs_, coast], -1)


def _run(h, dtype=None):
    n = (int(round(T_BRAKE / h)), int(round(T_COAST / h)))
    return np.asarray(_measure(_fleet(dtype), h, n), np.float64)


@pytest.fixture(scope="module")
def errors():
    default = _run(0.005)
    with jax.enable_x64(True):
        converged = _run(1e-4, jnp.float64)
    assert np.isfinite(default).all() and np.isfinite(converged).all()
    return default / converged - 1.0


@pytest.mark.parametrize(
    "i, quantity", [(0, "locked braking distance"), (1, "ABS braking distance"), (2, "coast-down deceleration")]
)
def test_3_default_step_within_half_a_percent_of_the_converged_step_for_every_preset(errors, i, quantity):
    err = dict(zip(presets.PRESET_NAMES, np.round(100 * errors[:, i], 3), strict=True))
    assert np.abs(errors[:, i]).max() < TOL, f"{quantity}: error [%] {err}"
