"""Per-field metadata of a parameter pytree: one table a pytree's construction, validation, ``replace`` and docs
are read from.

A *field table* maps each scalar field name of a ``NamedTuple`` parameter pytree to a :class:`Field`: its
default, SI unit and allowed range.  The helpers below are the only code that reads such a table:

* :func:`defaults`, :func:`ranges`, :func:`units`: the table's columns as dicts (the names modules publish,
  e.g. ``CHASSIS_DEFAULTS``);
* :func:`check`: every listed field of a pytree (or mapping) inside its range and finite in the stored dtype,
  tracers skipped (:func:`jaxtire.validation.check_range`: the error names the source, field, value and range);
* :func:`merge`: defaults filled in, an unknown name refused naming the allowed ones (construction);
* :func:`replace`: ``obj._replace(**changes)`` with the changed fields checked (a validated ``replace``);
* :func:`markdown`: the table as a Markdown table (the docs' parameter page is generated from it).

Tables in the project: :data:`sims.vehicles.params.CHASSIS_FIELDS`, :data:`sims.roads.contact.CONTACT_FIELDS`,
:data:`sims.vehicles.suspension.SUSPENSION_FIELDS`, :data:`sims.drivers.DRIVER_FIELDS` (ranges and units
only: a driver's defaults are its dataclass defaults).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from jaxtire.validation import ValidationError, check_range, format_range

__all__ = ["Field", "check", "defaults", "markdown", "merge", "ranges", "replace", "units"]


class Field(NamedTuple):
    """One scalar field: ``default`` (``None``: the pytree has its own), SI ``unit`` (``"-"`` unitless) and the
    allowed range ``[low, high]``, ``low_incl`` / ``high_incl`` whether a bound itself is allowed."""

    default: Any
    unit: str
    low: float = -math.inf
    high: float = math.inf
    low_incl: bool = True
    high_incl: bool = True

    @property
    def range(self) -> tuple[float, float, bool, bool]:
        """``(low, high, low_incl, high_incl)``, the arguments of :func:`jaxtire.validation.check_range`."""
        return (self.low, self.high, self.low_incl, self.high_incl)


def defaults(table: Mapping[str, Field]) -> dict[str, Any]:
    """``{name: default}`` of every field with a default."""
    return {k: f.default for k, f in table.items() if f.default is not None}


def ranges(table: Mapping[str, Field]) -> dict[str, tuple[float, float, bool, bool]]:
    """``{name: (low, high, low_incl, high_incl)}``."""
    return {k: f.range for k, f in table.items()}


def units(table: Mapping[str, Field]) -> dict[str, str]:
    """``{name: unit}``."""
    return {k: f.unit for k, f in table.items()}


def check(table: Mapping[str, Field], values, *, source: str, dtype=None, allow_inf: bool = False) -> None:
    """Every field of ``table`` present in ``values`` (a pytree with those attributes, or a mapping) inside its
    range and finite in ``dtype`` (scalars or per-vehicle arrays; traced values are skipped).  Raises
    :class:`~jaxtire.validation.ValidationError` naming ``source``, the field, the value and the range."""
    given = values if isinstance(values, Mapping) else {k: getattr(values, k) for k in table if hasattr(values, k)}
    for name, f in table.items():
        if name in given:
            check_range(name, given[name], *f.range, source=source, dtype=dtype, allow_inf=allow_inf)


def merge(table: Mapping[str, Field], values: Mapping[str, Any], *, source: str) -> dict[str, Any]:
    """``values`` over the table's defaults; a name the table does not list raises
    :class:`~jaxtire.validation.ValidationError` naming it and the allowed names."""
    unknown = sorted(set(values) - set(table))
    if unknown:
        raise ValidationError(f"{source}: unknown field(s) {unknown}; allowed {sorted(table)}")
    return {**defaults(table), **values}


def replace(obj, table: Mapping[str, Field], *, source: str | None = None, dtype=None, **changes):
    """``obj._replace(**changes)`` with every changed field of ``table`` checked first (:func:`check`): the
    validated ``replace`` of a parameter pytree.  Fields the table does not list are replaced unchecked."""
    check(table, changes, source=source or type(obj).__name__, dtype=dtype, allow_inf=True)
    return obj._replace(**changes)


def markdown(table: Mapping[str, Field]) -> str:
    """The table as Markdown: field, unit, default, allowed range (one row a field, the table's order)."""
    rows = ["| field | unit | default | allowed |", "|---|---|---|---|"]
    for name, f in table.items():
        default = "-" if f.default is None else f"{f.default:g}"
        rows.append(f"| `{name}` | {f.unit} | {default} | {format_range(*f.range)} |")
    return "\n".join(rows)
