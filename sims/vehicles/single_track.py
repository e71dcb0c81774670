"""Single-track (bicycle) vehicle with nonlinear jaxtire tires, one spinning wheel state per axle.

The two wheels of an axle are merged on the centre line: the axle carries the axle load
(:func:`sims.vehicles.core.axle_loads`, with downforce and longitudinal load transfer; no lateral
transfer), evaluated as *two* identical tires at half the axle load each (so the tire's load
sensitivity acts as on the real car), on the mean of its two wheels' surfaces
(:func:`jaxtire.surfaces.mean` of the FL/FR and RL/RR ids).  ``omega`` has shape (2,) (front, rear) and
stands for both wheels of the axle (inertia ``2 I_w``, torque of both tires).  The steer command is the
front road-wheel angle.  Same params, state and controls types as :mod:`sims.vehicles.double_track`
(``track_*``, ``roll_stiffness_front`` and ``ackermann`` are unused); equations of motion and implicit
treatment of the slip dynamics: :mod:`sims.vehicles.core`.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtire.surfaces import lookup, mean
from sims.vehicles import core
from sims.vehicles.params import Controls, VehicleParams, VehicleState, wheel_layout


def axle_surfaces(params: VehicleParams) -> list:
    """Front and rear surfaces: the mean (:func:`jaxtire.surfaces.mean`) of each axle's two wheels."""
    ids = jnp.asarray(params.contact.surface_ids)
    s = [lookup(params.surfaces, ids[..., i]) for i in range(4)]
    return [mean(s[0], s[1]), mean(s[2], s[3])]


def geometry(params: VehicleParams, state: VehicleState, controls: Controls) -> core.Geometry:
    """Axle positions, steer, per-tire loads and surfaces of the two axles (front, rear)."""
    ch = params.chassis
    delta = jnp.clip(controls.steer, -ch.max_steer, ch.max_steer)
    ff, fr = core.clamped_axle_loads(ch, params.contact, state.vx, state.ax)
    zero = jnp.zeros_like(delta)
    lay = wheel_layout(ch, 2)
    return core.Geometry(
        x=lay.x,
        y=[zero, zero],
        steer=[delta, zero],
        fz=[jnp.maximum(0.5 * ff, 0.0), jnp.maximum(0.5 * fr, 0.0)],
        surface=axle_surfaces(params),
        radius=lay.radius,
        inertia=lay.inertia,
        drive=lay.drive,
        brake=lay.brake,
        tires_per_wheel=2,
        n_front=1,
    )


MODEL = core.make_model("single_track", 2, geometry)
#: ``rates(params, state, controls, h)``, ``init_state(params, speed, **kw)``, ``step(params, state, controls, dt)``.
rates, init_state, step = MODEL.rates, MODEL.init_state, MODEL.step
