"""Gradients through rollouts: finite over 2 000 steps (braking through standstill), and equal to central
finite differences in float64 on a short closed-loop rollout."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit import FAST_COMPILE_OPTIONS
from sims.drivers import SineSteer, StraightBraking
from sims.studies.identify import get_parameter, set_parameters
from sims.run.rollout import rollout
from sims.vehicles import DOUBLE_TRACK, presets


def _jit(f):
    return jax.jit(f, compiler_options=FAST_COMPILE_OPTIONS if jax.default_backend() == "cpu" else None)


def test_gradient_through_2000_step_rollout_is_finite():
    """10 s at 5 ms: ABS braking from 25 m/s with a steer offset, to a standstill and 6 s beyond (MF tires)."""
    base = presets.get("hatchback")

    def loss(theta):
        p = set_parameters(base, {"mass": theta["mass"], "k_y_front": theta["k_y_front"], "mu": theta["mu"]})
        drv = StraightBraking(abs_on=1.0, steer=0.01, target_slip=theta["target_slip"], bandwidth=theta["bandwidth"])
        s0 = DOUBLE_TRACK.init_state(p, 25.0, yaw_rate=0.01)
        fs = rollout(p, s0, drv, 2000, dt=0.005).final_state
        return fs.x + fs.y + fs.yaw

    theta = {"mass": jnp.float32(1400.0), "k_y_front": jnp.float32(0.95), "mu": jnp.float32(1.0),
             "target_slip": jnp.float32(0.08), "bandwidth": jnp.float32(30.0)}
    val, g = _jit(jax.value_and_grad(loss))(theta)
    assert np.isfinite(float(val)) and 20.0 < float(val) < 60.0
    for k, v in g.items():
        assert np.isfinite(float(v)), (k, v)
    assert abs(float(g["mass"])) > 0 and abs(float(g["mu"])) > 0 and abs(float(g["target_slip"])) > 0


def test_gradient_matches_finite_differences_float64():
    """200 steps at 10 ms of a closed-loop sine steer with speed hold; grad vs central differences, 1e-4 relative."""
    with jax.enable_x64(True):
        base = presets.get("hatchback", tire="simple", dtype=jnp.float64)
        names = ("mass", "cg_to_front", "k_y_front", "k_y_rear", "mu", "yaw_inertia")

        def loss(theta):
            p = set_parameters(base, {k: theta[k] for k in names})
            drv = SineSteer(amplitude=theta["amplitude"], frequency=0.8, t_start=0.2, target_speed=22.0)
            s0 = DOUBLE_TRACK.init_state(p, 20.0)
            fs = rollout(p, s0, drv, 200, dt=0.01).final_state
            return fs.y + 10.0 * fs.yaw_rate + 0.1 * fs.vx + fs.vy

        theta = {k: jnp.asarray(float(get_parameter(base, k)) * f, jnp.float64)
                 for k, f in zip(names, (1.05, 0.97, 0.9, 1.1, 0.95, 1.02))}
        theta["amplitude"] = jnp.asarray(0.04, jnp.float64)
        vg = _jit(jax.value_and_grad(loss))
        val, g = vg(theta)
        assert np.isfinite(float(val))
        for k, x in theta.items():
            h = 1e-6 * max(abs(float(x)), 1e-3)
            up = float(vg({**theta, k: x + h})[0])
            dn = float(vg({**theta, k: x - h})[0])
            fd = (up - dn) / (2 * h)
            ad = float(g[k])
            assert abs(ad - fd) <= 1e-4 * max(abs(fd), 1e-8 * abs(float(val)) / abs(float(x))), (k, ad, fd)
