"""XLA:CPU flags applied by the command-line entry points (``python -m sims``, ``python -m benchmarks``).

:func:`tune_cpu` appends one host device per core (``--xla_force_host_platform_device_count``) and the
collective timeouts to ``XLA_FLAGS``, for callers that split their batch over the host devices.

No vector-width flag: ``--xla_cpu_prefer_vector_width=512`` (512-bit vectors on AVX-512 CPUs) made the fused
tire loops 1.4-1.7x faster (``benchmarks/PERF_NOTES.md``, issue 18) and was the CLI's default until
2026-12-06, when it was found to compute wrong, run-to-run different results with jax 0.10.2: the quasi-steady
lap of :func:`sims.vehicles.qss.solve_lap` on Monza read 105.93-108.87 s in five runs of the same program
(105.907 s, bitwise repeatable, at XLA's default width; apex speeds off by up to 5 m/s), a NaN lap on the CI
machine, NaN gradients of the setup optimisation (``tests/sims/studies/test_lap_setup.py``).  A user may still
set it in ``XLA_FLAGS``; this project does not.

XLA reads ``XLA_FLAGS`` once, when JAX creates its first backend: call :func:`tune_cpu` before any JAX
computation (importing ``jax`` alone is fine).  A user's own flags are kept and never overridden.
This module imports nothing from JAX, so it is cheap to import first.
"""

from __future__ import annotations

import os
import sys

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


def tune_cpu(environ=None, host_devices: int | None = None) -> str | None:
    """Append ``--xla_force_host_platform_device_count=N`` (``host_devices = N > 1``) and the collective
    timeouts the installed jaxlib knows to ``XLA_FLAGS``; returns the flags added, or None.

    For callers that split their batch over the host devices (``python -m benchmarks``: the MF 6.1 tire then
    needs 1.7x less CPU time per evaluation; the fleet CLI ``python -m sims`` with one host device per core,
    its :class:`~sims.run.fleet.FleetRun` splitting the vehicles over them; see ``benchmarks/PERF_NOTES.md``).
    Nothing is added when the user's ``XLA_FLAGS`` already sets a device count, when
    ``JAXTIRE_XLA_DEFAULT=1`` is set, or when JAX already started a backend.  ``environ`` is for tests
    (default ``os.environ``).
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
    integer; default ``os.cpu_count()``; ``1`` keeps the single CPU device, as the test suite does).  Too late once
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
    added = tune_cpu(environ, host_devices=max(1, n))
    count = [f for f in (added or "").split() if f.startswith("--xla_force_host_platform_device_count")]
    if count:  # remembered, so an explicit tune_cpu(host_devices=...) (the CLI's --devices) may replace it
        env[_AUTO_KEY] = count[0]
    return added


#: Environment key holding the device-count flag :func:`use_host_devices` added (not the user's).
_AUTO_KEY = "JAXTIRE_AUTO_DEVICE_FLAG"
