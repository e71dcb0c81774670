"""Side by side in one process: jaxtire (batch sharded over the host devices) vs the numba baseline, 1 and all threads.

    python -m benchmarks.side_by_side [CARS STEPS] [--devices N]

The process is set up as the CLI's: :func:`sims.run._xla.tune_cpu` before JAX starts (``--devices`` host
devices, default one per core); a user's ``XLA_FLAGS`` win.

Each timed block (one implementation, one thread count) starts after the harness's settle pause
(:data:`benchmarks.harness.SETTLE_S`) and two untimed calls:
numba's OpenMP workers keep spinning for milliseconds after a parallel loop ends (libgomp's default wait
policy), as XLA's pool does after a call, and without the pause the next block's threads share the cores
with those spinners (measured: jaxtire's tire 8.7 -> 14-16 ms per 1e6 points when called right after
numba's).  The pause gives every block the machine as if alone; the spinning *within* a block (which
helps each implementation's own next call) is kept.

Prints the agreement (max |diff| / max |value|) and, for 5 alternated rounds, wall / CPU ns per evaluation
of the MF 6.1 tire and the MF curve at 1e6 points and per vehicle-step of the 4-wheel fleet
(``python -m benchmarks.side_by_side CARS STEPS``, default 10 000 cars x 100 steps per call: jaxtire's
``lax.scan`` rollout vs :func:`benchmarks.compiled.vehicle_kernel`, same fleet, same initial state)
(the figures of ``PERF_NOTES.md``).  Needs numba.
"""
# ruff: noqa: E401, E702, E731, B023


def main():
    import json
    import os
    import sys
    import time

    argv = sys.argv[1:]
    devices = os.cpu_count()
    if "--devices" in argv:
        i = argv.index("--devices")
        devices = int(argv[i + 1])
        del argv[i : i + 2]
    from sims.run._xla import tune_cpu

    tune_cpu(host_devices=devices)
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxtire
    from benchmarks import compiled as cb
    from benchmarks import harness, inputs
    from jaxtire.slip import slip_angle, slip_ratio

    n = 1_000_000
    R = inputs.WHEEL_RADIUS
    d = inputs.tire_inputs(n)
    a = [d[k] for k in ("vx", "vy", "omega", "gamma", "fz")]
    p = jaxtire.default_tire(dtype=jnp.float32)

    def tire(vx, vy, omega, gamma, fz):
        o = jaxtire.mf_forces(p, slip_ratio(omega, R, vx), slip_angle(vx, vy), gamma, fz, vx)
        return o.fx, o.fy, o.mz

    devs = jax.devices()
    mesh = jax.sharding.Mesh(np.array(devs), ("b",))
    sh = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("b"))
    aj = [jax.device_put(jnp.asarray(x), sh) for x in a]
    x = inputs.curve_inputs(n)
    xj = jax.device_put(jnp.asarray(x), sh)
    ft = jax.jit(tire)
    fc = jax.jit(lambda v: jaxtire.magic_formula(v, *inputs.MF_BCDE))
    t0 = time.time()
    kern = cb.tire_kernel(cb.default_coefs(), R)
    outs = [np.empty(n, np.float32) for _ in range(3)]
    kern(*a, *outs)
    print("numba compile", time.time() - t0, flush=True)
    B, C, D, E = (np.float32(v) for v in inputs.MF_BCDE)
    oc = np.empty(n, np.float32)
    cb.curve(x, B, C, D, E, oc)
    jo = [np.asarray(v) for v in ft(*aj)]
    print(
        "rel diff fx fy mz", [float(np.max(np.abs(u - v)) / np.max(np.abs(v))) for u, v in zip(outs, jo, strict=False)]
    )
    print("curve rel diff", float(np.max(np.abs(oc - np.asarray(fc(xj)))) / np.max(np.abs(oc))))
    # the 4-wheel fleet: jaxtire's scan rollout (one device, as the suite's scan rows) vs the numba kernel
    cars, steps = (int(v) for v in (argv + ["10000", "100"])[:2])
    dt = 0.005
    fleet = inputs.jax_fleet(cars)
    roll = jax.jit(inputs.fleet_rollout_fn(dt, steps))
    ch, _tire, table, state0, controls = inputs.numpy_fleet(cars)
    t0 = time.time()
    vstep = cb.fleet_stepper(cb.vehicle_kernel(cb.default_coefs()), ch, table)
    vs = cb.fleet_state(state0)
    vstep(vs, controls, dt, steps)
    print("numba vehicle compile + 1 call", time.time() - t0, flush=True)
    jv = roll(*fleet)
    print(
        f"vehicle rel diff after {steps} steps vx, omega",
        [float(np.max(np.abs(u - np.asarray(v))) / np.max(np.abs(u))) for u, v in ((vs[3], jv.vx), (vs[6], jv.omega))],
    )

    def tm(f, reps=5):
        time.sleep(harness.SETTLE_S)  # the other implementation's spinning workers go idle (module docstring)
        f()
        f()
        w = []
        c = []
        for _ in range(reps):
            c0 = time.process_time()
            t0 = time.perf_counter()
            f()
            w.append(time.perf_counter() - t0)
            c.append(time.process_time() - c0)
        i = int(np.argmin(w))
        return round(w[i] / n * 1e9, 2), round(c[i] / n * 1e9, 2)

    for _r in range(5):
        res = {"load": os.getloadavg()[0], "devices": len(devs), "XLA_FLAGS": os.environ.get("XLA_FLAGS")}
        res["jax_tire"] = tm(lambda: jax.block_until_ready(ft(*aj)))
        cb.set_threads(1)
        res["numba1_tire"] = tm(lambda: kern(*a, *outs))
        cb.set_threads(None)
        res["numbaall_tire"] = tm(lambda: kern(*a, *outs))
        res["jax_curve"] = tm(lambda: jax.block_until_ready(fc(xj)))
        cb.set_threads(1)
        res["numba1_curve"] = tm(lambda: cb.curve(x, B, C, D, E, oc))
        cb.set_threads(None)
        res["numbaall_curve"] = tm(lambda: cb.curve(x, B, C, D, E, oc))
        m = cars * steps / n  # the timings below are per vehicle-step
        res["jax_vehicle"] = [round(v / m, 2) for v in tm(lambda: jax.block_until_ready(roll(*fleet)), reps=3)]
        cb.set_threads(1)
        res["numba1_vehicle"] = [
            round(v / m, 2) for v in tm(lambda: vstep(cb.fleet_state(state0), controls, dt, steps), 3)
        ]
        cb.set_threads(None)
        res["numbaall_vehicle"] = [
            round(v / m, 2) for v in tm(lambda: vstep(cb.fleet_state(state0), controls, dt, steps), 3)
        ]
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
