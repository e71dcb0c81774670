"""``python -m sims --scenario lap --track Monza --preset race_car``: the quasi-steady lap of a preset.

Loads the circuit (``--track``: a shipped name, :data:`sims.roads.circuits.CIRCUITS`, or the path of a
centreline file in the racetrack-database format), takes its race line (a shipped circuit's own; for a
file, the minimum-curvature line of :mod:`sims.roads.raceline`), solves the lap
(:func:`sims.vehicles.qss.solve_lap`; ``--envelope ellipse|tire``), prints the lap and sector times, and writes
``lap_profile.csv`` (``s, x, y, v, ax, ay, t`` along the line) and ``lap.png`` (track map coloured by speed, speed and
accelerations over distance, g-g diagram) into ``--out``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import jax
import numpy as np

from jaxtire.constants import GRAVITY
from sims.cli._common import write_table
from sims.roads import circuits, raceline
from sims.vehicles import presets
from sims.vehicles.qss import solve_lap


def check_track(ap, track: str) -> None:
    """``--track``: a shipped circuit name (any case) or an existing file; argparse error otherwise."""
    if any(track.lower() == c.lower() for c in circuits.CIRCUITS) or os.path.isfile(track):
        return
    if circuits.looks_like_a_file(track):
        ap.error(
            f"--track {track!r}: no such file ({os.path.abspath(track)}); or a shipped circuit: "
            f"{', '.join(circuits.CIRCUITS)}"
        )
    ap.error(f"--track {track!r} is neither a shipped circuit ({', '.join(circuits.CIRCUITS)}) nor a file")


def race_line(track: str, ds: float = 2.5):
    """The race line of ``--track`` (module docstring) and the circuit's centreline."""
    shipped = any(track.lower() == c.lower() for c in circuits.CIRCUITS)
    centre = circuits.load_circuit(track, ds=ds)
    if shipped:
        return circuits.load_raceline(track, ds=ds, centreline=centre), centre
    return raceline.min_curvature_line(centre, ds=ds)[0], centre


def plot_lap(path: Path, line, res, title: str) -> Path:
    """``lap.png``: the four panels of the module docstring."""
    import matplotlib.pyplot as plt  # plotting only here (the CLI's optional output)

    xy = np.asarray(line.xy)
    v = np.asarray(res.v) * 3.6
    s = np.asarray(res.s)
    fig, axs = plt.subplots(2, 2, figsize=(12, 9))
    sc = axs[0, 0].scatter(xy[:, 0], xy[:, 1], c=v, s=3, cmap="turbo")
    axs[0, 0].set_aspect("equal")
    axs[0, 0].set_title(title)
    fig.colorbar(sc, ax=axs[0, 0], label="speed [km/h]")
    axs[0, 1].plot(s, v)
    axs[0, 1].set(xlabel="distance [m]", ylabel="speed [km/h]")
    axs[1, 0].plot(s, np.asarray(res.ax) / GRAVITY, label="a_x")
    axs[1, 0].plot(s, np.asarray(res.ay) / GRAVITY, label="a_y")
    axs[1, 0].set(xlabel="distance [m]", ylabel="acceleration [g]")
    axs[1, 0].legend()
    axs[1, 1].scatter(np.asarray(res.ay) / GRAVITY, np.asarray(res.ax) / GRAVITY, c=v, s=3, cmap="turbo")
    axs[1, 1].set(xlabel="a_y [g]", ylabel="a_x [g]", title="g-g diagram")
    axs[1, 1].set_aspect("equal")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_lap(args, out: Path) -> dict:
    """Solve, print and write (module docstring); returns ``dict(lap_time, sector_times, files)``."""
    dtype = np.float64 if args.x64 else np.float32
    line, _ = race_line(args.track)
    params = presets.get(args.preset, tire=args.tire_params, dtype=dtype)
    res = jax.jit(functools.partial(solve_lap, envelope=args.envelope))(params, circuits.astype(line, dtype))
    lap = float(res.lap_time)
    if not np.isfinite(lap):  # never a NaN printed as a lap: say where the profile broke
        bad = np.flatnonzero(~np.isfinite(np.asarray(res.v)))
        first = float(np.asarray(res.s)[bad[0]]) if bad.size else float("nan")
        raise SystemExit(
            f"lap: the solver returned lap_time = {lap} for {args.preset} on {args.track} ({bad.size} of "
            f"{np.size(res.v)} points without a finite speed, first at s = {first:.1f} m); check the line and XLA_FLAGS"
        )
    sectors = [float(t) for t in np.asarray(res.sector_times)]
    v = np.asarray(res.v)
    print(
        f"{args.preset} on {args.track} ({float(line.length):.0f} m race line), quasi-steady lap ({args.envelope} envelope)"
    )
    print(f"lap time     {int(lap // 60)}:{lap % 60:06.3f}  ({lap:.3f} s)")
    for i, t in enumerate(sectors, 1):
        print(f"sector {i}     {t:.3f} s")
    print(f"top speed    {v.max() * 3.6:.1f} km/h, slowest apex {v.min() * 3.6:.1f} km/h")
    print(
        f"peak a_x     +{float(np.max(res.ax)) / GRAVITY:.2f} / {float(np.min(res.ax)) / GRAVITY:.2f} g, "
        f"peak |a_y| {float(np.max(np.abs(res.ay))) / GRAVITY:.2f} g"
    )
    out.mkdir(parents=True, exist_ok=True)
    xy = np.asarray(line.xy)
    cols = {"s": res.s, "x": xy[:, 0], "y": xy[:, 1], "v": res.v, "ax": res.ax, "ay": res.ay, "t": res.t}
    files = [write_table(out / "lap_profile", {k: np.asarray(c) for k, c in cols.items()}, args.format)]
    if not args.no_plot:
        files.append(plot_lap(out / "lap.png", line, res, f"{args.preset} on {args.track}: {lap:.2f} s"))
    for f in files:
        print(f"wrote {f}")
    return dict(lap_time=lap, sector_times=sectors, files=files)
