"""Sampled plane paths: the reference lines drivers follow (lane changes, circuits, racing lines).

A :class:`Path` is a polyline of ``N`` samples with, at each, the arc length ``s`` [m] from the first
sample, the ground position ``x``, ``y`` [m], the tangent's ``heading`` [rad] (unwrapped: continuous
along the path, counter-clockwise from the ground ``X`` axis) and the ``curvature`` [1/m] (positive
turning left), plus an optional target-``speed`` profile [m/s].  A *closed* path (a circuit) repeats its
first point as its last (``s[-1]`` the lap length) and wraps: stations are taken modulo the length.

Built from points by :func:`make_path` (validated):

* ``s_0 = 0``, ``s_{i+1} = s_i + |P_{i+1} - P_i|`` (chord lengths);
* ``heading_i`` the direction of the central difference ``P_{i+1} - P_{i-1}`` (one-sided at the ends of an
  open path; across the seam of a closed one), unwrapped;
* ``curvature_i = d heading / d s`` by central differences of the unwrapped heading.

:func:`project` finds the nearest point of the path to ``(x, y)``: over every segment
``[P_k, P_{k+1}]`` the foot ``Q = P_k + t (P_{k+1} - P_k)``, ``t = clip((p - P_k).d / |d|^2, 0, 1)``, the
closest one wins; it returns the station ``s = s_k + t |d|``, the lateral error
``e_y = cos(h) (p_y - Q_y) - sin(h) (p_x - Q_x)`` [m] (positive: the point lies left of the path) and the
path's heading, curvature and speed there (linear in ``t``).  With a station guess it searches only a
window of :data:`WINDOW` segments around it (what a driver does each step: O(1) for a path of any
length); without, every segment (O(N), for the start).

Paths are pytrees of arrays, so a fleet may carry one path per vehicle (a leading vehicle axis on every
leaf, all with the same ``N``) and everything here is ``vmap``-, ``jit``- and ``grad``-friendly (the
choice of segment is discrete; everything else is smooth).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.constants import wrap_angle
from jaxtire.validation import ValidationError, check_finite, check_range

#: Segments searched around a station guess by :func:`project`: ``WINDOW_BACK`` behind, the rest ahead.
WINDOW = 48
WINDOW_BACK = 12


class Path(NamedTuple):
    """A sampled plane path (module docstring): ``s``, ``x``, ``y`` [m], ``heading`` [rad] (unwrapped),
    ``curvature`` [1/m], ``speed`` [m/s] (target-speed profile, 0 where none), each ``(..., N)``; ``closed``
    1.0 for a closed path (its last sample repeats the first), 0.0 for an open one."""

    s: Any
    x: Any
    y: Any
    heading: Any
    curvature: Any
    speed: Any
    closed: Any


class Projection(NamedTuple):
    """The nearest point of a path (:func:`project`): station ``s`` [m], lateral error ``e_y`` [m] (positive
    left of the path), the path's ``heading`` [rad], ``curvature`` [1/m] and ``speed`` [m/s] there."""

    s: Any
    e_y: Any
    heading: Any
    curvature: Any
    speed: Any


def make_path(x, y, *, closed: bool = False, speed=None, dtype=None) -> Path:
    """A validated :class:`Path` through the points ``(x, y)`` [m] (module docstring).

    ``closed``: join the last point back to the first (the first point is appended when it is not
    repeated already); ``speed`` [m/s]: a target-speed profile, one value per point (or a scalar).
    Raises :class:`~jaxtire.validation.ValidationError` for fewer than 2 (open) / 3 (closed) points,
    values that are not finite, unequal lengths, repeated consecutive points or negative speeds."""
    src = "make_path"
    px = check_finite("x", np.atleast_1d(np.asarray(x, np.float64)), source=src)
    py = check_finite("y", np.atleast_1d(np.asarray(y, np.float64)), source=src)
    if px.ndim != 1 or px.shape != py.shape:
        raise ValidationError(f"{src}: x and y must be 1-d of the same length, got shapes {px.shape}, {py.shape}")
    sp = np.broadcast_to(np.asarray(0.0 if speed is None else speed, np.float64), px.shape).copy()
    check_range("speed", sp, 0.0, 200.0, source=src)
    if closed and px.size >= 2 and np.hypot(px[-1] - px[0], py[-1] - py[0]) > 1e-9:
        px, py, sp = np.append(px, px[0]), np.append(py, py[0]), np.append(sp, sp[0])
    elif closed:
        px[-1], py[-1], sp[-1] = px[0], py[0], sp[0]
    need = 4 if closed else 2
    if px.size < need:
        raise ValidationError(
            f"{src}: a{' closed' if closed else 'n open'} path needs at least {need - int(closed)} points, got {px.size - int(closed)}"
        )
    seg = np.hypot(np.diff(px), np.diff(py))
    if np.any(seg <= 1e-9):
        k = int(np.argmax(seg <= 1e-9))
        raise ValidationError(f"{src}: points {k} and {k + 1} coincide at ({px[k]:g}, {py[k]:g}); remove the repeat")
    s = np.concatenate([[0.0], np.cumsum(seg)])
    if closed:  # neighbours across the seam: the point before the first is the one before the repeated last
        xe, ye, se = np.r_[px[-2], px, px[1]], np.r_[py[-2], py, py[1]], np.r_[-seg[-1], s, s[-1] + seg[0]]
    else:
        xe, ye, se = np.r_[px[0], px, px[-1]], np.r_[py[0], py, py[-1]], np.r_[s[0], s, s[-1]]
    head = np.unwrap(np.arctan2(ye[2:] - ye[:-2], xe[2:] - xe[:-2]))
    if closed:
        he = np.r_[head[-2] - (head[-1] - head[0]), head, head[1] + (head[-1] - head[0])]
    else:
        he = np.r_[head[0], head, head[-1]]
    kappa = (he[2:] - he[:-2]) / (se[2:] - se[:-2])
    dtype = dtype or jnp.result_type(float)
    f = lambda a: jnp.asarray(a, dtype)  # noqa: E731
    return Path(f(s), f(px), f(py), f(head), f(kappa), f(sp), f(1.0 if closed else 0.0))


def graph_path(x, y, dy, d2y, speed=None) -> Path:
    """An open path along the graph ``Y = y(X)`` sampled at the increasing ``x`` [m] with the exact slope
    ``dy = y'(x)`` [-] and second derivative ``d2y = y''(x)`` [1/m] (any JAX arrays, so the path can depend
    on traced parameters, e.g. a lane width)::

        heading = atan(y'),  curvature = y'' / (1 + y'^2)^(3/2),
        s_{i+1} = s_i + (x_{i+1} - x_i) (sqrt(1 + y_i'^2) + sqrt(1 + y_{i+1}'^2)) / 2   (trapezoidal arc length)

    ``speed`` [m/s]: a target-speed profile at the samples (default none: 0).  Not validated (traceable):
    ``x`` must increase."""
    x = jnp.asarray(x)
    dtype = x.dtype
    y, dy, d2y = (jnp.asarray(a, dtype) for a in (y, dy, d2y))
    ds_dx = jnp.sqrt(1.0 + dy * dy)
    s = jnp.concatenate([jnp.zeros(1, dtype), jnp.cumsum(jnp.diff(x) * 0.5 * (ds_dx[1:] + ds_dx[:-1]))])
    sp = jnp.zeros_like(x) if speed is None else jnp.broadcast_to(jnp.asarray(speed, dtype), x.shape)
    return Path(s, x, y, jnp.arctan(dy), d2y / ds_dx**3, sp, jnp.asarray(0.0, dtype))


def straight(
    length: float, *, heading: float = 0.0, ds: float = 1.0, x0: float = 0.0, y0: float = 0.0, dtype=None
) -> Path:
    """An open straight path of ``length`` [m] from ``(x0, y0)`` along ``heading`` [rad], sampled every ``ds``."""
    check_range("length", length, 0.0, 1e7, lo_incl=False, source="straight")
    n = max(2, int(np.ceil(length / ds)) + 1)
    u = np.linspace(0.0, length, n)
    return make_path(x0 + u * np.cos(heading), y0 + u * np.sin(heading), dtype=dtype)


def circle(radius: float, *, n: int = 360, dtype=None) -> Path:
    """A closed circle of ``|radius|`` [m] centred on ``(0, radius)``, starting at the origin heading along
    ``+X``: counter-clockwise (left turns) for ``radius > 0``, clockwise for ``radius < 0``."""
    r = float(radius)
    if r == 0.0 or not np.isfinite(r):
        raise ValidationError(f"circle: radius = {r} must be finite and nonzero")
    th = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    return make_path(abs(r) * np.sin(th), r * (1.0 - np.cos(th)), closed=True, dtype=dtype)


def length(path: Path):
    """The path's length [m] (a closed path's lap length)."""
    return path.s[..., -1]


def _wrap_s(path: Path, s):
    """Stations of a closed path taken modulo its length; an open path's clipped to ``[0, length]``."""
    total = path.s[-1]
    return jnp.where(path.closed > 0.5, jnp.mod(s, total), jnp.clip(s, 0.0, total))


def sample(path: Path, s) -> Projection:
    """The path at stations ``s`` [m] (wrapped on a closed path, held beyond the ends of an open one):
    ``Projection`` with ``e_y = 0`` and the position in ``(x, y)`` as :func:`position` gives."""
    sw = _wrap_s(path, s)
    h = jnp.interp(sw, path.s, path.heading)
    k = jnp.interp(sw, path.s, path.curvature)
    v = jnp.interp(sw, path.s, path.speed)
    return Projection(sw, jnp.zeros_like(h), h, k, v)


def position(path: Path, s):
    """Ground ``(x, y)`` [m] of the path at stations ``s`` (linear between the samples)."""
    sw = _wrap_s(path, s)
    return jnp.interp(sw, path.s, path.x), jnp.interp(sw, path.s, path.y)


def project(path: Path, x, y, s_guess=None) -> Projection:
    """The nearest point of one path (leaves ``(N,)``; ``vmap`` for a fleet) to ``(x, y)`` [m] (module
    docstring); ``s_guess`` [m]: search only the :data:`WINDOW` segments around that station."""
    n_seg = path.s.shape[-1] - 1
    if s_guess is None or n_seg <= WINDOW:
        k = jnp.arange(n_seg)
    else:
        k0 = jnp.searchsorted(path.s, _wrap_s(path, s_guess), side="right") - 1
        k = k0 + jnp.arange(-WINDOW_BACK, WINDOW - WINDOW_BACK)
        k = jnp.where(path.closed > 0.5, jnp.mod(k, n_seg), jnp.clip(k, 0, n_seg - 1))
    x0, y0, x1, y1 = path.x[k], path.y[k], path.x[k + 1], path.y[k + 1]
    dx, dy = x1 - x0, y1 - y0
    seg2 = dx * dx + dy * dy
    t = jnp.clip(((x - x0) * dx + (y - y0) * dy) / seg2, 0.0, 1.0)
    qx, qy = x0 + t * dx, y0 + t * dy
    d2 = (x - qx) ** 2 + (y - qy) ** 2
    i = jnp.argmin(d2)
    ki, ti = k[i], t[i]
    lerp = lambda a: a[ki] + ti * (a[ki + 1] - a[ki])  # noqa: E731
    s = lerp(path.s)
    h = lerp(path.heading)
    e_y = jnp.cos(h) * (y - qy[i]) - jnp.sin(h) * (x - qx[i])
    return Projection(s, e_y, h, lerp(path.curvature), lerp(path.speed))


def heading_error(yaw, heading):
    """``wrap(yaw - heading)`` [rad] in ``[-pi, pi)``: positive when the vehicle points left of the path."""
    return wrap_angle(yaw - heading)
