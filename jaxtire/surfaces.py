"""Surface table: grip, rolling resistance and ploughing drag per surface id.

A surface is what the ground does to the tire (see ``shared/reference``):

* ``grip`` [-] multiplies the peak *and* sliding friction (``LMUX``/``LMUY`` in
  the Magic Formula model, the peak friction in the simple model).  Slip
  stiffnesses are untouched, so on a slippery surface the force peaks at a
  smaller slip, as on ice.
* ``rolling_resistance`` [-] multiplies the rolling-resistance moment ``My``.
* ``drag`` [N/N] ploughing resistance per newton of load; it opposes the
  contact-patch velocity in the contact plane, acts on the chassis (not the
  wheel spin), and fades linearly to zero below a low-speed floor.

The table holds at most :data:`MAX_SURFACES` = 16 entries.  Id 0 is the
reference surface the tire parameters describe (dry asphalt); any id beyond
the table (or negative) reads as id 0.

Grip values follow Wong, *Theory of Ground Vehicles* ch. 1 and Gillespie,
*Fundamentals of Vehicle Dynamics* ch. 10; rolling-resistance scales Wong's
coefficients relative to a hard road; drag is Wong ch. 2's order of magnitude.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire._math import safe_norm
from jaxtire.validation import ValidationError, check_fields, check_range, is_concrete

MAX_SURFACES = 16
GRIP_RANGE = (0.0, 5.0)
DRAG_RANGE = (0.0, 1.0)
ROLLING_RESISTANCE_RANGE = (0.0, 100.0)
#: Closed allowed range of each :class:`Surface` field.
RANGES: dict[str, tuple[float, float]] = {
    "grip": GRIP_RANGE,
    "rolling_resistance": ROLLING_RESISTANCE_RANGE,
    "drag": DRAG_RANGE,
}


class Surface(NamedTuple):
    """One surface (or a batch of them): ``grip`` [-], ``rolling_resistance`` [-], ``drag`` [N/N]."""

    grip: jax.Array | float = 1.0
    rolling_resistance: jax.Array | float = 1.0
    drag: jax.Array | float = 0.0


#: The reference surface: the tire exactly as its parameters describe it.
REFERENCE = Surface(1.0, 1.0, 0.0)

#: Reference presets in id order: name -> (grip, rolling_resistance, drag).
PRESETS: dict[str, Surface] = {
    "asphalt_dry": Surface(1.0, 1.0, 0.0),
    "concrete": Surface(0.95, 0.9, 0.0),
    "asphalt_wet": Surface(0.65, 1.1, 0.0),
    "cobbles": Surface(0.75, 1.6, 0.0),
    "gravel": Surface(0.6, 2.0, 0.02),
    "dirt": Surface(0.65, 1.5, 0.01),
    "grass": Surface(0.45, 2.5, 0.03),
    "sand": Surface(0.4, 3.0, 0.12),
    "snow": Surface(0.3, 1.5, 0.04),
    "ice": Surface(0.12, 0.8, 0.0),
    "kerb": Surface(0.9, 1.2, 0.0),
}

PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


class SurfaceTable(NamedTuple):
    """A validated table of surfaces; each field an array of shape ``(n,)``, ``n <= 16``."""

    grip: jax.Array
    rolling_resistance: jax.Array
    drag: jax.Array


def surface_id(name: str) -> int:
    """Id of a named preset in :func:`preset_table` (``"snow"`` -> 8)."""
    try:
        return PRESET_NAMES.index(name)
    except ValueError:
        raise ValueError(f"unknown surface {name!r}; known surfaces: {', '.join(PRESET_NAMES)}") from None


def preset(name: str) -> Surface:
    """The named preset as a :class:`Surface`."""
    return PRESETS[PRESET_NAMES[surface_id(name)]]


def make_surface(grip=1.0, rolling_resistance=1.0, drag=0.0, *, dtype=None, source: str = "Surface") -> Surface:
    """A validated :class:`Surface` of arrays (scalars or a batch that broadcasts).

    Raises :class:`~jaxtire.validation.ValidationError` (a ``ValueError``) naming the field,
    the value and the allowed range (:data:`RANGES`: grip in [0, 5], rolling resistance in
    [0, 100], drag in [0, 1] N/N; finite and not underflowing in a floating ``dtype``; batch shapes
    that broadcast: :func:`~jaxtire.validation.check_fields`).
    """
    values = dict(zip(Surface._fields, (grip, rolling_resistance, drag), strict=False))
    dtype = check_fields(values, RANGES, source=source, dtype=dtype)
    return Surface(**{k: jnp.asarray(v, dtype) for k, v in values.items()})


def check_surface(surface: Surface, source: str = "surface") -> None:
    """Validate a concrete :class:`Surface` handed straight to a force function (:data:`RANGES`, every element
    finite); tracers (inside ``jit``) are not checked.  :class:`~jaxtire.validation.ValidationError` naming
    the field otherwise."""
    if not isinstance(surface, (Surface, SurfaceTable)) or not is_concrete(surface):
        return
    for field, v in zip(Surface._fields, surface, strict=False):
        check_range(field, v, *RANGES[field], source=source)


def _entry(i: int, e) -> tuple[float, float, float]:
    src = f"surface entry {i}"
    if isinstance(e, str):
        e = preset(e)
    if isinstance(e, Mapping):
        unknown = set(e) - set(Surface._fields)
        if unknown:
            raise ValidationError(f"{src}: unknown field(s) {sorted(unknown)}; allowed {Surface._fields}")
        e = Surface(**e)
    elif not isinstance(e, Surface):
        if isinstance(e, (bytes, np.ndarray)) or not isinstance(e, Sequence) or not 1 <= len(e) <= 3:
            raise ValidationError(
                f"{src}: {e!r} is not a surface (a Surface, a mapping of {Surface._fields}, a "
                f"1- to 3-tuple or a preset name)"
            )
        e = Surface(*e)
    out = []
    for f, v in zip(Surface._fields, e, strict=False):
        arr = check_range(f, v, *RANGES[f], source=src)
        if arr.ndim != 0:
            raise ValidationError(
                f"{src}: {f} = {v!r} must be one number (shape {arr.shape}); a table entry is one surface "
                "(batch surfaces with make_surface)"
            )
        out.append(float(arr))
    grip, rolling_resistance, drag = out
    return grip, rolling_resistance, drag


def make_table(entries: Sequence) -> SurfaceTable:
    """Build a :class:`SurfaceTable` from entries (``Surface``, mapping, 3-tuple or preset name).

    Entry ``i`` is surface id ``i``; missing mapping fields take the reference
    values.  Every entry is validated (grip in [0, 5], drag in [0, 1] N/N,
    rolling resistance in [0, 100], at most 16 entries) before anything is
    built, so a bad list raises ``ValueError`` and leaves the caller's current
    table untouched.
    """
    if entries is None or isinstance(entries, (str, bytes, Mapping, Surface)) or not isinstance(entries, Iterable):
        raise ValidationError(
            f"make_table: entries = {entries!r} must be a sequence of surfaces "
            "(Surface, mapping, 3-tuple or preset name)"
        )
    entries = list(entries)
    if not 1 <= len(entries) <= MAX_SURFACES:
        raise ValidationError(f"a surface table holds 1 to {MAX_SURFACES} entries, got {len(entries)}")
    rows = np.array([_entry(i, e) for i, e in enumerate(entries)], dtype=np.float64)
    return SurfaceTable(*(jnp.asarray(rows[:, k]) for k in range(3)))


def preset_table() -> SurfaceTable:
    """The reference table of all presets, in :data:`PRESET_NAMES` order (id 0 = asphalt_dry)."""
    return make_table(list(PRESETS.values()))


def default_table() -> SurfaceTable:
    """A table holding only the reference surface."""
    return make_table([REFERENCE])


def lookup(table: SurfaceTable, ids) -> Surface:
    """The :class:`Surface` for integer ``ids`` (any shape); ids outside the table read as id 0."""
    ids = jnp.asarray(ids)
    n = jnp.shape(table.grip)[-1]
    idx = jnp.where((ids >= 0) & (ids < n), ids, 0)
    return Surface(*(jnp.take(f, idx, axis=-1) for f in table))


def mean(a: Surface, b: Surface) -> Surface:
    """Mean of two surfaces (the single-track model runs an axle on the mean of its two wheels)."""
    return Surface(*((x + y) * 0.5 for x, y in zip(a, b, strict=False)))


def ploughing_force(surface: Surface, fz, vcx, vcy, v_floor=0.5):
    """Ploughing drag on the chassis at the contact [N], in the contact plane.

    ``F = -drag * Fz * v / |v| * min(1, |v| / v_floor)``, i.e. a force of
    magnitude ``drag Fz`` opposing the contact-patch velocity ``(vcx, vcy)``
    [m/s], fading linearly to zero below ``v_floor`` [m/s] (a viscous force
    ``-drag Fz v / v_floor`` there, which never switches sign at standstill).
    Returns ``(fx, fy)``.
    """
    fz = jnp.maximum(fz, 0.0)
    speed = safe_norm(vcx, vcy)
    scale = -surface.drag * fz / jnp.maximum(speed, v_floor)
    return scale * vcx, scale * vcy
