"""Where a fleet runs: one :class:`Placement`, read by every fleet runner of :mod:`sims.run`.

===========  ==========  =============================================================================
field        default     meaning
===========  ==========  =============================================================================
``devices``  ``None``    ``None``: every local device of the default backend (of ``jax.default_device``
                         when one is set); an integer ``k``: the first ``k`` of them; or a sequence of
                         devices.  With several, the fleet is padded to a multiple of their count, split
                         along its vehicle axis and each device runs the one-device program on its rows
                         (:mod:`sims.run.mesh`): the results are bitwise those of one device.
``block``    ``"auto"``  vehicles per cache-sized block of one device's program (``lax.map`` over blocks,
                         :mod:`sims.run.chunked`): ``"auto"`` :func:`default_block` (:data:`CPU_BLOCK` on a
                         CPU, one batch on an accelerator), ``None`` one batch, or an integer >= 1.
``hosts``    ``False``   ``False``: this process's devices (``devices``); ``True``: every device of every
                         process after :func:`sims.run.distributed.initialize`, one global mesh grouped by
                         process (``devices`` must be ``None``); each process makes the same call with the
                         whole fleet and :func:`~sims.run.fleet.fleet_rollout` returns the whole result on
                         every process, equal to the one-process run.
===========  ==========  =============================================================================

The runners (:func:`~sims.run.fleet.fleet_rollout`, :class:`~sims.run.fleet.FleetRun`,
:func:`~sims.run.longrun.long_run`) take a placement, or its fields as keywords, beside their
:class:`~sims.run.spec.RunSpec`::

    fleet_rollout(fleet, state0, driver, 400, RunSpec(dt=0.005), placement=Placement(devices=2))
    fleet_rollout(fleet, state0, driver, 400, dt=0.005, devices=2)        # the same

A placement is hashable and static.  Several hosts: ``fleet_rollout(..., hosts=True)`` gathers the whole result
on every process; :func:`sims.run.distributed.monte_carlo` runs the same program with ``hosts=True``'s mesh and
writes each process's rows to its own file instead (no process holds the whole result).  The chunked runners
(:class:`~sims.run.fleet.FleetRun`, :func:`~sims.run.longrun.long_run`) run on one process's devices.  On a
CPU, JAX has several host devices only when asked before it starts (:func:`sims.run.use_host_devices`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
from jax.sharding import Mesh

from jaxtire.validation import ValidationError, check_int
from sims.run.mesh import device_mesh

__all__ = ["CPU_BLOCK", "Placement", "default_block", "placement", "whole_or_fields"]

#: Vehicles per cache-sized block on CPU (see :mod:`sims.run.chunked`): ~2x faster than one batch at 1e5 vehicles.
CPU_BLOCK = 8192


def default_block() -> int | None:
    """:data:`CPU_BLOCK` on the CPU backend, ``None`` (one batch) on accelerators."""
    return CPU_BLOCK if jax.default_backend() == "cpu" else None


class Placement(NamedTuple):
    """Where the vehicles of a run go (the table of the module docstring); static and hashable.  Made by
    :func:`placement` (checked) or directly (checked where a runner takes it)."""

    devices: Any = None
    block: Any = "auto"
    hosts: bool = False

    def check(self, source: str = "run") -> Placement:
        """This placement with ``devices`` a tuple when a sequence, each field checked (the error names
        ``source``, the field and the allowed values)."""
        devices = self.devices
        if isinstance(devices, bool | str) or not (devices is None or isinstance(devices, int | Sequence)):
            raise ValidationError(
                f"{source}: devices must be None, an integer or a sequence of devices, got {devices!r}"
            )
        if isinstance(devices, int):
            check_int("devices", devices, 1, None, source=source)
        elif devices is not None:
            devices = tuple(devices)
            if not devices:
                raise ValidationError(f"{source}: devices is an empty sequence (give None for every local device)")
        if self.block not in (None, "auto"):
            check_int("block ('auto', None or an integer)", self.block, 1, None, source=source)
        if not isinstance(self.hosts, bool):
            raise ValidationError(f"{source}: hosts must be True or False, got {self.hosts!r}")
        if self.hosts and devices is not None:
            raise ValidationError(
                f"{source}: hosts=True runs on every device of every process; devices must be None, got {devices!r}"
            )
        return self._replace(devices=devices)

    def local(self, source: str = "run") -> Placement:
        """This placement, refused (naming ``source``) with ``hosts=True``: for the runners that run on this
        process's devices only (:class:`~sims.run.fleet.FleetRun`, :func:`~sims.run.longrun.long_run`)."""
        if self.hosts:
            raise ValidationError(
                f"{source}: hosts=True is for fleet_rollout and sims.run.distributed.monte_carlo; a chunked run "
                f"runs on this process's devices (hosts=False)"
            )
        return self

    def mesh(self, source: str = "run") -> Mesh | None:
        """The 1-D device mesh of ``devices`` (:func:`sims.run.mesh.device_mesh`), ``None`` for one device."""
        return device_mesh(self.devices, source=source)

    def block_size(self) -> int | None:
        """Vehicles per block: ``block``, :func:`default_block` for ``"auto"``."""
        return default_block() if self.block == "auto" else self.block


def whole_or_fields(cls, given, source: str, **fields):
    """The configuration pytree ``cls`` (a NamedTuple: :class:`Placement`, :class:`~sims.run.spec.RunSpec`) of a
    runner call: ``given`` itself, or one made of the keyword ``fields`` (not both; ``TypeError`` naming an
    unknown field or a ``given`` of another type).  Unchecked."""
    if given is not None:
        if fields:
            raise TypeError(f"{source}: give a {cls.__name__} or its fields ({sorted(fields)}), not both")
        if not isinstance(given, cls):
            raise TypeError(f"{source}: expected a {cls.__module__}.{cls.__name__}, got {type(given).__name__}")
        return given
    unknown = set(fields) - set(cls._fields)
    if unknown:
        raise TypeError(
            f"{source}() got unexpected keyword arguments {sorted(unknown)}; a {cls.__name__}'s fields are "
            f"{list(cls._fields)}"
        )
    return cls(**fields)


def placement(where: Placement | None = None, source: str = "run", **fields) -> Placement:
    """The checked :class:`Placement` of a runner call: ``where`` itself, or one made of the keyword ``fields``
    (``devices=...``, ``block=...``; not both; :func:`whole_or_fields`)."""
    return whole_or_fields(Placement, where, source, **fields).check(source)
