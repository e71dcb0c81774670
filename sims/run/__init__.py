"""How a vehicle model is stepped: one private scan/substep core (:mod:`sims.run._scan`, the one record
schema) under every runner.

* :mod:`~sims.run.rollout`: one vehicle (or anything ``vmap`` maps it over), open or closed loop;
* :mod:`~sims.run.fleet`: fleets (``vmap`` over vehicles), Monte Carlo sampling, chunked :class:`FleetRun`;
* :mod:`~sims.run.chunked`: cache-sized vehicle blocks on CPU;
* :mod:`~sims.run.longrun`: long runs streamed to disk per chunk, resumable;
* :mod:`~sims.run.sharding`: the fleet over the local devices; :mod:`~sims.run.distributed`: over hosts.

Imports only :mod:`sims.vehicles`, :mod:`sims.drivers` and :mod:`jaxtire`.

Importing it changes nothing outside Python (no ``os.environ`` write, no JAX backend): on a CPU, JAX
then has one device.  To split fleets over every core from Python as the CLI does, call
:func:`use_host_devices` (one host device per core; ``JAXTIRE_HOST_DEVICES`` picks another count) or
:func:`tune_cpu` (a device count of your choice) before the first JAX computation.
"""

from sims.run._xla import backend_started, tune_cpu, use_host_devices

__all__ = ["backend_started", "tune_cpu", "use_host_devices"]
