"""The catalogue scenarios as fleet-CLI Monte Carlo runs (``python -m sims --scenario iso3888_2`` etc.).

:func:`run_catalogue`: ``--vehicles`` cars of ``--preset`` with the preset's driveline
(:func:`sims.vehicles.presets.get_driveline`), payload and tire friction / stiffness drawn as in the braking
Monte Carlo, by the studies' sampler (:func:`sims.studies.variation.sample`, seed ``--seed``; the first of
``--surfaces`` under every wheel, the split-mu scenarios set their own), run at the scenario's default settings with
:func:`sims.scenarios.base.run_scenario`; prints each
metric's mean and 5 / 50 / 95 % percentiles (a flag's rate) and returns them.
"""

from __future__ import annotations

import numpy as np

from jaxtire.surfaces import surface_id
from sims.run.fleet import Sampling
from sims.scenarios import catalog
from sims.scenarios.base import run_scenario
from sims.studies.variation import sample
from sims.vehicles import presets

#: Catalogue scenarios whose name the fleet CLI gives another meaning (the braking Monte Carlo, the skidpad and
#: step-steer tables, the QSS lap); every other catalogue scenario runs under its own name (:func:`catalogue_name`).
CLI_OWN = ("braking", "skidpad", "step_steer", "lap")
#: The catalogue scenarios ``--scenario`` runs by :func:`run_catalogue`, by their catalogue names.
CATALOGUE_RUNS = tuple(n for n in catalog.names() if n not in CLI_OWN)


def catalogue_name(scenario: str) -> str | None:
    """The catalogue name ``--scenario`` names (dashes read as underscores: ``sine-with-dwell`` is
    ``sine_with_dwell``), or ``None`` for a scenario of the CLI's own."""
    name = scenario.replace("-", "_")
    return name if name in CATALOGUE_RUNS else None


def run_catalogue(args, name: str, runner: dict) -> dict:
    """Run the catalogue scenario ``name`` as a Monte Carlo of the CLI's ``args`` (module docstring).  The sine
    with dwell, a stability-control test, runs the fleet with the preset's ESC switched on and, for comparison,
    off (a regulation test reports both): its summary is ``{"esc_on": {...}, "esc_off": {...}}``."""
    base = presets.get(args.preset, tire=args.tire_params, driveline=True)
    sid = surface_id(args.surface_list[0])
    fleet, _ = sample(base, args.vehicles, Sampling(surfaces=(sid,)), seed=args.seed)
    print(f"jaxtire fleet: {args.vehicles} x {args.preset} with its driveline, scenario {name}; seed {args.seed}")
    if name != "sine_with_dwell":
        return _run_and_print(name, fleet, args, runner)
    summary = {}
    for label, on in (("esc_on", 1.0), ("esc_off", 0.0)):
        controls = fleet.driveline.controls
        dl = fleet.driveline._replace(controls=controls._replace(esc=controls.esc._replace(on=on)))
        print(f"  ESC {'on' if on else 'off'}:")
        summary[label] = _run_and_print(name, fleet._replace(driveline=dl), args, runner)
    return summary


def _run_and_print(name: str, fleet, args, runner: dict) -> dict:
    """:func:`run_scenario` of ``fleet``; prints each metric's mean and 5 / 50 / 95 % percentiles (a flag's
    rate: the catalogue's flag metrics) and returns them."""
    metrics, stats = run_scenario(
        name,
        fleet,
        compiler_options=runner["compiler_options"],
        devices=runner["devices"],
        chunk_steps=args.chunk_steps,
    )
    flags = {m.name for m in catalog.get(name).metrics if m.kind == "flag"}
    summary: dict = {}
    for k, v in metrics.items():
        v = np.asarray(v, float)
        fin = v[np.isfinite(v)]
        if k in flags:
            summary[k] = float(v.mean())
            print(f"  {k:22s} rate {v.mean():.3f}")
        elif fin.size:
            p5, p50, p95 = np.percentile(fin, (5, 50, 95))
            summary[k] = dict(mean=float(fin.mean()), p5=float(p5), p50=float(p50), p95=float(p95))
            print(f"  {k:22s} mean {fin.mean():10.4g}   p5 {p5:10.4g}   p50 {p50:10.4g}   p95 {p95:10.4g}")
    print(f"  compile {stats.compile_s:.1f} s, run {stats.run_s:.1f} s")
    return summary
