"""``python -m benchmarks``: every benchmark in one process, then ``RESULTS.md``, ``results.json``, ``scaling.png``.

Usage (from the repository root)::

    python -m benchmarks                 # full run (~10-20 min on 2 CPU cores), writes benchmarks/RESULTS.md
    python -m benchmarks --quick         # smoke run on tiny sizes (< 30 s), writes to a temporary directory
    python -m benchmarks --gpu           # GPU sizes (needs jax[cuda12]); refuses to run on CPU; sections in
                                         # priority order (tire, double track and full vehicle at 1e5-1e7,
                                         # race env, a study) within --budget (default 480 s), RESULTS after each
    python -m benchmarks --budget 300    # stop starting sections and sizes after 300 s
    python -m benchmarks --gpu --quick   # the GPU code path at tiny sizes on any backend (a dry run, tested)
    python -m benchmarks --out DIR       # write the three files to DIR
    python -m benchmarks --wait-quiet 1.5   # first wait (up to 10 min) for the 1-min load average <= 1.5
    python -m benchmarks --xla-default   # add no XLA flag (no host devices; see below)

The run adds ``--xla_force_host_platform_device_count=<cores>`` to ``XLA_FLAGS`` before JAX starts
(unless ``XLA_FLAGS`` sets a device count; not with ``--xla-default``) and shards the tire and curve batches
over those host devices: 1.7x less CPU time per MF 6.1 evaluation and both cores in use
(``benchmarks/PERF_NOTES.md``).  It no longer adds ``--xla_cpu_prefer_vector_width=512`` on AVX-512 CPUs
(1.5x faster tire loops, but wrong, run-to-run different results of other programs: ``sims/run/_xla.py``,
where the flag logic lives); the flags in effect are recorded in ``RESULTS.md``.

Options ``--repeats``, ``--max-vehicles`` and ``--chunk`` tune the run; see ``--help``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, finishes in < 30 s (a smoke test)")
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="GPU run: larger fleets, unrolled scan, 1e9 vehicle-steps/s target; needs a GPU backend",
    )
    ap.add_argument(
        "--out", default=None, help="output directory (default: benchmarks/, or a temporary directory with --quick)"
    )
    ap.add_argument("--repeats", type=int, default=None, help="timed samples per case (median reported)")
    ap.add_argument("--max-vehicles", type=int, default=None, help="largest fleet of the scaling curve")
    ap.add_argument(
        "--chunk",
        type=int,
        default=None,
        help="vehicles per block of the chunked scan (default: the fastest of 2048-32768, timed on this machine)",
    )
    ap.add_argument("--unroll", type=int, default=None, help="lax.scan unroll of the fleet rollouts (--gpu: 4)")
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall seconds for the whole run (--gpu: 480): later sections and sizes are skipped; RESULTS is "
        "written after each section",
    )
    ap.add_argument(
        "--xla-default",
        action="store_true",
        help="add no XLA flag (no host device count)",
    )
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=None,
        metavar="LOAD",
        help="wait up to 10 min until the 1-minute load average is <= LOAD before measuring",
    )
    return ap


def _wait_quiet(limit: float, log) -> None:
    t0 = time.time()
    while True:
        la = os.getloadavg()[0]
        if la <= limit or time.time() - t0 > 600:
            log(f"load average {la:.2f} (limit {limit}) after {time.time() - t0:.0f} s of waiting")
            return
        time.sleep(15)


def _tune_xla(args, log) -> None:
    """One host device per core (before JAX is imported); see the module docstring."""
    from sims.run._xla import backend_started, tune_cpu  # imports no JAX

    if args.xla_default or args.gpu:
        return
    if backend_started():  # too late to change the backend's flags
        log("note: JAX backend already started; not adding the host devices")
        return
    tune_cpu(host_devices=os.cpu_count())  # the suite shards the tire and curve batches (PERF_NOTES.md)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)

    def log(msg):
        print(msg, flush=True)

    _tune_xla(args, log)
    from benchmarks import report, suite

    if args.wait_quiet is not None:
        _wait_quiet(args.wait_quiet, log)
    if args.budget is not None and not args.budget > 0:
        raise SystemExit(f"--budget {args.budget}: give the run's wall seconds (> 0)")
    cfg = suite.Config.make(
        quick=args.quick, gpu=args.gpu, repeats=args.repeats, chunk=args.chunk, unroll=args.unroll, budget_s=args.budget
    )
    if args.max_vehicles is not None:
        cfg.scaling = tuple(n for n in cfg.scaling if n <= args.max_vehicles) or (args.max_vehicles,)
        cfg.big_fleet = min(cfg.big_fleet, args.max_vehicles)
        cfg.numpy_fleets = tuple(n for n in cfg.numpy_fleets if n <= args.max_vehicles) or (cfg.big_fleet,)
    out = args.out
    if out is None:
        out = tempfile.mkdtemp(prefix="jaxtire-bench-") if args.quick else os.path.dirname(os.path.abspath(__file__))
    results = suite.run_all(cfg, log, on_section=lambda r: report.write_all(r, out, log))
    s = results["summary"]
    for t in s["targets"]:
        log(f"  {'met ' if t['met'] else 'MISS'}  {t['name']}: {t['measured']:.3g} (goal {t['target']:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
