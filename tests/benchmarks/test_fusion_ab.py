"""Loop structure of the compiled MF 6.1 tire (issue 18, ``benchmarks/fusion_ab.py``).

* The mirrored-tyre path compiles to no more loops than the plain one. Before the fix the mirrored output
  ``mirror * fy`` and Mz both consumed the unmirrored ``fy``, and XLA:CPU recomputed Fy's whole loop for each:
  20 loop fusions against 15 and ~1.4x the CPU time per evaluation.
* Shared cheap subexpressions (``sin(gamma*)``, the low-speed weight, ``Kya``, ``tan(alpha)``) are computed once
  (``jaxtire._math.materialise``): 1 894 fused operations per element before (each recomputed in up to 5 loops),
  1 550 after, ~17 % less CPU time (``PERF_NOTES.md``, session 5).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxtire
from benchmarks.fusion_ab import fused_op_count, fusion_count
from jaxtire.slip import slip_angle, slip_ratio


@functools.cache
def _compiled_text(with_side: bool) -> str:
    p = jaxtire.default_tire(dtype=jnp.float32)
    rng = np.random.default_rng(0)
    n = 256
    vx = jnp.asarray(rng.uniform(5, 30, n), jnp.float32)
    vy, om = jnp.asarray(rng.uniform(-2, 2, n), jnp.float32), vx / 0.3
    fz, s = jnp.full(n, 4000.0, jnp.float32), jnp.asarray(np.where(np.arange(n) % 2, 1.0, -1.0), jnp.float32)

    def f(vx, vy, om, g, fz, s):
        o = jaxtire.mf_forces(p, slip_ratio(om, 0.3, vx), slip_angle(vx, vy), g, fz, vx, side=s if with_side else None)
        return o.fx, o.fy, o.mz

    return jax.jit(f).lower(vx, vy, om, 0.01 * s, fz, s).compile().as_text()


def test_side_path_adds_no_loops():
    plain, mirrored = fusion_count(_compiled_text(False)), fusion_count(_compiled_text(True))
    assert plain >= 3  # three outputs: at least one loop each (the counter sees the fusions)
    assert mirrored <= plain, (mirrored, plain)


def test_shared_subexpressions_computed_once():
    # 1 894 (plain) and 1 915 (mirrored) before materialise; 1 550 and 1 566 with it (XLA in jaxlib 0.10.2)
    for with_side in (False, True):
        ops = fused_op_count(_compiled_text(with_side))
        assert 500 < ops <= 1700, (with_side, ops)
