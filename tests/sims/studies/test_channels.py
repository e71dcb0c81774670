"""Issue 37 item 3: metrics defined in the study file from recorded channels, reduced in the fleet program.

* ISO 3888-2 (hatchback, friction varied): the study-file metric ``peak |lane.deviation| where lane.inside``
  equals the peak lateral offset of the CG from the lane centre lines inside the gates, computed here from
  the row's recorded rollout (the replay's ``state.x``, ``state.y``) and the standard's lane geometry;
* every reduction (peak, min, peak_abs, final, mean, integral, time_above, with a window) equals numpy's
  on the recorded channels of the same row;
* bad ``[[metric]]`` tables are one-line errors naming the key; the study file round-trips;
* the full vehicle's body channels (``state.body.roll``): the peak roll of a step steer equals the peak of the
  row's recorded roll, and a planar model's study asking for one is a one-line error naming ``model = 'full'``.
"""

import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims import studies
from sims.scenarios import catalog
from sims.studies import replay
from sims.studies import study as sm
from tests.sims.conftest import FAST

METRICS = [
    {"name": "peak_dev", "channel": "lane.deviation", "op": "peak_abs", "where": "lane.inside", "unit": "m"},
    {"name": "vx_peak", "channel": "state.vx", "op": "peak", "window": [0.0, 5.0], "unit": "m/s"},
    {"name": "r_min", "channel": "state.yaw_rate", "op": "min", "window": [2.0, 4.0], "unit": "rad/s"},
    {"name": "ay_abs", "channel": "telemetry.ay", "op": "peak_abs", "where": "lane.inside", "unit": "m/s^2"},
    {"name": "vx_final", "channel": "state.vx", "op": "final", "window": [0.0, 3.0], "unit": "m/s"},
    {"name": "steer_mean", "channel": "controls.steer", "op": "mean", "where": "lane.inside", "unit": "rad"},
    {"name": "x_int", "channel": "state.vx", "op": "integral", "window": [1.0, 2.5], "unit": "m"},
    {
        "name": "fz_high",
        "channel": "telemetry.fz[0]",
        "op": "time_above",
        "threshold": 4000.0,
        "window": [0.0, 5.0],
        "unit": "s",
    },
]
STUDY = dict(
    name="iso-dev",
    scenario="iso3888_2",
    runs=4,
    seed=3,
    metrics=["cone_hits", *[m["name"] for m in METRICS]],
    metric=METRICS,
    vary=[{"path": "vehicle.tire_scale.mu_y", "by": "factor", "dist": "uniform", "low": 0.8, "high": 1.1}],
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return studies.run(sm.Study.from_dict(STUDY), folder=tmp_path_factory.mktemp("c") / "iso", compiler_options=FAST)


def test_peak_lane_deviation_equals_the_recorded_rollouts(run):
    sc = catalog.get("iso3888_2")
    width = float(sm._vehicle(run.study).chassis.body_width)
    g = [np.asarray(a, np.float64) for a in sc.gates(width)]  # x0, x1, right, left: (3,)
    for i in range(2):
        rep = replay.replay(run.folder, i)
        assert rep.same, rep.mismatch
        x, y = rep.channels["state.x"], rep.channels["state.y"]
        inside = (x[:, None] >= g[0]) & (x[:, None] <= g[1])
        dev = np.where(inside, y[:, None] - 0.5 * (g[2] + g[3]), 0.0).sum(axis=1)
        want = np.abs(dev[inside.any(axis=1)]).max()
        got = float(run.columns["peak_dev"][i])
        print(f"row {i}: peak |deviation| in the gates {got:.4f} m (recorded {want:.4f} m)")
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6) and 0.05 < got < 2.0


def test_every_reduction_equals_numpy_on_the_recorded_channels(run):
    rep = replay.replay(run.folder, 1)
    ch = rep.channels
    t, dt = ch["t"].astype(np.float64), 0.005
    sc = catalog.get("iso3888_2")
    g = [np.asarray(a) for a in sc.gates(float(sm._vehicle(run.study).chassis.body_width))]
    inside = ((ch["state.x"][:, None] >= g[0]) & (ch["state.x"][:, None] <= g[1])).any(axis=1)
    win = lambda a, b: (t >= a) & (t <= b)  # noqa: E731
    want = {
        "vx_peak": ch["state.vx"][win(0.0, 5.0)].max(),
        "r_min": ch["state.yaw_rate"][win(2.0, 4.0)].min(),
        "ay_abs": np.abs(ch["telemetry.ay"][inside]).max(),
        "vx_final": ch["state.vx"][win(0.0, 3.0)][-1],
        "steer_mean": ch["controls.steer"][inside].mean(),
        "x_int": ch["state.vx"][win(1.0, 2.5)].sum() * dt,
        "fz_high": (ch["telemetry.fz[0]"][win(0.0, 5.0)] > 4000.0).sum() * dt,
    }
    for m, v in want.items():
        assert float(run.columns[m][1]) == pytest.approx(float(v), rel=2e-5, abs=1e-6), m
    assert run.summary["metrics"]["peak_dev"]["unit"] == "m" and run.summary["metrics"]["x_int"]["smooth"]
    assert not run.summary["metrics"]["fz_high"]["smooth"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"name": "a", "channel": "state.speed", "op": "peak"}, "'state.speed' is not a channel"),
        ({"name": "a", "channel": "lane.deviation", "op": "peak"}, "is not a channel"),  # braking has no lanes
        ({"name": "a", "channel": "state.vx", "op": "median"}, "op"),
        ({"name": "distance", "channel": "state.vx", "op": "peak"}, "already a metric of the scenario"),
        ({"name": "a b", "channel": "state.vx", "op": "peak"}, "must be an identifier"),
        ({"name": "a", "channel": "state.vx", "op": "peak", "window": [3, 1]}, "t0 < t1"),
        ({"name": "a", "channel": "state.vx", "op": "peak", "colour": 1}, "unknown key(s) ['colour']"),
        ({"name": "a", "channel": "state.vx", "op": "time_above", "threshold": "x"}, "threshold"),
        ({"name": "a", "op": "peak"}, "channel = None must be a string"),
    ],
)
def test_bad_metric_tables_are_one_line_errors(table, message):
    st = sm.Study(scenario="braking", metric=(table,))
    with pytest.raises(ValidationError) as info:
        sm.check(st)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_study_file_round_trip_with_metrics(run, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(sm.dumps(run.study))
    again = sm.load(path)
    assert sm.dumps(again) == sm.dumps(run.study)
    sm.check(again)


BODY = dict(
    name="roll",
    scenario="step_steer",
    runs=2,
    seed=1,
    options={"model": "full", "duration": 3.0},
    metrics=["roll_peak", "heave_min"],
    metric=[
        {"name": "roll_peak", "channel": "state.body.roll", "op": "peak_abs", "unit": "rad"},
        {"name": "heave_min", "channel": "state.body.z", "op": "min", "unit": "m"},
    ],
    vary=[{"path": "vehicle.tire_scale.mu_y", "by": "factor", "dist": "uniform", "low": 0.9, "high": 1.1}],
)


def test_body_channels_of_the_full_vehicle(tmp_path):
    res = studies.run(sm.Study.from_dict(BODY), folder=tmp_path / "roll", compiler_options=FAST)
    rep = replay.replay(res.folder, 1)
    assert rep.same, rep.mismatch
    roll, z = rep.channels["state.body.roll"], rep.channels["state.body.z"]
    got = float(res.columns["roll_peak"][1])
    print(f"peak |roll| {np.degrees(got):.3f} deg, lowest heave {float(res.columns['heave_min'][1]) * 1e3:.2f} mm")
    assert got == pytest.approx(np.abs(roll).max(), rel=1e-5)
    # the study's fleet and the replayed row are two programs: float32 round-off of the body's force balance
    # (corner forces of ~3.5 kN to ~2e-4 N, ~1e-8 m of heave a step) differs between them by up to ~1e-7 m
    assert float(res.columns["heave_min"][1]) == pytest.approx(z.min(), rel=1e-5, abs=1e-7)
    assert np.radians(0.3) < got < np.radians(8.0)  # a hatchback's roll in a step steer: degrees, not radians
    planar = sm.Study.from_dict({**BODY, "options": {"duration": 3.0}})
    with pytest.raises(ValidationError, match="model = 'full'"):
        studies.run(planar, folder=tmp_path / "planar", compiler_options=FAST)
