"""Arithmetic per element of the compiled 4-wheel fleet step (issue 18, ``benchmarks/PERF_NOTES.md``,
"Fleet step op diet").

* ``jaxtire.tire.tire_forces`` stores Fy once (``materialise``): the vehicle reads it in two loops (the
  body-frame x and y forces), and XLA:CPU recomputed the whole Fy tree (~330 operations) in each.  With zero
  camber the mirrored tyre (``side``) keeps the camber one scalar; ``linear_stiffness`` (MF) is written as
  ``mf_forces`` writes Kxk and Kya, so XLA computes them once.  Fused operations of the step (transient tires,
  main c45121a): 6 768 before, 5 719 after (XLA in jaxlib 0.10.2; the same for 8 and 1 000 cars).
* ``benchmarks.fusion_ab.fused_ops_by_source`` charges every fused operation to a source line.
"""

import functools

import jax

from benchmarks import inputs
from benchmarks.fusion_ab import fused_op_count, fused_ops_by_source


@functools.cache
def _compiled():
    return jax.jit(inputs.fleet_step_fn(0.005)).lower(*inputs.jax_fleet(8)).compile()


def test_fleet_step_fused_ops():
    ops = fused_op_count(_compiled().as_text())
    assert 2000 < ops <= 6000, ops  # 6 768 with Fy recomputed per loop


def test_fy_computed_in_one_loop():
    by_line = fused_ops_by_source(_compiled())
    # every operation is charged to exactly one line
    assert sum(ops for ops, _ in by_line.values()) == fused_op_count(_compiled().as_text())
    # the lines of Fy (jaxtire.mf61._fy0, _gyk): each in one loop (Kya's in two), where the Fy0 phase and
    # SVyk were in 4-5 loops before
    fy = {k: v for k, v in by_line.items() if "mf61.py:" in k and k.endswith((" _gyk", " _fy0"))}
    assert len(fy) > 10, sorted(by_line)
    assert max(loops for _, loops in fy.values()) <= 2, fy
