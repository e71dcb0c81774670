"""The array namespace an evaluation runs in: ``jax.numpy``, or ``numpy`` for data that is all on the host.

jaxtire's equations are written once, against ``xp = namespace(params, inputs...)`` (``xp.where``,
``xp.minimum``, ...) and the helpers of :mod:`jaxtire._math` / :mod:`jaxtire._trig`, which choose the same way
from their own arguments:

* any JAX array or tracer among the arguments (under ``jit``, ``grad``, ``vmap``, or an eager call with
  :func:`jaxtire.make_params` / :func:`jaxtire.load_tir` params) selects ``jax.numpy``: the traced and compiled
  programs are exactly those of plain ``jnp`` code;
* no JAX array, and at least one NumPy array or NumPy scalar (params whose leaves are NumPy arrays, NumPy
  inputs) selects ``numpy``: the same lines run eagerly on the host, nothing is traced or compiled
  (:func:`jaxtire.load_tir` checks a tire this way in milliseconds, where a compile takes 1-2 s).

Python numbers are neutral: they follow the other arguments, and alone keep ``jax.numpy``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def namespace(*args: Any) -> ModuleType:
    """``numpy`` when no leaf of ``args`` (pytrees: params, surfaces) is a JAX array or tracer and at least one
    is a NumPy array or scalar; ``jax.numpy`` otherwise (also for Python numbers alone)."""
    host = False
    for leaf in jax.tree.leaves(args):
        if isinstance(leaf, jax.Array):  # concrete arrays and tracers
            return jnp
        host = host or isinstance(leaf, (np.ndarray, np.generic))
    return np if host else jnp
