"""Model predictions, the stage loss and the stage / fleet programs (pure functions of arrays).

Loss of one stage (the weighted, peak-normalised mean squared error)::

    L = sum_channels  sum_i w_i (F_model,i - F_meas,i)^2 / peak_c^2  /  sum_i w_i

over the rows ``i`` of that channel (:data:`jaxtire.fit.stages.CHANNELS`), ``peak_c = max
|F_meas|`` over those rows and ``w_i`` the row's weight (:func:`jaxtire.fit.data.row_weights`).

A stage program frees only ``stage.coefs``: they enter through
``u -> from_unconstrained(u, lower, upper) -> replace_coefficients(params, ...)`` (everything
else is a constant), so gradients reach only them, and :func:`jaxtire.fit.loop.minimize` runs the
optimiser.  The fleet program runs every stage of a plan in sequence, ``vmap``-ed over tires.
Predictions go through the one tire interface (:func:`jaxtire.tire.tire_forces`, pure-slip
curves for the pure stages).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.fit.data import row_masks
from jaxtire.fit.loop import dual_jit, minimize
from jaxtire.fit.stages import CHANNELS, Stage, stage_bounds
from jaxtire.fit.transforms import from_unconstrained, to_unconstrained
from jaxtire.tire import get_coefficient, replace_coefficients, tire_forces

__all__ = ["fleet_program", "fleet_rmse", "measured", "predict", "stage_loss", "stage_program"]


def predict(params, d: dict, combined: bool) -> dict:
    """``{"fx", "fy", "mz"}`` of the tire at the rows of ``d`` (pure-slip curves unless ``combined``)."""
    out = tire_forces(params, d["kappa"], d["alpha"], d["gamma"], d["fz"], combined=combined)
    return {"fx": out.fx, "fy": out.fy, "mz": out.mz}


def measured(d: dict, col: str, rows):
    """``(mask, values)``: the rows of ``rows`` where channel ``col`` was measured (finite; NaN = not
    measured) and the channel with unmeasured entries replaced by 0 (so no NaN reaches a gradient)."""
    ok = jnp.isfinite(d[col])
    return rows & ok, jnp.where(ok, d[col], 0.0)


def stage_loss(params, d: dict, stage: Stage):
    """Weighted peak-normalised MSE summed over the stage's channels (module docstring)."""
    pred = predict(params, d, stage.combined)
    masks = row_masks(d["kappa"], d["alpha"])
    loss: jax.Array | float = 0.0
    for ch in stage.channels:
        col, rows = CHANNELS[ch]
        m, meas = measured(d, col, masks[rows])
        w = jnp.where(m, d["w"], 0.0)
        peak = jnp.max(jnp.where(m, jnp.abs(meas), 0.0))
        r = (pred[col] - meas) / jnp.where(peak > 0, peak, 1.0)
        loss = loss + jnp.sum(w * r * r) / jnp.maximum(jnp.sum(w), 1e-300)
    return loss


def stage_program(params, d: dict, *, stage: Stage, bounds: tuple, n_iter: int, method: str, learning_rate: float):
    """One fitting stage as a pure function of arrays (jit / vmap friendly).

    Returns ``(fitted params, loss at the start, final loss, loss history (n_iter,))``."""
    bd = dict(bounds)
    lo = np.array([bd[k][0] for k in stage.coefs])
    hi = np.array([bd[k][1] for k in stage.coefs])

    def unpack(u):
        x = from_unconstrained(u, lo, hi)
        return replace_coefficients(params, {k: x[i] for i, k in enumerate(stage.coefs)})

    u0 = to_unconstrained(jnp.stack([get_coefficient(params, k) for k in stage.coefs]), lo, hi)
    res = minimize(
        lambda u: stage_loss(unpack(u), d, stage), u0, method=method, n_iter=n_iter, learning_rate=learning_rate
    )
    return unpack(res.params), res.losses[0], res.loss, res.losses


def fleet_program(params, d: dict, *, plan: tuple, bounds: tuple, n_iter: int, method: str, learning_rate: float):
    """Every stage of ``plan`` in sequence, ``vmap``-ed over the leading (tire) axis: one program.
    Returns ``(fitted params, final loss per stage (n_tires, n_stages))``."""

    def one(p, dd):
        finals = []
        for stage in plan:
            p, _, final, _ = stage_program(
                p,
                dd,
                stage=stage,
                bounds=stage_bounds(bounds, stage),
                n_iter=n_iter,
                method=method,
                learning_rate=learning_rate,
            )
            finals.append(final)
        return p, jnp.stack(finals)

    return jax.vmap(one)(params, d)


def fleet_rmse(params, d, channels):
    """Per-channel ``(RMSE, peak |measured|)`` of one tire (vmap over a fleet), as two stacked arrays."""
    masks = row_masks(d["kappa"], d["alpha"])
    rm, pk = [], []
    preds = {comb: predict(params, d, comb) for comb in (False, True)}
    for ch in channels:
        col, rows = CHANNELS[ch]
        m, meas = measured(d, col, masks[rows])
        res = jnp.where(m, preds[rows == "combined"][col] - meas, 0.0)
        rm.append(jnp.sqrt(jnp.sum(res**2) / jnp.maximum(jnp.sum(m), 1)))
        pk.append(jnp.max(jnp.where(m, jnp.abs(meas), 0.0)))
    return jnp.stack(rm), jnp.stack(pk)


#: Jitted programs (plain / fast-compiling; :func:`jaxtire.fit.loop.dual_jit`), created once.
stage_jit = dual_jit(stage_program, static_argnames=("stage", "bounds", "n_iter", "method", "learning_rate"))
fleet_jit = dual_jit(fleet_program, static_argnames=("plan", "bounds", "n_iter", "method", "learning_rate"))
predict_jit = dual_jit(predict, static_argnums=2)
