"""sims.roads.path: sampled plane paths (geometry, projection) and the PathFollower driving a long circuit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.validation import ValidationError
from sims.drivers import PathFollower
from sims.roads.path import circle, graph_path, length, make_path, position, sample, straight
from sims.roads.path import project as _project
from sims.run.fleet import fleet_rollout, fleet_start, make_fleet
from sims.vehicles import presets
from tests.sims.conftest import FAST

project = jax.jit(_project)


def test_circle_geometry_matches_the_polygon(dtype):
    r, n = 50.0, 400
    p = circle(r, n=n, dtype=dtype)
    # perimeter of the inscribed regular n-gon; curvature 1/R; heading grows by 2 pi over the lap
    assert float(length(p)) == pytest.approx(2 * n * r * np.sin(np.pi / n), rel=1e-5)
    np.testing.assert_allclose(p.curvature, 1.0 / r, rtol=1e-3)
    assert float(p.heading[-1] - p.heading[0]) == pytest.approx(2 * np.pi, rel=1e-5)
    assert float(p.closed) == 1.0 and p.x[0] == p.x[-1]
    cw = circle(-r, n=n, dtype=dtype)
    np.testing.assert_allclose(cw.curvature, -1.0 / r, rtol=1e-3)


def test_projection_on_a_circle_and_across_the_seam():
    r = 50.0
    p = circle(r, n=720)
    # a point at angle th, radius r + d from the centre (0, r): lateral error -d (outside = right of a left turn)
    for th, d in ((0.3, 0.7), (2.0, -1.1), (-0.05, 0.4)):
        x, y = (r + d) * np.sin(th), r - (r + d) * np.cos(th)
        pr = project(p, x, y)
        chord = 720 * 2 * r * np.sin(np.pi / 720) / (2 * np.pi)  # the polygon's radius scale for s
        assert float(pr.e_y) == pytest.approx(-d, abs=2e-3)
        assert float(pr.s) == pytest.approx((th % (2 * np.pi)) * chord, abs=5e-2)
        # the windowed search from a nearby guess finds the same point, also across the seam at s = 0
        pw = project(p, x, y, pr.s + 3.0)
        assert float(pw.s) == pytest.approx(float(pr.s), abs=1e-3) and float(pw.e_y) == pytest.approx(
            float(pr.e_y), abs=1e-5
        )
    # stations wrap on a closed path, are held at the ends of an open one
    L = float(length(p))
    assert float(sample(p, L + 10.0).s) == pytest.approx(10.0, abs=1e-3)
    st = straight(20.0)
    assert float(sample(st, 25.0).s) == 20.0 and float(position(st, 5.0)[0]) == pytest.approx(5.0)
    assert float(project(st, 3.0, 2.0).e_y) == pytest.approx(2.0)


def test_graph_path_is_exact_and_differentiable():
    x = jnp.linspace(0.0, 10.0, 2001)
    a = 0.3  # the parabola y = a x^2 / 2: curvature a / (1 + (a x)^2)^1.5
    p = graph_path(x, 0.5 * a * x**2, a * x, a + 0 * x)
    np.testing.assert_allclose(p.curvature, a / (1 + (a * x) ** 2) ** 1.5, rtol=1e-5)
    exact = (a * 10 * np.sqrt(1 + (a * 10) ** 2) + np.arcsinh(a * 10)) / (2 * a)  # its arc length
    assert float(length(p)) == pytest.approx(exact, rel=1e-5)
    g = jax.jit(jax.grad(lambda w: _project(graph_path(x, w * x, w + 0 * x, 0 * x), 5.0, 1.0).e_y))(0.1)
    # the distance of (5, 1) left of the line y = w x: e_y = (1 - 5 w) / sqrt(1 + w^2); its derivative at w = 0.1
    w = 0.1
    assert float(g) == pytest.approx(-5.0 / np.sqrt(1 + w * w) - (1 - 5 * w) * w / (1 + w * w) ** 1.5, rel=1e-4)


def test_make_path_rejects_bad_points():
    with pytest.raises(ValidationError, match="coincide"):
        make_path([0.0, 1.0, 1.0, 2.0], [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValidationError, match="at least 2"):
        make_path([0.0], [0.0])
    with pytest.raises(ValidationError, match="same length"):
        make_path([0.0, 1.0], [0.0])
    with pytest.raises(ValidationError, match="x"):
        make_path([0.0, np.nan], [0.0, 1.0])


def test_path_follower_laps_the_seam_of_a_4_km_circuit():
    """A closed curve of 4.26 km (2000 samples, radius 450-750 m): two cars at 20 and 30 m/s start 150 m before
    the seam, 0.5 m off the line, and follow it through the seam (15 s); with the course angle in the heading
    error (``course = 1``) no steady offset is left on the long curves."""
    th = np.linspace(0.0, 2 * np.pi, 2000, endpoint=False)
    rad = 600.0 + 150.0 * np.sin(3 * th)
    path = make_path(rad * np.cos(th), rad * np.sin(th), closed=True)
    total = float(length(path))
    assert 4200.0 < total < 4300.0
    fleet = make_fleet(presets.get("hatchback"), 2)
    v = np.array([20.0, 30.0])
    m, st, drv = fleet_start(fleet, "double_track", PathFollower(path, course=1.0), speed=v, target_speed=v)
    s0 = total - 150.0
    x0, y0 = position(path, s0)
    h0 = sample(path, s0).heading
    n0 = jnp.array([-jnp.sin(h0), jnp.cos(h0)])  # the left normal
    st = st._replace(x=st.x * 0 + x0 + 0.5 * n0[0], y=st.y * 0 + y0 + 0.5 * n0[1], yaw=st.yaw * 0 + h0)
    rec = lambda t, s, c, tel: (s.x, s.y, jnp.sqrt(s.vx**2 + s.vy**2))  # noqa: E731
    res = fleet_rollout(fleet, st, drv, 3000, dt=0.005, model=m, record=rec, every=20, compiler_options=FAST)
    xs, ys, speed = (np.asarray(a) for a in res.trajectory)
    for i in range(2):
        pr = jax.vmap(lambda a, b: project(path, a, b))(jnp.asarray(xs[i]), jnp.asarray(ys[i]))
        assert np.abs(pr.e_y[:3]).max() > 0.3  # it started off the line
        assert np.abs(pr.e_y[40:]).max() < 0.1, i  # and follows it within 0.1 m after 4 s
        # through the seam: the station wrapped to the distance driven minus 150 m
        assert float(res.driver_state[i]) == pytest.approx(v[i] * 15.0 - 150.0, abs=0.05 * v[i] * 15.0)
        assert abs(speed[i, -1] - v[i]) < 0.5
