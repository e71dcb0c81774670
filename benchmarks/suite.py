"""The benchmark cases.  Each returns plain dicts (one per implementation and size) for the report.

Cases (``items`` is what one "eval" or "step" counts):

* ``mf_curve``: the bare Magic Formula ``D sin(C atan(Bx - E(Bx - atan Bx)))``, one item = one curve
  value; JAX :func:`jaxtire.magic_formula` vs :func:`benchmarks.reference.magic_formula`.
* ``tire_mf61``: one wheel, full steady-state MF 6.1 step: slip kinematics (``vx, vy, omega`` ->
  ``kappa, alpha``) and combined-slip ``Fx, Fy, Mz`` at camber and load (:func:`jaxtire.slip` +
  :func:`jaxtire.mf_forces`); one item = one tire evaluation.
* ``vehicle_step``: the 4-wheel double-track car (:mod:`sims.vehicles.double_track`, semi-implicit
  Euler, 4 MF 6.2 tires) for a fleet of ``n`` cars; one item = one vehicle-step.  ``mode = "call"``
  is one jitted call per step (the latency a game loop sees); ``mode = "scan"`` runs ``steps`` steps
  inside one ``lax.scan`` (how a simulation runs); ``mode = "chunked"`` additionally splits the fleet
  into cache-sized blocks (:func:`sims.run.chunked.chunked`), each running the whole scan.
* NumPy runs the same arithmetic vectorised over the batch (a Python loop over the steps); pure
  Python loops over elements / vehicles one at a time (timed on a subset, reported per item).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable

import numpy as np

from benchmarks import harness, inputs
from benchmarks import reference as ref

DT = 0.005
FRAME_S = 1.0 / 60.0


@dataclasses.dataclass
class Config:
    quick: bool = False
    repeats: int = 5
    target_s: float = 0.2
    curve_sizes: tuple = (1, 1_000, 1_000_000)
    tire_sizes: tuple = (1, 1_000, 1_000_000)
    frame_fleet: int = 100
    call_fleets: tuple = (1, 100)
    big_fleet: int = 100_000
    scaling: tuple = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)
    chunk: int | None = (
        None  # None: calibrated per machine (calibrate_chunk); 2048 was best on a Zen 5 EPYC, 16384 on a Zen 3
    )
    chunk_candidates: tuple = (2048, 4096, 8192, 16384, 32768)
    chunk_from: int = 65_536
    numpy_fleets: tuple = (1, 100, 10_000, 100_000)
    py_items: int = 20_000  # elements timed by the pure-Python tire loops
    py_vehicles: int = 300  # vehicle-steps timed by the pure-Python vehicle loop
    work_per_call: float = 1e7  # vehicle-steps per scan call in the scaling curve (100 steps at 100 k cars)
    max_steps: int = 2000
    min_steps: int = 10
    unroll: int = 1
    gpu: bool = False
    compiled: bool = True  # numba baseline (benchmarks.compiled), skipped when numba is missing
    compiled_min: int = 1_000  # smallest batch timed with numba (its per-call overhead is not the point)
    compiled_fleets: tuple = (10_000, 100_000)  # fleets of the numba vehicle step (those the scan also times)
    compiled_vehicle_repeats: int = 3  # calls per numba fleet row (each 1e7 vehicle-steps: seconds)
    # sections beyond the tire and the double track (``--gpu``; empty on the CPU run): fleet sizes of the full
    # vehicle, env batch sizes of the race task, the braking study's fleet
    full_sizes: tuple = ()
    full_steps: int = 100
    env_sizes: tuple = ()
    env_steps: int = 100
    study_fleet: int = 0
    budget_s: float | None = None  # wall seconds for the whole run: later sections and sizes are skipped
    started: float = 0.0  # time.perf_counter() at the start of run_all (the budget's origin)

    @classmethod
    def make(cls, quick=False, gpu=False, **kw):
        if quick:
            base = dict(
                quick=True,
                repeats=3,
                target_s=0.03,
                curve_sizes=(1, 1_000),
                tire_sizes=(1, 1_000),
                frame_fleet=100,
                call_fleets=(100,),
                big_fleet=100,
                scaling=(100,),
                chunk=64,
                chunk_from=10**12,
                numpy_fleets=(1, 100),
                py_items=300,
                py_vehicles=20,
                work_per_call=2e3,
                max_steps=20,
                min_steps=5,
                compiled=False,
            )
            if gpu:  # the GPU code path at tiny sizes: a dry run that works on any backend (tests)
                base.update(gpu=True, unroll=4, full_sizes=(64,), full_steps=5, env_sizes=(64,), env_steps=5)
                base.update(study_fleet=64)
        elif gpu:
            base = dict(
                gpu=True,
                big_fleet=1_000_000,
                scaling=(1, 100, 10_000, 100_000, 1_000_000, 4_000_000, 16_000_000),
                chunk_from=10**12,
                work_per_call=2e8,
                unroll=4,
                repeats=3,
                compiled=False,  # the numba CPU baseline belongs to the CPU run
                full_sizes=(100_000, 1_000_000, 10_000_000),
                env_sizes=(100_000, 1_000_000),
                study_fleet=1_000_000,
                budget_s=480.0,
            )
        else:
            base = {}
        base.update({k: v for k, v in kw.items() if v is not None})
        return cls(**base)


def _row(case, impl, n, items, t: harness.Timing, **extra) -> dict:
    per_item = t.seconds / items
    row = dict(
        case=case,
        impl=impl,
        batch=n,
        items_per_call=items,
        seconds_per_call=t.seconds,
        cpu_seconds_per_call=t.cpu_seconds,
        ns_per_item=per_item * 1e9,
        items_per_s=1.0 / per_item,
        inner=t.inner,
        samples=t.samples,
        lower_s=t.lower_s,
        compile_s=t.compile_s,
        memory=t.memory,
        load_average=harness.load_average(),
    )
    row.update(extra)
    return row


def _say(log, row):
    comp = f"  compile {row['compile_s']:.2f}s" if row.get("compile_s") is not None else ""
    log(
        f"  {row['case']:13s} {row['impl']:12s} n={row['batch']:>9,d}  {row['ns_per_item']:12.2f} ns/item  "
        f"{row['items_per_s']:10.3e} items/s{comp}"
    )


def _on_devices(arrays):
    """Shard 1-D batches over all local CPU devices when there are several and the batch divides evenly
    (``python -m benchmarks`` forces one host device per core: 1.7x less CPU time per tire evaluation on
    the AVX-512 VM, ``PERF_NOTES.md``); otherwise the arrays as they are (one device)."""
    import jax
    import jax.numpy as jnp

    devs = jax.devices()
    n = arrays[0].shape[0]
    if len(devs) < 2 or devs[0].platform != "cpu" or n % len(devs):
        return tuple(jnp.asarray(a) for a in arrays)
    sh = jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devs), ("batch",)), jax.sharding.PartitionSpec("batch"))
    return tuple(jax.device_put(jnp.asarray(a), sh) for a in arrays)


# --------------------------------------------------------------------------------------------------
# compiled (numba) baseline, 1 thread and all threads, timed right after jaxtire at the same batch


def _compiled_rows(
    cfg: Config,
    case: str,
    n: int,
    fn: Callable,
    args: tuple,
    log: Callable,
    items: int | None = None,
    timer: Callable[[], harness.Timing] | None = None,
    **extra,
) -> list:
    """Rows ``numba-1t`` and ``numba-all`` of ``fn(*args)`` (``items`` per call, default ``n``), timed by
    :func:`harness.time_call` after a compiling call, or by ``timer()`` (already compiled) when given."""
    from benchmarks import compiled

    if not cfg.compiled or n < cfg.compiled_min:
        return []
    if not compiled.AVAILABLE:
        log(f"  {case}: compiled baseline skipped: {compiled.skip_reason()}")
        return []
    rows = []
    if timer is None:
        fn(*args)  # compile (numba compiles on first call)
        timer = lambda: harness.time_call(fn, args, repeats=cfg.repeats, target_s=cfg.target_s)  # noqa: E731
    for impl, th in (("numba-1t", 1), ("numba-all", None)):
        k = compiled.set_threads(th)
        r = _row(case, impl, n, items or n, timer(), threads=k, **extra)
        rows.append(r)
        _say(log, r)
    compiled.set_threads(None)
    return rows


# --------------------------------------------------------------------------------------------------
# Magic Formula curve and the single-wheel MF 6.1 step


def mf_curve(cfg: Config, log: Callable) -> list:

    from jaxtire import magic_formula

    B, C, D, E = inputs.MF_BCDE
    rows = []

    def jfn(x):
        return magic_formula(x, B, C, D, E)

    for n in cfg.curve_sizes:
        x = inputs.curve_inputs(n)
        (xj,) = _on_devices((x,))
        r = _row("mf_curve", "jaxtire", n, n, harness.time_jax(jfn, (xj,), repeats=cfg.repeats, target_s=cfg.target_s))
        rows.append(r)
        _say(log, r)
        Bf, Cf, Df, Ef = (np.float32(v) for v in inputs.MF_BCDE)
        out = np.empty_like(x)
        if cfg.compiled and n >= cfg.compiled_min:
            from benchmarks import compiled

            rows += _compiled_rows(cfg, "mf_curve", n, lambda a: compiled.curve(a, Bf, Cf, Df, Ef, out), (x,), log)
        r = _row(
            "mf_curve",
            "numpy",
            n,
            n,
            harness.time_call(
                lambda a: ref.magic_formula(ref.NP, a, B, C, D, E), (x,), repeats=cfg.repeats, target_s=cfg.target_s
            ),
        )
        rows.append(r)
        _say(log, r)
        m = min(n, cfg.py_items)
        xs = [float(v) for v in x[:m]]
        py = ref.PY
        t = harness.time_loop(lambda i: ref.magic_formula(py, xs[i], B, C, D, E), m, repeats=max(1, cfg.repeats // 2))
        t.seconds *= n  # per call of n items
        t.cpu_seconds *= n
        r = _row("mf_curve", "python", n, n, t, timed_items=m)
        rows.append(r)
        _say(log, r)
    return rows


def tire_step(cfg: Config, log: Callable) -> tuple[list, dict]:
    import jax.numpy as jnp

    import jaxtire
    from jaxtire.slip import slip_angle, slip_ratio

    p = jaxtire.default_tire(dtype=jnp.float32)
    R = inputs.WHEEL_RADIUS

    def jfn(vx, vy, omega, gamma, fz):
        o = jaxtire.mf_forces(p, slip_ratio(omega, R, vx), slip_angle(vx, vy), gamma, fz, vx)
        return o.fx, o.fy, o.mz

    tnp, tpy = inputs.reference_tire(np.float32), inputs.reference_tire(float)
    keys = ("vx", "vy", "omega", "gamma", "fz")
    rows, check = [], {}
    for n in cfg.tire_sizes:
        d = inputs.tire_inputs(n)
        args_np = tuple(d[k] for k in keys)
        args_j = _on_devices(args_np)
        r = _row(
            "tire_mf61", "jaxtire", n, n, harness.time_jax(jfn, args_j, repeats=cfg.repeats, target_s=cfg.target_s)
        )
        rows.append(r)
        _say(log, r)
        if cfg.compiled and n >= cfg.compiled_min:
            from benchmarks import compiled

            if compiled.AVAILABLE and "numba_tire" not in check:
                check["numba_tire"] = compiled.tire_kernel(compiled.default_coefs(), R)
            outs = tuple(np.empty(n, np.float32) for _ in range(3))
            kern = check.get("numba_tire")
            crow = _compiled_rows(cfg, "tire_mf61", n, (lambda *a: kern(*a, *outs)) if kern else None, args_np, log)
            rows += crow
        r = _row(
            "tire_mf61",
            "numpy",
            n,
            n,
            harness.time_call(
                lambda *a: ref.mf61_step(ref.NP, tnp, *a, R), args_np, repeats=cfg.repeats, target_s=cfg.target_s
            ),
        )
        rows.append(r)
        _say(log, r)
        m = min(n, cfg.py_items)
        cols = [[float(v) for v in a[:m]] for a in args_np]
        py = ref.PY
        t = harness.time_loop(
            lambda i: ref.mf61_step(py, tpy, cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], R),
            m,
            repeats=max(1, cfg.repeats // 2),
        )
        t.seconds *= n
        t.cpu_seconds *= n
        r = _row("tire_mf61", "python", n, n, t, timed_items=m)
        rows.append(r)
        _say(log, r)
        if n == max(cfg.tire_sizes):
            import jax

            jo = jax.jit(jfn)(*args_j)
            no = ref.mf61_step(ref.NP, inputs.reference_tire(np.float64), *(a.astype(np.float64) for a in args_np), R)
            kern = check.pop("numba_tire", None)
            check.update(
                {
                    f"tire_{k}_max_rel_diff_vs_numpy_f64": float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))
                    for k, a, b in zip(("fx", "fy", "mz"), jo, no, strict=False)
                }
            )
            if kern is not None:
                outs = tuple(np.empty(n, np.float32) for _ in range(3))
                kern(*args_np, *outs)
                check.update(
                    {
                        f"tire_{k}_max_rel_diff_numba_vs_jaxtire": float(
                            np.max(np.abs(a - np.asarray(b))) / np.max(np.abs(np.asarray(b)))
                        )
                        for k, a, b in zip(("fx", "fy", "mz"), outs, jo, strict=False)
                    }
                )
    check.pop("numba_tire", None)
    return rows, check


# --------------------------------------------------------------------------------------------------
# vehicles


def _steps_for(cfg: Config, n: int) -> int:
    return int(min(max(round(cfg.work_per_call / n), cfg.min_steps), cfg.max_steps))


def _state_bytes(tree, n: int) -> float:
    import jax

    return sum(np.asarray(x).nbytes for x in jax.tree.leaves(tree)) / n


def _jax_vehicle(cfg: Config, n: int, mode: str, log: Callable) -> dict:

    from sims.run.chunked import chunked
    from sims.vehicles import fleet_axes

    params, state, controls = inputs.jax_fleet(n)
    per_vehicle = _state_bytes((params.chassis, state, controls), n)
    check = None
    if mode == "call":
        # a game loop's step: fleet params closed over (constants of the executable), state and controls in
        steps = 1
        step = inputs.fleet_step_fn(DT)
        t, compiled = harness.time_jax(
            lambda s, c: step(params, s, c),
            (state, controls),
            repeats=cfg.repeats,
            target_s=cfg.target_s,
            return_compiled=True,
        )
        if n == cfg.frame_fleet:
            check = vehicle_check(n, compiled(state, controls), state)
    else:
        steps = _steps_for(cfg, n)
        fn = inputs.fleet_rollout_fn(DT, steps, unroll=cfg.unroll)
        if mode == "chunked":
            fn = chunked(fn, cfg.chunk, in_axes=(fleet_axes(params), 0, 0))
        t = harness.time_jax(fn, (params, state, controls), repeats=cfg.repeats, target_s=cfg.target_s)
    mem = t.memory or {}
    peak = sum(mem.get(k, 0) for k in ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes"))
    row = _row(
        "vehicle_step",
        f"jaxtire-{mode}",
        n,
        n * steps,
        t,
        steps=steps,
        bytes_per_vehicle_state=per_vehicle,
        bytes_per_vehicle_peak=peak / n if peak else None,
        temp_bytes_per_vehicle=mem.get("temp_size_in_bytes", 0) / n if mem else None,
    )
    if check is not None:
        row["check"] = check
    _say(log, row)
    return row


def _numpy_vehicle(cfg: Config, n: int, log: Callable, steps: int = 1) -> dict:
    ch, tire, table, state, controls = inputs.numpy_fleet(n)

    def run(s):
        for _ in range(steps):
            s = ref.vehicle_step(ref.NP, ch, tire, tire, table, s, controls, DT)
        return s

    t = harness.time_call(run, (state,), repeats=cfg.repeats, target_s=cfg.target_s)
    row = _row("vehicle_step", "numpy", n, n * steps, t, steps=steps)
    _say(log, row)
    return row


def _python_vehicle(cfg: Config, log: Callable) -> dict:
    m = cfg.py_vehicles
    chs, tire, table, states, ctls = inputs.python_fleet(m)
    py = ref.PY

    def body(i):
        states[i] = ref.vehicle_step(py, chs[i], tire, tire, table, states[i], ctls[i], DT)

    t = harness.time_loop(body, m, repeats=max(1, cfg.repeats // 2))
    row = _row("vehicle_step", "python", 1, 1, t, steps=1, timed_items=m)
    _say(log, row)
    return row


def vehicle_check(n: int, js, state0) -> dict:
    """Max abs difference of the JAX state ``js`` after one step of the ``n``-car fleet from ``state0`` vs the
    NumPy float64 reference from the same state (per state field)."""
    ch, tire, table, st, c = inputs.numpy_fleet(n)
    up = to_float64
    ch64 = ref.chassis_values({}, np.float64)
    for k, v in vars(ch).items():
        setattr(ch64, k, up(v))
    ch64.surface_ids = ch.surface_ids
    t64 = inputs.reference_tire(np.float64)
    f = [np.asarray(v, np.float64) for v in state0[:11]]  # x ... defl_y (no driveline state: drive is None)
    wheels = lambda a: [a[:, i] for i in range(4)]  # noqa: E731
    st64 = tuple(f[:6]) + (wheels(f[6]),) + tuple(f[7:9]) + tuple(wheels(a) for a in f[9:])  # + contact deflections
    ns = ref.vehicle_step(ref.NP, ch64, t64, t64, inputs.reference_table(np.float64), st64, up(c), DT)
    out = {}
    names = ("x", "y", "yaw", "vx", "vy", "yaw_rate", "omega", "ax", "ay", "defl_x", "defl_y")
    for name, a, b in zip(names, js, ns, strict=False):
        b = np.stack(b, -1) if isinstance(b, list) else b
        out[f"vehicle_{name}_max_abs_diff_vs_numpy_f64"] = float(np.max(np.abs(np.asarray(a, np.float64) - b)))
    return out


def to_float64(v):
    """``v`` with every numpy array (also inside lists and tuples) as float64."""
    if isinstance(v, np.ndarray):
        return v.astype(np.float64)
    if isinstance(v, (list, tuple)):
        return type(v)(to_float64(x) for x in v)
    return v


def _compiled_vehicle(cfg: Config, sizes: dict, log: Callable, kernel: Callable | None = None) -> list:
    """The numba fleet step (:func:`benchmarks.compiled.vehicle_kernel`) for each ``n -> steps`` of ``sizes``
    (the jaxtire scan's fleet sizes and steps per call), 1 thread and all threads.

    One call runs ``steps`` steps of the whole fleet from the fleet's initial state (a fresh copy per call,
    made outside the timing, as every jaxtire scan call starts from the same state); median of
    ``cfg.compiled_vehicle_repeats`` calls.  The kernel (``kernel``: one already built) is compiled once, on
    an 8-car fleet (``compile_s``)."""
    from benchmarks import compiled

    if not cfg.compiled or not sizes:
        return []
    if not compiled.AVAILABLE:
        log(f"  vehicle_step: compiled baseline skipped: {compiled.skip_reason()}")
        return []
    t0 = time.perf_counter()
    kern = kernel or compiled.vehicle_kernel(compiled.default_coefs())
    ch, _tire, table, state, controls = inputs.numpy_fleet(8)
    compiled.fleet_stepper(kern, ch, table)(compiled.fleet_state(state), controls, DT, 1)
    compile_s = time.perf_counter() - t0
    rows = []
    for n, steps in sizes.items():
        ch, _tire, table, state, controls = inputs.numpy_fleet(n)
        step = compiled.fleet_stepper(kern, ch, table)

        def timer(step=step, state=state, controls=controls, steps=steps):
            walls, cpus = [], []
            for _ in range(cfg.compiled_vehicle_repeats):
                s = compiled.fleet_state(state)
                c0, w0 = time.process_time(), time.perf_counter()
                step(s, controls, DT, steps)
                walls.append(time.perf_counter() - w0)
                cpus.append(time.process_time() - c0)
            return harness.Timing(statistics.median(walls), statistics.median(cpus), walls, 1, compile_s=compile_s)

        rows += _compiled_rows(cfg, "vehicle_step", n, step, (), log, items=n * steps, timer=timer, steps=steps)
    return rows


def calibrate_chunk(cfg: Config, log: Callable) -> dict:
    """Time the block sizes ``cfg.chunk_candidates`` of the chunked scan on this machine, like an FFT plan:
    for each, the chunked rollout of 131 072 cars x 20 steps (:func:`harness.time_jax`, median of 3 calls).
    The best block depends on the caches and on whether a block's fused loops are big enough for XLA:CPU
    to split them over the cores (measured: 2,048 on a Zen 5 EPYC, 16,384 on a Zen 3).  Returns the rates
    and the fastest (``"chosen"``)."""
    from sims.run.chunked import chunked
    from sims.vehicles import fleet_axes

    n, steps = 131_072, 20
    args = inputs.jax_fleet(n)
    fn = inputs.fleet_rollout_fn(DT, steps)
    rates = {}
    for c in cfg.chunk_candidates:
        t = harness.time_jax(chunked(fn, c, in_axes=(fleet_axes(args[0]), 0, 0)), args, repeats=3, target_s=0.0)
        rates[c] = n * steps / t.seconds
        log(f"  chunk calibration: {c:6d} vehicles per block -> {rates[c]:.3g} vehicle-steps/s")
    best = max(rates, key=rates.get)
    return {"fleet": n, "steps": steps, "vehicle_steps_per_s": {str(k): v for k, v in rates.items()}, "chosen": best}


def vehicles(cfg: Config, log: Callable) -> tuple[list, list, dict]:
    """The vehicle table rows, the scaling rows and the equivalence check."""
    rows, check = [], {}
    # latency of one step call: 1 car and the 100-car "frame" fleet
    for n in sorted(set(cfg.call_fleets) | {cfg.frame_fleet}):
        r = _jax_vehicle(cfg, n, "call", log)
        r["frame_fraction"] = r["seconds_per_call"] / FRAME_S
        check.update(r.pop("check", {}))
        rows.append(r)
    for n in sorted(set(cfg.call_fleets) | {cfg.frame_fleet}):
        rows.append(_numpy_vehicle(cfg, n, log))
    rows.append(_python_vehicle(cfg, log))
    # scaling: scan (and chunked scan) over a log grid of fleet sizes
    scaling = []
    for n in cfg.scaling:
        if over_budget(cfg):
            log(f"  budget spent: fleet sizes from {n:,d} skipped")
            break
        scaling.append(_jax_vehicle(cfg, n, "scan", log))
        if n >= cfg.chunk_from and n > cfg.chunk:
            scaling.append(_jax_vehicle(cfg, n, "chunked", log))
    if cfg.big_fleet not in cfg.scaling:
        scaling.append(_jax_vehicle(cfg, cfg.big_fleet, "scan", log))
        if cfg.big_fleet >= cfg.chunk_from:
            scaling.append(_jax_vehicle(cfg, cfg.big_fleet, "chunked", log))
    for n in cfg.numpy_fleets:
        scaling.append(_numpy_vehicle(cfg, n, log, steps=1 if n >= 1000 else 10))
    timed = set(cfg.scaling) | {cfg.big_fleet}
    rows += _compiled_vehicle(cfg, {n: _steps_for(cfg, n) for n in cfg.compiled_fleets if n in timed}, log)
    return rows, scaling, check


def over_budget(cfg: Config) -> bool:
    """Whether the run's wall-time budget (``cfg.budget_s`` from :func:`run_all`'s start) is spent."""
    return cfg.budget_s is not None and time.perf_counter() - cfg.started > cfg.budget_s


def full_vehicle(cfg: Config, log: Callable) -> list:
    """The 14-DOF full vehicle and the double track side by side, ``cfg.full_steps`` steps per fleet of
    ``cfg.full_sizes`` (:func:`benchmarks.full_vehicle.measure`); stops at the budget."""
    from benchmarks import full_vehicle as fv

    rows = []
    for n in cfg.full_sizes:
        for model in ("full", "double_track"):
            if over_budget(cfg):
                log(f"  budget spent: {model} at {n:,d} skipped")
                return rows
            r = fv.measure(model, n, cfg.full_steps, max(1, cfg.repeats // 2))
            rows.append(r)
            log(
                f"  {model:13s} n={n:>11,d}  {r['wall_ns_per_vehicle_step']:10.3f} ns/vehicle-step  compile {r['compile_s']:.1f}s"
            )
    return rows


def race_env(cfg: Config, log: Callable) -> list:
    """The race task (``jaxtire/RaceMonza-v0``: reset + step with random actions in one scan) at the batch sizes
    ``cfg.env_sizes`` (:func:`benchmarks.envs.make_runner`); stops at the budget."""
    from benchmarks import envs as be
    from sims import envs

    env = envs.make("jaxtire/RaceMonza-v0")
    params = env.default_params
    rows = []
    for n in cfg.env_sizes:
        if over_budget(cfg):
            log(f"  budget spent: race env at {n:,d} skipped")
            break
        rate, first = be.measure(
            be.make_runner(env, params, n, cfg.env_steps), n, cfg.env_steps, max(1, cfg.repeats // 2)
        )
        rows.append(
            dict(env="jaxtire/RaceMonza-v0", envs=n, steps=cfg.env_steps, env_steps_per_s=rate, compile_s=first)
        )
        log(f"  race env  n={n:>11,d}  {rate:10.3e} env-steps/s  compile+first {first:.1f}s")
    return rows


def study(cfg: Config, log: Callable) -> list:
    """A braking study of ``cfg.study_fleet`` vehicles against the bare fleet run of the same scenario
    (:func:`benchmarks.studies.study_vs_fleet`)."""
    from benchmarks import studies as bs

    if not cfg.study_fleet:
        return []
    r = bs.study_vs_fleet(cfg.study_fleet)
    log(f"  study n={cfg.study_fleet:,d}: study run {r['study_run_s']:.2f}s, fleet run {r['fleet_run_s']:.2f}s")
    return [r]


def run_all(cfg: Config, log: Callable = print, on_section: Callable | None = None) -> dict:
    """Every section in priority order (tire, double track, full vehicle, race env, study); after each one
    ``on_section(results)`` (``python -m benchmarks`` writes RESULTS there, so a run cut short keeps what it
    measured); a section that would start after ``cfg.budget_s`` is skipped and listed in
    ``results["skipped"]``."""
    import jax

    cfg.started = time.perf_counter()
    env = harness.environment()
    log(
        f"jaxtire benchmarks on {env['cpu']} ({env['cpu_count']} CPUs), backend {env['backend']}, "
        f"devices {env['devices']}, {env['dtype']}, load average {env['load_average_start']}"
    )
    if cfg.gpu and env["backend"] != "gpu" and not cfg.quick:
        raise SystemExit(
            f"--gpu given but JAX's default backend is {env['backend']!r} (devices {jax.devices()}); "
            "install jax[cuda12] on a machine with an NVIDIA GPU"
        )
    results = {"env": env, "config": dataclasses.asdict(cfg), "cases": [], "scaling": [], "checks": {}}
    results.update(full_vehicle=[], race_env=[], study=[], skipped=[], sections_s={})

    def tire():
        log("Magic Formula curve")
        results["cases"] += mf_curve(cfg, log)
        log("single-wheel MF 6.1 step (slip + combined Fx, Fy, Mz)")
        rows, check = tire_step(cfg, log)
        results["cases"] += rows
        results["checks"].update(check)

    def double_track():
        log("4-wheel vehicle step and fleet scaling")
        if cfg.chunk is None:
            if any(n >= cfg.chunk_from for n in tuple(cfg.scaling) + (cfg.big_fleet,)):
                results["chunk_calibration"] = calibrate_chunk(cfg, log)
                cfg.chunk = results["chunk_calibration"]["chosen"]
            else:
                from sims.run.chunked import DEFAULT_CHUNK

                cfg.chunk = DEFAULT_CHUNK
            results["config"]["chunk"] = cfg.chunk
        rows, scaling, check = vehicles(cfg, log)
        results["cases"] += rows
        results["scaling"] = scaling
        results["checks"].update(check)

    sections = [("tire", tire), ("double track", double_track)]
    for key, fn, wanted in (
        ("full_vehicle", full_vehicle, cfg.full_sizes),
        ("race_env", race_env, cfg.env_sizes),
        ("study", study, cfg.study_fleet),
    ):
        if wanted:
            sections.append(
                (key.replace("_", " "), lambda key=key, fn=fn: results[key].extend(_logged(key, fn, cfg, log)))
            )
    for name, fn in sections:
        if over_budget(cfg):
            log(f"budget of {cfg.budget_s:g} s spent: section {name!r} skipped")
            results["skipped"].append(name)
            continue
        t = time.perf_counter()
        fn()
        results["sections_s"][name] = time.perf_counter() - t
        env["load_average_end"] = harness.load_average()
        env["steal_fraction"] = harness.steal_fraction(env.get("cpu_times_start"), harness.cpu_times())
        env["total_seconds"] = time.perf_counter() - cfg.started
        if on_section is not None:
            on_section(results)
    if results["skipped"] and on_section is not None:  # the list of skipped sections into RESULTS too
        on_section(results)
    return results


def _logged(key: str, fn: Callable, cfg: Config, log: Callable) -> list:
    log(key.replace("_", " "))
    return fn(cfg, log)
