"""One entry point for every full tire model: :func:`tire_forces` dispatches on the params type.

Vehicle models call :func:`tire_forces` and so run on any tire: the dispatch
is static (Python ``isinstance`` on the pytree type, resolved at trace time),
so it costs nothing under ``jit`` and ``vmap``.

* :class:`jaxtire.params.MFParams` -> :func:`jaxtire.mf61.mf_forces` (MF 6.1 / 6.2, PAC2002);
* :class:`jaxtire.simple.SimpleParams` -> :func:`jaxtire.simple.simple_forces`.

Both share axes, units and signs (TYDEX / ISO-W; see :mod:`jaxtire.forces`).
"""

from __future__ import annotations

from jaxtire.forces import TireForces
from jaxtire.mf61 import mf_forces
from jaxtire.params import MFParams
from jaxtire.simple import SimpleParams, simple_forces

#: Params type -> force function.
MODELS = {MFParams: mf_forces, SimpleParams: simple_forces}


def tire_forces(tire_params, kappa, alpha, gamma=0.0, fz=None, vx=None, surface=None) -> TireForces:
    """Forces and moments of whichever tire model ``tire_params`` describes.

    Args and result as :func:`jaxtire.mf61.mf_forces`: ``kappa`` [-] (positive drives), ``alpha``
    [rad] (positive gives ``fy < 0``), ``gamma`` [rad], ``fz`` [N] (default: the model's nominal
    load), ``vx`` [m/s] or ``None``, ``surface`` a :class:`jaxtire.surfaces.Surface` or ``None``.
    Raises ``TypeError`` for an unknown params type.
    """
    for cls, fn in MODELS.items():
        if isinstance(tire_params, cls):
            return fn(tire_params, kappa, alpha, gamma, fz, vx, surface)
    known = ", ".join(c.__name__ for c in MODELS)
    raise TypeError(f"tire_forces: no tire model for params of type {type(tire_params).__name__}; known: {known}")
