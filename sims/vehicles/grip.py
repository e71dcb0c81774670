"""Peak of a tire's force curves: the slip an ABS aims at, the friction a stop, a launch or a corner can use.

:func:`peak_force` (braking, driving or lateral; :func:`peak_braking` the braking one as a friction) finds the maximum of a pure-slip force curve (e.g. ``-Fx(kappa)`` over ``-1 <= kappa <= 0``,
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


#: The force curves :func:`peak_force` searches: axis -> ``(s_kappa, s_alpha, w_x, w_y)``: the tire is evaluated at
#: ``kappa = s_kappa k``, ``alpha = s_alpha k`` for slip magnitudes ``k`` and the force is ``w_x Fx + w_y Fy``.
AXES = {"brake": (-1.0, 0.0, -1.0, 0.0), "drive": (1.0, 0.0, 1.0, 0.0), "lateral": (0.0, 1.0, 0.0, -1.0)}


def peak_force(tire, fz, surface=None, speed=20.0, axis="brake", pure: bool = False):
    """``(slip_peak, force_peak)``: the pure-slip peak of one force curve of ``tire`` at load ``fz`` [N] on
    ``surface`` at ``speed`` [m/s] (module docstring: a fixed coarse-then-fine grid of slip magnitudes in
    ``[1e-3, 1]``).  ``axis``: ``"brake"`` ``max -Fx(-kappa)``, ``"drive"`` ``max Fx(kappa)``, ``"lateral"``
    ``max -Fy(alpha)`` (slip angle [rad], positive alpha gives negative Fy).  The slip has zero gradient (an
    ``argmax``), the force the tire's own gradient at that slip (at the peak ``dF/dslip = 0``, so this is the
    total derivative of the peak force: the envelope theorem).  ``force_peak`` [N] > 0 for a loaded tire.
    ``axis`` may also be the four numbers of an :data:`AXES` entry (arrays, e.g. under ``vmap``).  ``pure``:
    the tire's pure-slip curves (``combined=False``: no combined-slip terms, whose square roots at an exact
    zero of the other slip can make a parameter gradient NaN)."""
    if isinstance(axis, str):
        if axis not in AXES:
            raise ValueError(f"peak_force: axis must be one of {tuple(AXES)}, got {axis!r}")
        axis = AXES[axis]
    s_k, s_a, w_x, w_y = axis
    fz = jnp.asarray(fz)
    if surface is not None:  # the slip grid goes on a leading axis: give fz the full batch shape first
        fz = jnp.broadcast_to(fz, jnp.broadcast_shapes(fz.shape, *(jnp.shape(f) for f in surface)))

    def force(k):  # slip magnitudes k (n, ...) on a leading axis -> the force (n, ...)
        f = tire_forces(tire, s_k * k, s_a * k, 0.0, fz, speed, surface, combined=not pure)
        return w_x * f.fx + w_y * f.fy

    coarse = jnp.asarray(_COARSE, fz.dtype)
    fc = force(coarse.reshape((-1,) + (1,) * fz.ndim))
    i = jnp.argmax(fc, axis=0)
    fine = jnp.moveaxis(jnp.asarray(_FINE, fz.dtype)[i], -1, 0)  # (N_FINE, ...) the fine grid around the best
    ff = force(fine)
    j = jnp.argmax(ff, axis=0)[None]
    return jnp.take_along_axis(fine, j, axis=0)[0], jnp.take_along_axis(ff, j, axis=0)[0]


def peak_braking(tire, fz, surface=None, speed=20.0, driving: bool = False):
    """``(kappa_peak, mu_peak)``: the slip [-] (> 0, the braking slip magnitude) at which ``-Fx`` peaks and
    ``-Fx_peak / fz`` [-], for ``tire`` at load ``fz`` [N] > 0 on ``surface`` at ``speed`` [m/s] (module
    docstring; :func:`peak_force` with ``axis="brake"``).  ``fz`` and the surface fields may be batched (the
    result broadcasts like them).  ``driving=True``: the same for the driving side (``axis="drive"``, the
    peak of ``+Fx`` over ``0 <= kappa <= 1``)."""
    k_peak, f_peak = peak_force(tire, fz, surface, speed, "drive" if driving else "brake")
    return k_peak, f_peak / jnp.maximum(jnp.asarray(fz), 1e-6)
