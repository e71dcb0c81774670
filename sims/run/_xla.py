"""XLA:CPU flags applied by the command-line entry points (``python -m sims.cli.fleet``, ``python -m benchmarks``).

:func:`tune_cpu` appends ``--xla_cpu_prefer_vector_width=512`` to ``XLA_FLAGS`` when the CPU has AVX-512
(``avx512f`` in ``/proc/cpuinfo``) and the user's ``XLA_FLAGS`` does not already choose a vector width.
Why: XLA:CPU emits 256-bit vectors by default; on the project's AVX-512 AMD EPYC (Zen 5, full-width
AVX-512) 512-bit vectors make the fused tire loops about 1.4-1.7x faster (measured: MF 6.1 tire 41 ->
28 ns of CPU time per evaluation; fleet physics 1.5-1.7x; see ``benchmarks/RESULTS.md``).

XLA reads ``XLA_FLAGS`` once, when JAX creates its first backend: call :func:`tune_cpu` before any JAX
computation (importing ``jax`` alone is fine).  A user's own flags are kept and never overridden.
This module imports nothing from JAX, so it is cheap to import first.
"""

from __future__ import annotations

import os
import sys

VECTOR_FLAG = "--xla_cpu_prefer_vector_width=512"
#: With several host devices: how long a device waits for the others at a collective before XLA aborts the
#: process (XLA's default, 40 s, killed a 1e7-vehicle study on a loaded 2-core machine: one device's
#: thread was starved of CPU while the other waited at a gather) and warns (default 20 s).  Added only where
#: the installed jaxlib knows the flags (:func:`_known_flags`), since XLA aborts on an unknown flag.
COLLECTIVE_FLAGS = (
    "--xla_cpu_collective_call_terminate_timeout_seconds=86400",
    "--xla_cpu_collective_call_warn_stuck_timeout_seconds=3600",
)


def _known_flags(flags) -> list[str]:
    """The ``flags`` whose names the installed jaxlib's shared libraries contain (none if jaxlib is absent)."""
    import glob
    import importlib.util
    import mmap

    spec = importlib.util.find_spec("jaxlib")
    if spec is None or spec.origin is None:
        return []
    names = {f: f.split("=")[0].lstrip("-").encode() for f in flags}
    found: set = set()
    for lib in glob.glob(os.path.join(os.path.dirname(spec.origin), "**", "*.so*"), recursive=True):
        try:
            with open(lib, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                found |= {f for f, n in names.items() if f not in found and m.find(n) >= 0}
        except (OSError, ValueError):
            continue
        if len(found) == len(names):
            break
    return [f for f in flags if f in found]


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
    and :func:`cpu_flags`).
    """
    env = os.environ if environ is None else environ
    cur = env.get("XLA_FLAGS", "")
    if env.get("JAXTIRE_XLA_DEFAULT") == "1" or (environ is None and backend_started()):
        return None
    auto = env.get(_AUTO_KEY, "")
    if host_devices is not None and auto and auto in cur.split():  # the default of use_host_devices yields
        cur = " ".join(f for f in cur.split() if f != auto)
        env["XLA_FLAGS"] = cur
        del env[_AUTO_KEY]
    added = []
    if "xla_cpu_prefer_vector_width" not in cur and "avx512f" in (cpu_flags() if flags is None else flags):
        added.append(VECTOR_FLAG)
    if host_devices is not None and host_devices > 1 and "xla_force_host_platform_device_count" not in cur:
        added.append(f"--xla_force_host_platform_device_count={int(host_devices)}")
        added += [f for f in _known_flags(COLLECTIVE_FLAGS) if f.split("=")[0] not in cur]
    if not added:
        return None
    env["XLA_FLAGS"] = " ".join([cur] + added).strip()
    return " ".join(added)


def use_host_devices(environ=None) -> str | None:
    """One CPU device per core for the Python API, as the CLI has (call it before the first JAX computation):
    :func:`tune_cpu`'s device count, one host device per core, ``host_devices = JAXTIRE_HOST_DEVICES`` (an
    integer; default ``os.cpu_count()``; ``1`` keeps the single CPU device, as the test suite does); not its
    512-bit vector flag (a speed choice of the CLI that changes the last bits of results).  Too late once
    JAX has started a backend (import :mod:`sims` before computing anything); ``JAXTIRE_XLA_DEFAULT=1``
    turns every flag off."""
    env = os.environ if environ is None else environ
    raw = env.get("JAXTIRE_HOST_DEVICES", "")
    try:
        n = int(raw) if raw.strip() else (os.cpu_count() or 1)
    except ValueError:
        raise ValueError(
            f"JAXTIRE_HOST_DEVICES = {raw!r} must be an integer >= 1 (CPU devices for the fleets)"
        ) from None
    if "xla_force_host_platform_device_count" in env.get("XLA_FLAGS", ""):
        return None  # the user's count, or ours inherited from a parent process
    env.pop(_AUTO_KEY, None)
    added = tune_cpu(environ, flags=set(), host_devices=max(1, n))  # the device count only: no vector flag
    count = [f for f in (added or "").split() if f.startswith("--xla_force_host_platform_device_count")]
    if count:  # remembered, so an explicit tune_cpu(host_devices=...) (the CLI's --devices) may replace it
        env[_AUTO_KEY] = count[0]
    return added


#: Environment key holding the device-count flag :func:`use_host_devices` added (not the user's).
_AUTO_KEY = "JAXTIRE_AUTO_DEVICE_FLAG"
