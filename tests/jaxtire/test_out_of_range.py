"""Issue 29: out-of-range use is visible (eager warning, flags under jit, vehicle telemetry, fleet CLI count)."""

import csv
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtire
from jaxtire import tire as T
from jaxtire.limits import RANGE_BITS, OutOfRangeWarning, describe_code, range_summary
from jaxtire.simple import default_simple_params
from jaxtire.tir import load_tir
from tests.conftest import tir_path


@pytest.fixture(scope="module")
def tno():
    return load_tir(tir_path())  # FZMIN 100, FZMAX 10 000 N, KPU +-1.5, ALP +-1.5 rad, CAM +-0.175 rad


def test_eager_call_outside_warns_once_naming_input_distance_and_limit(tno):
    with pytest.warns(OutOfRangeWarning) as rec:
        jaxtire.mf_forces(tno, jnp.array([0.1, 0.2]), 0.0, 0.0, jnp.array([5000.0, 35000.0]))
    assert len(rec) == 1
    msg = str(rec[0].message)
    # 35 kN is 25 kN above FZMAX = 10 kN, and the evaluation clamps (limits="clamp")
    assert "load fz = 35000 N is 2.5e+04 N above FZMAX = 10000" in msg and "evaluated at the limit" in msg
    with pytest.warns(OutOfRangeWarning, match=r"extrapolated.*slip ratio kappa = -1.7 is 0.2 below KPUMIN = -1.5"):
        jaxtire.tire_forces(tno, -1.7, 0.0, limits="off")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inside every range: silent
        jaxtire.mf_forces(tno, 0.1, 0.05, 0.02, 4000.0)


def test_flags_under_jit_from_the_one_interface(tno):
    kappa = jnp.array([0.0, 2.0, 0.0, 0.0, 0.0])
    alpha = jnp.array([0.0, 0.0, 1.6, 0.0, 0.0])
    gamma = jnp.array([0.0, 0.0, 0.0, -0.2, 0.0])
    fz = jnp.array([4000.0, 4000.0, 4000.0, 4000.0, 20000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced: no warning, the flags carry the news
        flags = jax.jit(T.out_of_range)(tno, kappa, alpha, gamma, fz)
        code = jax.jit(T.out_of_range_code)(tno, kappa, alpha, gamma, fz)
    assert np.asarray(flags.fz_high).tolist() == [False, False, False, False, True]
    assert np.asarray(flags.kappa).tolist() == [False, True, False, False, False]
    assert np.asarray(code).tolist() == [0, RANGE_BITS["slip ratio"], RANGE_BITS["slip angle"], RANGE_BITS["camber"], 1]
    with pytest.warns(OutOfRangeWarning):  # the same flags as jaxtire.evaluate reports (an eager call: it warns)
        ev = jaxtire.evaluate(tno, kappa, alpha, gamma, fz)
    assert all(np.array_equal(a, b) for a, b in zip(ev.out_of_range, flags, strict=True))
    assert describe_code(code) == {"load": 1, "slip ratio": 1, "slip angle": 1, "camber": 1, "pressure": 0}
    # a model without ranges: all inside
    simple = jax.jit(T.out_of_range_code)(default_simple_params(), kappa, alpha, gamma, fz)
    assert not np.asarray(simple).any()


def test_vehicle_telemetry_records_the_wheels_outside(tno):
    from sims.run.rollout import step
    from sims.vehicles import MODELS, presets
    from sims.vehicles.params import Controls

    low = tno.replace(FZMAX=jnp.float32(2500.0))  # below the hatchback's static wheel loads: an overloaded car
    for tire, expect in ((tno, 0), (low, RANGE_BITS["load"])):
        p = presets.get("hatchback", tire=tire)
        s0 = MODELS["double_track"].init_state(p, speed=20.0)
        _, tel = step(p, s0, Controls(), dt=0.005)
        assert tel.out_of_range.dtype == jnp.int8 and tel.out_of_range.shape == tel.fz.shape
        assert np.asarray(tel.out_of_range).tolist() == [expect] * 4


def test_fleet_cli_counts_vehicles_outside_their_tire_ranges(tmp_path, capsys):
    from sims.cli.fleet import main

    src = tir_path().read_text().splitlines()
    tir = tmp_path / "overloaded.tir"
    tir.write_text("\n".join("FZMAX = 2500" if ln.startswith("FZMAX") else ln for ln in src) + "\n")
    out = main(
        ["--vehicles", "4", "--steps", "20", "--out", str(tmp_path), "--no-progress", "--fast-compile", "--no-plot",
         "--tir", str(tir)]
    )
    line = "tires outside their validity ranges: 4 of 4 vehicles (load 4, slip ratio 0, slip angle 0, camber 0, pressure 0)"
    assert line in out["summary"] and line in capsys.readouterr().out
    with open(tmp_path / "braking.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["tire_out_of_range"]) for r in rows] == [1, 1, 1, 1]


def test_range_summary_counts_each_range():
    s = range_summary(np.array([0, 1, 3, 16], np.int8))
    assert s == ("tires outside their validity ranges: 3 of 4 vehicles "
                 "(load 2, slip ratio 1, slip angle 0, camber 0, pressure 1)")
