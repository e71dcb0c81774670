"""How a vehicle model is stepped: one private scan/substep core (:mod:`sims.run._scan`, the one record
schema) under every runner.

* :mod:`~sims.run.rollout`: one vehicle (or anything ``vmap`` maps it over), open or closed loop;
* :mod:`~sims.run.fleet`: fleets (``vmap`` over vehicles), Monte Carlo sampling, chunked :class:`FleetRun`;
* :mod:`~sims.run.chunked`: cache-sized vehicle blocks on CPU;
* :mod:`~sims.run.longrun`: long runs streamed to disk per chunk, resumable;
* :mod:`~sims.run.sharding`: the fleet over the local devices; :mod:`~sims.run.distributed`: over hosts.

Imports only :mod:`sims.vehicles`, :mod:`sims.drivers` and :mod:`jaxtire`.

Importing it (any runner, scenario or study does) gives JAX one CPU device per core before its backend
starts (:func:`sims.run._xla.use_host_devices`; ``JAXTIRE_HOST_DEVICES=1`` keeps one), so a fleet is split
over every core by default, in the Python API as in the CLI.
"""

from sims.run._xla import use_host_devices

use_host_devices()
