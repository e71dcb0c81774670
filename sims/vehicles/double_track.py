"""Four-wheel (double-track) vehicle: planar chassis, four spinning wheels, load transfer, aero.

State :class:`~sims.vehicles.params.VehicleState` with ``omega`` of shape (4,) in the order FL, FR,
RL, RR; params :class:`~sims.vehicles.params.VehicleParams`; controls
:class:`~sims.vehicles.params.Controls` (``brake`` a scalar or one value per wheel).

Wheel ``i`` sits at ``x = (a, a, -b, -b)``, ``y = (t_f/2, -t_f/2, t_r/2, -t_r/2)`` from the CG.
Loads (quasi-static, from the filtered accelerations ``ax``, ``ay`` of the state)::

    Fz_FL = Ff/2 - dFf,  Fz_FR = Ff/2 + dFf,  Fz_RL = Fr/2 - dFr,  Fz_RR = Fr/2 + dFr
    (Ff, Fr: :func:`sims.vehicles.core.axle_loads`; dFf, dFr: :func:`sims.vehicles.core.lateral_transfer`)

while all four wheels are on the ground; when one lifts, its load is zero and its roll moment goes to
the others by statics (:func:`sims.vehicles.core.corner_loads`, equations there), and the car can ride
on its two outer wheels.  So ``sum Fz = m g + F_down`` in every state.  Steering: the command is the
mean road-wheel angle ``delta``; with ``ackermann = 1`` the inner wheel turns to
``atan(L tan(delta) / (L - t_f/2 tan(delta)))`` and the outer to ``atan(L tan(delta) / (L + t_f/2
tan(delta)))`` (both wheels' normals meet on the rear-axle line), blended linearly towards parallel
steer for ``0 < ackermann < 1``.  Drive: ``drive_split_front`` to the front axle, each axle an open
differential (half the axle torque per wheel); brakes: ``brake_bias_front`` of ``max_brake_torque`` to
the front, half per wheel.  Each wheel reads its own surface id and its tire's mounted side (``Chassis.tire_sides``: the
left tires +1, the right tires -1 by default, so an asymmetric tire runs straight).  Equations of motion and the
implicit treatment of the stiff slip dynamics: :mod:`sims.vehicles.core`.

``step(params, state, controls, dt)`` advances one step with semi-implicit Euler;
:func:`sims.vehicles.integrators.make_step` builds RK4 or sub-stepped variants.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtire import numerics  # vectorisable float32 tan/atan2
from jaxtire.surfaces import lookup
from sims.vehicles import core
from sims.vehicles.params import Controls, VehicleParams, VehicleState, wheel_layout


def ackermann_angles(delta, wheelbase, track, ackermann):
    """Left and right road-wheel angles [rad] for a mean steer ``delta`` (positive left)."""
    t = numerics.tan(delta)
    half = 0.5 * track * t
    left = numerics.atan2(wheelbase * t, wheelbase - half)
    right = numerics.atan2(wheelbase * t, wheelbase + half)
    return delta + ackermann * (left - delta), delta + ackermann * (right - delta)


def geometry(params: VehicleParams, state: VehicleState, controls: Controls) -> core.Geometry:
    """Wheel positions, steer angles, loads and surfaces of the four wheels (FL, FR, RL, RR)."""
    ch = params.chassis
    delta = jnp.clip(controls.steer, -ch.max_steer, ch.max_steer)
    dl, dr = ackermann_angles(delta, ch.cg_to_front + ch.cg_to_rear, ch.track_front, ch.ackermann)
    zero = jnp.zeros_like(dl)
    # max(., 0) only removes rounding below zero (corner_loads never goes negative otherwise)
    fz = [jnp.maximum(v, 0.0) for v in core.corner_loads(ch, params.contact, state.vx, state.ax, state.ay)]
    ids = jnp.asarray(params.contact.surface_ids)
    lay = wheel_layout(ch, 4)
    return core.Geometry(
        x=lay.x,
        y=lay.y,
        steer=[dl, dr, zero, zero],
        fz=fz,
        surface=[lookup(params.surfaces, ids[..., i]) for i in range(4)],
        radius=lay.radius,
        inertia=lay.inertia,
        drive=lay.drive,
        brake=lay.brake,
        tires_per_wheel=1,
        n_front=2,
        side=wheel_sides(ch),
    )


def wheel_sides(ch) -> list:
    """Mounted side of the four tires (``Chassis.tire_sides``, default +1 left, -1 right)."""
    return core.wheel_list(jnp.asarray(ch.tire_sides, jnp.asarray(ch.mass).dtype), 4)


def wheel_loads(params: VehicleParams, state: VehicleState):
    """The four vertical loads [N] (FL, FR, RL, RR) the tires see in ``state``."""
    fz = geometry(params, state, Controls()).fz
    return jnp.stack(jnp.broadcast_arrays(*fz), axis=-1)


MODEL = core.make_model("double_track", 4, geometry)
#: ``rates(params, state, controls, h)``, ``init_state(params, speed, **kw)``, ``step(params, state, controls, dt)``.
rates, init_state, step = MODEL.rates, MODEL.init_state, MODEL.step
