"""sims.run._scan: one record schema for every run (rollout, fleet, long run), and the long-run records
equal the fleet rollout's (the same core steps both)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import drivers
from sims.run._scan import RECORDS, record_fn
from sims.run.fleet import fleet_rollout, make_fleet
from sims.run.longrun import load_records, long_run
from sims.vehicles import DOUBLE_TRACK, presets
from tests.sims.conftest import FAST


def test_record_schema_names_and_bad_record():
    assert set(RECORDS) == {"state", "telemetry", "all"}
    rec = record_fn("all")(1.5, "s", "c", "tel")
    assert rec == {"t": 1.5, "state": "s", "controls": "c", "telemetry": "tel"}
    assert record_fn(None) is None
    with pytest.raises(ValueError, match="record = 'everything'"):
        record_fn("everything")


def test_long_run_records_equal_the_fleet_rollout_records_with_t(tmp_path):
    """record="all", every=2: the long run's chunk files hold the same entries (incl. ``t``) as the
    fleet rollout's trajectory, and ``t`` is the step time t0 + k every dt of each entry."""
    base = presets.get("hatchback", tire="simple")
    fleet = make_fleet(base, 2)
    state0 = jax.vmap(lambda v: DOUBLE_TRACK.init_state(base, v))(jnp.asarray([10.0, 20.0]))
    drv = drivers.StraightBraking(abs_on=1.0)
    dt, n = 0.01, 8
    ref = fleet_rollout(fleet, state0, drv, n, dt=dt, record="all", every=2, driver_axes=None, t0=0.5,
                        compiler_options=FAST)
    res = long_run(tmp_path / "run", fleet, state0, drv, n, dt=dt, chunk_steps=4, record="all", every=2, t0=0.5,
                   progress=False, compiler_options=FAST)
    recs = load_records(tmp_path / "run")
    np.testing.assert_allclose(recs["t"], ref.trajectory["t"], rtol=0, atol=0)
    np.testing.assert_allclose(recs["t"][0], 0.5 + dt * 2 * np.arange(n // 2), rtol=1e-6)
    np.testing.assert_allclose(recs["state.vx"], ref.trajectory["state"].vx, rtol=0, atol=0)
    # telemetry is recomputed inside two differently fused programs: equal to the last bit or two (the
    # states above and below stay bitwise equal); atol: one float32 ulp of the ~4.5 kN forces (5e-4 N), for the
    # free-rolling start's forces of ~1e-6 N, round-off of that size
    np.testing.assert_allclose(recs["telemetry.fx"], ref.trajectory["telemetry"].fx, rtol=1e-6, atol=5e-4)
    np.testing.assert_allclose(np.asarray(res.final_state.vx), np.asarray(ref.final_state.vx), rtol=0, atol=0)
