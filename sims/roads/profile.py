"""Road height profiles: the height, slope and normal of the road under each wheel, and their builders.

A :class:`Profile` is two wheel tracks (left and right of the ground line ``Y = split_y``) sampled
uniformly along the ground ``X`` axis: heights ``left[k]``, ``right[k]`` [m] at ``X_k = start + k
spacing``; between samples the height is linear, beyond the ends it is the end sample's (the builders
pad their profiles with zeros, so a road is flat outside its features)::

    h(X, Y) = (1 - f) H[k] + f H[k + 1],   u = (X - start) / spacing,  k = clip(floor(u), 0, n - 2),
    f = clip(u - k, 0, 1),   H = left where Y >= split_y else right

The slope ``dh/dX`` is the segment's and the road normal of a wheel track ``n = (-dh/dX, 0, 1) /
sqrt(1 + (dh/dX)^2)`` (ground axes; the profile has no cross slope within a track).  The reading is O(1)
per wheel (an index, no search).  ``base`` is an optional :class:`sims.roads.road.Road` (grade, bank and
surfaces along the road) the profile lies on; it is used as that road.

Profiles are pytrees (NamedTuple), built on a shared grid by :func:`flat` and summed with
:func:`combine`: :func:`bump` (a cosine bump, or a pothole with a negative height), :func:`kerb` (a
raised strip with cosine ramps), :func:`washboard` (a sinusoidal corrugation) and :func:`iso8608` (random
roughness of an ISO 8608 class, seeded).  :func:`batched` stacks profiles of equal size, one per vehicle,
so a fleet drives a different road each in one compiled program (``per_vehicle``: the fleet's
``vmap`` maps the road's leading axis).

ISO 8608 (ISO 8608:2016, "Mechanical vibration -- Road surface profiles -- Reporting of measured
data"): displacement PSD ``Gd(n) = Gd(n0) (n / n0)^-2``, ``n0 = 0.1`` cycles/m, class geometric means
``Gd(n0)`` = 16, 64, 256, 1024, 4096, 16384, 65536, 262144 x 1e-6 m^3 for classes A-H
(:data:`ISO8608_GD0`).  :func:`iso8608` draws each track as a sum of cosines on the harmonic grid
``n_k = k / (N spacing)`` within ``[n_min, n_max]`` with amplitudes ``sqrt(2 Gd(n_k) dn)`` and uniform random
phases (``numpy.random.default_rng(seed)``: reproducible per seed), left and right independent.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.validation import ValidationError, check_choice, check_range

#: ISO 8608 class -> ``Gd(n0)`` [m^3] (geometric mean of the class), ``n0 = 0.1`` cycles/m.
ISO8608_GD0: dict[str, float] = {c: 16e-6 * 4.0**i for i, c in enumerate("ABCDEFGH")}
#: Reference spatial frequency of ISO 8608 [cycles/m].
ISO8608_N0 = 0.1


class Profile(NamedTuple):
    """Heights of two wheel tracks on a uniform grid (module docstring): ``start`` [m], ``spacing`` [m],
    ``left``, ``right`` (n,) [m], ``split_y`` [m], ``base`` a :class:`sims.roads.road.Road` or ``None``.
    Build with :func:`flat` and the builders; a leading vehicle axis on every leaf: :func:`batched`."""

    start: Any
    spacing: Any
    left: Any
    right: Any
    split_y: Any = 0.0
    base: Any = None

    @property
    def per_vehicle(self) -> bool:
        """Whether the profile has a leading vehicle axis (:func:`batched`)."""
        return jnp.ndim(self.left) == 2


def _number(name: str, value, lo: float, hi: float, source: str, lo_incl: bool = True) -> float:
    """``value`` as one float in its range (:func:`~jaxtire.validation.check_range`: finite, a number); an
    array, list or any non-scalar is refused naming the field (a builder takes one number per feature)."""
    try:
        scalar = np.ndim(value) == 0
    except ValueError:  # a ragged list
        scalar = False
    if not scalar:
        raise ValidationError(f"{source}: {name} must be one number, got a {type(value).__name__}")
    return float(check_range(name, value, lo, hi, lo_incl=lo_incl, source=source))


def flat(length: float, spacing: float = 0.05, start: float = 0.0, *, split_y: float = 0.0, base=None, dtype=None):
    """A flat :class:`Profile` from ``start`` over ``length`` [m] sampled every ``spacing`` [m] (the grid the
    builders add their features to)."""
    length = _number("length", length, 0.0, 1e6, "Profile", lo_incl=False)
    spacing = _number("spacing", spacing, 1e-4, 100.0, "Profile")
    start = _number("start", start, -1e7, 1e7, "Profile")
    split_y = _number("split_y", split_y, -1e6, 1e6, "Profile")
    n = int(math.ceil(length / spacing)) + 1
    dtype = dtype or jnp.result_type(float)
    z = jnp.zeros(n, dtype)
    return Profile(jnp.asarray(start, dtype), jnp.asarray(spacing, dtype), z, z, jnp.asarray(split_y, dtype), base)


def stations(profile: Profile) -> np.ndarray:
    """The sample stations ``X_k`` [m] of a (single) profile, as numpy."""
    n = np.shape(profile.left)[-1]
    return float(profile.start) + float(profile.spacing) * np.arange(n)


def _tracks(side: str) -> tuple[float, float]:
    check_choice("side", side, ("both", "left", "right"), source="Profile")
    return (1.0 if side in ("both", "left") else 0.0), (1.0 if side in ("both", "right") else 0.0)


def _add(profile: Profile, shape: np.ndarray, side: str) -> Profile:
    wl, wr = _tracks(side)
    dt = jnp.asarray(profile.left).dtype
    return profile._replace(
        left=profile.left + jnp.asarray(wl * shape, dt), right=profile.right + jnp.asarray(wr * shape, dt)
    )


def bump(profile: Profile, at: float, height: float, length: float, side: str = "both") -> Profile:
    """``profile`` plus a cosine bump ``height (1 - cos(2 pi (X - at) / length)) / 2`` on ``[at, at + length]``
    [m] under the ``side`` tracks (``"both"``, ``"left"``, ``"right"``); a negative ``height`` is a pothole."""
    at = _number("at", at, -1e7, 1e7, "bump")
    height = _number("height", height, -1.0, 1.0, "bump")
    length = _number("length", length, 0.0, 1e3, "bump", lo_incl=False)
    x = stations(profile) - float(at)
    on = (x >= 0.0) & (x <= length)
    return _add(profile, np.where(on, 0.5 * height * (1.0 - np.cos(2.0 * np.pi * x / length)), 0.0), side)


def kerb(profile: Profile, at: float, height: float, length: float, ramp: float = 0.2, side: str = "left") -> Profile:
    """``profile`` plus a kerb: ``height`` [m] from ``at`` over ``length`` [m] reached by half-cosine ramps of
    ``ramp`` [m] at both ends, under the ``side`` tracks."""
    at = _number("at", at, -1e7, 1e7, "kerb")
    height = _number("height", height, -1.0, 1.0, "kerb")
    length = _number("length", length, 0.0, 1e4, "kerb", lo_incl=False)
    ramp = _number("ramp", ramp, 1e-3, 100.0, "kerb")
    x = stations(profile) - float(at)
    up = np.clip(x / ramp, 0.0, 1.0)
    down = np.clip((length - x) / ramp, 0.0, 1.0)
    shape = height * 0.5 * (1.0 - np.cos(np.pi * np.minimum(up, down)))
    return _add(profile, shape, side)


def washboard(
    profile: Profile, start: float, end: float, amplitude: float, wavelength: float, side: str = "both"
) -> Profile:
    """``profile`` plus a corrugation ``amplitude (1 - cos(2 pi (X - start) / wavelength)) / 2`` on
    ``[start, end]`` [m] (a whole number of waves from ``start``, so it ends at 0 when ``end - start`` is one)."""
    start = _number("start", start, -1e7, 1e7, "washboard")
    end = _number("end", end, start, 1e7, "washboard", lo_incl=False)
    amplitude = _number("amplitude", amplitude, -1.0, 1.0, "washboard")
    wavelength = _number("wavelength", wavelength, 1e-3, 1e3, "washboard")
    x = stations(profile) - float(start)
    on = (x >= 0.0) & (x <= float(end) - float(start))
    return _add(profile, np.where(on, 0.5 * amplitude * (1.0 - np.cos(2.0 * np.pi * x / wavelength)), 0.0), side)


def iso8608_psd(road_class: str, n):
    """ISO 8608 displacement PSD ``Gd(n) = Gd(n0) (n / n0)^-2`` [m^3] of class ``road_class`` at spatial
    frequencies ``n`` [cycles/m] (numpy)."""
    check_choice("road_class", road_class, tuple(ISO8608_GD0), source="iso8608")
    n = np.asarray(n, dtype=float)
    return ISO8608_GD0[road_class] * (n / ISO8608_N0) ** -2.0


def iso8608(
    profile: Profile,
    road_class: str = "C",
    seed: int = 0,
    n_min: float = 0.01,
    n_max: float | None = None,
    side: str = "both",
    fade: float = 5.0,
) -> Profile:
    """``profile`` plus random roughness of ISO 8608 class ``road_class`` (``"A"``-``"H"``), one independent
    realisation per track drawn from ``seed`` (module docstring; the same seed gives the same road).

    Spatial frequencies ``[n_min, n_max]`` [cycles/m] (default ``n_max`` the grid's Nyquist ``1 / (2
    spacing)``); the profile fades in and out over ``fade`` [m] at its ends (cosine taper) so the car
    enters it from the flat.  The variance of each track is ``int Gd dn`` over the band (less the taper)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValidationError(f"iso8608: seed = {seed!r} must be an integer")
    x = stations(profile)
    n_pts = x.shape[0]
    spacing = float(profile.spacing)
    nyq = 0.5 / spacing
    n_max = nyq if n_max is None else _number("n_max", n_max, 0.0, nyq, "iso8608", lo_incl=False)
    n_min = _number("n_min", n_min, 0.0, n_max, "iso8608", lo_incl=False)
    fade = _number("fade", fade, 0.0, 1e4, "iso8608")
    length = n_pts * spacing
    k = np.arange(1, n_pts // 2 + 1)
    nk = k / length
    band = (nk >= n_min) & (nk <= n_max)
    amp = np.where(band, np.sqrt(2.0 * iso8608_psd(road_class, nk) * (1.0 / length)), 0.0)
    rng = np.random.default_rng(seed)
    xr = x - x[0]
    taper = np.clip(np.minimum(xr, xr[-1] - xr) / max(fade, 1e-9), 0.0, 1.0)
    taper = 0.5 * (1.0 - np.cos(np.pi * taper))
    out = profile
    for track in ("left", "right"):
        phase = rng.uniform(0.0, 2.0 * np.pi, k.shape[0])
        # the cosine sum by an inverse real FFT (exactly the same sum at the grid points)
        spec = np.zeros(n_pts // 2 + 1, complex)
        spec[k] = 0.5 * n_pts * amp * np.exp(1j * phase)
        h = np.fft.irfft(spec, n_pts) * taper
        if side in ("both", track):
            out = _add(out, h, track)
        elif side not in ("left", "right"):
            check_choice("side", side, ("both", "left", "right"), source="iso8608")
    return out


def combine(*profiles: Profile) -> Profile:
    """The sum of profiles on the same grid (the first one's ``start``, ``spacing``, ``split_y``, ``base``)."""
    first = profiles[0]
    for p in profiles[1:]:
        if np.shape(p.left) != np.shape(first.left) or float(p.spacing) != float(first.spacing):
            raise ValidationError("combine: profiles must share their grid (flat() with the same arguments)")
    return first._replace(left=sum(p.left for p in profiles), right=sum(p.right for p in profiles))


def batched(profiles) -> Profile:
    """One profile per vehicle (equal grids sizes), stacked on a leading vehicle axis (``per_vehicle``);
    ``base`` roads must be all ``None``."""
    profiles = list(profiles)
    if any(p.base is not None for p in profiles):
        raise ValidationError("batched: profiles with a base road cannot be stacked; set base=None")
    shapes = {np.shape(p.left) for p in profiles}
    if len(shapes) != 1:
        raise ValidationError(f"batched: profiles must have the same number of samples, got {sorted(shapes)}")
    st = lambda f: jnp.stack([jnp.asarray(getattr(p, f)) for p in profiles])  # noqa: E731
    return Profile(st("start"), st("spacing"), st("left"), st("right"), st("split_y"), None)


def _sample(profile: Profile, x):
    u = (x - profile.start) / profile.spacing
    n = jnp.shape(profile.left)[-1]
    k = jnp.clip(jnp.floor(u), 0, n - 2).astype(jnp.int32)
    f = jnp.clip(u - k, 0.0, 1.0)
    return k, f


def heights_at(profile: Profile, x, y):
    """Road height [m] at ground ``(x, y)`` [m] (module docstring; any matching shapes)."""
    k, f = _sample(profile, x)
    track = jnp.where(y >= profile.split_y, 1.0, 0.0)
    hl = (1.0 - f) * profile.left[k] + f * profile.left[k + 1]
    hr = (1.0 - f) * profile.right[k] + f * profile.right[k + 1]
    return track * hl + (1.0 - track) * hr


def slope_at(profile: Profile, x, y):
    """Longitudinal slope ``dh/dX`` [-] of the track under ``(x, y)`` (the segment's; 0 beyond the ends)."""
    k, f = _sample(profile, x)
    u = (x - profile.start) / profile.spacing
    n = jnp.shape(profile.left)[-1]
    inside = (u >= 0.0) & (u <= n - 1)
    dl = profile.left[k + 1] - profile.left[k]
    dr = profile.right[k + 1] - profile.right[k]
    d = jnp.where(y >= profile.split_y, dl, dr)
    return jnp.where(inside, d / profile.spacing, 0.0) + 0.0 * f


def normal_at(profile: Profile, x, y):
    """Unit road normal ``(n_x, n_y, n_z)`` (ground axes) of the track under ``(x, y)``."""
    s = slope_at(profile, x, y)
    inv = 1.0 / jnp.sqrt(1.0 + s * s)
    return -s * inv, jnp.zeros_like(s), inv
