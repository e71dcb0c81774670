"""Tire plumbing for the vehicle models; every tire equation stays in :mod:`jaxtire`.

* :func:`tire_forces` evaluates a tire through :func:`jaxtire.tire.tire_forces` (dispatch on the
  parameter pytree type: :class:`~jaxtire.params.MFParams` -> :func:`jaxtire.mf61.mf_forces`,
  :class:`~jaxtire.simple.SimpleParams` -> :func:`jaxtire.simple.simple_forces`).
* :func:`scale_tire` applies a per-vehicle :class:`~sims.vehicles.params.TireScale` to a shared base
  tire inside the vmapped step (only the few scaled leaves become batched).
* :func:`linear_stiffness` gives the small-slip stiffnesses ``Kx = dFx/dkappa`` [N] and
  ``Ky = -dFy/dalpha`` [N/rad] at ``kappa = alpha = 0``, which the integrators use to treat the stiff
  slip dynamics implicitly: MF through :func:`jaxtire.mf61.slip_stiffness` and
  :func:`jaxtire.mf61.cornering_stiffness`, any other model through a forward-mode derivative of its
  own force function at zero slip.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxtire.mf61 import cornering_stiffness, mf_forces, slip_stiffness
from jaxtire.params import MFParams

try:  # the simple model (jaxtire.simple)
    from jaxtire.simple import SimpleParams, simple_forces
except ImportError:  # pragma: no cover - older jaxtire
    SimpleParams, simple_forces = None, None

try:  # the common dispatcher (jaxtire.tire)
    from jaxtire.tire import tire_forces as _jaxtire_tire_forces
except ImportError:  # pragma: no cover - until jaxtire.tire lands
    _jaxtire_tire_forces = None


def tire_forces(tire, kappa, alpha, gamma, fz, vx, surface):
    """Steady-state tire forces of any jaxtire tire (TYDEX/ISO-W; see :func:`jaxtire.mf61.mf_forces`)."""
    if _jaxtire_tire_forces is not None:
        return _jaxtire_tire_forces(tire, kappa, alpha, gamma, fz, vx, surface)
    if isinstance(tire, MFParams):
        return mf_forces(tire, kappa, alpha, gamma, fz, vx, surface)
    if SimpleParams is not None and isinstance(tire, SimpleParams):
        return simple_forces(tire, kappa, alpha, gamma, fz, vx, surface)
    raise TypeError(f"unsupported tire parameters {type(tire).__name__}; expected MFParams or SimpleParams")


def is_supported_tire(tire) -> bool:
    """Whether ``tire`` is a tire pytree this package can evaluate."""
    return isinstance(tire, MFParams) or (SimpleParams is not None and isinstance(tire, SimpleParams))


def scale_tire(tire, scale):
    """``tire`` with its friction and stiffness scaled by ``scale`` (:class:`TireScale`).

    MF: ``LMUX *= mu_x``, ``LMUY *= mu_y``, ``LKX *= k_x``, ``LKY *= k_y``.  Simple model (peak force
    ``D Fz``, small-slip stiffness ``B C D Fz``): ``D *= mu`` and ``B *= k / mu`` so friction and
    stiffness scale independently, as with MF.  No validation (this runs inside ``jit``).
    """
    if isinstance(tire, MFParams):
        return tire.replace(LMUX=tire.LMUX * scale.mu_x, LMUY=tire.LMUY * scale.mu_y,
                            LKX=tire.LKX * scale.k_x, LKY=tire.LKY * scale.k_y)
    if SimpleParams is not None and isinstance(tire, SimpleParams):
        return dataclasses.replace(tire, Dx=tire.Dx * scale.mu_x, Dy=tire.Dy * scale.mu_y,
                                   Bx=tire.Bx * scale.k_x / scale.mu_x, By=tire.By * scale.k_y / scale.mu_y)
    raise TypeError(f"unsupported tire parameters {type(tire).__name__}")


def linear_stiffness(tire, fz, surface):
    """``(Kx, Ky)``: slip stiffness [N per unit slip] and cornering stiffness [N/rad], both >= 0."""
    if isinstance(tire, MFParams):
        return slip_stiffness(tire, fz, surface), jnp.abs(cornering_stiffness(tire, fz, 0.0, surface))
    zero = jnp.zeros_like(fz)
    one = jnp.ones_like(fz)
    _, kx = jax.jvp(lambda k: tire_forces(tire, k, zero, 0.0, fz, None, surface).fx, (zero,), (one,))
    _, ky = jax.jvp(lambda a: tire_forces(tire, zero, a, 0.0, fz, None, surface).fy, (zero,), (one,))
    return jnp.abs(kx), jnp.abs(ky)


def tire_radius(tire):
    """The tire's own unloaded radius [m] (``UNLOADED_RADIUS`` or ``radius``)."""
    if isinstance(tire, MFParams):
        return tire.UNLOADED_RADIUS
    return tire.radius
