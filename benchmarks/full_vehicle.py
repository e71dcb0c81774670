"""The full vehicle side by side with the double track: CPU time per vehicle-step at fleet sizes.

Usage (from the repository root)::

    python -m benchmarks.full_vehicle                    # 10 000 and 100 000 vehicles, 200 steps
    python -m benchmarks.full_vehicle --counts 1000 --steps 50   # a quick look
    python -m benchmarks.full_vehicle --rounds 3         # alternate the two models 3 times (a shared machine)

Each model runs the same open-loop step steer (``lax.scan`` of ``--steps`` steps of 5 ms, hatchback preset,
bundled MF tire, float32) on a fleet of ``n`` vehicles; the timing excludes compilation (one warm-up run)
and is the best of ``--repeats`` runs, reported as process CPU time per vehicle-step (wall time times the
cores used is what the machine pays) and wall time per vehicle-step.  ``--rounds`` runs the pair (double
track, then full) that many times per fleet size, so that on a shared machine both models see the same
load, and prints the median of the rounds' ratios.  The issue's target: the full model at most 2.5x the
double track's CPU time per vehicle-step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp

from sims.vehicles import get_model, presets
from sims.vehicles.params import Controls, fleet_axes
from sims.vehicles.suspension import preset_suspension


def _fleet(n: int, model: str):
    p = presets.get("hatchback")
    ch = jax.tree.map(lambda v: jnp.broadcast_to(v, (n,) + jnp.shape(v)), p.chassis)
    susp = None
    if model == "full":
        susp = jax.tree.map(lambda v: jnp.broadcast_to(v, (n,)), preset_suspension("hatchback", p.chassis))
    return p._replace(chassis=ch, suspension=susp)


def measure(model_name: str, n: int, steps: int, repeats: int) -> dict:
    """Best-of-``repeats`` timings of ``steps`` steps of a fleet of ``n`` (CPU and wall seconds per vehicle-step)."""
    model = get_model(model_name)
    params = _fleet(n, model_name)
    axes = fleet_axes(params)
    speed = jnp.linspace(15.0, 30.0, n)
    s0 = jax.jit(jax.vmap(lambda p, v: model.init_state(p, v), in_axes=(axes, 0)))(params, speed)
    steer = jnp.where(jnp.arange(steps) > steps // 4, 0.05, 0.0)

    @jax.jit
    def run(p, s):
        def one(p, s):
            def body(s, u):
                return model.step(p, s, Controls(steer=u, throttle=0.1), 0.005), None

            return jax.lax.scan(body, s, steer)[0]

        return jax.vmap(one, in_axes=(axes, 0))(p, s)

    t0 = time.perf_counter()
    jax.block_until_ready(run(params, s0))
    compile_s = time.perf_counter() - t0
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        jax.block_until_ready(run(params, s0))
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    work = n * steps
    return dict(
        model=model_name,
        vehicles=n,
        steps=steps,
        compile_s=compile_s,
        cpu_ns_per_vehicle_step=1e9 * best_cpu / work,
        wall_ns_per_vehicle_step=1e9 * best_wall / work,
    )


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.full_vehicle", description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="alternate the two models this many times per size")
    ap.add_argument("--json", default=None, help="write the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'vehicles':>9} {'model':>13} {'CPU ns/veh-step':>16} {'wall ns/veh-step':>17} {'ratio':>6}")
    for n in args.counts:
        ratios = []
        for rnd in range(args.rounds):
            ref = None
            for name in ("double_track", "full"):
                r = measure(name, n, args.steps, args.repeats)
                ref = r if name == "double_track" else ref
                r["cpu_ratio"] = r["cpu_ns_per_vehicle_step"] / ref["cpu_ns_per_vehicle_step"] if ref else 1.0
                r["round"] = rnd
                rows.append(r)
                print(
                    f"{n:>9} {name:>13} {r['cpu_ns_per_vehicle_step']:>16.0f} "
                    f"{r['wall_ns_per_vehicle_step']:>17.0f} {r['cpu_ratio']:>6.2f}",
                    flush=True,
                )
            ratios.append(rows[-1]["cpu_ratio"])
        if args.rounds > 1:
            print(f"{n:>9} median CPU ratio of {args.rounds} rounds: {statistics.median(ratios):.2f}")
    print(f"({os.cpu_count()} CPUs, {jax.default_backend()}, {jax.device_count()} device(s))")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
