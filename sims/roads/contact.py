"""The road under a vehicle: its grade, bank and the surface under each wheel.

A :class:`Contact` is what the vehicle step reads of the road at one instant
(:attr:`sims.vehicles.params.VehicleParams.contact`)::

    grade        [rad]  slope of the road along the car's heading (positive: the road rises ahead;
                        a 20 % grade is atan(0.2))
    bank         [rad]  cross slope (positive: the car's left side is higher)
    surface_ids  int32 (4,)  surface id under each wheel FL, FR, RL, RR, into the vehicle's surface table
                        (:class:`jaxtire.surfaces.SurfaceTable`; the single track runs each axle on the mean
                        of its two wheels' surfaces)

Grade and bank enter the step through the gravity components in the body frame
(:func:`sims.vehicles.core.gravity`: ``g_x = -g sin(grade)``, ``g_y = -g cos(grade) sin(bank)``), the surfaces
through the tires' friction and rolling resistance.  A contact is constant per vehicle (a car on a hill, a
fleet on several surfaces) unless the vehicle drives a road along its path (``VehicleParams.road``): then
:func:`sims.vehicles.road.on_road` writes the contact under the car at every step
(:func:`sims.roads.road.contact_at`).

A contact is a pytree of arrays: one contact shared by a fleet has scalar ``grade`` / ``bank`` and ``(4,)``
ids; one per vehicle has a leading vehicle axis on every leaf (:func:`contact_axes` tells which).
:data:`CONTACT_FIELDS` is its one table of defaults, units and ranges (construction, validation,
:func:`replace_contact`, the studies' ``road.grade`` / ``road.bank`` variations).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire import fields
from jaxtire.fields import Field
from jaxtire.validation import ValidationError, is_concrete

__all__ = [
    "CONTACT_FIELDS",
    "Contact",
    "broadcast_contact",
    "check_surface_ids",
    "contact_axes",
    "make_contact",
    "replace_contact",
    "validate_contact",
]


class Contact(NamedTuple):
    """The road under a vehicle (module docstring): ``grade``, ``bank`` [rad], ``surface_ids`` int32 (4,)
    FL, FR, RL, RR.  Build with :func:`make_contact` (validated)."""

    grade: Any
    bank: Any
    surface_ids: Any


#: The contact's scalar fields: name -> :class:`jaxtire.fields.Field` (default, unit, range).  The angles are
#: kept within +-0.8 rad (+-46 deg; a 100 % grade is 0.785 rad), where the planar models' small-attitude
#: load transfer still holds.
CONTACT_FIELDS: dict[str, Field] = {
    "grade": Field(0.0, "rad", -0.8, 0.8, True, True),
    "bank": Field(0.0, "rad", -0.8, 0.8, True, True),
}


def check_surface_ids(ids, n_surfaces: int, source: str = "Contact") -> None:
    """Raise :class:`~jaxtire.validation.ValidationError` unless ``ids`` are integers in ``[0, n_surfaces)``
    with a last axis of 4 (FL, FR, RL, RR); the error names the bad id and the table's range."""
    arr = np.asarray(ids)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValidationError(
            f"{source}: surface_ids must have a last axis of 4 (FL, FR, RL, RR), got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValidationError(f"{source}: surface_ids must be integers, got {arr.ravel()[:4]}")
    bad = (arr < 0) | (arr >= n_surfaces)
    if bad.any():
        raise ValidationError(
            f"{source}: surface id {int(arr[bad].ravel()[0])} is outside the surface table "
            f"(allowed 0 to {n_surfaces - 1} for a table of {n_surfaces})"
        )


def validate_contact(c: Contact, n_surfaces: int | None = None, source: str = "Contact", dtype=None) -> None:
    """Check a concrete (possibly batched) contact: the angles in :data:`CONTACT_FIELDS`' ranges and finite in
    ``dtype``, the surface ids in the table of ``n_surfaces`` entries (when given); tracers are skipped."""
    if not isinstance(c, Contact):
        raise ValidationError(f"{source}: contact must be a Contact, got {type(c).__name__}")
    if not is_concrete(c):
        return
    fields.check(CONTACT_FIELDS, c, source=source, dtype=dtype)
    if n_surfaces is not None:
        check_surface_ids(c.surface_ids, n_surfaces, source=source)


def make_contact(grade=0.0, bank=0.0, surface_ids=0, *, n_surfaces: int = 16, dtype=None) -> Contact:
    """A validated :class:`Contact`: ``grade``, ``bank`` [rad] (scalars or one per vehicle), ``surface_ids`` a
    scalar (every wheel; ``None``: 0), 4 values or ``(n, 4)`` (one row per vehicle), checked against a table of
    ``n_surfaces`` entries; the angles stored in ``dtype`` (default: the default float)."""
    ids = np.asarray(0 if surface_ids is None else surface_ids)
    ids = np.full(4, ids) if ids.ndim == 0 else ids
    dtype = dtype or jnp.result_type(float)
    raw = Contact(np.asarray(grade, float), np.asarray(bank, float), ids)
    validate_contact(raw, n_surfaces, dtype=dtype)
    return Contact(
        jnp.asarray(raw.grade, dtype), jnp.asarray(raw.bank, dtype), jnp.asarray(np.round(ids).astype(np.int32))
    )


def replace_contact(c: Contact, **changes) -> Contact:
    """``c`` with ``changes`` (``grade``, ``bank``: scalars or per-vehicle arrays [rad]; ``surface_ids`` int, last
    axis 4, checked against the surface table where the vehicle is validated), the angles checked against
    :data:`CONTACT_FIELDS` (an angle outside its range raises :class:`~jaxtire.validation.ValidationError` naming
    the field, the value and the range)."""
    ids = changes.pop("surface_ids", None)
    out = fields.replace(c, CONTACT_FIELDS, source="Contact", **changes)
    return out if ids is None else out._replace(surface_ids=jnp.asarray(ids, jnp.int32))


def contact_axes(c: Contact) -> Contact:
    """``vmap`` ``in_axes`` of a contact in a fleet: each leaf batched on axis 0 where it has a vehicle axis (a
    ``grade`` / ``bank`` of one dimension, ``surface_ids`` of two), shared otherwise."""
    ids = np.ndim(c.surface_ids)
    # the leaves are vmap axes (int / None), not parameters: _make skips the field types
    return Contact._make((0 if np.ndim(c.grade) else None, 0 if np.ndim(c.bank) else None, 0 if ids == 2 else None))


def broadcast_contact(c: Contact, n: int, **fields) -> Contact:
    """``c`` with one value per vehicle of a fleet of ``n`` on every leaf (shared leaves copied, per-vehicle ones,
    :func:`contact_axes`, kept) and ``fields`` (``grade``, ``bank``: a scalar or one per vehicle; ``surface_ids``:
    4 values or one row per vehicle) set, each broadcast to that per-vehicle shape in its leaf's dtype."""
    axes = contact_axes(c)
    out = Contact._make(
        x if ax == 0 else jnp.broadcast_to(jnp.asarray(x), (n,) + jnp.shape(x)) for x, ax in zip(c, axes, strict=True)
    )
    per = {k: jnp.asarray(getattr(out, k)) for k in fields}
    return out._replace(**{k: jnp.broadcast_to(jnp.asarray(v, per[k].dtype), per[k].shape) for k, v in fields.items()})
