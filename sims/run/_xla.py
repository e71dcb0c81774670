"""XLA:CPU flags applied by the command-line entry points (``python -m sims.cli.fleet``, ``python -m benchmarks``).

:func:`tune_cpu` appends ``--xla_cpu_prefer_vector_width=512`` to ``XLA_FLAGS`` when the CPU has AVX-512
(``avx512f`` in ``/proc/cpuinfo``) and the user's ``XLA_FLAGS`` does not already choose a vector width.
Why: XLA:CPU emits 256-bit vectors by default; on the project's AVX-512 AMD EPYC (Zen 5, full-width
AVX-512) 512-bit vectors make the fused tire loops about 1.4-1.7x faster (measured: MF 6.1 tire 41 ->
28 ns of CPU time per evaluation; fleet physics 1.5-1.7x; see ``benchmarks/RESULTS.md``).

XLA reads ``XLA_FLAGS`` once, when JAX creates its first backend: call :func:`tune_cpu` before any JAX
computation (importing ``jax`` alone is fine).  A user's own flags are kept and never overridden.
This module imports nothing from JAX, so it is cheap to import first.

:func:`tune_malloc` (called by :func:`tune_cpu`) keeps the C heap's freed memory in the process on glibc.
Why: XLA:CPU allocates every output and one temporary buffer per call (the MF 6.1 tire at 1e6 points:
3 x 4 MB out, 28 MB temporary) and frees them at the end; glibc's per-thread arenas give a wholly free
heap back to the kernel, so the next call page-faults and zero-fills the same memory again: 2 000-6 900
minor page faults and 4-12 ms of system time per call, against 16 ms of arithmetic (measured on the
project's 2-core VM; ``benchmarks/PERF_NOTES.md``, "Page faults").  One arena, a fixed 32 MiB ``mmap``
threshold, a 512 MiB trim threshold and 64 MiB of top pad make the buffers reused: ~0 faults per call.
The cost is that up to 512 MiB of freed heap stays mapped in the process.
"""

from __future__ import annotations

import ctypes
import os
import sys

VECTOR_FLAG = "--xla_cpu_prefer_vector_width=512"


def cpu_flags() -> set:
    """ISA flags of the first CPU in ``/proc/cpuinfo`` (empty set where unavailable)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# glibc mallopt(3) parameters, and the values tune_malloc sets (see the module docstring)
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -2, -3, -8
MALLOC_SETTINGS = ((M_ARENA_MAX, 1), (M_MMAP_THRESHOLD, 32 << 20), (M_TRIM_THRESHOLD, 512 << 20), (M_TOP_PAD, 64 << 20))
MALLOC_ENV = ("MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def tune_malloc(environ=None, libc=None) -> bool:
    """Keep freed large buffers in the process (glibc only): returns True when the settings were applied.

    Sets :data:`MALLOC_SETTINGS` with ``mallopt``: one malloc arena (threads share the main heap, which is
    trimmed by threshold only), a fixed 32 MiB ``mmap`` threshold (buffers up to 32 MiB, i.e. 8e6 float32
    values, come from the heap), a 512 MiB trim threshold and the heap grown 64 MiB at a time.  Not applied (False) where the C library has
    no ``mallopt`` or is not glibc, when ``JAXTIRE_XLA_DEFAULT=1`` is set, when the user already tunes
    malloc through the environment (:data:`MALLOC_ENV`), or when JAX already started a backend (its
    threads would keep their own arenas).  ``environ`` / ``libc`` are for tests.
    """
    env = os.environ if environ is None else environ
    if env.get("JAXTIRE_XLA_DEFAULT") == "1" or any(k in env for k in MALLOC_ENV):
        return False
    if environ is None and backend_started():
        return False
    try:
        lib = ctypes.CDLL(None) if libc is None else libc
        mallopt = lib.mallopt
        is_glibc = hasattr(lib, "gnu_get_libc_version")  # glibc's mallopt semantics only
    except (AttributeError, OSError):
        return False
    if not is_glibc:
        return False
    return all(mallopt(ctypes.c_int(k), ctypes.c_int(v)) == 1 for k, v in MALLOC_SETTINGS)


def backend_started() -> bool:
    """True when JAX has already created a backend (too late for ``XLA_FLAGS``)."""
    xb = sys.modules.get("jax._src.xla_bridge")
    return bool(getattr(xb, "_backends", None))


def tune_cpu(environ=None, flags: set | None = None, host_devices: int | None = None) -> str | None:
    """Append :data:`VECTOR_FLAG` to ``XLA_FLAGS`` on AVX-512 CPUs; returns the flags added, or None.

    ``host_devices=N`` (N > 1) also appends ``--xla_force_host_platform_device_count=N`` (unless the
    user's flags set a device count), for callers that split their batch over the host devices
    (``python -m benchmarks``: the MF 6.1 tire then needs 1.7x less CPU time per evaluation; the fleet CLI
    ``python -m sims`` with one host device per core, its :class:`~sims.run.fleet.FleetRun` splitting the
    vehicles over them; see ``benchmarks/PERF_NOTES.md``); the vector-width rules below apply to the vector
    flag only.

    Nothing is added when the CPU lacks ``avx512f``, when ``XLA_FLAGS`` already sets
    ``xla_cpu_prefer_vector_width`` (the user's choice wins), when ``JAXTIRE_XLA_DEFAULT=1`` is set, or
    when JAX already started a backend.  ``environ`` / ``flags`` are for tests (default ``os.environ``
    and :func:`cpu_flags`).  Called with the process environment it also applies :func:`tune_malloc`.
    """
    env = os.environ if environ is None else environ
    cur = env.get("XLA_FLAGS", "")
    if env.get("JAXTIRE_XLA_DEFAULT") == "1" or (environ is None and backend_started()):
        return None
    if environ is None:
        tune_malloc()
    added = []
    if "xla_cpu_prefer_vector_width" not in cur and "avx512f" in (cpu_flags() if flags is None else flags):
        added.append(VECTOR_FLAG)
    if host_devices is not None and host_devices > 1 and "xla_force_host_platform_device_count" not in cur:
        added.append(f"--xla_force_host_platform_device_count={int(host_devices)}")
    if not added:
        return None
    env["XLA_FLAGS"] = " ".join([cur] + added).strip()
    return " ".join(added)
