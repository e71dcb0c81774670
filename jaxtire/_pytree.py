"""The ``replace`` semantics every parameter pytree of :mod:`jaxtire` shares (written once).

``params.replace(**changes)`` returns a copy with some fields changed:

* an unknown field name raises :class:`~jaxtire.validation.ValidationError` (eagerly and under ``jit``);
* when every leaf (old and new) is concrete, the copy is rebuilt through the type's validated
  constructor, so a value outside its range raises naming field, value and range, and every
  leaf keeps the dtype of the original;
* when any leaf is a tracer (inside ``jit`` / ``vmap`` / ``grad``), the fields are swapped
  without validation (nothing raises inside ``jit``), concrete new values cast to the dtype of
  the leaf they replace; static fields (flags) are stored as given.

:meth:`jaxtire.params.MFParams.replace` has the traced behaviour always (no validation).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import jax.numpy as jnp

from jaxtire.validation import ValidationError, is_concrete


def replace_fields(
    obj,
    changes: Mapping[str, Any],
    fields: Sequence[str],
    build: Callable[[dict], Any],
    *,
    static: Sequence[str] = (),
    source: str = "params",
):
    """``obj`` with ``changes`` applied under the shared semantics (module docstring).

    ``fields``: the array fields; ``static``: the static (metadata) fields; ``build(values)``
    the validated constructor taking every field by name.
    """
    allowed = tuple(fields) + tuple(static)
    unknown = set(changes) - set(allowed)
    if unknown:
        raise ValidationError(f"{source}: unknown field(s) {sorted(unknown)}; allowed {allowed}")
    if is_concrete(obj) and is_concrete(dict(changes)):
        return build({**{f: getattr(obj, f) for f in allowed}, **changes})
    new = {
        k: v if k in static or not is_concrete(v) else jnp.asarray(v, jnp.result_type(getattr(obj, k)))
        for k, v in changes.items()
    }
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **new)
    return obj._replace(**new)


class ValidatedReplace:
    """Mixin: the shared ``replace`` for a frozen-dataclass params type (module docstring).

    The class names its static fields in ``_STATIC`` and implements ``_make(values, dtype)``, its
    validated constructor taking every field by name; the array fields share one dtype.
    """

    _STATIC: tuple[str, ...] = ()

    def _make(self, values: dict, dtype):  # pragma: no cover - every params type overrides it
        raise NotImplementedError

    def replace(self, **changes):
        """A copy with some fields changed: validated and dtype-preserving when concrete, a plain swap
        of leaves under ``jit`` (works with tracers); an unknown field raises."""
        static = type(self)._STATIC
        # the mixin is only ever mixed into dataclasses (module docstring), which mypy cannot see here
        fields = tuple(f.name for f in dataclasses.fields(cast(Any, self)) if f.name not in static)
        dtype = jnp.result_type(getattr(self, fields[0]))
        return replace_fields(
            self, changes, fields, lambda v: self._make(v, dtype), static=static, source=type(self).__name__
        )
