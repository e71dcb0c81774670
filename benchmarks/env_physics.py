"""Where a race env step's time goes: its vehicle physics alone, the fleet runner on the same vehicles, the whole
``env.step`` and gymnax CartPole-v1, side by side in one process.

    python -m benchmarks.env_physics                          # RaceMonza-v0, 4 096 envs, 50 env steps, best of 3
    python -m benchmarks.env_physics --substeps 5 --rounds 2

Rows (each one jitted ``lax.scan`` of ``--steps`` env steps over ``--envs`` environments, best of ``--repeat``):

* ``physics``: only the env's vehicle physics, :meth:`sims.envs.base.Environment.simulate` (``--substeps``
  semi-implicit Euler steps of the double track over the env's 50 ms with the episode's mass and friction)
  vmapped over the envs, random held controls;
* ``fleet runner``: :func:`sims.run.fleet.fleet_rollout` of the same vehicles for ``steps x substeps`` steps of
  ``dt / substeps`` (a constant brake-free driver), reported per env step;
* ``env.step``: the whole step (physics with the env's own substeps, track pose, progress, lap timer, preview,
  observation, reward, the automatic reset), uniform random actions;
* ``gymnax CartPole-v1``: the same harness as ``env.step`` (``benchmarks.envs.make_runner``).

``physics`` and ``fleet runner`` bound what any observation, reward or reset work can reach: the step cannot be
faster than its vehicle physics.  Not a test; figures in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import platform

import jax
import jax.numpy as jnp

import sims.envs as envs
from benchmarks.envs import gymnax_cartpole, make_runner, measure
from sims.drivers import Constant
from sims.envs.base import vehicle_for
from sims.run.fleet import fleet_rollout
from sims.vehicles.params import Controls


def physics_runner(env, params, state, steps: int):
    """A jitted ``run(key)`` of ``steps`` env steps of ``env``'s vehicle physics alone (random held controls)."""
    n = jnp.shape(state.t)[0]

    def one(st, vs, a):
        c = Controls(steer=0.05 * a[0], throttle=jnp.maximum(a[1], 0.0), brake=jnp.maximum(-a[1], 0.0))
        return env.simulate(params, st._replace(vehicle=vs), c)[0]

    @jax.jit
    def run(key):
        def body(vs, k):
            a = jax.random.uniform(k, (n, 2), minval=-0.3, maxval=0.3)
            return jax.vmap(one)(state, vs, a), None

        vs, _ = jax.lax.scan(body, state.vehicle, jax.random.split(key, steps))
        return vs.vx

    return run


def fleet_runner(env, params, state, steps: int, substeps: int):
    """``run(key)``: :func:`fleet_rollout` of the envs' vehicles, ``steps x substeps`` steps of ``dt / substeps``."""
    chassis = jax.vmap(lambda ph: vehicle_for(params, ph).chassis)(state.phys)
    fleet = params.vehicle._replace(chassis=chassis)
    driver = Constant(steer=0.01, throttle=0.2, brake=0.0)
    dt = float(params.dt) / substeps

    def run(key):
        del key
        out = fleet_rollout(fleet, state.vehicle, driver, steps * substeps, dt=dt, driver_axes=None)
        return out.final_state.vx

    return run


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.env_physics", description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="jaxtire/RaceMonza-v0")
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--substeps", type=int, default=10, help="substeps of the physics and fleet rows")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="repeat every row this many times, alternated")
    args = ap.parse_args(argv)
    env = envs.make(args.env)
    params = env.default_params
    n, steps = args.envs, args.steps
    _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), n), params)
    rows = {
        f"physics ({args.substeps} substeps)": physics_runner(
            envs.make(args.env, substeps=args.substeps), params, state, steps
        ),
        f"fleet runner ({args.substeps} steps per env step)": fleet_runner(env, params, state, steps, args.substeps),
        f"env.step ({env.substeps} substeps)": make_runner(env, params, n, steps),
    }
    cart = gymnax_cartpole()
    if cart is not None:
        rows["gymnax CartPole-v1"] = make_runner(cart[0], cart[1], n, steps, gymnax_env=True)
    print(f"{args.env}, {n} envs x {steps} env steps; {platform.processor() or platform.machine()}, {jax.devices()}")
    out: dict = {name: [] for name in rows}
    for r in range(args.rounds):
        for name, run in rows.items():
            sps, first = measure(run, n, steps, args.repeat)
            out[name].append(sps)
            print(f"  round {r + 1}  {name:<40} {sps:>12,.0f} env-steps/s  (compile + first {first:.1f} s)", flush=True)
    if cart is not None:
        ref = max(out["gymnax CartPole-v1"])
        for name, vals in out.items():
            print(f"  {name:<40} best {max(vals):>12,.0f}  {max(vals) / ref:.3f}x CartPole")
    return out


if __name__ == "__main__":
    main()
