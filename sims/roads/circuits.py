"""Closed circuits: centreline, widths, race lines; the track-relative pose of a vehicle in JAX.

A :class:`Track` is a closed curve resampled at a uniform arc-length spacing ``ds`` (numpy at
construction, a pytree of arrays afterwards): points ``xy`` (N, 2) [m], arc length ``s`` (N,) [m], tangent
``heading`` (N,) [rad] and signed ``curvature`` (N,) [1/m] (positive turning left), total ``length``, the
drivable width to the left and right of the curve ``width_left`` / ``width_right`` (N,) [m] (so the edges
are ``xy + width_left n`` and ``xy - width_right n``, ``n = (-sin(heading), cos(heading))`` the left
normal), a scalar ``half_width`` [m] (the mean of the two; an observation scale for the RL envs),
``elevation`` (N,) [m] and ``banking`` (N,) [rad] (positive: the left side higher; zeros unless given).

Two constructions:

* :func:`make_track`: the RL built-ins from a few control points (a periodic centripetal Catmull-Rom
  spline, curvature by periodic central differences smoothed over ``smooth_curvature`` metres), constant
  width: ``"oval"`` (two 200 m straights, two 50 m-radius half circles, ~714 m, counter-clockwise) and
  ``"twisty"`` (a 1.6 km counter-clockwise club circuit with a 14 m hairpin, 10 m wide);
* :func:`make_circuit`: any densely sampled closed line (the racetrack database's 5 m spacing): a
  periodic cubic spline ``x(u), y(u)`` through the points (C2: continuous curvature) on the chord-length
  parameter ``u``, resampled at equal arc length; heading ``atan2(y', x')`` and curvature
  ``kappa = (x' y'' - y' x'') / (x'^2 + y'^2)^(3/2)`` from the spline's exact derivatives; widths,
  elevation and banking interpolated periodically (linear in ``u``).  ``smoothing`` > 0 [m] replaces the
  points first by a periodic Gaussian-weighted moving average over that length (for noisy GPS lines).

Files (:func:`read_csv`, :func:`load_circuit`, :func:`load_raceline`): the TUM racetrack-database CSV
format (github.com/TUMFTM/racetrack-database): a header ``# x_m,y_m,w_tr_right_m,w_tr_left_m`` (centrelines)
or ``# x_m,y_m`` (race lines), one point per line, the loop open (the last point does not repeat the
first).  Optional extra columns ``z_m`` (elevation) and ``banking_rad`` are read where the header names
them.  A malformed file raises :class:`jaxtire.validation.ValidationError` naming the file, the line and the
field.  The eight circuits of :data:`CIRCUITS` ship with the package (``sims/roads/data/tracks/``, LGPL
v3.0, see ``SOURCES.md`` there); :func:`get_track` accepts their names (any case), the built-ins, a path
of a file of that format, or a :class:`Track`.

Track-relative pose (:func:`track_pose`, :func:`project`): the nearest segment of the sampled curve to a
point, by brute force over all segments (vectorised) or, given the previous segment index as a hint, over a
window of ``2 window + 1`` segments around it.  It returns the arc length ``s`` of the projection in ``[0,
length)``, the signed lateral offset (positive left), the heading error ``yaw - heading`` wrapped to ``[-pi,
pi)`` and the segment index.  :func:`point_at`, :func:`curvature_at`, :func:`widths_at` interpolate at arc
lengths.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.constants import wrap_angle
from jaxtire.validation import ValidationError, read_regular_file

#: The folder of the shipped circuits (``tracks/<name>.csv``, ``racelines/<name>.csv``, LICENSE, SOURCES.md).
DATA_DIR = Path(__file__).resolve().parent / "data" / "tracks"

#: Circuits shipped with the package (TUM racetrack database, LGPL v3.0).
CIRCUITS = ("Monza", "Spa", "Silverstone", "Budapest", "Norisring", "Zandvoort", "Spielberg", "IMS")

#: Largest circuit file read [bytes].
MAX_FILE_BYTES = 16 << 20


class Track(NamedTuple):
    """A closed curve at uniform arc-length spacing with its widths (see the module docstring)."""

    xy: Any
    s: Any
    heading: Any
    curvature: Any
    length: Any
    half_width: Any
    ds: Any
    width_left: Any = None
    width_right: Any = None
    elevation: Any = None
    banking: Any = None

    @property
    def n(self) -> int:
        return int(np.shape(self.s)[-1])


#: Alias: a circuit is a :class:`Track`.
Circuit = Track


class TrackPose(NamedTuple):
    """``s`` [m] arc length in [0, length), ``lateral`` [m] offset (positive left), ``heading_error`` [rad]
    ``yaw - track heading`` in [-pi, pi), ``index`` int32 of the nearest segment."""

    s: Any
    lateral: Any
    heading_error: Any
    index: Any


def astype(track: Track, dtype) -> Track:
    """Every leaf of ``track`` as a JAX array of ``dtype``."""
    return jax.tree.map(lambda v: jnp.asarray(v, dtype), track)


def _periodic_interp(u_new, u_knots, values, period):
    """Linear interpolation of periodic ``values`` given at ``u_knots`` (increasing in [0, period))."""
    uk = np.concatenate([u_knots, [u_knots[0] + period]])
    vk = np.concatenate([values, values[:1]])
    return np.interp(np.mod(u_new, period), uk, vk)


def _finish(xy, heading, curvature, length, ds, wl, wr, z, bank, dtype) -> Track:
    dtype = dtype if dtype is not None else jnp.result_type(float)
    n = len(xy)
    s = np.arange(n) * ds
    half = 0.5 * float(np.mean(wl) + np.mean(wr))
    f = lambda v: jnp.asarray(v, dtype)  # noqa: E731
    return Track(f(xy), f(s), f(heading), f(curvature), f(length), f(half), f(ds), f(wl), f(wr), f(z), f(bank))


# --------------------------------------------------------------------------------------------------
# the RL built-ins (Catmull-Rom through control points)


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


def _check_points(p: np.ndarray, source: str) -> np.ndarray:
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 3:
        raise ValidationError(f"{source}: points must be a list of at least 3 (x, y) pairs, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValidationError(f"{source}: points must be finite")
    if np.allclose(p[0], p[-1]):
        p = p[:-1]
    seg = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    if np.any(seg < 1e-9):
        i = int(np.argmax(seg < 1e-9))
        raise ValidationError(f"{source}: consecutive points must differ (points {i} and {(i + 1) % len(p)})")
    return p


def make_track(
    points, half_width: float = 6.0, ds: float = 1.0, smooth: bool = True, smooth_curvature: float = 5.0, dtype=None
) -> Track:
    """A closed constant-width :class:`Track` through the (x, y) ``points`` [m] (the last point joins the
    first; do not repeat it), resampled every ``ds`` [m] (rounded so the spacing divides the length); the
    curvature is a periodic moving average over ``smooth_curvature`` [m] (0: raw finite differences).
    ``smooth=False`` keeps the polyline (for points that are already dense).

    Raises ``ValueError`` for fewer than 3 points, repeated consecutive points, a non-positive
    ``half_width`` or ``ds``."""
    p = _check_points(np.asarray(points, dtype=np.float64), "make_track")
    if not half_width > 0 or not ds > 0:
        raise ValidationError(f"make_track: half_width = {half_width} and ds = {ds} must be > 0")
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
    widths = np.full(n, float(half_width))
    return _finish(xy, heading, curvature, length, length / n, widths, widths, np.zeros(n), np.zeros(n), dtype)


# --------------------------------------------------------------------------------------------------
# dense closed lines (the racetrack database): periodic cubic spline


class _ClosedSpline(NamedTuple):
    """A periodic cubic spline ``(x(u), y(u))`` on the chord-length parameter and its arc-length table."""

    spline: Any  # scipy CubicSpline, values (n, 2)
    period: float
    u_dense: np.ndarray
    s_dense: np.ndarray
    u_knots: np.ndarray


def _closed_spline(p: np.ndarray) -> _ClosedSpline:
    # scipy is imported here, at construction only (numpy-side work, never traced)
    from scipy.interpolate import CubicSpline

    closed = np.vstack([p, p[:1]])
    chord = np.linalg.norm(np.diff(closed, axis=0), axis=1)
    u = np.concatenate([[0.0], np.cumsum(chord)])
    sp = CubicSpline(u, closed, bc_type="periodic")
    per = u[-1]
    ud = np.linspace(0.0, per, 16 * len(p) + 1)
    speed = np.linalg.norm(sp(ud, 1), axis=1)
    # arc length s(u) by the trapezoid rule on a 16x finer grid (error ~1e-6 relative on 5 m spacing)
    sd = np.concatenate([[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(ud))])
    return _ClosedSpline(sp, per, ud, sd, u[:-1])


def _gaussian_smooth_closed(p: np.ndarray, length: float) -> np.ndarray:
    """Periodic Gaussian-weighted moving average of the points over about ``length`` [m] (sigma = length / 2)."""
    seg = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    h = float(np.mean(seg))
    sigma = max(0.5 * length / h, 1e-9)
    half = int(np.ceil(3 * sigma))
    k = np.exp(-0.5 * (np.arange(-half, half + 1) / sigma) ** 2)
    k /= k.sum()
    idx = (np.arange(len(p))[:, None] + np.arange(-half, half + 1)[None, :]) % len(p)
    return np.einsum("ij,ijk->ik", np.broadcast_to(k, idx.shape), p[idx])


def make_circuit(
    points,
    width_right=None,
    width_left=None,
    *,
    ds: float = 2.0,
    elevation=None,
    banking=None,
    smoothing: float = 0.0,
    dtype=None,
    source: str = "make_circuit",
) -> Track:
    """A :class:`Track` through dense closed ``points`` (n, 2) [m] (periodic cubic spline, module docstring),
    resampled every ``ds`` [m] (rounded so the spacing divides the length), with per-point ``width_right``,
    ``width_left`` [m] (n,) (default 0: a line without width, e.g. a race line), ``elevation`` [m] and
    ``banking`` [rad] (n,) (default 0).  ``smoothing`` [m]: see the module docstring.

    Raises :class:`~jaxtire.validation.ValidationError` (naming ``source``) for fewer than 3 points,
    repeated consecutive points, non-finite values, negative widths, or a bad ``ds``."""
    p = np.asarray(points, dtype=np.float64)
    n0 = len(p) if p.ndim == 2 else 0

    def column(v, name, default=0.0):
        a = np.full(n0, default) if v is None else np.asarray(v, dtype=np.float64).reshape(-1)
        if a.shape != (n0,):
            raise ValidationError(f"{source}: {name} must have one value per point ({n0}), got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValidationError(f"{source}: {name} must be finite")
        return a

    cols = [column(width_right, "width_right"), column(width_left, "width_left")]
    cols += [column(elevation, "elevation"), column(banking, "banking")]
    for name, c in zip(("width_right", "width_left"), cols[:2], strict=True):
        if np.any(c < 0):
            i = int(np.argmax(c < 0))
            raise ValidationError(f"{source}: {name} = {c[i]} at point {i} is negative (allowed [0, inf))")
    if not (np.isfinite(ds) and ds > 0):
        raise ValidationError(f"{source}: ds = {ds} must be > 0 (allowed (0, inf))")
    if n0 >= 2 and np.allclose(p[0], p[-1]):
        p, cols = p[:-1], [c[:-1] for c in cols]
    p = _check_points(p, source)
    if smoothing > 0:
        p = _gaussian_smooth_closed(p, smoothing)
    sp = _closed_spline(p)
    length = float(sp.s_dense[-1])
    n = max(int(round(length / ds)), 8)
    h = length / n
    s = np.arange(n) * h
    u = np.interp(s, sp.s_dense, sp.u_dense)
    xy = sp.spline(u)
    d1, d2 = sp.spline(u, 1), sp.spline(u, 2)
    heading = np.arctan2(d1[:, 1], d1[:, 0])
    curvature = (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / np.hypot(d1[:, 0], d1[:, 1]) ** 3
    wr, wl, z, bank = (_periodic_interp(u, sp.u_knots, c, sp.period) for c in cols)
    return _finish(xy, heading, curvature, length, h, wl, wr, z, bank, dtype)


def resample(track: Track, n: int, dtype=None) -> Track:
    """``track`` through its own points (periodic spline, :func:`make_circuit`) at exactly ``n`` points
    (spacing ``length / n``): tracks of equal point counts stack into one fleet (:func:`stack`)."""
    f = lambda v: None if v is None else np.asarray(v, np.float64)  # noqa: E731

    def build(length: float) -> Track:
        return make_circuit(
            f(track.xy),
            f(track.width_right),
            f(track.width_left),
            ds=length / n,
            elevation=f(track.elevation),
            banking=f(track.banking),
            dtype=dtype,
            source="resample",
        )

    out = build(float(track.length))
    if out.n != n:  # the spline's length differs from the track's by a hair: pin the count
        out = build(float(out.length))
    return out


def stack(tracks) -> Track:
    """One :class:`Track` whose every leaf has a leading axis over ``tracks`` (equal point counts: :func:`resample`;
    each track's optional fields all given or all ``None``).  Raises
    :class:`~jaxtire.validation.ValidationError` for unequal point counts."""
    counts = sorted({t.n for t in tracks})
    if len(counts) != 1:
        raise ValidationError(f"stack: the tracks have {counts} points; resample them to one count first")
    return jax.tree.map(lambda *a: jnp.stack(a), *tracks)


# --------------------------------------------------------------------------------------------------
# files


class CircuitFile(NamedTuple):
    """The columns of a circuit file (numpy float64, one value per point): ``x``, ``y`` [m]; ``width_right``,
    ``width_left`` [m] (``None`` in a race-line file), ``elevation`` [m], ``banking`` [rad] (``None`` unless
    the header names ``z_m`` / ``banking_rad``)."""

    x: np.ndarray
    y: np.ndarray
    width_right: np.ndarray | None
    width_left: np.ndarray | None
    elevation: np.ndarray | None
    banking: np.ndarray | None


#: Header column -> CircuitFile field.
COLUMNS = {
    "x_m": "x",
    "y_m": "y",
    "w_tr_right_m": "width_right",
    "w_tr_left_m": "width_left",
    "z_m": "elevation",
    "banking_rad": "banking",
}
#: The plausible range of each column (a circuit within 10 000 km of its origin, widths up to 1 km, heights
#: within 10 km, banking within +-90 deg): a value outside is a corrupted file, refused naming line and field.
COLUMN_RANGES = {
    "x_m": (-1e7, 1e7),
    "y_m": (-1e7, 1e7),
    "w_tr_right_m": (0.0, 1e3),
    "w_tr_left_m": (0.0, 1e3),
    "z_m": (-1e4, 1e4),
    "banking_rad": (-1.5708, 1.5708),
}


def read_csv(path, *, widths: bool = True) -> CircuitFile:
    """Read a racetrack-database CSV (module docstring): ``widths=True`` a centreline file (columns ``x_m,
    y_m, w_tr_right_m, w_tr_left_m`` required), ``False`` a race line (``x_m, y_m``).  Blank lines and
    further ``#`` comment lines are skipped.  Raises :class:`~jaxtire.validation.ValidationError` naming
    the file, the line number and the field for a missing or unknown header column, a wrong number of
    fields, a value that is not a finite number or outside :data:`COLUMN_RANGES` (a negative width), or fewer
    than 3 points."""
    name = str(path)
    text = read_regular_file(path, MAX_FILE_BYTES, what="a circuit CSV file").decode("utf-8", errors="replace")
    lines = text.splitlines()
    header = None
    rows: list[list[float]] = []
    for ln, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if header is None:
                header = [c.strip() for c in line.lstrip("#").split(",")]
                unknown = [c for c in header if c not in COLUMNS]
                if unknown:
                    raise ValidationError(
                        f"{name}: line {ln}: unknown column {unknown[0]!r} in the header (allowed: {', '.join(COLUMNS)})"
                    )
                need = ["x_m", "y_m"] + (["w_tr_right_m", "w_tr_left_m"] if widths else [])
                missing = [c for c in need if c not in header]
                if missing:
                    raise ValidationError(
                        f"{name}: line {ln}: header lacks column {missing[0]!r} (a "
                        f"{'centreline' if widths else 'race-line'} file has {', '.join(need)})"
                    )
            continue
        if header is None:
            raise ValidationError(f"{name}: line {ln}: data before the header line '# x_m,y_m,...'")
        fields = line.split(",")
        if len(fields) != len(header):
            raise ValidationError(f"{name}: line {ln}: {len(fields)} fields, the header names {len(header)}")
        row = []
        for col, f in zip(header, fields, strict=True):
            try:
                v = float(f)
            except ValueError:
                raise ValidationError(f"{name}: line {ln}: field {col} = {f.strip()!r} is not a number") from None
            if not np.isfinite(v):
                raise ValidationError(f"{name}: line {ln}: field {col} = {f.strip()!r} is not finite")
            lo, hi = COLUMN_RANGES[col]
            if not lo <= v <= hi:
                what = "is negative" if col.startswith("w_tr") and v < 0 else "is outside the plausible range"
                raise ValidationError(f"{name}: line {ln}: field {col} = {v} {what} (allowed [{lo:g}, {hi:g}])")
            row.append(v)
        rows.append(row)
    if header is None:
        raise ValidationError(f"{name}: no header line '# x_m,y_m,...' (an empty file?)")
    if len(rows) < 3:
        raise ValidationError(f"{name}: {len(rows)} points; a closed circuit needs at least 3")
    data = np.asarray(rows, dtype=np.float64)
    got: dict[str, Any] = {COLUMNS[c]: data[:, i] for i, c in enumerate(header)}
    return CircuitFile(
        got["x"], got["y"], got.get("width_right"), got.get("width_left"), got.get("elevation"), got.get("banking")
    )


def circuit_path(name_or_path, kind: str = "tracks") -> Path:
    """The file of a shipped circuit (:data:`CIRCUITS`, any case; ``kind`` ``"tracks"`` or ``"racelines"``),
    or ``name_or_path`` itself when it is not a shipped name."""
    if isinstance(name_or_path, str | os.PathLike):
        key = str(name_or_path).lower()
        for c in CIRCUITS:
            if c.lower() == key:
                return DATA_DIR / kind / f"{c}.csv"
    return Path(name_or_path)


def load_circuit(name_or_path, *, ds: float = 2.0, smoothing: float = 0.0, dtype=None) -> Track:
    """The centreline :class:`Track` of a shipped circuit or of any file in the database format
    (:func:`read_csv`, :func:`make_circuit`), resampled every ``ds`` [m]."""
    path = circuit_path(name_or_path, "tracks")
    f = read_csv(path, widths=True)
    return make_circuit(
        np.stack([f.x, f.y], axis=1),
        f.width_right,
        f.width_left,
        ds=ds,
        elevation=f.elevation,
        banking=f.banking,
        smoothing=smoothing,
        dtype=dtype,
        source=str(path),
    )


def load_raceline(name_or_path, *, ds: float = 2.0, dtype=None, centreline: Track | None = None) -> Track:
    """The race line of a shipped circuit (``racelines/<name>.csv``) or of a race-line file, as a
    :class:`Track` resampled every ``ds`` [m].  With ``centreline`` (a :class:`Track`), its widths become the
    distances from the line to the centreline's edges (:func:`line_on_track`); otherwise 0."""
    path = circuit_path(name_or_path, "racelines")
    f = read_csv(path, widths=False)
    line = make_circuit(np.stack([f.x, f.y], axis=1), ds=ds, dtype=dtype, source=str(path))
    return line if centreline is None else line_on_track(line, centreline)


def line_on_track(line: Track, centreline: Track) -> Track:
    """``line`` with its widths, elevation and banking taken from ``centreline``: each point is projected on
    the centreline (lateral offset ``e``, positive left) and gets ``width_left = wl(s) - e``, ``width_right =
    wr(s) + e`` (negative where the line leaves the track)."""
    pts = jnp.asarray(line.xy)
    s, lat, _, _ = jax.vmap(lambda x, y: project(centreline, x, y))(pts[:, 0], pts[:, 1])
    wl, wr = widths_at(centreline, s)
    z = _interp_periodic(centreline, centreline.elevation, s)[0]
    b = _interp_periodic(centreline, centreline.banking, s)[0]
    half = 0.5 * (jnp.mean(wl - lat) + jnp.mean(wr + lat))
    return line._replace(width_left=wl - lat, width_right=wr + lat, elevation=z, banking=b, half_width=half)


# --------------------------------------------------------------------------------------------------
# the catalogue of tracks


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


#: Built-in synthetic tracks: name -> (points, kwargs of :func:`make_track`).
TRACKS: dict[str, tuple[Callable[[], np.ndarray], dict[str, Any]]] = {
    "oval": (oval_points, dict(half_width=6.0, ds=1.0, smooth=False)),
    "twisty": (twisty_points, dict(half_width=5.0, ds=1.0, smooth=True)),
}


def track_names() -> tuple[str, ...]:
    """Every name :func:`get_track` accepts: the built-ins and the shipped circuits."""
    return tuple(TRACKS) + CIRCUITS


def get_track(name, dtype=None, ds: float = 1.0) -> Track:
    """A built-in track (:data:`TRACKS`), a shipped circuit (:data:`CIRCUITS`, any case, resampled every
    ``ds`` [m]), the path of a centreline file in the database format, or a :class:`Track` as it is."""
    if isinstance(name, Track):
        return name
    if name in TRACKS:
        points, kw = TRACKS[name]
        return make_track(points(), dtype=dtype, **kw)
    key = str(name).lower()
    if any(c.lower() == key for c in CIRCUITS) or (isinstance(name, str | os.PathLike) and os.path.isfile(name)):
        return load_circuit(name, ds=ds, dtype=dtype)
    if looks_like_a_file(name):
        raise ValidationError(
            f"circuit file {os.fspath(name)!r} not found ({os.path.abspath(name)}); a track is a file, "
            f"or one of {', '.join(track_names())}"
        )
    raise ValidationError(f"unknown track {name!r}; allowed: {', '.join(track_names())} or a circuit CSV file")


def looks_like_a_file(name) -> bool:
    """Whether a track name is meant as a file: a path object, a name with a suffix (``.csv``) or a folder in it,
    or something that exists on disk (a missing file is then reported as missing, not as an unknown name)."""
    if isinstance(name, os.PathLike):
        return True
    if not isinstance(name, str):
        return False
    return bool(Path(name).suffix) or os.sep in name or "/" in name or os.path.exists(name)


# --------------------------------------------------------------------------------------------------
# JAX queries (pure, vmap-able; no Python loops over points)


def project(track: Track, x, y, hint=None, window: int | None = None):
    """Nearest point on the sampled curve (a closed polyline) to ``(x, y)`` [m]: ``(s, lateral, segment
    index, segment heading)`` as ``s`` [m] arc length, ``lateral`` [m] (positive left), int32 index,
    heading [rad].  With ``hint`` (a segment index) and ``window`` (Python int), only the segments ``hint -
    window .. hint + window`` are searched; otherwise all of them."""
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
    """Curvature [1/m] at arc length(s) ``s`` (linear interpolation, periodic)."""
    return _interp_periodic(track, track.curvature, s)[0]


def widths_at(track: Track, s):
    """``(width_left, width_right)`` [m] at arc length(s) ``s`` (linear interpolation, periodic); a track
    built without per-point widths gives ``half_width`` both sides."""
    if track.width_left is None or track.width_right is None:
        h = jnp.broadcast_to(track.half_width, jnp.shape(s))
        return h, h
    return _interp_periodic(track, track.width_left, s)[0], _interp_periodic(track, track.width_right, s)[0]


def point_at(track: Track, s):
    """``(x, y, heading)`` ([m], [m], [rad]) of the curve at arc length(s) ``s`` [m]; shape of ``s``."""
    _, i0, i1, w = _interp_periodic(track, track.curvature, s)
    p = track.xy[i0] * (1.0 - w)[..., None] + track.xy[i1] * w[..., None]
    h0 = track.heading[i0]
    heading = h0 + wrap_angle(track.heading[i1] - h0) * w
    return p[..., 0], p[..., 1], wrap_angle(heading)


def progress_delta(track: Track, s_new, s_old):
    """Signed arc length [m] travelled from ``s_old`` to ``s_new`` [m] (wrapped across the start line)."""
    half = 0.5 * track.length
    return jnp.mod(s_new - s_old + half, track.length) - half


def edges(track: Track):
    """``(left, right)`` edge points (N, 2) [m]: ``xy + width_left n``, ``xy - width_right n`` (``n`` the left
    normal)."""
    nrm = jnp.stack([-jnp.sin(track.heading), jnp.cos(track.heading)], axis=-1)
    wl, wr = widths_at(track, track.s)
    return track.xy + wl[:, None] * nrm, track.xy - wr[:, None] * nrm
