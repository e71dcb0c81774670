"""A road whose grade, bank and surface change along its length, read per wheel by the vehicle step.

:class:`Road` describes a straight road along the ground ``X`` axis by breakpoints (stations)
``s_0 < s_1 < ... < s_{n-1}`` [m] (``s = X``)::

    grade(s), bank(s)   linear between the stations, held beyond the ends        [rad]
    surface(s, side)    piecewise constant: surface_left[k] / surface_right[k] on s_k <= s < s_{k+1}
                        (segment 0 also before s_0), left where the wheel's ground Y >= split_y

Grade is positive where the road rises towards ``+X``, bank positive where its left (``+Y``) side is
higher, as a constant :class:`~sims.roads.contact.Contact`'s ``grade`` / ``bank``.

:func:`contact_at` is what a car reads of the road (through :func:`sims.vehicles.road.on_road`, the vehicle
step's one hook): the surface under each wheel at its ground contact and the road's attitude at the CG's
station, turned into the car's heading: with ``theta``, ``phi`` the road's grade and bank, gravity per unit
mass in road axes is ``(-g sin(theta), -g cos(theta) sin(phi), g cos(theta) cos(phi))``; rotated by the
yaw ``psi`` into the body frame it is what :func:`sims.vehicles.core.gravity` gives for::

    sin(theta_e) = sin(theta) cos(psi) + cos(theta) sin(phi) sin(psi)
    phi_e        = atan2(cos(theta) sin(phi) cos(psi) - sin(theta) sin(psi), cos(theta) cos(phi))

(equal to ``theta``, ``phi`` when the car points along ``+X``).  The chassis is rigid and planar, so
its attitude is the road's at the CG; only the surfaces are per wheel.  With ``params.road = None`` (the
default) the vehicle's constant contact applies; a Road replaces it at every step.

Builders: :func:`surface_change` (one surface change at a station, e.g. dry -> ice) and
:func:`split_patch` (a split-mu patch under one side over part of the road).

The surface switch is a step in ``X`` (no gradient with respect to the stations); grade and bank are
piecewise linear, with finite gradients everywhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.numerics import sincos
from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError, check_choice, check_range
from sims.roads.contact import CONTACT_FIELDS, Contact

__all__ = [
    "Road",
    "attitude",
    "check_road",
    "contact_at",
    "make_road",
    "split_patch",
    "surface_at",
    "surface_change",
]


class Road(NamedTuple):
    """Stations ``station`` (n,) [m] strictly increasing; ``grade``, ``bank`` (n,) [rad] at the stations;
    ``surface_left``, ``surface_right`` (n,) int32 surface ids of the segment starting at each station;
    ``split_y`` [m] the ground ``Y`` of the line between the left and right surfaces.  Build with
    :func:`make_road` (validated).  Shared by every vehicle of a fleet (not batched)."""

    station: Any
    grade: Any
    bank: Any
    surface_left: Any
    surface_right: Any
    split_y: Any


#: Allowed range of the grade and bank [rad] (as a constant contact's, :data:`sims.roads.contact.CONTACT_FIELDS`).
ANGLE_RANGE = CONTACT_FIELDS["grade"].range[:2]


def make_road(station, grade=0.0, bank=0.0, surface_left=0, surface_right=None, split_y=0.0, *, dtype=None) -> Road:
    """A validated :class:`Road`; ``grade``, ``bank`` and the surface ids broadcast to the stations
    (``surface_right`` defaults to ``surface_left``).  Raises
    :class:`~jaxtire.validation.ValidationError` naming the field and the value: stations not finite or
    not strictly increasing, angles outside [-0.8, 0.8] rad, surface ids not integers >= 0 (checked
    against the surface table by :func:`check_road`)."""
    s = np.atleast_1d(np.asarray(station, np.float64))
    if s.ndim != 1 or not np.all(np.isfinite(s)) or np.any(np.diff(s) <= 0.0):
        raise ValidationError(f"Road: station must be a finite, strictly increasing 1-d sequence, got {s}")
    n = s.shape[0]
    if surface_right is None:
        surface_right = surface_left

    def per_station(name, v):
        a = np.asarray(v)
        try:
            return np.broadcast_to(a, (n,))
        except ValueError:
            raise ValidationError(
                f"Road: {name} must be a scalar or one value per station ({n}), got {a.shape}"
            ) from None

    angles = {k: per_station(k, v).astype(np.float64) for k, v in (("grade", grade), ("bank", bank))}
    for k, v in angles.items():
        check_range(k, v, *ANGLE_RANGE, source="Road")
    ids = {}
    for k, v in (("surface_left", surface_left), ("surface_right", surface_right)):
        a = per_station(k, v)
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)) or np.any(a < 0):
            raise ValidationError(f"Road: {k} must be integer surface ids >= 0, got {a}")
        ids[k] = jnp.asarray(np.round(a).astype(np.int32))
    split = float(check_range("split_y", split_y, -1e6, 1e6, source="Road"))
    dtype = dtype or jnp.result_type(float)
    return Road(
        jnp.asarray(s, dtype),
        jnp.asarray(angles["grade"], dtype),
        jnp.asarray(angles["bank"], dtype),
        ids["surface_left"],
        ids["surface_right"],
        jnp.asarray(split, dtype),
    )


def check_road(road: Road, n_surfaces: int, source: str = "Road") -> None:
    """Raise ``ValueError`` unless every surface id of a concrete ``road`` indexes a table of ``n_surfaces``; a
    height profile (:class:`sims.roads.profile.Profile`) is checked through its ``base`` road, if any."""
    if not hasattr(road, "surface_left"):  # a Profile: heights only, surfaces from its base road
        base = getattr(road, "base", None)
        if base is not None:
            check_road(base, n_surfaces, source)
        return
    for k in ("surface_left", "surface_right"):
        a = np.asarray(getattr(road, k))
        if np.any(a >= n_surfaces):
            raise ValidationError(
                f"{source}: {k} id {int(a.max())} is outside the surface table (allowed 0 to {n_surfaces - 1})"
            )


def surface_at(road: Road, x, y):
    """Surface id [int32] at ground ``(x, y)`` (module docstring; any matching shapes)."""
    n = road.station.shape[-1]
    k = jnp.clip(jnp.searchsorted(road.station, x, side="right") - 1, 0, n - 1)
    return jnp.where(y >= road.split_y, road.surface_left[k], road.surface_right[k])


def attitude(road: Road, x, yaw):
    """Grade and bank ``(theta_e, phi_e)`` [rad] along / across a car heading ``yaw`` at station ``x``."""
    theta = jnp.interp(x, road.station, road.grade)
    phi = jnp.interp(x, road.station, road.bank)
    st, ct = sincos(theta)
    sp, cp = sincos(phi)
    sy, cy = sincos(yaw)
    sin_e = jnp.clip(st * cy + ct * sp * sy, -0.999, 0.999)
    return jnp.arcsin(sin_e), jnp.arctan2(ct * sp * cy - st * sy, ct * cp)


def contact_at(road: Road, wheels_x, wheels_y, x, yaw, dtype) -> Contact:
    """The :class:`~sims.roads.contact.Contact` of a car on ``road``: the surface under each wheel at its ground
    position (``wheels_x``, ``wheels_y``: four per-vehicle values, FL, FR, RL, RR) and the road's grade and bank
    at the CG's station ``x`` [m] along / across its heading ``yaw`` [rad] (:func:`attitude`), in ``dtype``."""
    ids = jnp.stack([surface_at(road, xi, yi) for xi, yi in zip(wheels_x, wheels_y, strict=True)], axis=-1)
    grade, bank = attitude(road, x, yaw)
    return Contact(grade.astype(dtype), bank.astype(dtype), ids)


def _sid(s) -> int:
    return surface_id(s) if isinstance(s, str) else int(s)


def surface_change(station, before="asphalt_dry", after="ice", *, dtype=None) -> Road:
    """A flat road whose surface (both sides) changes from ``before`` to ``after`` (names or ids) at
    ``station`` [m]."""
    s = float(station)
    return make_road([s - 1e4, s], surface_left=[_sid(before), _sid(after)], dtype=dtype)


def split_patch(start, end, patch="ice", base="asphalt_dry", side="left", *, dtype=None) -> Road:
    """A flat road on ``base`` with a patch of ``patch`` (names or ids) under the ``side`` (``"left"`` or
    ``"right"``, of ``Y = 0``) wheels from station ``start`` to ``end`` [m]: split-mu braking along part of
    the road."""
    check_choice("side", side, ("left", "right"), source="split_patch")
    b, p = _sid(base), _sid(patch)
    st = [float(start) - 1e4, float(start), float(end)]
    on = [b, p, b]
    off = [b, b, b]
    left, right = (on, off) if side == "left" else (off, on)
    return make_road(st, surface_left=left, surface_right=right, dtype=dtype)
