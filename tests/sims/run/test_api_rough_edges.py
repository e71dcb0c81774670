"""Issue 25 item 7: compile time apart from run time, all devices by default, clear errors, plain --help."""

import os
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError
from sims.drivers import Constant, LaneChangeDriver
from sims.run._xla import tune_cpu, use_host_devices
from sims.run.fleet import FleetRun, Sampling, fleet_rollout, fleet_start, make_fleet, sample_fleet
from sims.scenarios.braking import braking_run
from tests.sims.conftest import FAST

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_run_stats_keep_the_compile_out_of_the_run_time(hatch):
    """No compile() first: the run compiles before its clock starts (the main chunk and the shorter last
    one), so run_s is the simulation alone and vehicle_steps_per_s = vehicles x steps / run_s."""
    fleet = make_fleet(hatch, 3)
    m, s0, drv = fleet_start(fleet, "single_track", Constant(throttle=0.1), speed=10.0)
    run = FleetRun(fleet, s0, drv, dt=0.01, model=m, chunk_steps=37, compiler_options=FAST)  # a new program
    *_, stats = run.run(80)  # 37 + 37 + 6 steps
    assert stats.steps == 80 and stats.compile_s > 0.2
    assert stats.run_s < stats.compile_s  # ~ms of simulation against ~s of compiling
    assert stats.vehicle_steps_per_s == pytest.approx(3 * 80 / stats.run_s, rel=1e-6)


def test_the_python_api_gets_one_cpu_device_per_core_on_request_and_import_changes_nothing():
    """Issue 35: importing sims (and sims.run) writes nothing to os.environ; one explicit call before JAX starts,
    sims.run.use_host_devices(), gives one CPU device per core as the CLI has."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JAXTIRE_HOST_DEVICES", "XLA_FLAGS", "JAXTIRE_AUTO_DEVICE_FLAG")
    }
    env["PYTHONPATH"] = REPO
    code = (
        "import os; before = dict(os.environ); import sims, sims.run, sims.studies, sims.envs, jax; "
        "assert dict(os.environ) == before; print(jax.local_device_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == 1
    code = "import sims.run, jax; sims.run.use_host_devices(); print(jax.local_device_count())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == (os.cpu_count() or 1)
    # the default yields to an explicit count (the CLI's --devices), never to nothing: the user's flags win
    e = {"JAXTIRE_HOST_DEVICES": "8"}
    assert "device_count=8" in use_host_devices(e)
    tune_cpu(e, host_devices=3)
    assert re.findall(r"device_count=(\d+)", e["XLA_FLAGS"]) == ["3"]
    # several devices: XLA's 40 s collective timeout raised (it aborted a study on a loaded machine), once
    assert e["XLA_FLAGS"].count("--xla_cpu_collective_call_terminate_timeout_seconds=86400") == 1
    user = {"XLA_FLAGS": "--xla_force_host_platform_device_count=5"}
    use_host_devices(user)
    assert user["XLA_FLAGS"] == "--xla_force_host_platform_device_count=5"


def test_sampling_takes_surface_names_and_explains_bad_ranges(hatch):
    key = jax.random.PRNGKey(0)
    by_name, _ = sample_fleet(key, hatch, 4, Sampling(surfaces=("asphalt_wet", "snow")))
    by_id, _ = sample_fleet(key, hatch, 4, Sampling(surfaces=(surface_id("asphalt_wet"), surface_id("snow"))))
    np.testing.assert_array_equal(by_name.contact.surface_ids, by_id.contact.surface_ids)
    with pytest.raises(ValidationError, match=r"mu = 0.9 is not a range; give \(low, high\), e.g. mu=\(0.9, 0.9\)"):
        sample_fleet(key, hatch, 4, Sampling(mu=0.9))
    with pytest.raises(ValidationError, match=r"mu = \(1.2, 0.9\) has low > high .*swap them: mu=\(0.9, 1.2\)"):
        sample_fleet(key, hatch, 4, Sampling(mu=(1.2, 0.9)))
    with pytest.raises(ValidationError, match="unknown surface 'asphalt_wett'"):
        sample_fleet(key, hatch, 4, Sampling(surfaces=("asphalt_wett",)))


def test_implausible_speeds_get_a_unit_hint(hatch):
    fleet = make_fleet(hatch, 2)
    with pytest.raises(ValidationError, match=r"speed = 100 m/s .*100 km/h is 27.78 m/s"):
        braking_run(fleet, 1.0, speed=100.0)
    # target_speed=80 (km/h meant) on a hatchback whose top speed is ~62 m/s (224 km/h)
    with pytest.raises(ValidationError, match=r"target_speed = 80 m/s .*top speed 62.1 m/s .*80 km/h is 22.22 m/s"):
        fleet_start(fleet, "single_track", LaneChangeDriver(target_speed=80.0), speed=20.0)
    m, s0, drv = fleet_start(fleet, "single_track", LaneChangeDriver(target_speed=22.0), speed=20.0)
    with pytest.raises(ValidationError, match="target_speed = 80 m/s"):
        fleet_rollout(fleet, s0, LaneChangeDriver(target_speed=80.0), 10, dt=0.01, model=m, driver_axes=None)


def test_a_shared_driver_without_driver_axes_none_says_what_to_change(hatch):
    fleet = make_fleet(hatch, 2)
    m, s0, _ = fleet_start(fleet, "single_track", Constant(), speed=10.0)
    with pytest.raises(ValueError, match=r"driver_axes=None.*broadcast\(driver, n\)"):
        fleet_rollout(fleet, s0, Constant(), 10, dt=0.01, model=m)
    # the former name of driver_axes (FleetRun's and long_run's name) is refused, named
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['controls_axes'\]"):
        fleet_rollout(fleet, s0, Constant(), 10, dt=0.01, model=m, controls_axes=None)


def test_help_is_plain_text():
    from sims.cli._checks import plain_text
    from sims.cli.fleet import _parser

    text = _parser().format_help()
    assert "monte_carlo_study" in text and "--tir PATH" in text
    assert not re.search(r":[a-z]+:`|``", text), text
    assert plain_text(":func:`~sims.a.b` and :class:`sims.X` with ``x``") == "b and sims.X with x"
