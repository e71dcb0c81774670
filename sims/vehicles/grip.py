"""Peak of a tire's braking force curve: the slip an ABS aims at and the friction a stop can use.

:func:`peak_braking` finds the maximum of ``-Fx(kappa)`` over ``-1 <= kappa <= 0`` (pure longitudinal slip,
camber 0) of any jaxtire tire (:func:`jaxtire.tire.tire_forces`) at load ``fz`` on ``surface``: a grid of
:data:`N_COARSE` slips spaced geometrically from 1e-3 to 1, then a linear grid of :data:`N_FINE` points
between the coarse neighbours of the best one.  The peak slip is then known to within a fraction of a
coarse spacing (``(1000)^(1/(N_COARSE-1)) - 1`` ~ 10 % relative, refined to ~1 %), and the peak friction
to far better (the curve is flat at its top).  On a slippery surface the peak moves to a smaller slip:
``grip`` scales the friction, not the slip stiffness (for the bundled tire on the hatchback: ~0.15 dry,
0.045 on snow, 0.018 on ice).

The search is a fixed grid (no iteration), so it vectorises and runs under ``jit``; the returned slip has
zero gradient with respect to the tire (an ``argmax``), the friction the tire's own gradient at that slip.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxtire.tire import tire_forces

N_COARSE = 48
N_FINE = 17
#: The grids as numpy constants (float64, cast on use), so every compiled program sees the same slips to the
#: last bit (a grid computed in-graph may round differently in two programs).
_COARSE = np.geomspace(1e-3, 1.0, N_COARSE)
_FINE = np.stack(
    [np.linspace(_COARSE[max(i - 1, 0)], _COARSE[min(i + 1, N_COARSE - 1)], N_FINE) for i in range(N_COARSE)]
)


def peak_braking(tire, fz, surface=None, speed=20.0, driving: bool = False):
    """``(kappa_peak, mu_peak)``: the slip [-] (> 0, the braking slip magnitude) at which ``-Fx`` peaks and
    ``-Fx_peak / fz`` [-], for ``tire`` at load ``fz`` [N] > 0 on ``surface`` at ``speed`` [m/s] (module
    docstring).  ``fz`` and the surface fields may be batched (the result broadcasts like them).
    ``driving=True``: the same for the driving side, the peak of ``+Fx`` over ``0 <= kappa <= 1``."""
    fz = jnp.asarray(fz)
    if surface is not None:  # the slip grid goes on a leading axis: give fz the full batch shape first
        fz = jnp.broadcast_to(fz, jnp.broadcast_shapes(fz.shape, *(jnp.shape(f) for f in surface)))

    def force(k):  # braking slip magnitudes k (n, ...) on a leading axis -> -Fx (n, ...)
        sign = 1.0 if driving else -1.0
        return sign * tire_forces(tire, sign * k, 0.0, 0.0, fz, speed, surface).fx

    coarse = jnp.asarray(_COARSE, fz.dtype)
    fc = force(coarse.reshape((-1,) + (1,) * fz.ndim))
    i = jnp.argmax(fc, axis=0)
    fine = jnp.moveaxis(jnp.asarray(_FINE, fz.dtype)[i], -1, 0)  # (N_FINE, ...) the fine grid around the best
    ff = force(fine)
    j = jnp.argmax(ff, axis=0)[None]
    k_peak = jnp.take_along_axis(fine, j, axis=0)[0]
    f_peak = jnp.take_along_axis(ff, j, axis=0)[0]
    return k_peak, f_peak / jnp.maximum(fz, 1e-6)
