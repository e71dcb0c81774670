"""MF 6.1 tire (slip + ``mf_forces``, outputs Fx, Fy, Mz) per option: compiled loop-fusion count and CPU ns per eval.

    python -m benchmarks.fusion_ab [base side novx pure mfeval]
    python -m benchmarks.fusion_ab step     # the fleet step's fused operations per source line

Prints, per case, the number of ``fusion`` instructions of the compiled HLO (each one a loop over the batch
whose output goes through memory), the number of operations inside them (recomputed ones counted once per
loop) and 3 rounds of the best-of-5 process CPU time per evaluation at 5e5
points (XLA's default flags unless ``XLA_FLAGS`` says otherwise).  The figures of ``PERF_NOTES.md`` ("Fused MF 6.1
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


def _proto_fields(buf: bytes):
    """``(field number, value)`` of a serialised protobuf message (varints as ints, length-delimited as bytes)."""
    i = 0

    def varint():
        nonlocal i
        value = shift = 0
        while True:
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    while i < len(buf):
        key = varint()
        wire = key & 7
        if wire == 0:
            yield key >> 3, varint()
        elif wire == 2:
            size = varint()
            yield key >> 3, buf[i : i + size]
            i += size
        else:  # fixed 64 / 32 bit: not used by the fields read here
            i += 8 if wire == 1 else 4


def fused_ops_by_source(compiled, skip: tuple = ("_trig.py", "_math.py", "magic_formula.py")) -> dict:
    """Fused operations (as :func:`fused_op_count`) per source line: ``{"path:line function": (ops, loops)}``.

    ``compiled`` is a ``jax.stages.Compiled``.  Each operation is attributed to the innermost frame of its
    ``stack_frame_id`` (the HLO module's ``stack_frame_index``, field 17 of ``HloModuleProto``) whose file does
    not end with one of ``skip`` (elementwise helpers are charged to their caller); ``loops`` counts the
    fused computations it appears in, so ``ops / loops`` far above the line's own size flags recomputation.
    """
    module = compiled.runtime_executable().hlo_modules()[0]
    names: dict[int, list] = {1: [], 2: [], 3: [], 4: []}  # file names, function names, locations, frames
    for field, value in _proto_fields(module.as_serialized_hlo_module_proto()):
        if field == 17:
            for k, v in _proto_fields(value):
                names[k].append(v.decode() if k <= 2 else dict(_proto_fields(v)))
    files, funcs, locs, frames = names[1], names[2], names[3], names[4]

    def site(frame_id: int) -> str:
        while frame_id:  # ids are 1-based; 0 = no parent
            frame = frames[frame_id - 1]
            loc = locs[frame[1] - 1]
            path = files[loc[1] - 1]
            if not path.endswith(skip):
                return f"{os.path.relpath(path)}:{loc.get(3, 0)} {funcs[loc.get(2, 1) - 1]}"
            frame_id = frame.get(2, 0)
        return "?"

    ops: dict[str, int] = {}
    loops: dict[str, set] = {}
    inside, name = False, ""
    for line in compiled.as_text().splitlines():
        if line and not line.startswith(" "):
            inside, name = line.startswith("%fused_computation"), line.split(" ")[0]
        elif inside and re.match(r"\s+(?:ROOT )?%\S+ = \S+ (?!parameter\(|constant\(|broadcast\()", line):
            m = re.search(r"stack_frame_id=(\d+)", line)
            key = site(int(m.group(1))) if m else "?"
            ops[key] = ops.get(key, 0) + 1
            loops.setdefault(key, set()).add(name)
    return {k: (ops[k], len(loops[k])) for k in sorted(ops, key=ops.get, reverse=True)}


def step_report(n: int = 1000, top: int = 40) -> dict:
    """The 4-wheel fleet step (``benchmarks.inputs.fleet_step_fn``, ``n`` cars): loops, fused operations and
    the ``top`` source lines by fused operations (:func:`fused_ops_by_source`), printed and returned."""
    import jax

    from benchmarks import inputs

    compiled = jax.jit(inputs.fleet_step_fn(0.005)).lower(*inputs.jax_fleet(n)).compile()
    text = compiled.as_text()
    by_line = fused_ops_by_source(compiled)
    print("fleet step: loops", fusion_count(text), "fused ops", fused_op_count(text))
    for key, (ops, loops) in list(by_line.items())[:top]:
        print(f"{ops:6d} ops in {loops:3d} loops  {key}")
    return by_line


def main(cases=None, n: int = 500_000) -> dict:
    if cases == ["step"]:
        return step_report()
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
