"""ABS and lane-change tuning by grad through small randomised fleets (cheap settings: 4 vehicles, 3 s)."""

import math

import jax
import numpy as np
import pytest

from sims.studies.tuning import (
    ABS_BOUNDS,
    BrakingSetup,
    LaneSetup,
    abs_gains,
    lane_gains,
    sample_fleet,
    tune_abs,
    tune_lateral,
)
from sims.vehicles import presets

# small scenario: 12-18 m/s on three surfaces, 3 s horizon at 10 ms (300 steps), simple tires (fast compile)
SMALL = BrakingSetup(tire="simple", horizon=3.0, speed=(12.0, 18.0), surfaces=("asphalt_dry", "asphalt_wet", "gravel"))


def test_abs_tuning_lowers_stopping_distance_on_heldout_seeds():
    seen = []  # a tqdm-like progress object: update(n) per reported block of iterations
    bar = type("Bar", (), {"update": lambda self, n: seen.append(n)})()
    # start detuned (target 15 % below the peak slip): the default controller already stops within ~1 % of the
    # friction bound (tests/sims/scenarios/test_abs.py), which leaves tuning only ~0.4 % to find
    start = {"target_slip": 0.15}
    res = tune_abs(
        SMALL, n_vehicles=4, n_iter=15, lr=0.1, seed=0, heldout_seeds=(2001, 2002), progress=bar, start=start
    )
    assert seen == [1, 10, 4]  # minimize reports at i = 0, 10 (every 10) and 14 (the last): 1, 11, 15 done
    rep = res.report
    assert np.all(np.isfinite(rep.losses))
    for seed, (before, after) in rep.heldout.items():
        assert after < before, (seed, before, after)
    before, after = rep.heldout_mean
    assert after < 0.995 * before, rep  # at least 0.5 % shorter on average
    for k, v in res.gains.items():
        lo, hi = ABS_BOUNDS[k]
        assert lo <= v <= hi
    assert "held-out stopping distance" in str(rep)


def test_sample_fleet_is_deterministic_and_randomised():
    base = presets.get("hatchback", tire="simple")
    a, da = sample_fleet(jax.random.PRNGKey(3), base, 5, surfaces=("asphalt_dry", "snow"))
    b, db = sample_fleet(jax.random.PRNGKey(3), base, 5, surfaces=("asphalt_dry", "snow"))
    np.testing.assert_array_equal(np.asarray(a.chassis.mass), np.asarray(b.chassis.mass))
    assert np.asarray(a.chassis.mass).shape == (5,)
    assert len(np.unique(np.asarray(a.chassis.mass))) == 5
    assert set(np.asarray(da.surface_id).tolist()) <= {0, 8}


def test_bad_tuning_arguments_raise():
    with pytest.raises(ValueError, match="target_slip"):
        tune_abs(SMALL, start={"target_slip": 0.9})
    with pytest.raises(ValueError, match="unknown gain"):
        tune_abs(SMALL, gains=("kp",))
    with pytest.raises(ValueError, match="held-out"):
        tune_abs(SMALL, seed=7, heldout_seeds=(7,))
    with pytest.raises(ValueError, match="n_iter"):
        tune_abs(SMALL, n_iter=0)
    with pytest.raises(TypeError, match="n_iters"):  # a misspelt loop keyword is refused, not ignored
        tune_lateral(n_iters=3)
    assert math.isclose(abs_gains()["target_slip"], 0.08)
    assert set(lane_gains()) == {"k_y", "k_psi", "t_preview", "k_r"}


def test_lane_change_tuning_beats_untuned_on_heldout_seed():
    setup = LaneSetup(tire="simple", horizon=3.0, length=30.0, speed=(15.0, 20.0))
    res = tune_lateral(setup, n_vehicles=3, n_iter=12, lr=0.1, seed=0, heldout_seeds=(2001, 2002))
    for seed, (before, after) in res.report.heldout.items():
        assert after < 0.9 * before, (seed, res.report)
