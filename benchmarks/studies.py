"""``python -m benchmarks.studies``: the cost of a Monte Carlo study beyond its fleet run.

1. The statistics of a 1 000 000-vehicle study (:mod:`sims.studies.statistics`: four value metrics with
   five percentiles and their order-statistic intervals, two flag metrics with Clopper-Pearson intervals,
   the convergence series; streamed in 10 chunks), on synthetic metric arrays.
2. A braking study of ``--vehicles`` hatchbacks (:func:`sims.studies.study.run`) against
   :func:`sims.scenarios.base.run_scenario` on the same fleet: the study's run time is the fleet's (its draws,
   table and statistics add milliseconds; no Python loop per vehicle).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def statistics_1e6(n: int = 1_000_000, seed: int = 0) -> tuple[float, dict]:
    """Seconds for the statistics of ``n`` vehicles (synthetic metrics: 4 normal values, 2 rare flags,
    streamed in 10 chunks) and the summary they gave (``tests/sims/studies/test_statistics.py`` times it)."""
    from sims.studies import statistics as st

    rng = np.random.default_rng(seed)
    metrics = {f"v{i}": rng.normal(40.0, 5.0, n).astype(np.float32) for i in range(4)}
    metrics.update({f"f{i}": rng.random(n) < 0.01 for i in range(2)})
    kinds = {k: ("value" if k[0] == "v" else "flag") for k in metrics}
    t = time.perf_counter()
    acc = st.Accumulator(kinds, percentiles=(1, 5, 50, 95, 99))
    for i in range(0, n, n // 10):
        acc.add({k: v[i : i + n // 10] for k, v in metrics.items()})
    summary = acc.summary()
    for k in kinds:
        st.convergence(acc.values(k) if kinds[k] == "value" else metrics[k], kinds[k])
    return time.perf_counter() - t, summary


def study_vs_fleet(vehicles: int) -> dict:
    """Run seconds of a braking study (its second run: compiled) and of the bare ``run_scenario`` on the
    same fleet."""
    from sims.scenarios.base import run_scenario
    from sims.studies import study as sm

    s = sm.Study(
        scenario="braking",
        runs=vehicles,
        seed=1,
        options={"max_time": 6.0},
        vary=(sm.Variation("vehicle.tire_scale.mu_x", "uniform", "factor", 0.85, 1.1),),
    )
    first = sm.run(s)  # compiles (the chunk programs, incl. the compacted batch's)
    t = time.perf_counter()
    res = sm.run(s)
    study_wall = time.perf_counter() - t
    scenario, _, draws, _ = sm._prepare(s)
    params, settings = sm._inputs(s, scenario, sm._vehicle(s), draws.columns, draws.n)
    _, stats = run_scenario(scenario, params, settings)
    return dict(
        vehicles=vehicles,
        study_run_s=res.summary["timing"]["run_s"],
        study_wall_s=study_wall,
        study_compile_s=first.summary["timing"]["compile_s"],
        fleet_run_s=stats.run_s,
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.studies", description=__doc__.split("\n\n")[0])
    ap.add_argument("--vehicles", type=int, default=4096, help="fleet size of the braking study")
    ap.add_argument("--skip-study", action="store_true", help="only the statistics")
    args = ap.parse_args(argv)
    print(f"statistics of 1e6 vehicles: {statistics_1e6()[0]:.2f} s")
    if not args.skip_study:
        print(study_vs_fleet(args.vehicles))


if __name__ == "__main__":
    main()
