"""Quasi-steady laps per second for a fleet of setups in one call (sims.vehicles.qss.lap_times).

    python -m benchmarks.laptime                          # 10 000 race-car setups on Monza (2.5 m spacing)
    python -m benchmarks.laptime --setups 1000 --track Norisring --ds 5
    python -m benchmarks.laptime --setups 1000 --transient 10       # + 1 000 transient laps, first 10 s

The setups vary the brake bias, downforce, aero balance, roll-stiffness share and tire friction
(uniform, seeded); one ``jit`` of the ``vmap``-ped solver; the first call compiles (timed apart), then the
best of ``--repeat`` runs is reported.  ``--transient T``: then the transient laps of the same setups
(:class:`sims.scenarios.lap.TransientLap`, :class:`sims.drivers.LapFollower` at ``--margin`` of each setup's QSS
profile, double track, dt 5 ms) over the first ``T`` seconds of the lap, in one compiled fleet program;
vehicle-steps per second (compile apart).  Not a test.
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
    ap.add_argument("--transient", type=float, default=0.0, help="seconds of transient lap to run (0: none)")
    ap.add_argument("--margin", type=float, default=0.85)
    args = ap.parse_args(argv)

    import jax
    import numpy as np

    from sims.roads import circuits
    from sims.vehicles import presets
    from sims.vehicles.params import TireScale
    from sims.vehicles.qss import lap_times

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
    if args.transient > 0:
        out.update(transient(p, line, res, args))
    return out


def transient(p, line, qss, args) -> dict:
    """Vehicle-steps per second of the transient laps (module docstring)."""
    import jax.numpy as jnp
    import numpy as np

    from sims.roads import circuits
    from sims.scenarios.base import run_scenario
    from sims.scenarios.lap import TransientLap, path_from_line

    v = jnp.asarray(qss.v)
    geom = path_from_line(line, dtype=v.dtype)._replace(speed=jnp.concatenate([v, v[:, :1]], axis=1))
    sc = TransientLap(line=geom, track=circuits.load_circuit(args.track, ds=args.ds), max_time=args.transient)
    met, stats = run_scenario(sc, p, {"margin": args.margin})
    n = len(met["spun"])
    print(
        f"transient: {n} laps x {stats.steps} steps ({args.transient:g} s of the lap at {args.margin:g} of the QSS "
        f"profile): compile {stats.compile_s:.1f} s, run {stats.run_s:.1f} s = {stats.vehicle_steps_per_s:,.0f} "
        f"vehicle-steps/s; spun {int(np.sum(met['spun']))}"
    )
    return dict(transient_vehicle_steps_per_s=stats.vehicle_steps_per_s, transient_compile_s=stats.compile_s)


if __name__ == "__main__":
    main()
