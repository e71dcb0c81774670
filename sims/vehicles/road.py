"""How a vehicle reads the road under it: the vehicle step's one hook to :mod:`sims.roads`.

:func:`on_road` (called by every model's step, :func:`sims.vehicles.core.make_model`, and the full vehicle)
returns the params with ``contact`` (:class:`sims.roads.contact.Contact`: grade, bank, surface per wheel)
read from the road the car drives (``params.road``, a :class:`sims.roads.road.Road` or a height profile's
base road) at the state's position: wheel ``i`` at ground ``(X_i, Y_i) = (X, Y) + Rot(psi) (x_i, y_i)``,
FL, FR, RL, RR at ``(a, t_f/2)``, ``(a, -t_f/2)``, ``(-b, t_r/2)``, ``(-b, -t_r/2)``
(:func:`wheel_positions`), the attitude at the CG (:func:`sims.roads.road.contact_at`).  Without a road
(``params.road = None``) the params' constant contact applies unchanged.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtire.numerics import sincos
from sims.roads.road import contact_at

__all__ = ["on_road", "wheel_positions"]


def wheel_positions(ch, state):
    """Ground ``(X_i, Y_i)`` [m] of the four contacts FL, FR, RL, RR (lists of per-vehicle values) of a car with
    chassis ``ch`` in ``state``."""
    a, b = ch.cg_to_front, ch.cg_to_rear
    xs = [a, a, -b, -b]
    ys = [0.5 * ch.track_front, -0.5 * ch.track_front, 0.5 * ch.track_rear, -0.5 * ch.track_rear]
    s, c = sincos(state.yaw)
    return [state.x + x * c - y * s for x, y in zip(xs, ys, strict=True)], [
        state.y + x * s + y * c for x, y in zip(xs, ys, strict=True)
    ]


def on_road(params, state):
    """``params`` with the contact (surfaces, grade, bank) of ``state``'s position on ``params.road`` (module
    docstring); ``params`` itself when it has no road."""
    road = getattr(params, "road", None)
    if road is None:
        return params
    xs, ys = wheel_positions(params.chassis, state)
    dtype = jnp.asarray(params.contact.grade).dtype
    return params._replace(contact=contact_at(road, xs, ys, state.x, state.yaw, dtype))
