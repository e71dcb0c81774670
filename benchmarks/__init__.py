"""jaxtire benchmarks: ``python -m benchmarks`` (see :mod:`benchmarks.__main__` and ``benchmarks/RESULTS.md``).

* :mod:`benchmarks.reference` the NumPy and pure-Python baselines (same equations, no JAX);
* :mod:`benchmarks.inputs` the shared inputs (tires, fleets);
* :mod:`benchmarks.harness` timing (compile vs run, warm-up, medians) and the environment record;
* :mod:`benchmarks.suite` the cases; :mod:`benchmarks.report` ``RESULTS.md``, ``results.json``, ``scaling.png``.
"""
