"""How a vehicle model is stepped: one private scan/substep core (:mod:`sims.run._scan`, the one record
schema) under every runner.

* :mod:`~sims.run.spec`: what a run is, one static :class:`~sims.run.spec.RunSpec` (``dt``, model, integrator,
  substeps, records, compiler options) that every runner below takes (or its fields as keywords);
* :mod:`~sims.run.placement`: where a fleet runs, one static :class:`~sims.run.placement.Placement` (devices,
  vehicle blocks) that the fleet runners take (or its fields as keywords);
* :mod:`~sims.run.rollout`: one vehicle (or anything ``vmap`` maps it over), open or closed loop;
* :mod:`~sims.run.fleet`: the fleet runner, ``fleet_rollout`` (one program; ``vmap`` over vehicles, split over
  the local devices by its placement) and the chunked :class:`~sims.run.fleet.FleetRun` (progress, early stop);
* :mod:`~sims.run.longrun`: ``FleetRun``'s chunks plus a checkpoint after each, streamed to disk, resumable;
* :mod:`~sims.run.distributed`: over hosts; :mod:`~sims.run.mesh`: the one placement of a fleet on devices;
* :mod:`~sims.run.chunked`: cache-sized vehicle blocks on CPU; :mod:`~sims.run.sharding`: any other
  per-vehicle function over the local devices.

Imports only :mod:`sims.vehicles`, :mod:`sims.drivers` and :mod:`jaxtire`.

Importing it changes nothing outside Python (no ``os.environ`` write, no JAX backend): on a CPU, JAX
then has one device.  To split fleets over every core from Python as the CLI does, call
:func:`use_host_devices` (one host device per core; ``JAXTIRE_HOST_DEVICES`` picks another count) or
:func:`tune_cpu` (a device count of your choice) before the first JAX computation.
"""

from sims.run._xla import backend_started, tune_cpu, use_host_devices

__all__ = ["backend_started", "tune_cpu", "use_host_devices"]
