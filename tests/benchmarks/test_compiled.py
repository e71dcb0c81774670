"""The numba baseline (benchmarks/compiled.py) computes what jaxtire computes; skipped without numba."""

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import compiled, inputs, suite  # noqa: E402


def test_missing_numba_is_skipped_with_a_message(monkeypatch):
    monkeypatch.setattr(compiled, "AVAILABLE", False)
    monkeypatch.setattr(compiled, "_WHY", "numba not installed (test)")
    said = []
    cfg = suite.Config.make(quick=True, compiled=True)
    assert suite._compiled_rows(cfg, "mf_curve", 1000, lambda a: a, (np.zeros(1000),), said.append) == []
    assert said and "numba not installed" in said[0]
    assert suite._compiled_vehicle(cfg, {100: 5}, said.append) == []
    assert len(said) == 2 and "vehicle_step" in said[1] and "numba not installed" in said[1]


numba = pytest.importorskip("numba")


def test_polynomials_match_numpy_float64():
    from numba import njit

    @njit
    def ev(x):
        a = np.empty_like(x)
        s = np.empty_like(x)
        c = np.empty_like(x)
        for i in range(x.shape[0]):
            a[i] = compiled.atan_p(x[i])
            s[i], c[i] = compiled.sincos_p(x[i])
        return a, s, c

    x = np.linspace(-9.0, 9.0, 2001).astype(np.float32)
    a, s, c = ev(x)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(a, np.arctan(x64), atol=5e-7)
    np.testing.assert_allclose(s, np.sin(x64), atol=5e-7)
    np.testing.assert_allclose(c, np.cos(x64), atol=5e-7)


def test_curve_matches_jaxtire():
    from jaxtire import magic_formula

    x = inputs.curve_inputs(4000, seed=5)
    B, C, D, E = (np.float32(v) for v in inputs.MF_BCDE)
    out = np.empty_like(x)
    compiled.curve(x, B, C, D, E, out)
    want = np.asarray(magic_formula(x, *inputs.MF_BCDE))
    assert np.max(np.abs(out - want)) <= 1e-6 * np.max(np.abs(want))


def test_tire_matches_jaxtire():
    """Combined Fx, Fy, Mz of the bundled TNO tire agree with jaxtire float32 to 2e-6 of the peak.

    Compiling the kernel takes 0.5-4 min (numba, parallel): only runs where numba is installed."""
    import jax
    import jax.numpy as jnp

    import jaxtire
    from jaxtire.slip import slip_angle, slip_ratio

    R = inputs.WHEEL_RADIUS
    d = inputs.tire_inputs(3000, seed=7)
    a = [d[k] for k in ("vx", "vy", "omega", "gamma", "fz")]
    kern = compiled.tire_kernel(compiled.default_coefs(), R)
    outs = [np.empty(3000, np.float32) for _ in range(3)]
    kern(*a, *outs)
    p = jaxtire.default_tire(dtype=jnp.float32)
    vx, vy, om, ga, fz = (jnp.asarray(v) for v in a)
    o = jax.jit(lambda: jaxtire.mf_forces(p, slip_ratio(om, R, vx), slip_angle(vx, vy), ga, fz, vx))()
    for got, want in zip(outs, (o.fx, o.fy, o.mz), strict=True):
        want = np.asarray(want)
        assert np.max(np.abs(got - want)) <= 2e-6 * np.max(np.abs(want))


def _varied_fleet():
    """8 cars of ``inputs.numpy_fleet`` (mixed surfaces and chassis) put in hand-picked float64 states."""
    from benchmarks import reference as ref

    ch, _tire, _table, state, controls = inputs.numpy_fleet(8, seed=3)
    x, y, yaw, vx, vy, r, om, ax, ay = (
        suite._to64(np.asarray(v)) for v in state[:6] + (np.stack(state[6], -1),) + state[7:]
    )
    steer, thr, brk = (suite._to64(v) for v in controls)
    R = float(ch.wheel_radius_front[0])  # front = rear radius in the defaults

    def put(i, v, vy_=0.0, r_=0.0, ax_=0.0, ay_=0.0, slip=0.0, st=0.0, th=0.0, br=0.0):
        vx[i], vy[i], r[i], ax[i], ay[i], om[i] = v, vy_, r_, ax_, ay_, v * (1.0 + slip) / R
        steer[i], thr[i], brk[i] = st, th, br

    put(0, 30.0, ax_=-8.0, br=1.0)  # full braking
    put(1, 20.0, vy_=-0.3, r_=0.35, ay_=6.0, st=0.08, th=0.3)  # cornering under power
    put(2, 20.0, ax_=-6.0, br=1.0)  # braking with the front-left wheel locked
    om[2, 0] = 0.0
    put(3, 0.05, br=0.2)  # near standstill, brake holding
    put(4, 0.0, th=1.0)  # launch from rest
    put(5, -2.0, st=-0.2, th=-0.5)  # reversing
    put(6, 15.0, slip=0.3, th=1.0)  # wheelspin
    put(7, 15.0, vy_=0.5, r_=-0.6, ay_=-8.0, st=-0.5, br=0.3)  # large steer while braking
    ch64 = ref.chassis_values({k: suite._to64(v) for k, v in vars(ch).items() if k != "surface_ids"}, np.float64)
    ch64.surface_ids = ch.surface_ids
    return ch, ch64, (x, y, yaw, vx, vy, r, [om[:, k].copy() for k in range(4)], ax, ay), (steer, thr, brk)


@pytest.fixture(scope="module")
def vehicle_kernel():
    return compiled.vehicle_kernel(compiled.default_coefs())


def test_vehicle_step_matches_numpy_float64(vehicle_kernel):
    """The numba fleet step (float32, polynomial trig) against ``reference.vehicle_step`` (NumPy float64, libm)
    from 8 varied states, after 1 and after 50 steps of 5 ms (one call each, ``n_steps`` inside the kernel).

    Tolerance per state field: ``rtol * max |reference field|`` with ``rtol = 1e-6`` after 1 step (about 16
    float32 ulps of the field's largest value: each step rounds ~100 float32 operations per wheel, and the
    polynomials are within 5e-7 of libm) and ``1e-5`` after 50 steps (rounding accumulated over the steps
    and amplified by the locked wheel's stiff implicit update; measured: 1.5e-6 on omega, 4e-7 on the
    rest).  The states move by far more than that (checked), so a wrong term cannot hide in the tolerance.
    Compiling the kernel takes ~10-20 s."""
    from benchmarks import reference as ref

    ch, ch64, s0, ctl = _varied_fleet()
    step = compiled.fleet_stepper(vehicle_kernel, ch, inputs.reference_table())
    ctl32 = tuple(np.asarray(v, np.float32) for v in ctl)
    t64, tab64 = inputs.reference_tire(np.float64), inputs.reference_table(np.float64)
    names = ("x", "y", "yaw", "vx", "vy", "yaw_rate", "omega", "ax", "ay", "defl_x", "defl_y")
    want = s0
    done = 0
    for n_steps, rtol in ((1, 1e-6), (49, 1e-5)):
        for _ in range(n_steps):
            want = ref.vehicle_step(ref.NP, ch64, t64, t64, tab64, want, ctl, 0.005)
        done += n_steps
        got = compiled.fleet_state(s0)
        step(got, ctl32, 0.005, done)
        wheels = tuple(np.stack(want[k], -1) for k in (6, 9, 10))
        for name, g, w64 in zip(names, got, want[:6] + wheels[:1] + want[7:9] + wheels[1:], strict=True):
            err = np.max(np.abs(g - w64))
            assert err <= rtol * np.max(np.abs(w64)), (name, done, err, np.max(np.abs(w64)))
    moved = {k: np.max(np.abs(np.asarray(a) - np.asarray(b))) for k, a, b in zip(names[:9], want[:9], s0, strict=True)}
    assert moved["vx"] > 1.0 and moved["omega"] > 10.0 and moved["yaw_rate"] > 0.1, moved


def test_suite_times_the_vehicle_kernel_at_the_scan_sizes(vehicle_kernel):
    """The suite's numba vehicle rows: 1 thread and all threads, items = cars x steps of the scan, a fresh
    state per call (so the kernel runs exactly ``steps`` steps from the fleet's initial state)."""
    cfg = suite.Config.make(quick=True, compiled=True, compiled_min=1, compiled_vehicle_repeats=2)
    said = []
    rows = suite._compiled_vehicle(cfg, {64: 3}, said.append, kernel=vehicle_kernel)
    assert [r["impl"] for r in rows] == ["numba-1t", "numba-all"] and len(said) == 2
    for r in rows:
        assert r["case"] == "vehicle_step" and r["batch"] == 64 and r["steps"] == 3 and r["items_per_call"] == 192
        assert r["seconds_per_call"] > 0 and len(r["samples"]) == 2 and r["compile_s"] > 0
    assert rows[0]["threads"] == 1
