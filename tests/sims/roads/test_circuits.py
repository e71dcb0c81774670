"""Circuits (sims.roads.circuits): the shipped database tracks, the spline geometry, file errors, env ids."""

import fnmatch
import tomllib
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.roads import circuits as c

REPO = Path(__file__).resolve().parents[3]

#: Official lap lengths [m] (FIA / circuit data) of the shipped circuits; the database centrelines are GPS
#: traces, smoothed, so they agree within ~2 %.
OFFICIAL = {
    "Monza": 5793,
    "Spa": 7004,
    "Silverstone": 5891,
    "Budapest": 4381,
    "Norisring": 2300,
    "Zandvoort": 4259,
    "Spielberg": 4318,
}


@pytest.mark.parametrize("name", c.CIRCUITS)
def test_shipped_circuits_load_close_and_turn_once(name):
    tr = c.load_circuit(name, ds=4.0)
    if name in OFFICIAL:
        assert abs(float(tr.length) / OFFICIAL[name] - 1) < 0.02
    h = np.unwrap(np.asarray(tr.heading, np.float64))
    turn = h[-1] - h[0] + np.angle(np.exp(1j * (h[0] - h[-1])))  # the heading change over the whole loop
    assert abs(abs(turn) - 2 * np.pi) < 1e-6  # a closed loop turns once
    assert np.all(np.asarray(tr.width_left) > 2) and np.all(np.asarray(tr.width_right) > 2)
    # the spacing divides the length; the sampled points are ds apart along the curve
    xy = np.asarray(tr.xy, np.float64)
    seg = np.linalg.norm(np.roll(xy, -1, axis=0) - xy, axis=1)  # the chords, the closing one included
    assert np.allclose(seg, float(tr.ds), rtol=2e-2) and abs(seg.sum() / float(tr.length) - 1) < 1e-3


def test_circle_geometry_is_exact(x64):
    R = 120.0
    a = np.linspace(0, 2 * np.pi, 151)[:-1]
    pts = np.stack([R * np.cos(a), R * np.sin(a)], 1)
    tr = c.make_circuit(pts, np.full(150, 4.0), np.full(150, 6.0), ds=2.0)
    assert abs(float(tr.length) - 2 * np.pi * R) < 1e-3
    assert np.allclose(tr.curvature, 1 / R, rtol=5e-4)  # spline 2nd-derivative error ~ (h / R)^2 / 12
    h = np.asarray(tr.heading)
    ang = np.arctan2(np.asarray(tr.xy)[:, 1], np.asarray(tr.xy)[:, 0])
    assert np.allclose(np.cos(h - ang - np.pi / 2), 1.0, atol=1e-8)  # tangent of a CCW circle
    left, right = c.edges(tr)
    assert np.allclose(np.linalg.norm(np.asarray(left), axis=1), R - 6.0, atol=1e-6)
    assert np.allclose(np.linalg.norm(np.asarray(right), axis=1), R + 4.0, atol=1e-6)
    wl, wr = c.widths_at(tr, jax.numpy.asarray([3.0, 700.0]))
    assert np.allclose(wl, 6.0) and np.allclose(wr, 4.0)


def _write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _ellipse_csv(n=200, a=300.0, b=150.0, extra=""):
    t = np.linspace(0, 2 * np.pi, n + 1)[:-1]
    rows = [f"{a * np.cos(u):.4f},{b * np.sin(u):.4f},5.0,6.0" for u in t]
    return "# x_m,y_m,w_tr_right_m,w_tr_left_m\n" + "\n".join(rows) + "\n" + extra


def test_unseen_circuit_file_loads_by_path(tmp_path):
    p = _write(tmp_path, _ellipse_csv())
    tr = c.get_track(str(p), ds=2.0)
    # Ramanujan's perimeter of an ellipse
    a, b = 300.0, 150.0
    h = ((a - b) / (a + b)) ** 2
    per = np.pi * (a + b) * (1 + 3 * h / (10 + np.sqrt(4 - 3 * h)))
    assert abs(float(tr.length) / per - 1) < 1e-4
    assert np.isclose(float(np.max(tr.curvature)), a / b**2, rtol=1e-3)  # at the ends of the major axis


@pytest.mark.parametrize(
    "text, match",
    [
        ("1,2,3,4\n", "line 1: data before the header"),
        ("# x_m,y_m,w_tr_left_m\n0,0,1\n", "lacks column 'w_tr_right_m'"),
        ("# x_m,y_m,speed\n", "line 1: unknown column 'speed'"),
        (
            "# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n5,0,1,1\n5,abc,1,1\n",
            "line 4: field y_m = 'abc' is not a number",
        ),
        ("# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n5,0,1\n", "line 3: 3 fields, the header names 4"),
        ("# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n5,0,-1,1\n", "line 3: field w_tr_right_m = -1.0 is negative"),
        (
            "# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n5,0,nan,1\n",
            "line 3: field w_tr_right_m = 'nan' is not finite",
        ),
        ("# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n", "1 points; a closed circuit needs at least 3"),
        ("", "no header line"),
    ],
)
def test_malformed_files_name_file_line_and_field(tmp_path, text, match):
    p = _write(tmp_path, text, "bad.csv")
    with pytest.raises(ValidationError, match=match) as e:
        c.load_circuit(p)
    assert "bad.csv" in str(e.value)


def test_repeated_points_and_missing_file(tmp_path):
    p = _write(tmp_path, "# x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n0,0,1,1\n5,5,1,1\n9,0,1,1\n")
    with pytest.raises(ValidationError, match="consecutive points must differ"):
        c.load_circuit(p)
    # a missing file is reported as missing, naming the path (it used to read "unknown track")
    for missing in (str(tmp_path / "nope.csv"), tmp_path / "nope.csv", "nope.csv"):
        with pytest.raises(ValidationError, match="circuit file .*nope.csv.* not found") as e:
            c.get_track(missing)
        assert str(Path(missing).absolute()) in str(e.value)
    with pytest.raises(ValidationError, match="unknown track 'Nordschleife'"):
        c.get_track("Nordschleife")


def test_raceline_inside_track_and_on_track_widths():
    cl = c.load_circuit("Norisring", ds=2.0)
    rl = c.load_raceline("Norisring", ds=2.0, centreline=cl)
    assert abs(float(rl.length) / float(cl.length) - 1) < 0.03  # the race line cuts the corners a little
    margin = np.minimum(np.asarray(rl.width_left), np.asarray(rl.width_right))
    # the database's line keeps ~0.75 m from the edges (one point 0.16 m beyond the resampled edge)
    assert np.percentile(margin, 5) > 0.7 and margin.min() > -0.25


def test_every_track_file_is_package_data():
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["sims"]
    root = REPO / "sims"
    files = [p.relative_to(root).as_posix() for p in (root / "roads" / "data").rglob("*") if p.is_file()]
    assert len(files) == 2 + 2 * len(c.CIRCUITS)
    assert not [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)]
    assert "LGPL" in (root / "roads" / "data" / "tracks" / "SOURCES.md").read_text()


def test_race_env_ids_cover_every_circuit():
    from sims.envs import catalog, registration

    assert registration.CIRCUIT_NAMES == c.CIRCUITS
    for name in c.CIRCUITS:
        assert registration.GYM_IDS[f"jaxtire/Race{name}-v0"] in catalog.REGISTRY
    env = catalog.make("jaxtire/RaceNorisring-v0")
    params = env.init_params(np.float32)
    assert params.track.n == c.get_track("Norisring").n
    obs, state = jax.jit(env.reset)(jax.random.PRNGKey(0), params)
    assert obs.shape == (35,) == (env.num_obs,) and np.all(np.isfinite(obs))
    assert abs(float(state.pose.lateral)) <= 1.0


def test_resample_gives_the_count_and_keeps_the_curve_and_stack_refuses_unequal_counts():
    a = c.load_circuit("Norisring", ds=2.5)
    r = c.resample(a, 700)
    assert r.n == 700 and abs(float(r.length) / float(a.length) - 1) < 1e-3  # the same spline, another spacing
    assert abs(float(r.ds) * 700 - float(r.length)) < 1e-6 * float(r.length)
    s = c.stack([r, c.resample(c.load_circuit("IMS", ds=2.5), 700)])
    assert s.xy.shape == (2, 700, 2) and s.length.shape == (2,)
    with pytest.raises(ValidationError, match="resample them to one count"):
        c.stack([r, a])
