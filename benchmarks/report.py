"""``RESULTS.md``, ``results.json`` and ``scaling.png`` from the results of :func:`benchmarks.suite.run_all`."""

from __future__ import annotations

import os

from benchmarks import harness

TARGETS_CPU = {
    "mf_curve": 1e8,
    "tire_mf61": 2e7,
    "vehicle": 5e6,
    "vehicle_vs_numpy": 3.0,
    "vehicle_vs_python": 100.0,
}
TARGET_GPU_VEHICLE = 1e9


def _fmt_rate(v):
    return "-" if v is None else f"{v:.3g}"


def _fmt_ns(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.3g} ms"
    if v >= 1e3:
        return f"{v / 1e3:.3g} us"
    return f"{v:.3g} ns"


def _find(rows, case, impl, batch):
    for r in rows:
        if r["case"] == case and r["impl"] == impl and r["batch"] == batch:
            return r
    return None


def summary(results: dict) -> dict:
    """Headline figures and target checks."""
    cases, scaling, cfg = results["cases"], results["scaling"], results["config"]
    out = {}
    for case in ("mf_curve", "tire_mf61"):
        sizes = cfg["curve_sizes"] if case == "mf_curve" else cfg["tire_sizes"]
        n = max(sizes)
        j, npy, py = (_find(cases, case, impl, n) for impl in ("jaxtire", "numpy", "python"))
        out[case] = dict(
            batch=n,
            jax_items_per_s=j["items_per_s"],
            numpy_items_per_s=npy["items_per_s"],
            python_items_per_s=py["items_per_s"],
            vs_numpy=j["items_per_s"] / npy["items_per_s"],
            vs_python=j["items_per_s"] / py["items_per_s"],
        )
    big = cfg["big_fleet"]
    jbig = [r for r in scaling if r["batch"] == big and r["impl"].startswith("jaxtire")]
    best = max(jbig, key=lambda r: r["items_per_s"])
    npy = [r for r in scaling if r["impl"] == "numpy"]
    npy_big = min(npy, key=lambda r: abs(r["batch"] - big))
    py = _find(cases, "vehicle_step", "python", 1)
    frame = _find(cases, "vehicle_step", "jaxtire-call", cfg["frame_fleet"])
    one = _find(cases, "vehicle_step", "jaxtire-call", 1) or frame
    peak = max((r for r in scaling if r["impl"].startswith("jaxtire")), key=lambda r: r["items_per_s"])
    out["vehicle"] = dict(
        batch=big,
        impl=best["impl"],
        jax_items_per_s=best["items_per_s"],
        numpy_batch=npy_big["batch"],
        numpy_items_per_s=npy_big["items_per_s"],
        python_items_per_s=py["items_per_s"],
        vs_numpy=best["items_per_s"] / npy_big["items_per_s"],
        vs_python=best["items_per_s"] / py["items_per_s"],
        peak_items_per_s=peak["items_per_s"],
        peak_batch=peak["batch"],
        peak_impl=peak["impl"],
        frame_fleet=cfg["frame_fleet"],
        frame_call_s=frame["seconds_per_call"],
        frame_fraction=frame["seconds_per_call"] / (1 / 60),
        one_car_call_s=one["seconds_per_call"],
        one_car_batch=one["batch"],
    )
    gpu = cfg.get("gpu")
    checks = [
        ("Magic Formula curve evals/s", TARGETS_CPU["mf_curve"], out["mf_curve"]["jax_items_per_s"]),
        ("MF 6.1 combined tire evals/s", TARGETS_CPU["tire_mf61"], out["tire_mf61"]["jax_items_per_s"]),
        (
            "4-wheel vehicle-steps/s (large fleet)",
            TARGET_GPU_VEHICLE if gpu else TARGETS_CPU["vehicle"],
            out["vehicle"]["jax_items_per_s"],
        ),
        ("4-wheel step speed-up vs NumPy", TARGETS_CPU["vehicle_vs_numpy"], out["vehicle"]["vs_numpy"]),
        ("4-wheel step speed-up vs Python loop", TARGETS_CPU["vehicle_vs_python"], out["vehicle"]["vs_python"]),
    ]
    out["targets"] = [dict(name=n, target=t, measured=m, met=bool(m >= t)) for n, t, m in checks]
    return out


def write_plot(results: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = results["scaling"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for impl, style in (("jaxtire-scan", "o-"), ("jaxtire-chunked", "s--"), ("numpy", "^-")):
        rows = sorted((r for r in sc if r["impl"] == impl), key=lambda r: r["batch"])
        if rows:
            ax1.plot([r["batch"] for r in rows], [r["items_per_s"] for r in rows], style, label=impl)
    py = _find(results["cases"], "vehicle_step", "python", 1)
    if py:
        ax1.axhline(py["items_per_s"], color="grey", ls=":", label="pure Python loop")
    tgt = TARGET_GPU_VEHICLE if results["config"].get("gpu") else TARGETS_CPU["vehicle"]
    ax1.axhline(tgt, color="red", lw=0.8, ls="-.", label=f"target {tgt:.0e}")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("fleet size [vehicles]")
    ax1.set_ylabel("vehicle-steps per second")
    env = results["env"]
    ax1.set_title(f"4-wheel MF vehicle, {env['backend']} ({env['cpu_count']} CPUs), {env['dtype']}", fontsize=9)
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8)
    rows = sorted((r for r in sc if r["impl"] == "jaxtire-scan"), key=lambda r: r["batch"])
    ax2.plot(
        [r["batch"] for r in rows],
        [r["bytes_per_vehicle_state"] for r in rows],
        "o-",
        label="params + state + controls",
    )
    ax2.plot(
        [r["batch"] for r in rows],
        [r["bytes_per_vehicle_peak"] or 0 for r in rows],
        "s-",
        label="compiled: arguments + outputs + temporaries",
    )
    rows_c = sorted((r for r in sc if r["impl"] == "jaxtire-chunked"), key=lambda r: r["batch"])
    if rows_c:
        ax2.plot(
            [r["batch"] for r in rows_c],
            [r["bytes_per_vehicle_peak"] or 0 for r in rows_c],
            "s--",
            label="compiled, chunked",
        )
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("fleet size [vehicles]")
    ax2.set_ylabel("bytes per vehicle")
    ax2.set_title("memory per vehicle", fontsize=9)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ratio(a, b):
    return "-" if (a is None or b is None) else f"{a / b:.3g}x"


def markdown(results: dict, s: dict) -> str:
    env, cfg, cases, sc = results["env"], results["config"], results["cases"], results["scaling"]
    L = []
    L.append("# jaxtire benchmark results\n")
    L.append(
        f"Generated by `python -m benchmarks{' --quick' if cfg['quick'] else ''}{' --gpu' if cfg['gpu'] else ''}` "
        f"on {env['time_utc']} (commit {env.get('git_commit') or '?'}), {env['total_seconds']:.0f} s in all.\n"
    )
    L.append("| | |\n|---|---|")
    L.append(
        f"| CPU | {env['cpu']} ({env.get('vector_isa', '?')}), {env['cpu_count']} cores ({env['affinity_cpus']} usable), "
        f"{env['memory_gib']} GiB |"
    )
    L.append(f"| backend / devices | {env['backend']} / {', '.join(env['devices'])} |")
    L.append(f"| versions | Python {env['python']}, jax {env['jax']}, jaxlib {env['jaxlib']}, numpy {env['numpy']} |")
    L.append(f"| dtype | {env['dtype']} (JAX and NumPy); pure Python uses float64 |")
    L.append(f"| load average (1, 5, 15 min) | start {env['load_average_start']}, end {env.get('load_average_end')} |")
    if env.get("steal_fraction") is not None:
        L.append(
            f"| CPU steal (shared VM) | {100 * env['steal_fraction']:.0f} % of all CPU time during the run went "
            "to other guests |"
        )
    L.append(f"| XLA_FLAGS | `{env['xla_flags'] or '(none)'}` |")
    if env["backend"] != "gpu":
        L.append(
            "| GPU | **none in this run** (CPU only); the GPU path is `python -m benchmarks --gpu`, not measured here |"
        )
    L.append("")
    if cfg["quick"]:
        L.append("**Quick smoke run (tiny sizes): these numbers are not the benchmark.**\n")

    L.append("## Headline\n")
    v = s["vehicle"]
    L.append(
        f"* Magic Formula curve: **{s['mf_curve']['jax_items_per_s']:.3g} evals/s** at batch "
        f"{s['mf_curve']['batch']:,} ({s['mf_curve']['vs_numpy']:.3g}x NumPy, {s['mf_curve']['vs_python']:.3g}x Python)."
    )
    L.append(
        f"* Full MF 6.1 combined-slip tire (slip kinematics + Fx, Fy, Mz): **{s['tire_mf61']['jax_items_per_s']:.3g} "
        f"tire evals/s** at batch {s['tire_mf61']['batch']:,} ({s['tire_mf61']['vs_numpy']:.3g}x NumPy, "
        f"{s['tire_mf61']['vs_python']:.3g}x Python)."
    )
    L.append(
        f"* 4-wheel vehicle: **{v['jax_items_per_s']:.3g} vehicle-steps/s** for {v['batch']:,} cars ({v['impl']}), "
        f"**{v['vs_numpy']:.3g}x** the NumPy step ({v['numpy_batch']:,} cars), **{v['vs_python']:.3g}x** a "
        f"per-vehicle Python loop; peak {v['peak_items_per_s']:.3g} at {v['peak_batch']:,} cars ({v['peak_impl']})."
    )
    L.append(
        f"* A {v['frame_fleet']}-car fleet step is one call of {v['frame_call_s'] * 1e6:.0f} us = "
        f"**{100 * v['frame_fraction']:.2f} % of a 16.6 ms frame** ({v['one_car_batch']} car(s): "
        f"{v['one_car_call_s'] * 1e6:.0f} us, mostly dispatch).\n"
    )
    L.append("| target | goal | measured | met |\n|---|---:|---:|:---:|")
    for t in s["targets"]:
        L.append(f"| {t['name']} | {t['target']:.3g} | {t['measured']:.3g} | {'yes' if t['met'] else '**no**'} |")
    L.append("")

    L.append("## Side by side\n")
    L.append("Time per item (one curve value, one tire, one vehicle-step); speed-up = baseline time / jaxtire time.\n")
    la = lambda r: f"{r['load_average'][0]:.1f}" if r.get("load_average") else "-"  # noqa: E731
    L.append("| case | batch | jaxtire | items/s | NumPy | Python | vs NumPy | vs Python | compile | load avg |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case, sizes in (("mf_curve", cfg["curve_sizes"]), ("tire_mf61", cfg["tire_sizes"])):
        for n in sizes:
            j, npy, py = (_find(cases, case, impl, n) for impl in ("jaxtire", "numpy", "python"))
            L.append(
                f"| {case} | {n:,} | {_fmt_ns(j['ns_per_item'])} | {_fmt_rate(j['items_per_s'])} | "
                f"{_fmt_ns(npy['ns_per_item'])} | {_fmt_ns(py['ns_per_item'])} | "
                f"{_ratio(npy['ns_per_item'], j['ns_per_item'])} | {_ratio(py['ns_per_item'], j['ns_per_item'])} | "
                f"{j['compile_s']:.2f} s | {la(j)} |"
            )
    py = _find(cases, "vehicle_step", "python", 1)
    for n in sorted(set(cfg["call_fleets"]) | {cfg["frame_fleet"]}):
        j = _find(cases, "vehicle_step", "jaxtire-call", n)
        npy = _find(cases, "vehicle_step", "numpy", n)
        L.append(
            f"| vehicle step, one call | {n:,} | {_fmt_ns(j['ns_per_item'])} | {_fmt_rate(j['items_per_s'])} | "
            f"{_fmt_ns(npy['ns_per_item'])} | {_fmt_ns(py['ns_per_item'])} | "
            f"{_ratio(npy['ns_per_item'], j['ns_per_item'])} | {_ratio(py['ns_per_item'], j['ns_per_item'])} | "
            f"{j['compile_s']:.2f} s | {la(j)} |"
        )
    big = cfg["big_fleet"]
    npy = next((r for r in sc if r["impl"] == "numpy" and r["batch"] == v["numpy_batch"]), None)
    for impl in ("jaxtire-scan", "jaxtire-chunked"):
        j = _find(sc, "vehicle_step", impl, big)
        if j is None:
            continue
        L.append(
            f"| vehicle steps, {impl.split('-')[1]} x{j['steps']} | {big:,} | {_fmt_ns(j['ns_per_item'])} | "
            f"{_fmt_rate(j['items_per_s'])} | {_fmt_ns(npy['ns_per_item'])} | {_fmt_ns(py['ns_per_item'])} | "
            f"{_ratio(npy['ns_per_item'], j['ns_per_item'])} | {_ratio(py['ns_per_item'], j['ns_per_item'])} | "
            f"{j['compile_s']:.2f} s | {la(j)} |"
        )
    L.append(
        f"\nPure Python is timed on {cfg['py_items']:,} elements (tires, curves) and {cfg['py_vehicles']} "
        "vehicle-steps and reported per item. NumPy vehicle steps are one Python call per step on arrays over "
        "the fleet. Compile = XLA compile time of that executable (tracing and lowering are in "
        "`results.json` as `lower_s`).\n"
    )

    comp = [r for r in cases if r["impl"].startswith("numba")]
    if comp:
        L.append("## Compiled baseline (numba, same polynomials)\n")
        L.append(
            "`benchmarks/compiled.py`: `@njit(parallel=True, fastmath=True)`, one `prange` loop, float32, the "
            "same `atan` / `sin` / `cos` polynomials as jaxtire, tire coefficients as compile-time constants; "
            "timed in the same run right after jaxtire on the same inputs, each timed case after a 0.1 s idle pause (`benchmarks.harness.SETTLE_S`: the other implementation's spinning worker threads go idle first). Ratio = baseline time / jaxtire time "
            "(> 1: jaxtire faster). CPU/wall = process CPU time / wall time (cores in use).\n"
        )
        L.append(
            "| case | batch | jaxtire | CPU/wall | numba 1 thread | numba all threads | CPU/wall | "
            "jaxtire / 1 thread | jaxtire / all threads | load avg |"
        )
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        cw = lambda r: (
            f"{r['cpu_seconds_per_call'] / r['seconds_per_call']:.2f}" if r.get("cpu_seconds_per_call") else "-"
        )  # noqa: E731
        for case in ("mf_curve", "tire_mf61", "vehicle_step"):
            for n in sorted({r["batch"] for r in comp if r["case"] == case}):
                c1, ca = (_find(cases, case, impl, n) for impl in ("numba-1t", "numba-all"))
                if case == "vehicle_step":  # the faster of jaxtire's scan and chunked scan at that fleet size
                    js = [r for r in sc if r["case"] == case and r["impl"].startswith("jaxtire") and r["batch"] == n]
                    j = min(js, key=lambda r: r["ns_per_item"]) if js else None
                    label = f"vehicle step x{c1['steps']} ({j['impl'].split('-')[1]})" if j and c1 else case
                else:
                    j, label = _find(cases, case, "jaxtire", n), case
                if j is None or c1 is None or ca is None:
                    continue
                L.append(
                    f"| {label} | {n:,} | {_fmt_ns(j['ns_per_item'])} | {cw(j)} | {_fmt_ns(c1['ns_per_item'])} | "
                    f"{_fmt_ns(ca['ns_per_item'])} | {cw(ca)} | {_ratio(c1['ns_per_item'], j['ns_per_item'])} | "
                    f"{_ratio(ca['ns_per_item'], j['ns_per_item'])} | {la(j)} |"
                )
        L.append(
            "\nThe vehicle rows: `compiled.vehicle_kernel`, one `prange` over the cars, each car's state in "
            "registers for all the steps of the call (the jaxtire scan's steps per call, from the same initial "
            "state), the same fleet as the jaxtire rows; time per vehicle-step.\n"
        )
    L.append("## Scaling: vehicle-steps per second, 1 to 1 M vehicles\n")
    L.append("![scaling](scaling.png)\n")
    L.append(
        "| vehicles | mode | steps per call | vehicle-steps/s | time per call | bytes/vehicle (state) | "
        "bytes/vehicle (compiled peak) | compile | load avg |"
    )
    L.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in sorted((r for r in sc if r["impl"].startswith("jaxtire")), key=lambda r: (r["batch"], r["impl"])):
        L.append(
            f"| {r['batch']:,} | {r['impl'].split('-')[1]} | {r['steps']} | {r['items_per_s']:.3g} | "
            f"{r['seconds_per_call'] * 1e3:.3g} ms | {r['bytes_per_vehicle_state']:.0f} | "
            f"{(r['bytes_per_vehicle_peak'] or 0):.0f} | {r['compile_s']:.2f} s | {la(r)} |"
        )
    for r in sorted((r for r in sc if r["impl"] == "numpy"), key=lambda r: r["batch"]):
        L.append(
            f"| {r['batch']:,} | numpy | {r['steps']} | {r['items_per_s']:.3g} | "
            f"{r['seconds_per_call'] * 1e3:.3g} ms | | | | {la(r)} |"
        )
    L.append(
        "\n*scan*: `steps` semi-implicit Euler steps of the vmapped fleet inside one `lax.scan` per call; "
        f"*chunked*: the same scan run per block of {cfg['chunk']:,} vehicles (`sims.run.chunked.chunked`), so a "
        "block's state and intermediates stay in cache for all its steps. Memory: params + state + controls "
        "bytes per vehicle, and XLA's buffer assignment (arguments + outputs + temporaries) divided by the fleet "
        "size.\n"
    )
    cal = results.get("chunk_calibration")
    if cal:
        tried = ", ".join(f"{int(k):,}: {v:.3g}" for k, v in cal["vehicle_steps_per_s"].items())
        L.append(
            f"The block size was calibrated in this run ({cal['fleet']:,} cars x {cal['steps']} steps, "
            f"vehicle-steps/s per block size: {tried}; chosen {cal['chosen']:,}).\n"
        )

    L.append("## Equivalence checks\n")
    L.append(
        "The NumPy / Python baselines (`benchmarks/reference.py`) implement the same equations "
        "independently of the JAX code; after one step (vehicles) or one evaluation (tires) JAX float32 "
        "differs from the NumPy float64 reference by:\n"
    )
    for k, val in results["checks"].items():
        L.append(f"* `{k}`: {val:.3g}")
    L.append("")
    L.append(METHOD)
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "PERF_NOTES.md")
    if os.path.exists(notes):  # hand-measured A/B notes (issue 18), kept across regenerated reports
        with open(notes) as f:
            L.append(f.read())
    return "\n".join(L) + "\n"


METHOD = """## Method

* One process, one run: `python -m benchmarks` times every case here, JAX, NumPy and pure Python
  side by side, and writes `RESULTS.md`, `results.json` (every sample, hardware, versions, dtype,
  load average) and `scaling.png`.
* JAX: `jax.jit(f).lower(*args)` (timed as tracing + lowering) then `.compile()` (timed as compile);
  one warm-up call; then each sample is `inner` back-to-back calls and one `jax.block_until_ready` on
  the last result, divided by `inner` (dispatch included, as a user sees it); the median of the
  samples is reported.  NumPy: same samples and median.  Python: a loop over a subset, per item.
* dtype float32 for JAX and NumPy (jaxtire's default); the polynomial float32 `atan`, `sin`, `cos`,
  `tan` of `jaxtire._math` / `jaxtire._trig` are part of what is measured.
* A loaded machine inflates wall time; the load average at start and end is recorded above and the
  process CPU time of each case is in `results.json` (`cpu_seconds_per_call`).

## Where the time went, and what was fixed

Found with HLO dumps (`jax.jit(f).lower(...).compile().as_text()`, `XLA_FLAGS=--xla_dump_to`), the
emitted LLVM IR, a profiler trace per fusion (`jax.profiler.trace`, durations per fusion name) and
CPU-time A/B runs (process CPU time is robust to the load of a shared machine). The table: CPU ns per
evaluation, 131 072-wide batch, on the AVX-512 (Zen 5) EPYC of the first session.

| `mf_forces` -> `fx, fy, mz` (combined slip, camber, low-speed fade) | CPU ns / eval |
|---|---:|
| XLA's `atan`, `sin`, `cos`, `tan` (as first written) | 232 |
| polynomial float32 `atan` (`jaxtire._math.atan`) | 164 |
| + polynomial float32 `sin`, `cos`, `tan` (`jaxtire._trig`, used by `mf61`) | 47.5 |
| + `--xla_cpu_prefer_vector_width=512` (AVX-512; withdrawn 2026-12-06: wrong results elsewhere) | 24.7 |

* XLA:CPU lowers `sin`, `cos`, `tan`, `atan2`, `pow` (and `atan`) to *scalar* libm calls: 3.5-17 ns
  per element against 0.1-0.5 ns for a multiply, `exp`, `log` or `tanh`. A combined-slip MF 6.1
  evaluation holds ~15 of them, so libm dominated. `jaxtire._trig` evaluates them as fused,
  vectorised float32 polynomials (Cephes reductions; <= 2 ulp for sin/cos, exact derivatives,
  float64 unchanged) and `x ** q` as `exp(q log x)`.
* Multi-output fusion: three outputs made XLA split the tire into ~15 loop fusions with duplicated
  libm calls (8 `tan` instead of 3), the 3-5x gap the first measurements showed; with the polynomial
  functions the residual cost of three outputs over one is 1.25-1.3x (shared intermediates that XLA
  will not duplicate into several consumers are written once to memory).
* XLA:CPU emits 256-bit vectors by default; a Zen 5 CPU runs 512-bit AVX-512 at full rate, which
  halves the time of every fused loop; `python -m benchmarks` set the flag where `avx512f` is present until
  2026-12-06, when it was found to give wrong, run-to-run different lap solves (`sims/run/_xla.py`).
* Fleets: beyond ~100 k vehicles every step streams all intermediates through DRAM; the chunked
  scan (`sims.run.chunked`) keeps a block's state and intermediates in L2 for all its steps (about 2x at
  1 M vehicles). For the stand-alone tire (one pass, no scan) chunking does not pay.
* Fixed since (session 2, A/B on a 2-core AVX2 EPYC VM, 10 000 cars x 200 steps, median of 3
  alternating runs, process CPU time per vehicle-step): `jaxtire.slip.slip_angle` is now
  `atan(vy / regularised_speed(vx))` with the polynomial `atan` instead of `jnp.arctan2` (a scalar
  libm call, four per step): 810 -> 586 CPU ns; the nine sums over the wheel axis in
  `sims.vehicles.core.rates` are explicit adds instead of `jnp.sum(axis=0)`, which XLA:CPU had sent
  each to its own YNNPACK reduce kernel (`ynn_fusion` in the profile, a quarter of the step):
  586 -> 478 CPU ns. Together 2.0e6 -> 3.7e6 vehicle-steps/s wall on that run (1.85x).
  `jaxtire.magic_formula` uses the polynomial `sin`/`cos` too (bare curve 2.4e8 -> 4.5e8 evals/s).
  Not a win: `jax.vmap` over the wheels instead of `lax.map` (30x slower on XLA:CPU), unrolling the
  four wheels (same speed, 3x the compile time).
* Hardware matters more than anything above: the AVX2 VM of the latest run has half the vector
  width of the AVX-512 (Zen 5) machine of the first run, and the hypervisor's steal time (recorded in
  the table at the top, 0-50 % seen on this VM) makes wall times vary by +-30 % between runs; NumPy's
  `sin`/`arctan` are SIMD on AVX-512 but not on AVX2, hence the very different NumPy ratios of the two
  machines. The figures of an earlier run on the AVX-512 machine (before the fixes above):
  MF curve 2.4e8 evals/s, MF 6.1 tire 2.59e7 evals/s, 4-wheel step 4.45e6 vehicle-steps/s at 100 k
  cars (chunked); the slip-angle fix alone measured 6.4e6 there (scratch copy).
* The chunk of 2,048 vehicles was the best of 1,024-16,384 on the AVX-512 machine (Zen 5, 1 MiB L2
  per core); on the AVX2 VM (Zen 3, family 25, 512 KiB L2 per core) 8,192-16,384 measured better in
  one A/B (`--chunk`).
* On 2 cores a fleet can also be split over two host devices (`XLA_FLAGS=--xla_force_host_platform_
  device_count=2`, `sims.run.sharding.sharded` around the chunked scan): 4.8e6 vehicle-steps/s at 131 072
  cars in one A/B on the AVX-512 machine, within the noise of the single-device chunked scan there.

## GPU

`python -m benchmarks --gpu` (on a machine with `jax[cuda12]` and an NVIDIA GPU) refuses to run on
another backend, uses fleets up to 16 M vehicles, 2e8 vehicle-steps per call and `lax.scan(unroll=4)`
(`--unroll N`) so several steps fuse into one kernel launch sequence, and checks the 1e9
vehicle-steps/s target. No GPU was available for the run above, so none of this is measured. What to
look at first on a GPU: the step's `lax.map` over the four wheels (a device loop per step, chosen for
compile time) and the number of kernels per step in the profile; reading the chassis (~150 B) and
reading and writing the state (2 x 48 B) once per step is already ~0.25 TB/s at 1e9 vehicle-steps/s,
so the unrolled steps must keep the state on chip between steps.
"""


def _md_table(header, rows) -> list[str]:
    """The lines of a Markdown table: ``header`` then one line per row (cells already formatted)."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
    ]


def sections_markdown(results: dict) -> str:
    """The sections after the double track (full vehicle, race env, study), the time of each section and
    those the budget skipped: the part of RESULTS a ``--gpu`` run adds, written after every section."""
    L: list[str] = []
    fv = [
        (r["model"], f"{r['vehicles']:,}", r["steps"], f"{r['wall_ns_per_vehicle_step']:.3f}",
         f"{1e9 / r['wall_ns_per_vehicle_step']:.3g}", f"{r['compile_s']:.1f}")
        for r in results.get("full_vehicle") or ()
    ]  # fmt: skip
    env = [
        (r["env"], f"{r['envs']:,}", r["steps"], f"{r['env_steps_per_s']:.3g}", f"{r['compile_s']:.1f}")
        for r in results.get("race_env") or ()
    ]
    study = [
        (f"{r['vehicles']:,}", f"{r['study_run_s']:.2f}", f"{r['study_wall_s']:.2f}", f"{r['study_compile_s']:.1f}",
         f"{r['fleet_run_s']:.2f}")
        for r in results.get("study") or ()
    ]  # fmt: skip
    for title, header, rows in (
        ("Full vehicle (14 DOF) and double track, same fleets",
         ("model", "vehicles", "steps", "ns per vehicle-step (wall)", "vehicle-steps/s", "compile [s]"), fv),
        ("Race env (reset + random-action steps in one scan)",
         ("env", "batch", "steps", "env-steps/s", "compile + first run [s]"), env),
        ("Braking study against the bare fleet run",
         ("vehicles", "study run [s]", "study wall [s]", "study compile [s]", "fleet run [s]"), study),
    ):  # fmt: skip
        if rows:
            L.append(f"\n## {title}\n")
            L += _md_table(header, rows)
    times = results.get("sections_s") or {}
    if times or results.get("skipped"):
        L.append("\n## Sections\n")
        budget = results["config"].get("budget_s")
        L.append(
            f"Budget: {'none' if budget is None else f'{budget:.0f} s'}. "
            + ", ".join(f"{k} {v:.0f} s" for k, v in times.items())
            + "."
        )
        if results.get("skipped"):
            L.append(f"Skipped at the budget: {', '.join(results['skipped'])}.")
    return "\n".join(L) + "\n"


def _partial_markdown(results: dict) -> str:
    env = results["env"]
    L = ["# jaxtire benchmark results (partial)\n"]
    L.append(
        f"A run cut short after {', '.join(results.get('sections_s') or {}) or 'no section'} "
        f"({env.get('total_seconds', 0.0):.0f} s; backend {env['backend']}, devices {', '.join(env['devices'])}, "
        f"{env['cpu']}); the headline needs the double-track section.  Rows measured so far:\n"
    )
    L += _md_table(
        ("case", "impl", "batch", "ns per item", "items/s"),
        [(r["case"], r["impl"], f"{r['batch']:,}", f"{r['ns_per_item']:.3f}", f"{r['items_per_s']:.3g}")
         for r in results["cases"]],
    )  # fmt: skip
    return "\n".join(L) + "\n" + sections_markdown(results)


def write_all(results: dict, out_dir, log=print) -> dict:
    """Write ``results.json``, ``RESULTS.md`` and ``scaling.png`` to ``out_dir`` (called after every section:
    a run cut short writes what it measured, as a partial RESULTS without the headline)."""
    os.makedirs(out_dir, exist_ok=True)
    try:
        s = summary(results)
    except (ValueError, KeyError, TypeError):  # the double track has not run yet: no headline
        s = {"targets": [], "partial": True}
    results["summary"] = s
    harness.dump_json(results, os.path.join(out_dir, "results.json"))
    if s.get("partial"):
        text = _partial_markdown(results)
    else:
        write_plot(results, os.path.join(out_dir, "scaling.png"))
        text = markdown(results, s) + sections_markdown(results)
    with open(os.path.join(out_dir, "RESULTS.md"), "w") as f:
        f.write(text)
    log(f"wrote {out_dir}/RESULTS.md, results.json{'' if s.get('partial') else ', scaling.png'}")
    return s
