"""Issue 35 item 1: one static run spec (:class:`sims.run.spec.RunSpec`) read by every runner: a spec and its
fields as keywords are the same run (bitwise), a spec is hashable (one compiled program per spec), bad fields are
refused at the boundary naming the field; the same for the run's placement (:class:`sims.run.placement.Placement`)."""

import numpy as np
import pytest

from sims.drivers import StraightBraking
from sims.run.fleet import FleetRun, fleet_rollout, fleet_start, make_fleet
from sims.run.longrun import long_run
from sims.run.placement import CPU_BLOCK, Placement, default_block, placement
from sims.run.rollout import rollout
from sims.run.spec import RunSpec, fast_compile_options, run_spec
from sims.vehicles import DOUBLE_TRACK, presets

SPEC = RunSpec(dt=0.01, substeps=2, record="state", every=5, compiler_options=tuple(fast_compile_options().items()))


def test_spec_and_its_keywords_are_the_same_rollout():
    p = presets.get("hatchback")
    s0 = DOUBLE_TRACK.init_state(p, 20.0)
    a = rollout(p, s0, StraightBraking(), 40, SPEC)
    b = rollout(p, s0, StraightBraking(), 40, **SPEC._asdict())
    np.testing.assert_array_equal(np.asarray(a.trajectory.vx), np.asarray(b.trajectory.vx))
    assert a.trajectory.vx.shape == (8,)  # 40 steps, one record every 5
    # 20 m/s braking at ~1 g for 0.4 s: the speed falls by 2-4.5 m/s (a worked bound, not a pinned value)
    assert 15.5 < float(a.final_state.vx) < 18.5


def test_fleet_runner_and_long_run_take_the_spec(tmp_path):
    fleet = make_fleet(presets.get("hatchback"), 3)
    _, s0, drv = fleet_start(fleet, "double_track", StraightBraking(), speed=20.0)
    spec = SPEC._replace(record=None)
    ref = fleet_rollout(fleet, s0, drv, 40, spec, block=None, devices=1)
    run = FleetRun(fleet, s0, drv, spec, chunk_steps=20, block=None, devices=1)
    assert run.spec == spec.check() and hash(run.spec) == hash(spec.check())
    s, _, _, stats = run.run(40)
    np.testing.assert_array_equal(np.asarray(s.vx), np.asarray(ref.final_state.vx))
    res = long_run(tmp_path / "r", fleet, s0, drv, 40, spec, chunk_steps=20, driver_axes=0, progress=False)
    np.testing.assert_array_equal(np.asarray(res.final_state.vx), np.asarray(ref.final_state.vx))
    assert stats.steps == 40 and res.manifest["config"]["substeps"] == 2


def test_bad_fields_are_refused_naming_them():
    p = presets.get("hatchback")
    s0 = DOUBLE_TRACK.init_state(p, 20.0)
    with pytest.raises(TypeError, match="not both"):
        rollout(p, s0, StraightBraking(), 10, SPEC, dt=0.01)
    with pytest.raises(TypeError, match=r"\['substep'\]"):
        rollout(p, s0, StraightBraking(), 10, dt=0.01, substep=2)
    with pytest.raises(TypeError, match="needs dt"):
        run_spec(substeps=2)
    with pytest.raises(ValueError, match="dt"):
        rollout(p, s0, StraightBraking(), 10, dt=-0.01)
    with pytest.raises(ValueError, match="every = 3 must divide n_steps = 10"):
        rollout(p, s0, StraightBraking(), 10, SPEC._replace(every=3))
    with pytest.raises(ValueError, match="substeps = 0"):
        RunSpec(dt=0.01, substeps=0).check()
    with pytest.raises(ValueError, match="record"):
        RunSpec(dt=0.01, record="everything").check()


def test_placement_and_its_keywords_are_the_same_run():
    """A :class:`Placement` and its fields as keywords: the same placement (blocks of 2 vehicles, bitwise the
    one-batch run), stored on the run; a placement and fields together, an unknown field and bad values are
    refused naming them."""
    fleet = make_fleet(presets.get("hatchback"), 3)
    _, s0, drv = fleet_start(fleet, "double_track", StraightBraking(), speed=20.0)
    spec = SPEC._replace(record=None)
    one = fleet_rollout(fleet, s0, drv, 40, spec, placement=Placement(devices=1, block=None))
    blocks = fleet_rollout(fleet, s0, drv, 40, spec, devices=1, block=2)
    np.testing.assert_array_equal(np.asarray(blocks.final_state.vx), np.asarray(one.final_state.vx))
    run = FleetRun(fleet, s0, drv, spec, chunk_steps=20, placement=Placement(devices=1, block=2))
    assert run.placement == placement(devices=1, block=2) and run.block == 2 and run.devices == 1
    assert Placement().block_size() == default_block() == CPU_BLOCK  # this CPU
    with pytest.raises(TypeError, match="not both"):
        fleet_rollout(fleet, s0, drv, 40, spec, placement=Placement(), devices=1)
    with pytest.raises(TypeError, match=r"\['substep'\]"):
        FleetRun(fleet, s0, drv, dt=0.01, devices=1, substep=2)
    with pytest.raises(ValueError, match="block"):
        placement(block=0)
    with pytest.raises(ValueError, match="devices = 0"):
        placement(devices=0)
    with pytest.raises(ValueError, match="empty sequence"):
        placement(devices=())
    with pytest.raises(ValueError, match="devices"):
        placement(devices="gpu")
    # hosts (every process's devices: tests/sims/run/test_distributed.py runs it on two processes)
    assert placement(hosts=True) == Placement(None, "auto", True)
    with pytest.raises(ValueError, match="hosts must be True or False"):
        placement(hosts=1)
    with pytest.raises(ValueError, match="devices must be None"):
        placement(hosts=True, devices=1)
    with pytest.raises(ValueError, match="FleetRun: hosts=True is for fleet_rollout"):
        FleetRun(fleet, s0, drv, spec, chunk_steps=20, hosts=True)
