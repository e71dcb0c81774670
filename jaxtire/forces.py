"""The output record shared by every tire model in :mod:`jaxtire`.

All forces and moments act on the wheel at the contact point, in the
TYDEX / ISO-W axis system (x forward along the wheel heading, y left, z up):

* ``fx`` [N]  longitudinal force, positive when driving (``kappa > 0``);
* ``fy`` [N]  lateral force, opposing lateral slip (negative for ``alpha > 0``);
* ``mz`` [N m] aligning torque about z, ``-t fy`` with pneumatic trail ``t``;
  with a positive trail it has the sign of ``alpha`` (``fy < 0`` for
  ``alpha > 0``), turning the wheel towards its direction of travel;
* ``mx`` [N m] overturning moment; ``my`` [N m] rolling-resistance moment,
  opposing the spin (negative when rolling forward);
* ``mux``, ``muy`` [-] peak friction coefficients in effect (after load,
  camber, pressure and surface grip);
* ``grip_utilisation`` [-] ``sqrt((fx / (mux fz))^2 + (fy / (muy fz))^2)``,
  1 at the friction limit;
* ``is_sliding`` bool, the operating point is past the peak of the curve.
"""

from __future__ import annotations

from typing import NamedTuple

import jax


class TireForces(NamedTuple):
    fx: jax.Array
    fy: jax.Array
    mz: jax.Array
    mx: jax.Array
    my: jax.Array
    mux: jax.Array
    muy: jax.Array
    grip_utilisation: jax.Array
    is_sliding: jax.Array
