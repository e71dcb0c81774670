"""Parameter identification from a synthetic log (hidden params), and clear errors on bad logs."""

import numpy as np
import pytest

from sims.studies.identify import EXAMPLE_TRUTH, VehicleLog, example_truth, identify, make_log, synthetic_log
from sims.vehicles import presets
from sims.vehicles.params import Controls, VehicleState

TOL = 0.02  # stated tolerance: every identified parameter within 2 % of the hidden truth (0.5 % noise)


class _Counter:
    n = 0

    def update(self, k):
        self.n += k


def test_identification_recovers_hidden_params():
    base = presets.get("hatchback", tire="simple")
    truth = example_truth(base)  # mass +12 %, a +8 %, h +10 %, k_y front -15 % / rear +15 %, grip -10 %
    log = synthetic_log(truth, n_steps=400, dt=0.01, noise=0.005, seed=1)
    bar = _Counter()
    res = identify(log, base, window=50, n_iter=120, lr=0.1, true=truth, progress=bar)
    assert bar.n == 120  # the progress bar (a tqdm-like update(n)) advanced to the last iteration
    err = res.report.rel_error
    assert set(err) == set(EXAMPLE_TRUTH)
    assert max(abs(e) for e in err.values()) < TOL, str(res.report)
    assert res.report.loss_final < 0.05 * res.report.loss_start
    assert "identified" in str(res.report)


def _arrays(n=20, wheels=4):
    t = np.arange(n) * 0.01
    st = VehicleState(
        x=20 * t,
        y=0 * t,
        yaw=0 * t,
        vx=20 + 0 * t,
        vy=0 * t,
        yaw_rate=0 * t,
        omega=np.full((n, wheels), 64.5),
        ax=0 * t,
        ay=0 * t,
    )
    ct = Controls(steer=np.zeros(n - 1), throttle=np.full(n - 1, 0.1), brake=np.zeros(n - 1))
    fz = np.full((n - 1, wheels), 3300.0)
    return st, ct, fz


def test_good_log_validates():
    st, ct, fz = _arrays()
    log = make_log(st, ct, 0.01, fz)
    assert isinstance(log, VehicleLog) and log.n_steps == 19
    full = ct._replace(steer=np.zeros(20), throttle=np.zeros(20), brake=np.zeros(20))  # n rows: last dropped
    assert make_log(st, full, 0.01).controls.steer.shape == (19,)


def test_bad_logs_raise_clear_errors():
    st, ct, fz = _arrays()
    vx = np.array(st.vx)
    vx[[3, 7]] = np.nan
    with pytest.raises(ValueError, match=r"states.vx.*NaN/inf at rows 3, 7"):
        make_log(st._replace(vx=vx), ct, 0.01, fz)
    bad_fz = fz.copy()
    bad_fz[5] = -3300.0
    with pytest.raises(ValueError, match=r"fz must be >= 0 N.*row 5.*SAE"):
        make_log(st, ct, 0.01, bad_fz)
    empty = VehicleState(*(np.zeros((0, 4)) if f == "omega" else np.zeros(0) for f in VehicleState._fields))
    with pytest.raises(ValueError, match="no rows"):
        make_log(empty, Controls(np.zeros(0), np.zeros(0), np.zeros(0)), 0.01)
    with pytest.raises(ValueError, match=r"states.yaw_rate has 15 rows but states.vx has 20"):
        make_log(st._replace(yaw_rate=np.zeros(15)), ct, 0.01, fz)
    with pytest.raises(ValueError, match=r"controls.steer has 10 rows"):
        make_log(st, ct._replace(steer=np.zeros(10)), 0.01, fz)
    with pytest.raises(ValueError, match=r"fz has shape \(12, 4\)"):
        make_log(st, ct, 0.01, fz[:12])
    with pytest.raises(ValueError, match="dt"):
        make_log(st, ct, 0.0, fz)
    with pytest.raises(ValueError, match="omega"):
        make_log(st._replace(omega=np.zeros((20, 3))), ct, 0.01)
    with pytest.raises(ValueError, match="brake"):
        make_log(st, ct._replace(brake=np.full(19, 2.0)), 0.01)
    with pytest.raises(ValueError, match="scalar"):
        make_log(st._replace(vy=0.0), ct, 0.01)
    log = make_log(st, ct, 0.01, fz)
    base = presets.get("hatchback", tire="simple")
    with pytest.raises(ValueError, match="unknown parameter"):
        identify(log, base, parameters=("wheelbase",))
    with pytest.raises(ValueError, match="fewer than one window"):
        identify(log, base, window=50)
    with pytest.raises(ValueError, match="wheel states"):
        identify(log, base, model="single_track", window=5)
    with pytest.raises(ValueError, match="outside its bounds"):
        identify(log, base, window=5, bounds={"mass": (2000.0, 3000.0)})
    with pytest.raises(ValueError, match="restart"):
        identify(log, base, window=5, restart="none")
