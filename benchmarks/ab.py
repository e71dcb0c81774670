"""A/B of XLA:CPU settings on the MF 6.1 tire and the MF curve, each setting in its own process, alternated.

    python -m benchmarks.ab [--n 1000000] [--rounds 2]

Settings: ``default`` (XLA's flags), ``vw512`` (``--xla_cpu_prefer_vector_width=512``), ``vw512+2dev``
(also ``--xla_force_host_platform_device_count=<cores>``, the batch sharded over the host devices with
``jax.sharding``).  Prints wall and process-CPU time per evaluation, the load average, and the number of
fusions / loops in the compiled HLO of the tire.  Used for the "what was tried" notes of ``RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SETTINGS = {
    "default": "",
    "vw512": "--xla_cpu_prefer_vector_width=512",
    "vw512+2dev": f"--xla_cpu_prefer_vector_width=512 --xla_force_host_platform_device_count={os.cpu_count()}",
}


def _child(n: int) -> dict:
    import re
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxtire
    from benchmarks import inputs
    from jaxtire.slip import slip_angle, slip_ratio

    p = jaxtire.default_tire(dtype=jnp.float32)
    R = inputs.WHEEL_RADIUS

    def tire(vx, vy, omega, gamma, fz):
        o = jaxtire.mf_forces(p, slip_ratio(omega, R, vx), slip_angle(vx, vy), gamma, fz, vx)
        return o.fx, o.fy, o.mz

    d = inputs.tire_inputs(n)
    args = [jnp.asarray(d[k]) for k in ("vx", "vy", "omega", "gamma", "fz")]
    x = jnp.asarray(inputs.curve_inputs(n))
    devs = jax.devices()
    if len(devs) > 1:
        mesh = jax.sharding.Mesh(np.array(devs), ("b",))
        sh = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("b"))
        args = [jax.device_put(a, sh) for a in args]
        x = jax.device_put(x, sh)
    ft = jax.jit(tire).lower(*args).compile()
    fc = jax.jit(lambda v: jaxtire.magic_formula(v, *inputs.MF_BCDE)).lower(x).compile()
    hlo = ft.as_text()
    out = {
        "devices": len(devs),
        "fusions": len(re.findall(r"^\s*\S+ = \S+ fusion\(", hlo, re.M)),
        "loops": hlo.count("kind=kLoop"),
        "while": hlo.count(" while("),
        "load": os.getloadavg()[0],
    }

    def tm(f, a, reps=7):
        jax.block_until_ready(f(*a))
        w, c = [], []
        for _ in range(reps):
            c0, t0 = time.process_time(), time.perf_counter()
            jax.block_until_ready(f(*a))
            w.append(time.perf_counter() - t0)
            c.append(time.process_time() - c0)
        i = int(np.argmin(w))
        return w[i] / n * 1e9, c[i] / n * 1e9

    out["tire_ns"], out["tire_cpu_ns"] = tm(ft, args)
    out["curve_ns"], out["curve_cpu_ns"] = tm(fc, (x,))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.n)))
        return 0
    rows = []
    for r in range(a.rounds):
        for name, flags in SETTINGS.items():
            env = dict(os.environ, XLA_FLAGS=flags, JAXTIRE_XLA_DEFAULT="1")
            res = subprocess.run(
                [sys.executable, "-m", "benchmarks.ab", "--child", "--n", str(a.n)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            row = dict(json.loads(res.stdout.strip().splitlines()[-1]), setting=name, round=r)
            rows.append(row)
            print(
                f"round {r} {name:12s} tire {row['tire_ns']:6.1f} ns (CPU {row['tire_cpu_ns']:6.1f})  "
                f"curve {row['curve_ns']:5.2f} ns (CPU {row['curve_cpu_ns']:5.2f})  fusions {row['fusions']} "
                f"loops {row['loops']}  load {row['load']:.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
