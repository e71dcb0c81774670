"""Quasi-steady laps per second for a fleet of setups in one call (sims.studies.laptime.lap_times).

    python -m benchmarks.laptime                          # 10 000 race-car setups on Monza (2.5 m spacing)
    python -m benchmarks.laptime --setups 1000 --track Norisring --ds 5

The setups vary the brake bias, downforce, aero balance, roll-stiffness share and tire friction
(uniform, seeded); one ``jit`` of the ``vmap``-ped solver; the first call compiles (timed apart), then the
best of ``--repeat`` runs is reported.  Not a test.
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.laptime", description=__doc__.split("\n\n")[0])
    ap.add_argument("--setups", type=int, default=10_000)
    ap.add_argument("--track", default="Monza")
    ap.add_argument("--ds", type=float, default=2.5)
    ap.add_argument("--preset", default="race_car")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)

    import jax
    import numpy as np

    from sims.roads import circuits
    from sims.studies.laptime import lap_times
    from sims.vehicles import presets
    from sims.vehicles.params import TireScale

    n = args.setups
    rng = np.random.default_rng(0)
    base = presets.chassis_values(args.preset)
    u = lambda lo, hi: rng.uniform(lo, hi, n)  # noqa: E731
    mu = u(0.9, 1.1)
    p = presets.get(
        args.preset,
        brake_bias_front=u(0.5, 0.7),
        lift_area=base["lift_area"] * u(0.7, 1.3),
        aero_balance_front=u(0.35, 0.5),
        roll_stiffness_front=u(0.4, 0.65),
    )
    sf, sr = p.chassis.tire_scale_front, p.chassis.tire_scale_rear
    p = p._replace(
        chassis=p.chassis._replace(
            tire_scale_front=TireScale(sf.mu_x * mu, sf.mu_y * mu, sf.k_x + 0 * mu, sf.k_y + 0 * mu),
            tire_scale_rear=TireScale(sr.mu_x * mu, sr.mu_y * mu, sr.k_x + 0 * mu, sr.k_y + 0 * mu),
        )
    )
    import jax.numpy as jnp

    def batch(x):  # every chassis leaf with the fleet axis (scalars -> (n,), per-wheel (4,) -> (n, 4))
        x = jnp.asarray(x)
        return x if (x.ndim >= 1 and x.shape[0] == n and x.shape != (4,)) else jnp.broadcast_to(x, (n,) + x.shape)

    p = p._replace(chassis=jax.tree.map(batch, p.chassis))
    line = circuits.load_raceline(args.track, ds=args.ds)
    t0 = time.perf_counter()
    res = lap_times(p, line)
    jax.block_until_ready(res.lap_time)
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(lap_times(p, line).lap_time)
        best = min(best, time.perf_counter() - t0)
    lt = np.asarray(res.lap_time)
    out = dict(setups=n, points=line.n, compile_and_first_s=first, run_s=best, laps_per_s=n / best)
    print(
        f"{n} setups x {line.n} points ({args.track}, ds {float(line.ds):.2f} m) on {jax.devices()[0].platform}: "
        f"first call {first:.1f} s, then {best:.2f} s = {n / best:,.0f} laps/s; lap time p5/p50/p95 "
        f"{np.percentile(lt, 5):.2f} / {np.percentile(lt, 50):.2f} / {np.percentile(lt, 95):.2f} s"
    )
    return out


if __name__ == "__main__":
    main()
