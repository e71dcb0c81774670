"""``python -m sims`` (console script ``jaxtire-fleet``): the fleet CLI (argument parsing and printing only).

With no arguments it runs the embedded default Monte Carlo, a study (:func:`sims.studies.braking.monte_carlo_study`,
drawn by the studies' sampler, :func:`sims.studies.study.inputs`) run by :func:`~sims.scenarios.braking.braking_run`:
10 000 hatchbacks (four-wheel model, the bundled MF tire, or
any tire file with ``--tir PATH``) braking from 100 km/h, each with a random payload (mass x U(0.9, 1.25)), tire friction (x U(0.85,
1.1)) and stiffness (x U(0.8, 1.2)), a surface drawn from dry asphalt, wet asphalt, gravel, snow and ice,
ABS on or off (half each) and a small random yaw-rate disturbance; it prints a summary table (stopping
distance percentiles per surface, spin count, vehicle-steps per second) and writes a histogram per
surface and a CSV of per-vehicle results to ``out/``.

Scenarios (``--scenario``): ``braking`` (the Monte Carlo above), ``braking-table`` (every preset x
surface, locked and ABS: a study per preset, :func:`sims.studies.braking.table_study`), ``skidpad``
(lateral-acceleration limit and understeer gradient per preset and surface: a study of each,
:func:`sims.studies.skidpad.table_study`), ``step-steer`` (yaw-rate response time and overshoot per preset: a study of each,
:func:`sims.studies.step_steer.table_study`), ``throughput``
(vehicle-steps per second of the chosen model and preset for the fleet sizes of ``--counts``),
and every other scenario of the catalogue by its catalogue name (``acceleration``, ``grade_braking``,
``iso3888_1``, ``iso3888_2``, ``mu_jump_braking``, ``sine_with_dwell``, ``split_mu_braking``,
``split_mu_launch``; dashes read as underscores) as a Monte Carlo of ``--vehicles`` cars of ``--preset``
with its driveline at the scenario's default settings (:mod:`sims.cli._drive`); ``lap`` the QSS lap.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

from jaxtire.limits import range_summary
from jaxtire.surfaces import PRESET_NAMES as SURFACE_NAMES
from jaxtire.surfaces import surface_id
from sims.cli._checks import OneLineParser, check_memory, check_out_dir, check_seed
from sims.cli._common import Progress, rows_to_columns, write_table
from sims.cli._drive import CATALOGUE_RUNS, catalogue_name, run_catalogue
from sims.cli._tire import add_tire_arguments, check_tire_arguments, tire_from_args, tire_label
from sims.cli.lap import check_track, run_lap
from sims.drivers import Constant
from sims.run import tune_cpu
from sims.run.fleet import FleetRun, FleetSample, Sampling, fleet_start
from sims.run.spec import fast_compile_options
from sims.scenarios import braking, skidpad, step_steer
from sims.studies import braking as braking_study
from sims.studies import skidpad as skidpad_study
from sims.studies import step_steer as step_steer_study
from sims.studies.study import dumps
from sims.studies.study import inputs as study_inputs
from sims.studies.variation import sample
from sims.vehicles import MODELS, presets
from sims.vehicles.integrators import INTEGRATORS
from sims.vehicles.presets import PRESET_NAMES
from sims.vehicles.qss import ENVELOPES

SCENARIOS = ("braking", "braking-table", "skidpad", "step-steer", "throughput", *CATALOGUE_RUNS, "lap")
DEFAULT_SURFACES = ("asphalt_dry", "asphalt_wet", "gravel", "snow", "ice")


def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m sims",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--scenario", default="braking", help=f"one of {', '.join(SCENARIOS)}")
    ap.add_argument("--vehicles", type=int, default=10_000, help="fleet size of the braking Monte Carlo")
    ap.add_argument("--track", default="Monza", help="lap: a shipped circuit or a circuit CSV file (sims.cli.lap)")
    ap.add_argument(
        "--envelope",
        default="ellipse",
        choices=ENVELOPES,
        help="lap: the QSS envelope, the point mass's friction ellipse or the tire's own (sims.vehicles.qss)",
    )
    ap.add_argument(
        "--steps",
        type=int,
        default=None,
        help="maximum number of steps, run exactly (default: 60 s of simulated time; stops when all "
        "have stopped); the last chunk is partial when --chunk-steps does not divide it",
    )
    ap.add_argument("--dt", type=float, default=0.005, help="step [s]")
    ap.add_argument("--substeps", type=int, default=1, help="integrator substeps per step")
    ap.add_argument("--integrator", default="semi_implicit_euler", help="semi_implicit_euler or rk4")
    ap.add_argument("--model", default="double_track", help="double_track, single_track or full")
    ap.add_argument(
        "--preset",
        default="hatchback",
        help="hatchback, sports_car, kart or race_car "
        "(braking); the table scenarios run every preset unless one is given",
    )
    add_tire_arguments(ap)
    ap.add_argument("--surfaces", default=",".join(DEFAULT_SURFACES), help="comma-separated surface names")
    ap.add_argument("--abs-fraction", type=float, default=0.5, help="share of the fleet with ABS")
    ap.add_argument("--speed", type=float, default=100.0, help="initial speed [km/h]")
    ap.add_argument("--seed", type=int, default=0, help="PRNG seed (same seed, same fleet, same results)")
    ap.add_argument("--device", default="auto", help="auto, cpu or gpu")
    ap.add_argument(
        "--devices",
        type=int,
        default=None,
        help="devices the fleet is split over (default: all; on a CPU one host device per core, "
        "unless XLA_FLAGS sets a device count); 1: one device",
    )
    ap.add_argument("--chunk-steps", type=int, default=200, help="steps per compiled chunk (progress granularity)")
    ap.add_argument("--out", default="out", help="output folder")
    ap.add_argument("--format", default="csv", help="per-vehicle results: csv or parquet (needs pyarrow)")
    ap.add_argument("--no-plot", action="store_true", help="do not write the histogram")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--counts", default="1000,10000,100000", help="fleet sizes of the throughput scenario")
    ap.add_argument("--x64", action="store_true", help="float64 instead of float32")
    ap.add_argument(
        "--save-study",
        default=None,
        metavar="PATH",
        help="also write the braking Monte Carlo (the tables: each table study, PATH-<study name>.toml for several) "
        "of these flags as a study file (python -m sims study PATH)",
    )
    ap.add_argument(
        "--fast-compile",
        action="store_true",
        help="XLA:CPU options that halve the compile time and double the run time (short runs)",
    )
    return ap


def _validate(ap: argparse.ArgumentParser, args) -> None:
    """Every flag checked before anything is built or compiled (argparse error, exit status 2)."""

    def bad(msg):
        ap.error(msg)

    if args.scenario not in SCENARIOS and not catalogue_name(args.scenario):
        bad(f"--scenario {args.scenario!r} is unknown; allowed: {', '.join(SCENARIOS)}")
    if args.scenario == "lap":
        check_track(ap, args.track)
    if not 1 <= args.vehicles <= 100_000_000:
        bad(f"--vehicles {args.vehicles} is outside the allowed range [1, 100000000]")
    if args.steps is not None and args.steps < 1:
        bad(f"--steps {args.steps} must be >= 1")
    if not (math.isfinite(args.dt) and 0.0 < args.dt <= 0.1):
        bad(f"--dt {args.dt} is outside the allowed range (0, 0.1] s")
    if not 1 <= args.substeps <= 1000:
        bad(f"--substeps {args.substeps} is outside the allowed range [1, 1000]")
    if args.integrator not in INTEGRATORS:
        bad(f"--integrator {args.integrator!r} is unknown; allowed: {', '.join(INTEGRATORS)}")
    if args.model not in MODELS:
        bad(f"--model {args.model!r} is unknown; allowed: {', '.join(MODELS)}")
    if args.preset not in PRESET_NAMES and not (args.preset == "all" and args.scenario != "braking"):
        bad(f"--preset {args.preset!r} is unknown; known presets: {', '.join(PRESET_NAMES)}")
    check_tire_arguments(ap, args)
    surfaces = [s.strip() for s in args.surfaces.split(",") if s.strip()]
    unknown = [s for s in surfaces if s not in SURFACE_NAMES]
    if not surfaces or unknown:
        bad(f"--surfaces: unknown surface(s) {unknown or args.surfaces!r}; known: {', '.join(SURFACE_NAMES)}")
    args.surface_list = surfaces
    if not 0.0 <= args.abs_fraction <= 1.0:
        bad(f"--abs-fraction {args.abs_fraction} is outside the allowed range [0, 1]")
    if not (math.isfinite(args.speed) and 0.0 < args.speed <= 500.0):
        bad(f"--speed {args.speed} km/h is outside the allowed range (0, 500]")
    if args.device not in ("auto", "cpu", "gpu", "cuda", "tpu"):
        bad(f"--device {args.device!r} is unknown; allowed: auto, cpu, gpu")
    if args.devices is not None and not 1 <= args.devices <= 4096:
        bad(f"--devices {args.devices} is outside the allowed range [1, 4096]")
    if not 1 <= args.chunk_steps <= 100_000:
        bad(f"--chunk-steps {args.chunk_steps} is outside the allowed range [1, 100000]")
    try:
        args.count_list = [int(c) for c in args.counts.split(",") if c.strip()]
    except ValueError:
        bad(f"--counts {args.counts!r} must be comma-separated integers")
    if not args.count_list or min(args.count_list) < 1:
        bad(f"--counts {args.counts!r} must be positive integers")
    if max(args.count_list) > 100_000_000:
        bad(f"--counts {max(args.count_list)} is outside the allowed range [1, 100000000]")
    check_seed(ap, args.seed)
    if args.scenario == "throughput":
        check_memory(ap, "--counts", max(args.count_list))
    elif args.scenario == "braking":
        check_memory(ap, "--vehicles", args.vehicles)
    if args.steps is not None and args.steps > 100_000_000:
        bad(f"--steps {args.steps} is outside the allowed range [1, 100000000]")
    # --steps runs exactly that many steps (the fleet runner's last chunk is partial when --chunk-steps does
    # not divide it; throughput times one chunk of --steps steps)
    if args.steps is not None and args.scenario == "braking":
        args.chunk_steps = min(args.chunk_steps, args.steps)
    if args.format not in ("csv", "parquet"):
        bad(f"--format {args.format!r} is unknown; allowed: csv, parquet")
    if args.format == "parquet":
        try:
            import pyarrow  # noqa: F401  (optional dependency, only for --format parquet)
        except ImportError:
            bad("--format parquet needs pyarrow (pip install pyarrow); use --format csv")
    check_out_dir(ap, args.out)  # last: only a fully valid command line creates the folder


def _percentiles(x, qs=(5, 50, 95)):
    x = np.asarray(x)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [float("nan")] * len(qs)
    return [float(v) for v in np.percentile(x, qs)]


def run_braking(args, out: Path) -> dict:
    """The braking Monte Carlo (module docstring); returns a dict with the summary numbers."""
    t_start = time.perf_counter()
    n = args.vehicles
    ids = [surface_id(s) for s in args.surface_list]
    # the Monte Carlo is a study (sims.studies.braking): its fleet and settings are drawn by the studies' one
    # sampler, so `python -m sims study` of the --save-study file runs these very vehicles
    study = braking_study.monte_carlo_study(
        n,
        preset=args.preset,
        surfaces=tuple(args.surface_list),
        abs_fraction=args.abs_fraction,
        speed=args.speed / 3.6,
        seed=args.seed,
        tire=args.tir if args.tir is not None or args.tire == "mf" else args.tire,
        options={"dt": args.dt, "model": args.model, **({"max_time": args.steps * args.dt} if args.steps else {})},
    )
    if args.save_study:
        _study_saver(args.save_study, 1)(study)
    fleet, settings, draws = study_inputs(study)
    steps = args.steps or int(math.ceil(60.0 / args.dt))
    print(
        f"jaxtire fleet: {n} x {args.preset} ({args.model}, {tire_label(args)} tires, {args.integrator}, dt "
        f"{args.dt * 1e3:g} ms x {args.substeps}) braking from {args.speed:g} km/h on "
        f"{', '.join(args.surface_list)}; seed {args.seed}; device {jax.devices()[0].platform} x {args.n_devices}",
        flush=True,
    )
    setup_s = time.perf_counter() - t_start
    print("[1/3] compile ...", end=" ", flush=True, file=sys.stderr)
    abs_on, yaw0 = settings["abs_on"], settings["yaw_rate0"]
    run = braking.braking_run(
        fleet, abs_on, speed=args.speed / 3.6, yaw_rate0=yaw0, chunk_steps=args.chunk_steps, **_runner(args)
    )
    print(f"{run.compile():.1f} s", flush=True, file=sys.stderr)
    bar = Progress(steps, "[2/3] simulate", not args.no_progress)
    res, stats = braking.run_to_stop(run, steps, progress=bar)
    bar.close()
    col = draws.columns
    sample = FleetSample(
        col["vehicle.chassis.mass"], col["vehicle.tire_scale.mu_x"], col["vehicle.tire_scale.k_x"],
        col["vehicle.surface"].astype(int),
    )  # fmt: skip
    abs_np, yaw_np = np.asarray(abs_on), np.asarray(yaw0)

    # summary
    lines = []
    head = (
        f"{'surface':<12} {'mode':<7} {'n':>6} {'stopped':>8} {'p5 [m]':>8} {'p50 [m]':>8} {'p95 [m]':>8} {'spins':>6}"
    )
    lines.append(head)
    lines.append("-" * len(head))
    per_surface = {}
    for s, sid in zip(args.surface_list, ids, strict=False):
        for mode, flag in (("locked", 0.0), ("ABS", 1.0)):
            m = (sample.surface_id == sid) & (abs_np == flag)
            if not m.any():
                continue
            p5, p50, p95 = _percentiles(res.distance[m & res.stopped & ~res.spun])
            spins = int(res.spun[m].sum())
            per_surface[(s, mode)] = dict(
                n=int(m.sum()), p5=p5, p50=p50, p95=p95, spins=spins, stopped=int(res.stopped[m].sum())
            )
            lines.append(
                f"{s:<12} {mode:<7} {int(m.sum()):>6} {int(res.stopped[m].sum()):>8} {p5:>8.1f} {p50:>8.1f} "
                f"{p95:>8.1f} {spins:>6}"
            )
    total_spins = int(res.spun.sum())
    lines.append("-" * len(head))
    lines.append(
        f"vehicles {n}, stopped {int(res.stopped.sum())}, spins {total_spins}; "
        f"{stats.steps} steps ({stats.steps * args.dt:.1f} s simulated)"
    )
    if res.out_of_range is not None:
        lines.append(range_summary(res.out_of_range))
    lines.append(
        f"compile {stats.compile_s:.1f} s, simulate {stats.run_s:.1f} s: "
        f"{stats.vehicle_steps_per_s / 1e6:.2f} M vehicle-steps/s on {run.devices} device(s) (finished vehicles are dropped from the "
        f"batch as it goes)"
    )
    print("[3/3] results", file=sys.stderr, flush=True)
    print("\n".join(lines), flush=True)

    out.mkdir(parents=True, exist_ok=True)
    cols = {
        "vehicle": list(range(n)),
        "preset": [args.preset] * n,
        "surface": [args.surface_list[ids.index(int(i))] for i in sample.surface_id],
        "abs": [int(a) for a in abs_np],
        "mass_factor": [float(v) for v in sample.mass_factor],
        "mu_factor": [float(v) for v in sample.mu_factor],
        "stiffness_factor": [float(v) for v in sample.stiffness_factor],
        "yaw_rate0": [float(v) for v in yaw_np],
        "distance_m": [float(v) for v in res.distance],
        "stop_time_s": [float(v) for v in res.stop_time],
        "stopped": [int(v) for v in res.stopped],
        "spun": [int(v) for v in res.spun],
        "max_yaw_deg": [float(np.degrees(v)) for v in res.max_yaw],
    }
    if res.out_of_range is not None:
        cols["tire_out_of_range"] = [int(v) for v in res.out_of_range]
    table_path = write_table(out / "braking", cols, args.format)
    written = [table_path]
    if not args.no_plot:
        written.append(_plot_braking(out / "braking_hist.png", args, ids, sample, abs_np, res))
    print("wrote " + ", ".join(str(p) for p in written), flush=True)
    return dict(
        summary="\n".join(lines),
        per_surface=per_surface,
        stats=stats,
        spins=total_spins,
        files=written,
        setup_s=setup_s,
    )


def _plot_braking(path: Path, args, ids, sample, abs_np, res) -> Path:
    import matplotlib  # import cost (~1 s): only when a plot is written

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(ids)
    fig, axes = plt.subplots(1, k, figsize=(3.2 * k, 3.2), squeeze=False)
    for ax, s, sid in zip(axes[0], args.surface_list, ids, strict=False):
        for flag, label, color in ((0.0, "locked", "tab:red"), (1.0, "ABS", "tab:blue")):
            m = (sample.surface_id == sid) & (abs_np == flag) & res.stopped & ~res.spun
            if m.any():
                ax.hist(res.distance[m], bins=40, alpha=0.6, color=color, label=label)
        spins = int(res.spun[sample.surface_id == sid].sum())
        ax.set_title(f"{s}" + (f" ({spins} spun)" if spins else ""), fontsize=10)
        ax.set_xlabel("stopping distance [m]")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    axes[0][0].set_ylabel("vehicles")
    fig.suptitle(f"{args.vehicles} x {args.preset}, braking from {args.speed:g} km/h", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _options(args):
    return fast_compile_options() if args.fast_compile else None


def _runner(args) -> dict:
    """The runner keywords of ``args`` (:class:`~sims.run.fleet.FleetRun`): step, model, integrator, XLA options."""
    return dict(
        dt=args.dt,
        model=args.model,
        integrator=args.integrator,
        substeps=args.substeps,
        compiler_options=_options(args),
        devices=args.devices,
    )


def _study_saver(path: str | None, count: int):
    """``on_study`` of the table studies for ``--save-study PATH``: the one study at ``PATH``, several at
    ``PATH-<study name>.toml``; ``None`` without the flag."""
    if path is None:
        return None
    stem = Path(path)

    def save(study) -> None:
        to = stem if count == 1 else stem.with_name(f"{stem.stem}-{study.name}{stem.suffix or '.toml'}")
        to.parent.mkdir(parents=True, exist_ok=True)
        to.write_text(dumps(study))

    return save


def run_tables(args, out: Path) -> dict:
    """The table scenarios: braking-table, skidpad, step-steer (one row per preset x surface)."""
    names = PRESET_NAMES if args.preset in ("all",) or args.preset_default else (args.preset,)
    t = time.perf_counter()
    # the tables are studies (sims.studies.braking, .skidpad, .step_steer): --save-study writes them
    per_preset = args.scenario != "skidpad"  # one study a preset (skidpad: a preset and a surface)
    run = dict(
        compiler_options=_options(args),
        devices=args.devices,
        on_study=_study_saver(args.save_study, len(names) * (1 if per_preset else len(args.surface_list))),
    )
    tire = args.tir if args.tir is not None or args.tire == "mf" else args.tire
    options = {"dt": args.dt, "model": args.model}
    if args.scenario == "braking-table":
        speed = args.speed / 3.6
        rows = braking_study.braking_table(names, args.surface_list, speed=speed, tire=tire, options=options, run=run)
        text = braking.format_table(rows)
    elif args.scenario == "skidpad":
        rows = skidpad_study.skidpad_table(names, args.surface_list, tire=tire, options=options, run=run)
        text = skidpad.format_table(rows)
    else:
        dt, options = min(args.dt, step_steer_study.DT), {"model": args.model}
        rows = step_steer_study.step_steer_table(names, args.surface_list, dt=dt, tire=tire, options=options, run=run)
        text = step_steer.format_table(rows)
    print(text)
    print(f"({time.perf_counter() - t:.1f} s)")
    out.mkdir(parents=True, exist_ok=True)
    cols = rows_to_columns(rows)
    path = write_table(out / args.scenario.replace("-", "_"), cols, args.format)
    print(f"wrote {path}")
    return dict(rows=rows, text=text, files=[path])


def run_throughput(args, out: Path) -> dict:
    """Vehicle-steps per second of ``--model`` / ``--preset`` / ``--integrator`` fleets of ``--counts`` vehicles:
    a sampled fleet (random payload, tires, surfaces) on a held mild brake-and-steer input, ``--steps``
    steps (default 200) per timed call of the compiled chunk function, best of 3."""
    base = presets.get(args.preset, tire=args.tire_params)
    steps = args.steps or 200
    rows = []
    for n in args.count_list:
        fleet, _ = sample(base, n, Sampling(surfaces=(0, 2, 4, 8, 9)), seed=args.seed)
        brake_and_steer = Constant(steer=0.02, throttle=0.0, brake=0.3)
        _, s0, drv = fleet_start(fleet, args.model, brake_and_steer, speed=27.78, yaw_rate=0.01)
        run = FleetRun(fleet, s0, drv, chunk_steps=steps, **_runner(args))
        compile_s = run.compile()
        best, cpu = None, None
        for _ in range(3):
            c0 = time.process_time()
            _, _, _, st = run.run(steps)
            c1 = time.process_time() - c0
            if best is None or st.run_s < best.run_s:
                best, cpu = st, c1
        if best is None or cpu is None:  # the loop above runs 3 times
            raise RuntimeError("fleet benchmark: no timed run")
        per = cpu / (n * steps) * 1e9
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        rows.append(
            dict(
                vehicles=n,
                vehicle_steps_per_s=best.vehicle_steps_per_s,
                ms_per_step=best.run_s / steps * 1e3,
                cpu_ns_per_vehicle_step=per,
                compile_s=compile_s,
                load_average=load,
            )
        )
        print(
            f"{n:>9} vehicles: {best.vehicle_steps_per_s / 1e6:6.2f} M vehicle-steps/s  ({best.run_s / steps * 1e3:8.3f} "
            f"ms/step, {per:5.0f} CPU-ns/vehicle-step, compile {compile_s:.1f} s, load average {load:.1f}, "
            f"{run.devices} device(s))",
            flush=True,
        )
    out.mkdir(parents=True, exist_ok=True)
    path = write_table(out / "throughput", rows_to_columns(rows), args.format)
    print(f"wrote {path}")
    return dict(rows=rows, files=[path])


def main(argv=None) -> dict:
    """Entry point of ``python -m sims`` / ``jaxtire-fleet``; returns the scenario's summary dict."""
    ap = _parser()
    raw = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(raw)
    args.preset_default = not any(a == "--preset" or a.startswith("--preset=") for a in raw)
    if args.scenario not in ("braking", "throughput") and "--surfaces" not in " ".join(raw):
        args.surfaces = {"skidpad": "asphalt_dry,asphalt_wet,snow", "step-steer": "asphalt_dry"}.get(
            args.scenario, args.surfaces
        )
    _validate(ap, args)
    if argv is None:  # from the command line only: one host device per core
        tune_cpu(host_devices=os.cpu_count() if args.devices is None else args.devices)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    if args.device != "auto":
        platform = {"cuda": "gpu"}.get(args.device, args.device)
        try:
            dev = jax.devices(platform)[0]
        except RuntimeError:
            ap.error(
                f"--device {args.device}: no such device here (available: "
                f"{', '.join(sorted({d.platform for d in jax.devices()}))})"
            )
    else:
        dev = jax.devices()[0]
    n_local = len(jax.local_devices(backend=dev.platform))
    if args.devices is not None and args.devices > n_local:
        ap.error(
            f"--devices {args.devices}: only {n_local} {dev.platform} device(s) here (on a CPU set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={args.devices} or leave XLA_FLAGS' device count unset)"
        )
    args.n_devices = args.devices or n_local
    out = Path(args.out)
    args.tire_params = tire_from_args(ap, args)
    with jax.default_device(dev):
        if args.scenario == "braking":
            return run_braking(args, out)
        if args.scenario == "throughput":
            return run_throughput(args, out)
        name = catalogue_name(args.scenario)
        if name is not None:
            return run_catalogue(args, name, _runner(args))
        if args.scenario == "lap":
            return run_lap(args, out)
        return run_tables(args, out)
