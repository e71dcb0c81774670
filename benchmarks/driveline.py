"""Cost per vehicle-step of the driveline (``python -m benchmarks.driveline``) beside today's drive.

The hatchback at full throttle from rest, a fleet of ``--vehicles`` cars for ``--steps`` steps of 5 ms
(compiled once, timed over ``--repeats`` runs, the best kept): ``today`` the chassis' one-number drive
(``VehicleParams.driveline = None``), ``driveline`` the preset's engine, gearbox and differentials,
``driveline+tc+esc`` with traction and stability control on.  Prints ns per vehicle-step and the ratio.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

from sims.drivers import Constant
from sims.run.fleet import fleet_rollout, fleet_start, make_fleet
from sims.vehicles import presets
from sims.vehicles.controls import ChassisControls, StabilityControl, TractionControl


def case(params, n: int, steps: int, repeats: int) -> float:
    """Best time per vehicle-step [ns] of ``steps`` steps of a fleet of ``n`` copies of ``params``."""
    fleet = make_fleet(params, n)
    m, s0, drv = fleet_start(fleet, "double_track", Constant(throttle=1.0))
    run = jax.jit(lambda s: fleet_rollout(fleet, s, drv, steps, dt=0.005, model=m, driver_axes=0).final_state.vx)
    jax.block_until_ready(run(s0))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(run(s0))
        best = min(best, time.perf_counter() - t)
    return best / (n * steps) * 1e9


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.driveline", description=__doc__.split("\n\n")[0])
    ap.add_argument("--vehicles", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    base = presets.get("hatchback")
    dl = presets.get_driveline("hatchback")
    on = ChassisControls(TractionControl(on=jnp.float32(1.0)), StabilityControl(on=jnp.float32(1.0)))
    cases = {
        "today": base,
        "driveline": base._replace(driveline=dl),
        "driveline+tc+esc": base._replace(driveline=dl._replace(controls=on)),
    }
    out = {k: case(p, args.vehicles, args.steps, args.repeats) for k, p in cases.items()}
    dev = jax.devices()[0]
    print(f"{args.vehicles} vehicles x {args.steps} steps on {dev.platform} ({dev.device_kind})")
    for k, v in out.items():
        print(f"  {k:18s} {v:8.1f} ns per vehicle-step   x{v / out['today']:.2f}")
    return out


if __name__ == "__main__":
    main()
