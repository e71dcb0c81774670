"""Timing primitives and the environment record of a benchmark run.

Rules every number in ``RESULTS.md`` follows:

* JAX: the function is jitted; tracing + lowering and XLA compilation are timed separately
  (``jax.jit(f).lower(*args)`` then ``.compile()``), then the compiled executable is called once
  more as a warm-up (not timed).  A *sample* is ``inner`` back-to-back calls followed by one
  ``jax.block_until_ready`` on the last result, divided by ``inner``; the reported time is the
  median of ``repeats`` samples.  ``inner`` is chosen so that a sample lasts about
  ``target_s`` (dispatch overhead is part of the per-call time at small batches, as it is for a user).
* NumPy: the same sample / median scheme on the plain function (first call also excluded).
* Pure Python: a loop over ``n`` elements (or vehicles) calling the scalar function, timed for a
  subset and reported per element; the subset size is recorded.
* Every timed case starts after a :data:`SETTLE_S` pause: the previous case's worker threads (numba's
  OpenMP team, XLA's pool) spin for milliseconds after their last call and would share the cores with
  this case's first calls (``benchmarks/PERF_NOTES.md``, "Spinning neighbours").
* Wall-clock time (``time.perf_counter``) is the measure; the process CPU time of each sample is
  recorded too, so a measurement on a loaded machine can be recognised (CPU time per call much
  below wall time x cores means the process was waiting for a CPU).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from sims.run._xla import cpu_flags  # the one reader of the CPU flags (starts no JAX backend)


@dataclasses.dataclass
class Timing:
    """One timed case: per-call wall time (median over repeats), CPU time, compile time."""

    seconds: float  # median wall seconds per call
    cpu_seconds: float  # median process CPU seconds per call (all threads)
    samples: list  # per-call wall seconds of each repeat
    inner: int  # calls per sample
    lower_s: float | None = None  # JAX: trace + lower
    compile_s: float | None = None  # JAX: XLA compile
    memory: dict | None = None  # JAX: compiled memory analysis (bytes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


SETTLE_S = 0.1  # s of idle before each timed case (module docstring): > libgomp's default spin of ~5 ms


def _samples(
    call: Callable[[], Any], finish: Callable[[Any], Any], repeats: int, target_s: float, max_inner: int
) -> tuple[list, list, int]:
    time.sleep(SETTLE_S)
    # calibrate: how many calls fill target_s (the first, warm-up call is not counted)
    finish(call())
    t0 = time.perf_counter()
    finish(call())
    one = max(time.perf_counter() - t0, 1e-7)
    inner = int(min(max(1, target_s / one), max_inner))
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = None
        for _ in range(inner):
            out = call()
        finish(out)
        walls.append((time.perf_counter() - t0) / inner)
        cpus.append((time.process_time() - c0) / inner)
    return walls, cpus, inner


def time_jax(
    fn: Callable,
    args: tuple,
    *,
    repeats: int = 5,
    target_s: float = 0.2,
    max_inner: int = 10000,
    static_argnums=(),
    return_compiled: bool = False,
):
    """Compile ``jax.jit(fn)`` for ``args`` (timed) and time the compiled call (see the module docstring).

    Returns the :class:`Timing`, or ``(timing, compiled)`` with ``return_compiled=True``."""
    import jax

    t0 = time.perf_counter()
    lowered = jax.jit(fn, static_argnums=static_argnums).lower(*args)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    t2 = time.perf_counter()
    memory = None
    try:
        ma = compiled.memory_analysis()
        if ma is not None:
            memory = {
                k: int(getattr(ma, k))
                for k in (
                    "argument_size_in_bytes",
                    "output_size_in_bytes",
                    "temp_size_in_bytes",
                    "generated_code_size_in_bytes",
                )
                if hasattr(ma, k)
            }
    except Exception:  # pragma: no cover - backend without memory analysis
        memory = None
    walls, cpus, inner = _samples(lambda: compiled(*args), jax.block_until_ready, repeats, target_s, max_inner)
    t = Timing(statistics.median(walls), statistics.median(cpus), walls, inner, t1 - t0, t2 - t1, memory)
    return (t, compiled) if return_compiled else t


def time_call(fn: Callable, args: tuple, *, repeats: int = 5, target_s: float = 0.2, max_inner: int = 10000) -> Timing:
    """Time a plain (NumPy) function call."""
    walls, cpus, inner = _samples(lambda: fn(*args), lambda x: x, repeats, target_s, max_inner)
    return Timing(statistics.median(walls), statistics.median(cpus), walls, inner)


def time_loop(body: Callable[[int], Any], n: int, *, repeats: int = 3) -> Timing:
    """Time ``for i in range(n): body(i)`` (pure Python); ``seconds`` is per iteration."""
    walls, cpus = [], []
    body(0)
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        for i in range(n):
            body(i)
        walls.append((time.perf_counter() - t0) / n)
        cpus.append((time.process_time() - c0) / n)
    return Timing(statistics.median(walls), statistics.median(cpus), walls, n)


# --------------------------------------------------------------------------------------------------
# environment


def load_average() -> list | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def cpu_times() -> list | None:
    """The aggregate ``cpu`` line of ``/proc/stat`` (user, nice, system, idle, iowait, irq, softirq, steal, ...)
    in clock ticks, or None where there is no ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu "):
                    return [int(v) for v in line.split()[1:]]
    except OSError:
        pass
    return None


def steal_fraction(start: list | None, end: list | None) -> float | None:
    """Share of all CPU time between two :func:`cpu_times` readings that the hypervisor gave to other
    guests (``steal``): on a shared virtual machine, the part of the wall time this run could not use."""
    if not start or not end or len(start) < 8 or len(end) < 8:
        return None
    d = [b - a for a, b in zip(start, end, strict=False)]
    total = sum(d[:8])
    return d[7] / total if total > 0 else None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _vector_isa() -> str:
    """The widest x86 vector extension of :func:`cpu_flags` (``AVX-512``, ``AVX2``, ...), else the machine."""
    flags = cpu_flags()
    for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse4_2", "SSE4.2")):
        if flag in flags:
            return name
    return platform.machine()


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or None
    except Exception:
        return None


def environment() -> dict:
    """Hardware, software versions, JAX backend and devices, dtype, load average."""
    import jax
    import jaxlib
    import numpy as np

    devs = jax.devices()
    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "vector_isa": _vector_isa(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": _mem_total_gib(),
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in devs],
        "device_kind": devs[0].device_kind if devs else None,
        "x64": bool(jax.config.jax_enable_x64),
        "dtype": "float64" if jax.config.jax_enable_x64 else "float32",
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "git_commit": _git_commit(),
        "load_average_start": load_average(),
        "cpu_times_start": cpu_times(),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        import jaxtire

        env["jaxtire"] = jaxtire.__version__
    except Exception:  # pragma: no cover
        pass
    return env


def dump_json(obj, path) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=_json_default)
        f.write("\n")


def _json_default(o):
    if dataclasses.is_dataclass(o):
        return dataclasses.asdict(o)
    try:
        return float(o)
    except Exception:
        return str(o)
