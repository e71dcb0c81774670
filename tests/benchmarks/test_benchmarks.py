"""The benchmark harness: baselines implement the same equations as the JAX code, and a quick run works."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import inputs  # noqa: E402
from benchmarks import reference as ref  # noqa: E402
from benchmarks.suite import to_float64  # noqa: E402


def _state_from_jax(state):
    """The reference's state tuple (omega a list of 4 wheels) holding exactly the JAX state's values."""
    f = [np.asarray(v, np.float64) for v in state]
    wheels = lambda a: [a[:, i] for i in range(4)]  # noqa: E731
    return tuple(f[:6]) + (wheels(f[6]),) + tuple(f[7:9]) + (wheels(f[9]), wheels(f[10]))


def test_reference_tire_equals_jaxtire(x64):
    import jax.numpy as jnp

    import jaxtire
    from jaxtire.slip import slip_angle, slip_ratio

    d = {k: v.astype(np.float64) for k, v in inputs.tire_inputs(400, seed=3).items()}
    p = jaxtire.default_tire(dtype=jnp.float64)
    R = inputs.WHEEL_RADIUS
    o = jaxtire.mf_forces(p, slip_ratio(d["omega"], R, d["vx"]), slip_angle(d["vx"], d["vy"]), d["gamma"], d["fz"],
                          d["vx"])
    fx, fy, mz = ref.mf61_step(ref.NP, inputs.reference_tire(np.float64), d["vx"], d["vy"], d["omega"], d["gamma"],
                               d["fz"], R)
    for a, b in ((o.fx, fx), (o.fy, fy), (o.mz, mz)):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-9 * np.max(np.abs(b)))
    # the pure-Python path is the same code on floats
    tpy = inputs.reference_tire(float)
    for i in (0, 17, 399):
        got = ref.mf61_step(ref.PY, tpy, *(float(d[k][i]) for k in ("vx", "vy", "omega", "gamma", "fz")), R)
        np.testing.assert_allclose(got, (fx[i], fy[i], mz[i]), rtol=1e-12, atol=1e-9)


def test_reference_curve_equals_jaxtire():
    from jaxtire import magic_formula

    x = inputs.curve_inputs(1000)
    B, C, D, E = inputs.MF_BCDE
    np.testing.assert_allclose(np.asarray(magic_formula(x, B, C, D, E)), ref.magic_formula(ref.NP, x, B, C, D, E),
                               rtol=1e-5, atol=1e-6)


def test_reference_vehicle_step_equals_sims(x64):
    import jax
    import jax.numpy as jnp

    n = 64
    params, state, controls = inputs.jax_fleet(n, dtype=jnp.float64)
    rng = np.random.default_rng(7)  # deflected tires (the transient contact's state), +-5 mm
    state = state._replace(defl_x=jnp.asarray(rng.uniform(-5e-3, 5e-3, (n, 4))),
                           defl_y=jnp.asarray(rng.uniform(-5e-3, 5e-3, (n, 4))))
    # 8 cars with the front-left wheel spinning at 3x free rolling on a 0.5 m deflection (lagged slip ~2, past
    # the file's KPUMAX = 1.5: the tire clamps it, as jaxtire's default limits="clamp" does)
    state = state._replace(omega=state.omega.at[:8, 0].multiply(3.0), defl_x=state.defl_x.at[:8, 0].set(0.5))
    fast = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}  # compile time only
    js = jax.jit(inputs.fleet_step_fn(0.005), compiler_options=fast)(params, state, controls)
    ch, tire, table, st, c = inputs.numpy_fleet(n)
    ch64 = ref.chassis_values({}, np.float64)
    for k, v in vars(ch).items():
        setattr(ch64, k, to_float64(v))
    ch64.surface_ids = ch.surface_ids
    t64 = inputs.reference_tire(np.float64)
    ns = ref.vehicle_step(ref.NP, ch64, t64, t64, inputs.reference_table(np.float64), _state_from_jax(state),
                          to_float64(c), 0.005)
    names = ("x", "y", "yaw", "vx", "vy", "yaw_rate", "omega", "ax", "ay", "defl_x", "defl_y")
    for name, a, b in zip(names, (getattr(js, n) for n in names), ns, strict=True):
        b = np.stack(b, -1) if isinstance(b, list) else b
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6, atol=1e-7, err_msg=name)
    chs, tpy, tab, sts, cs = inputs.python_fleet(n)
    for i in (0, 5):
        defl = tuple([float(v) for v in np.asarray(d)[i]] for d in (state.defl_x, state.defl_y))
        omega = [float(v) for v in np.asarray(state.omega)[i]]
        got = ref.vehicle_step(ref.PY, chs[i], tpy, tpy, tab, (*sts[i][:6], omega, *sts[i][7:9], *defl), cs[i], 0.005)
        np.testing.assert_allclose(got[3:6], [np.asarray(v)[i] for v in js[3:6]], rtol=1e-6, atol=1e-7)


def test_quick_run_writes_results(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    md = (tmp_path / "RESULTS.md").read_text()
    assert "| case | batch | jaxtire |" in md and "vs NumPy" in md and "scaling.png" in md
    assert "none in this run" in md or "gpu" in md.lower()
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["env"]["dtype"] == "float32" and res["env"]["jax"]
    impls = {(r["case"], r["impl"]) for r in res["cases"]}
    for case in ("mf_curve", "tire_mf61"):
        assert {(case, "jaxtire"), (case, "numpy"), (case, "python")} <= impls
    assert ("vehicle_step", "python") in impls and ("vehicle_step", "jaxtire-call") in impls
    assert all(r["compile_s"] is not None and r["compile_s"] > 0 for r in res["cases"] if r["impl"].startswith("jax"))
    assert res["scaling"] and res["summary"]["targets"]
    # the JAX results equal the NumPy float64 reference (float32 rounding only)
    assert res["checks"]["tire_fx_max_rel_diff_vs_numpy_f64"] < 1e-4
    assert res["checks"]["vehicle_vx_max_abs_diff_vs_numpy_f64"] < 1e-3
    assert (tmp_path / "scaling.png").stat().st_size > 1000


def test_cli_help():
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "--quick" in proc.stdout and "--gpu" in proc.stdout


def test_steal_fraction_from_proc_stat_deltas():
    from benchmarks import harness

    # user nice system idle iowait irq softirq steal: 100 ticks of which 25 stolen
    start = [10, 0, 5, 100, 0, 0, 0, 7, 0, 0]
    end = [50, 0, 15, 120, 0, 0, 5, 32, 0, 0]
    assert harness.steal_fraction(start, end) == pytest.approx(25 / 100)
    assert harness.steal_fraction(None, end) is None
    assert harness.steal_fraction(start, start) is None
    now = harness.cpu_times()
    if now is not None:  # Linux: eight or more counters, monotone
        assert len(now) >= 8 and all(v >= 0 for v in now)


def test_gpu_mode_dry_run_on_cpu(tmp_path):
    """``--gpu --quick`` runs the GPU code path (unrolled scan, GPU target) at tiny sizes on any backend and
    labels its results; plain ``--gpu`` refuses a non-GPU backend."""
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--gpu", "--out", str(tmp_path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["config"]["gpu"] is True and res["config"]["unroll"] == 4
    assert any(t["target"] == 1e9 for t in res["summary"]["targets"])
    assert all(r["bytes_per_vehicle_state"] > 0 for r in res["scaling"] if r["impl"].startswith("jaxtire"))
    md = (tmp_path / "RESULTS.md").read_text()
    assert "--gpu" in md
    # issue 38 item 8: the GPU run's sections in priority order, RESULTS after each one
    assert list(res["sections_s"]) == ["tire", "double track", "full vehicle", "race env", "study"]
    assert {r["model"] for r in res["full_vehicle"]} == {"full", "double_track"} and res["race_env"] and res["study"]
    assert "## Full vehicle" in md and "## Race env" in md and "## Braking study" in md


def test_budget_skips_later_sections_and_keeps_what_was_measured(tmp_path):
    """``--budget``: a section that would start after the budget is skipped (listed), and RESULTS written after
    the last section that ran holds its rows (a partial RESULTS: no headline without the double track)."""
    from benchmarks import __main__ as bm

    assert bm.main(["--quick", "--gpu", "--budget", "0.5", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert list(res["sections_s"]) == ["tire"]
    assert res["skipped"] == ["double track", "full vehicle", "race env", "study"]
    md = (tmp_path / "RESULTS.md").read_text()
    assert "(partial)" in md and "tire_mf61" in md and "Skipped at the budget" in md
    with pytest.raises(SystemExit, match="budget"):
        bm.main(["--quick", "--budget", "0", "--out", str(tmp_path)])


def test_every_timed_case_starts_after_the_settle_pause(monkeypatch):
    """Each timed case idles SETTLE_S before its first call, longer than libgomp's default spin (~5 ms), so the
    previous implementation's spinning workers do not share the cores with it (PERF_NOTES "Spinning neighbours")."""
    from benchmarks import harness

    events = []
    monkeypatch.setattr(harness.time, "sleep", lambda s: events.append(("sleep", s)))
    harness.time_call(lambda: events.append(("call", None)), (), repeats=2, target_s=0.0, max_inner=1)
    assert events[0] == ("sleep", harness.SETTLE_S) and harness.SETTLE_S >= 0.05
    assert all(kind == "call" for kind, _ in events[1:]) and len(events) == 1 + 2 + 2  # warm-up, calibrate, 2 samples
