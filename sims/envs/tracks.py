"""Closed race tracks from centreline point lists, and the track-relative pose of a vehicle in JAX.

A :class:`Track` is a closed centreline resampled at a uniform arc-length spacing ``ds`` (numpy at
construction, a pytree of arrays afterwards): points ``xy`` (N, 2), arc length ``s`` (N,), tangent
``heading`` (N,) and signed ``curvature`` (N,) [1/m, positive turning left], total ``length`` and the
``half_width`` of the drivable surface.  :func:`make_track` builds one from any list of (x, y)
control points (a periodic centripetal Catmull-Rom spline through them; ``smooth=False`` keeps the
polyline, for points that are already dense).  Built-ins (:data:`TRACKS`, :func:`get_track`):

* ``"oval"``: two 200 m straights joined by two 50 m-radius half circles (about 714 m), driven
  counter-clockwise;
* ``"twisty"``: a 1.6 km counter-clockwise club circuit with a 14 m hairpin, a chicane, S-bends and
  fast sweepers, 10 m wide, from 22 control points.

Track-relative pose (:func:`track_pose`, :func:`project`): the nearest centreline segment to a point
is found by brute force over all segments (vectorised, no Python loop) or, given the previous segment
index as a hint, over a window of ``2 window + 1`` segments around it (what the race env does every
step: O(window) instead of O(N)).  It returns the arc length ``s`` of the projection in ``[0,
length)``, the signed lateral offset (positive left of the centreline), the heading error
``yaw - heading`` wrapped to ``[-pi, pi)`` and the segment index.  :func:`point_at` and
:func:`curvature_at` interpolate the centreline at arc lengths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.constants import wrap_angle


class Track(NamedTuple):
    """A closed centreline at uniform arc-length spacing (see the module docstring)."""

    xy: Any
    s: Any
    heading: Any
    curvature: Any
    length: Any
    half_width: Any
    ds: Any

    @property
    def n(self) -> int:
        return int(np.shape(self.s)[-1])


class TrackPose(NamedTuple):
    """``s`` [m] arc length in [0, length), ``lateral`` [m] offset (positive left), ``heading_error`` [rad]
    ``yaw - track heading`` in [-pi, pi), ``index`` int32 of the nearest segment."""

    s: Any
    lateral: Any
    heading_error: Any
    index: Any


def _catmull_rom_closed(p: np.ndarray, per_seg: int = 64, alpha: float = 0.5) -> np.ndarray:
    """Dense points of the periodic centripetal Catmull-Rom spline through ``p`` (n, 2)."""
    n = len(p)
    out = []
    for i in range(n):
        p0, p1, p2, p3 = p[(i - 1) % n], p[i], p[(i + 1) % n], p[(i + 2) % n]
        t0 = 0.0
        t1 = t0 + np.linalg.norm(p1 - p0) ** alpha
        t2 = t1 + np.linalg.norm(p2 - p1) ** alpha
        t3 = t2 + np.linalg.norm(p3 - p2) ** alpha
        t = np.linspace(t1, t2, per_seg, endpoint=False)[:, None]
        a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
        a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
        a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
        b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
        b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
        out.append((t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2)
    return np.concatenate(out)


def make_track(
    points, half_width: float = 6.0, ds: float = 1.0, smooth: bool = True, smooth_curvature: float = 5.0, dtype=None
) -> Track:
    """A closed :class:`Track` through the (x, y) ``points`` [m] (the last point joins the first; do not
    repeat it), resampled every ``ds`` [m] (rounded so the spacing divides the length); the curvature is
    a periodic moving average over ``smooth_curvature`` [m] (0: raw finite differences).

    Raises ``ValueError`` for fewer than 3 points, repeated consecutive points, a non-positive
    ``half_width`` or ``ds``."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 3:
        raise ValueError(f"make_track: points must be a list of at least 3 (x, y) pairs, got shape {p.shape}")
    if np.allclose(p[0], p[-1]):
        p = p[:-1]
    seg = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    if np.any(seg < 1e-9):
        raise ValueError("make_track: consecutive points must differ")
    if not half_width > 0 or not ds > 0:
        raise ValueError(f"make_track: half_width = {half_width} and ds = {ds} must be > 0")
    dense = _catmull_rom_closed(p) if smooth else p
    closed = np.vstack([dense, dense[:1]])
    seglen = np.linalg.norm(np.diff(closed, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seglen)])
    length = cum[-1]
    n = max(int(round(length / ds)), 8)
    s = np.arange(n) * (length / n)
    xy = np.stack([np.interp(s, cum, closed[:, 0]), np.interp(s, cum, closed[:, 1])], axis=1)
    # tangent and curvature by periodic central differences of the resampled points
    d1 = (np.roll(xy, -1, axis=0) - np.roll(xy, 1, axis=0)) * 0.5
    d2 = np.roll(xy, -1, axis=0) - 2.0 * xy + np.roll(xy, 1, axis=0)
    heading = np.arctan2(d1[:, 1], d1[:, 0])
    curvature = (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / np.maximum(np.hypot(d1[:, 0], d1[:, 1]) ** 3, 1e-12)
    if smooth_curvature > 0:  # periodic moving average over about smooth_curvature metres
        w = max(int(round(smooth_curvature / (length / n))) | 1, 1)
        pad = np.concatenate([curvature[-(w // 2) :], curvature, curvature[: w // 2]]) if w > 1 else curvature
        curvature = np.convolve(pad, np.ones(w) / w, mode="valid")
    f = (lambda v: jnp.asarray(v, dtype)) if dtype is not None else (lambda v: jnp.asarray(v, jnp.result_type(float)))
    return Track(f(xy), f(s), f(heading), f(curvature), f(length), f(half_width), f(length / n))


def oval_points(straight: float = 200.0, radius: float = 50.0, step: float = 1.0) -> np.ndarray:
    """Centreline points of an oval: two straights of ``straight`` [m] along x and two half circles of
    ``radius`` [m], counter-clockwise, starting at the middle of the bottom straight."""
    pts = []
    half = 0.5 * straight
    n_s = max(int(round(straight / step)), 1)
    n_a = max(int(round(np.pi * radius / step)), 4)
    for x in np.linspace(0.0, half, n_s // 2 + 1)[:-1]:
        pts.append((x, -radius))
    for a in np.linspace(-np.pi / 2, np.pi / 2, n_a + 1)[:-1]:
        pts.append((half + radius * np.cos(a), radius * np.sin(a)))
    for x in np.linspace(half, -half, n_s + 1)[:-1]:
        pts.append((x, radius))
    for a in np.linspace(np.pi / 2, 3 * np.pi / 2, n_a + 1)[:-1]:
        pts.append((-half + radius * np.cos(a), radius * np.sin(a)))
    for x in np.linspace(-half, 0.0, n_s // 2 + 1)[:-1]:
        pts.append((x, -radius))
    return np.asarray(pts)


#: Control points of the "twisty" circuit [m], counter-clockwise from the start/finish straight.
TWISTY_POINTS = np.array(
    [
        (0, 0),
        (156, 0),
        (260, 6),
        (325, 46),
        (338, 104),
        (299, 143),
        (240, 136),
        (208, 169),
        (228, 228),
        (292, 254),
        (318, 312),
        (280, 358),
        (208, 351),
        (166, 315),
        (124, 338),
        (78, 377),
        (13, 364),
        (-26, 312),
        (13, 260),
        (-13, 195),
        (-78, 156),
        (-78, 65),
    ],
    dtype=np.float64,
)


def twisty_points() -> np.ndarray:
    """A copy of the twisty track's control points, ``(N, 2)`` float ``(x, y)`` [m]."""
    return TWISTY_POINTS.copy()


#: Built-in tracks: name -> (points, kwargs of :func:`make_track`).
TRACKS: dict[str, tuple[Callable[[], np.ndarray], dict[str, Any]]] = {
    "oval": (oval_points, dict(half_width=6.0, ds=1.0, smooth=False)),
    "twisty": (twisty_points, dict(half_width=5.0, ds=1.0, smooth=True)),
}


def get_track(name, dtype=None) -> Track:
    """A built-in track by name (:data:`TRACKS`), or a :class:`Track` as it is."""
    if isinstance(name, Track):
        return name
    try:
        points, kw = TRACKS[name]
    except KeyError:
        raise ValueError(f"unknown track {name!r}; allowed: {', '.join(TRACKS)}") from None
    return make_track(points(), dtype=dtype, **kw)


# --------------------------------------------------------------------------------------------------
# JAX queries (pure, vmap-able; no Python loops over points)


def project(track: Track, x, y, hint=None, window: int | None = None):
    """Nearest point on the centreline polyline to ``(x, y)`` [m]: ``(s, lateral, segment index, segment
    heading)`` as ``s`` [m] arc length, ``lateral`` [m] (positive left), int32 index, heading [rad];
    each of the broadcast shape of ``x, y``.  With ``hint`` (a segment index) and ``window`` (Python
    int), only the segments ``hint - window .. hint + window`` are searched; otherwise all of them."""
    n = track.xy.shape[0]
    if hint is None or window is None or 2 * window + 1 >= n:
        idx = jnp.arange(n)
    else:
        idx = jnp.mod(jnp.asarray(hint, jnp.int32) + jnp.arange(-window, window + 1), n)
    p0 = track.xy[idx]
    p1 = track.xy[jnp.mod(idx + 1, n)]
    d = p1 - p0
    seg2 = jnp.sum(d * d, axis=-1)
    qx = x - p0[..., 0]
    qy = y - p0[..., 1]
    t = jnp.clip((qx * d[..., 0] + qy * d[..., 1]) / seg2, 0.0, 1.0)
    ex = qx - t * d[..., 0]
    ey = qy - t * d[..., 1]
    dist2 = ex * ex + ey * ey
    k = jnp.argmin(dist2)
    seg = jnp.sqrt(seg2[k])
    dx, dy = d[k, 0] / seg, d[k, 1] / seg
    lateral = dx * ey[k] - dy * ex[k]
    s = jnp.mod(track.s[idx[k]] + t[k] * seg, track.length)
    return s, lateral, idx[k].astype(jnp.int32), jnp.arctan2(dy, dx)


def track_pose(track: Track, x, y, yaw, hint=None, window: int | None = None) -> TrackPose:
    """:class:`TrackPose` of a vehicle at ``(x, y)`` [m] with heading ``yaw`` [rad] (see :func:`project`);
    the heading error is wrapped to ``[-pi, pi)``."""
    s, lat, k, heading = project(track, x, y, hint, window)
    return TrackPose(s, lat, wrap_angle(yaw - heading), k)


def _interp_periodic(track: Track, values, s):
    n = track.xy.shape[0]
    u = jnp.mod(s, track.length) / track.ds
    i0 = jnp.floor(u).astype(jnp.int32)
    w = u - i0
    i0 = jnp.mod(i0, n)
    i1 = jnp.mod(i0 + 1, n)
    return values[i0] * (1.0 - w) + values[i1] * w, i0, i1, w


def curvature_at(track: Track, s):
    """Centreline curvature [1/m] at arc length(s) ``s`` (linear interpolation, periodic)."""
    return _interp_periodic(track, track.curvature, s)[0]


def point_at(track: Track, s):
    """``(x, y, heading)`` ([m], [m], [rad]) of the centreline at arc length(s) ``s`` [m]; shape of ``s``."""
    _, i0, i1, w = _interp_periodic(track, track.curvature, s)
    p = track.xy[i0] * (1.0 - w)[..., None] + track.xy[i1] * w[..., None]
    h0 = track.heading[i0]
    heading = h0 + wrap_angle(track.heading[i1] - h0) * w
    return p[..., 0], p[..., 1], wrap_angle(heading)


def progress_delta(track: Track, s_new, s_old):
    """Signed arc length [m] travelled from ``s_old`` to ``s_new`` [m] (wrapped across the start line)."""
    half = 0.5 * track.length
    return jnp.mod(s_new - s_old + half, track.length) - half
