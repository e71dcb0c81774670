"""Fleets: vmap equals a loop, determinism per key, long no-NaN runs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.surfaces import surface_id
from sims.drivers import SineSteer, StraightBraking
from sims.run.fleet import Sampling, broadcast, fleet_rollout, make_fleet, sample_fleet, vehicles
from sims.vehicles import DOUBLE_TRACK, fleet_axes, presets
from tests.sims.conftest import FAST, roll

SURFS = tuple(surface_id(s) for s in ("asphalt_dry", "asphalt_wet", "gravel", "snow", "ice"))


def _fleet_state(p, speed):
    return jax.vmap(lambda q, v: DOUBLE_TRACK.init_state(q, v, yaw_rate=0.01), in_axes=(fleet_axes(p), 0))(
        p, jnp.asarray(speed, jnp.float32))


def test_sampling_is_deterministic_per_key_and_varies_with_it(hatch):
    s = Sampling(surfaces=SURFS)
    a, sa = sample_fleet(jax.random.PRNGKey(7), hatch, 500, s)
    b, sb = sample_fleet(jax.random.PRNGKey(7), hatch, 500, s)
    c, _ = sample_fleet(jax.random.PRNGKey(8), hatch, 500, s)
    for x, y in zip(jax.tree.leaves(a.chassis), jax.tree.leaves(b.chassis)):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    assert not np.array_equal(np.asarray(a.chassis.mass), np.asarray(c.chassis.mass))
    assert set(np.unique(np.asarray(sa.surface_id))) == set(SURFS)
    m = np.asarray(sa.mass_factor)
    assert 0.9 <= m.min() and m.max() <= 1.25
    # the tires stay shared and unbatched: only the small scale pytree is per vehicle
    assert a.tire_front is hatch.tire_front
    assert np.shape(a.chassis.tire_scale_front.mu_x) == (500,)


def test_fleet_rollout_equals_a_loop_and_is_bitwise_reproducible(hatch):
    fleet, _ = sample_fleet(jax.random.PRNGKey(3), hatch, 4, Sampling(surfaces=SURFS))
    speeds = np.array([15.0, 20.0, 25.0, 18.0], np.float32)
    s0 = _fleet_state(fleet, speeds)
    drv = broadcast(StraightBraking(abs_on=1.0), 4)
    res = fleet_rollout(fleet, s0, drv, 800, dt=0.005, compiler_options=FAST)
    res2 = fleet_rollout(fleet, s0, drv, 800, dt=0.005, compiler_options=FAST)
    for x, y in zip(jax.tree.leaves(res.final_state), jax.tree.leaves(res2.final_state)):
        assert np.array_equal(np.asarray(x), np.asarray(y))  # deterministic
    for i in range(4):
        p_i = vehicles(fleet, i)
        one = roll(p_i, jax.tree.map(lambda x: x[i], s0), StraightBraking(abs_on=1.0), 800, dt=0.005)
        for x, y in zip(jax.tree.leaves(one.final_state), jax.tree.leaves(res.final_state)):
            np.testing.assert_allclose(np.asarray(y)[i], np.asarray(x), rtol=1e-4, atol=1e-4)


def test_long_rollout_of_1000_vehicles_parked_and_at_50_mps_has_no_nan_or_inf():
    n = 1000
    base = presets.get("hatchback")
    fleet, _ = sample_fleet(jax.random.PRNGKey(0), base, n, Sampling(surfaces=SURFS))
    speed = np.where(np.arange(n) % 2 == 0, 0.0, 50.0).astype(np.float32)
    s0 = _fleet_state(fleet, speed)
    # the moving half weaves with a sine steer and holds 50 m/s; the parked half gets no input
    amp = np.where(speed > 0, 0.01, 0.0).astype(np.float32)
    drv = broadcast(SineSteer(amplitude=0.0, frequency=0.3, target_speed=0.0), n)
    drv = jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), drv)
    import dataclasses

    drv = dataclasses.replace(drv, amplitude=jnp.asarray(amp), target_speed=jnp.asarray(speed))
    res = fleet_rollout(fleet, s0, drv, 10_000, dt=0.005)  # 1e7 vehicle-steps: optimised code runs faster
    fs = res.final_state
    for leaf in jax.tree.leaves(fs):
        assert np.isfinite(np.asarray(leaf)).all()
    parked = speed == 0
    assert np.max(np.abs(np.asarray(fs.x)[parked])) < 1e-6
    assert np.max(np.abs(np.asarray(fs.vx)[parked])) < 1e-6
    v = np.asarray(fs.vx)[~parked]
    assert np.all((v > 30.0) & (v < 52.0))  # 92 kW cannot hold 50 m/s on every surface, but it keeps going


def test_make_fleet_and_bad_sampling():
    p = presets.get("kart")
    f = make_fleet(p, 3)
    assert np.shape(f.chassis.mass) == (3,) and np.shape(f.contact.surface_ids) == (3, 4)
    with pytest.raises(ValueError, match="Sampling: mass"):
        sample_fleet(jax.random.PRNGKey(0), p, 3, Sampling(mass=(-1.0, 2.0)))
    with pytest.raises(ValueError, match="surface id 20"):
        sample_fleet(jax.random.PRNGKey(0), p, 3, Sampling(surfaces=(0, 20)))
    with pytest.raises(ValueError, match="n = 0"):
        sample_fleet(jax.random.PRNGKey(0), p, 0)


def test_chunked_run_with_compaction_equals_the_plain_fleet_rollout(hatch):
    from sims.run.fleet import FleetRun
    from sims.scenarios.braking import BrakingReducer

    n = 48
    fleet, _ = sample_fleet(jax.random.PRNGKey(5), hatch, n, Sampling(surfaces=SURFS))
    s0 = _fleet_state(fleet, np.linspace(8.0, 20.0, n))
    drv = broadcast(StraightBraking(abs_on=1.0), n)
    red = BrakingReducer()
    ref = fleet_rollout(fleet, s0, drv, 1200, dt=0.005, reducer=red, compiler_options=FAST, block=None)
    run = FleetRun(fleet, s0, drv, dt=0.005, reducer=red, chunk_steps=100, compiler_options=FAST, block=16)
    _, _, acc, stats = run.run(1200, active=lambda a: ~a.stopped, min_batch=8, max_compactions=2)
    assert stats.vehicle_steps_per_s > 0 and stats.steps <= 1200
    # Same equations, different batch widths (48, blocks of 16, compacted): XLA may round a fused float32
    # expression differently per width (last ulp), and the ABS on/off threshold amplifies such a difference
    # over ~400 steps to ~1e-5 of the distance (seen: 1.3e-5 on one car of 48), never to a different stop.
    np.testing.assert_allclose(acc.distance, ref.reduced.distance, rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(acc.stopped), np.asarray(ref.reduced.stopped))
    np.testing.assert_allclose(acc.stop_time, ref.reduced.stop_time, rtol=0, atol=0.005 + 1e-6)


def test_partial_last_chunk_runs_exactly_n_steps_bitwise_equal_to_one_chunk(hatch):
    """7 steps in chunks of 5 = one chunk of 5 + a partial chunk of 2: 7 steps (not 10), and the state and
    reducer equal those of one 7-step chunk bit for bit (same step function, same batch width)."""
    from sims.run.fleet import FleetRun
    from sims.scenarios.braking import BrakingReducer

    n = 4
    fleet, _ = sample_fleet(jax.random.PRNGKey(2), hatch, n, Sampling(surfaces=SURFS))
    s0 = _fleet_state(fleet, np.linspace(8.0, 20.0, n))
    drv = broadcast(StraightBraking(abs_on=1.0), n)
    kw = dict(dt=0.005, reducer=BrakingReducer(), compiler_options=FAST, block=None)
    progress = []

    class Bar:
        def update(self, k):
            progress.append(k)

    s5, d5, a5, st5 = FleetRun(fleet, s0, drv, chunk_steps=5, **kw).run(7, progress=Bar())
    s7, d7, a7, st7 = FleetRun(fleet, s0, drv, chunk_steps=7, **kw).run(7)
    assert st5.steps == st7.steps == 7 and progress == [5, 2]
    for a, b in zip(jax.tree.leaves((s5, d5, a5)), jax.tree.leaves((s7, d7, a7)), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # and 7 steps really were taken: the path is longer than after 5 steps and shorter than after 10
    a10 = FleetRun(fleet, s0, drv, chunk_steps=5, **kw).run(10)[2]
    a5only = FleetRun(fleet, s0, drv, chunk_steps=5, **kw).run(5)[2]
    assert np.all(a5only.distance < a5.distance) and np.all(a5.distance < a10.distance)
