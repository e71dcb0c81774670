"""MF 6.1 tire (slip + ``mf_forces``, outputs Fx, Fy, Mz) per option: compiled loop-fusion count and CPU ns per eval.

    python -m benchmarks.fusion_ab [base side novx pure mfeval]

Prints, per case, the number of ``fusion`` instructions of the compiled HLO (each one a loop over the batch
whose output goes through memory), the number of operations inside them (recomputed ones counted once per
loop) and 3 rounds of the best-of-5 process CPU time per evaluation at 5e5
points (``XLA_FLAGS`` default here: 512-bit vectors).  The figures of ``PERF_NOTES.md`` ("Fused MF 6.1
kernel"); run it in two checkouts alternately for a before/after comparison.
"""

from __future__ import annotations

import os
import re
import sys
import time

CASES = {
    "base": {},
    "side": {"side": True},
    "novx": {"novx": True},
    "pure": {"combined": False},
    "mfeval": {"convention": "mfeval"},
}


def fusion_count(compiled_text: str) -> int:
    """Number of ``fusion`` instructions (loops over the batch) in a compiled HLO module's text."""
    return len(re.findall(r"^\s*(?:ROOT )?\S+ = \S+ fusion\(", compiled_text, re.M))


def fused_op_count(compiled_text: str) -> int:
    """Number of operations inside the fused computations (parameters, constants and broadcasts left out).

    An operation that XLA recomputes in several loops counts once per loop: this is the arithmetic per element
    that the compiled kernel does, the measure that the CPU time follows (``PERF_NOTES.md``, session 5).
    """
    n, inside = 0, False
    for line in compiled_text.splitlines():
        if line and not line.startswith(" "):
            inside = line.startswith("%fused_computation")
        elif inside and re.match(r"\s+(?:ROOT )?%\S+ = \S+ (?!parameter\(|constant\(|broadcast\()", line):
            n += 1
    return n


def main(cases=None, n: int = 500_000) -> dict:
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_prefer_vector_width=512")
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxtire
    from benchmarks import inputs
    from jaxtire.slip import slip_angle, slip_ratio

    R = inputs.WHEEL_RADIUS
    d = inputs.tire_inputs(n)
    a = [jnp.asarray(d[k]) for k in ("vx", "vy", "omega", "gamma", "fz")]
    side = jnp.asarray(np.where(np.arange(n) % 2 == 0, 1.0, -1.0).astype(np.float32))
    p = jaxtire.default_tire(dtype=jnp.float32)

    def make(kw):
        kw = dict(kw)
        with_side, no_vx = kw.pop("side", False), kw.pop("novx", False)

        def f(vx, vy, omega, gamma, fz, s):
            o = jaxtire.mf_forces(
                p, slip_ratio(omega, R, vx), slip_angle(vx, vy), gamma, fz, None if no_vx else vx,
                side=s if with_side else None, **kw,
            )  # fmt: skip
            return o.fx, o.fy, o.mz

        return jax.jit(f).lower(*a, side).compile()

    def cpu_ns(c, reps=5):
        jax.block_until_ready(c(*a, side))
        best = 1e9
        for _ in range(reps):
            c0 = time.process_time()
            jax.block_until_ready(c(*a, side))
            best = min(best, time.process_time() - c0)
        return round(best / n * 1e9, 1)

    compiled = {k: make(CASES[k]) for k in (cases or list(CASES))}
    out: dict = {
        "fusions": {k: fusion_count(c.as_text()) for k, c in compiled.items()},
        "fused_ops": {k: fused_op_count(c.as_text()) for k, c in compiled.items()},
        "cpu_ns": [],
    }
    print("fusions", out["fusions"], "fused ops", out["fused_ops"], "load", os.getloadavg()[0], flush=True)
    for _ in range(3):
        out["cpu_ns"].append({k: cpu_ns(c) for k, c in compiled.items()})
        print(out["cpu_ns"][-1], flush=True)
    return out


if __name__ == "__main__":
    main(sys.argv[1:] or None)
