"""Replay one row of a study's run folder with every channel recorded: why did this car fail?

::

    python -m sims study replay RUN_DIR --row 17          # -> RUN_DIR/replays/row-17/{channels.csv, sheet.png}
    rep = replay(RUN_DIR, 17); rep.channels["state.r"]; rep.metrics["distance"]; rep.same

A row is re-simulated from the folder's ``study.toml`` and the row's factor values in the results table
(the same vehicle, settings and scenario set-up as the study's run, :func:`sims.studies.study.run`): its
metrics in a fleet shaped as the one it ran in (:func:`replay`), bitwise the table's, and its channels in
a one-vehicle run with ``record="all"``: the time ``t`` [s], every state field
(``state.x`` ... ``state.yaw_rate``, per wheel ``state.omega[0]`` ...), every control (per wheel
``controls.brake[i]``) and every telemetry channel (tire loads,
forces, slips, accelerations; :class:`sims.vehicles.core.Telemetry`), one entry per step at the start of the
step.  The metrics the replay computes are compared with the table's: ``same`` is true when every metric is
bitwise equal (``mismatch`` names the others with both values).  The channels are written as CSV (Parquet with
pyarrow, as the study's table) with a plot sheet of the moving channels.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np

from jaxtire.validation import ValidationError
from sims.scenarios.base import jitted_setup, resolve_settings, run_scenario
from sims.studies import study as sm
from sims.studies import table
from sims.studies.report import is_complete


class Replay(NamedTuple):
    """A replayed row: ``row``, its ``factors`` (path -> value), ``metrics`` (replayed), ``table`` (the run
    folder's values), ``same`` (every metric bitwise equal), ``mismatch`` (name -> (table, replayed)),
    ``channels`` (name -> ``(n_steps,)``), ``channel_metrics`` (the metrics of the one-vehicle run that
    recorded them) and the ``folder`` written (``None`` before :func:`write`)."""

    row: int
    factors: dict[str, float]
    metrics: dict[str, float]
    table: dict[str, float]
    same: bool
    mismatch: dict[str, tuple[float, float]]
    channels: dict[str, np.ndarray]
    channel_metrics: dict[str, float]
    folder: Path | None = None


def _results(folder: Path) -> Path:
    for name in ("results.parquet", "results.csv"):
        if (folder / name).is_file():
            return folder / name
    raise ValidationError(f"{folder}: no results table (results.parquet or results.csv): not a run folder")


def flatten(tree, prefix: str = "") -> dict[str, np.ndarray]:
    """Channels ``name -> (n_steps,)`` of a record pytree (leading time axis): NamedTuple and dict fields
    joined by ``.``, trailing axes (per wheel) as ``[i]``; ``None`` fields left out."""
    out: dict[str, np.ndarray] = {}
    if tree is None:
        return out
    if isinstance(tree, dict) or hasattr(tree, "_fields"):
        items = tree.items() if isinstance(tree, dict) else zip(tree._fields, tree, strict=True)
        for k, v in items:
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    x = np.asarray(tree)
    name = prefix[:-1]
    if x.ndim <= 1:
        out[name] = x.reshape(-1)
    else:
        flat = x.reshape(x.shape[0], -1)
        for i in range(flat.shape[1]):
            out[f"{name}[{i}]"] = flat[:, i]
    return out


def _fleet_shape(study, event, cols, i: int) -> tuple[int, int]:
    """``(vehicles, position)`` of row ``i``'s fleet program in the study's run: the chunk (or the rare-event
    estimator's block, padded) it ran in and its place there (:func:`sims.studies.study.chunk_size`)."""
    runs = np.asarray(cols["run"])
    if event is not None and event.estimator != "monte_carlo":
        size = sm.chunk_size(study, event, 0)
        lo = int(runs[np.asarray(cols["batch"]) == np.asarray(cols["batch"])[i]].min())
        return size, int(runs[i]) - lo
    size = sm.chunk_size(study, event, runs.size)
    lo = (int(runs[i]) // size) * size
    return min(size, runs.size - lo), int(runs[i]) - lo


def replay(folder, row: int) -> Replay:
    """Re-simulate row ``row`` (the table's ``run`` value) of the run folder ``folder`` (module docstring).

    The metrics come from the row's own fleet program: a fleet of the size the row ran in (its chunk, or
    the rare-event estimator's block), every vehicle a copy of the row, the row's result taken at its place,
    on the study's device count and compiler options (from ``summary.json``), so they are bitwise the
    table's: XLA's code for a batch, and so the last bits of a float32 run, depend on the batch's shape.
    The channels come from a one-vehicle rollout of the row with ``record="all"``; the metrics of that run
    are ``Replay.channel_metrics`` (equal to the table's to float rounding)."""
    folder = Path(folder)
    if not (folder / "study.toml").is_file():
        raise ValidationError(f"{folder}: no study.toml: not a run folder")
    if not is_complete(folder):
        raise ValidationError(f"{folder}: the study did not finish (no COMPLETE marker): resume it first")
    study = sm.load(folder / "study.toml")
    if study.limit:
        raise ValidationError(
            f"{folder}: a limit-search study: its rows are brackets of many runs; replay a study of the scenario "
            "at the row's limit value instead"
        )
    summary = json.loads((folder / "summary.json").read_text())
    cols = table.read(_results(folder))
    runs = np.asarray(cols["run"])
    hit = np.flatnonzero(runs == row)
    if hit.size == 0:
        raise ValidationError(f"{folder}: row = {row} is not in the results (run {runs.min()}..{runs.max()})")
    i = int(hit[0])
    scenario, metrics, _, event = sm._prepare(study, with_draws=False)
    paths = [v.path for v in study.vary]
    base = sm._vehicle(study)
    n, pos = _fleet_shape(study, event, cols, i)
    devices = summary.get("devices")
    devices = devices if isinstance(devices, int) and devices <= jax.device_count() else None
    options = summary.get("compiler_options") or None

    def inputs(k):
        fac = {p: np.repeat(np.asarray(cols[p])[i : i + 1].astype(np.float64), k) for p in paths}
        params, settings = sm._inputs(study, scenario, base, fac, k)
        return scenario, params, settings

    sc, params, settings = inputs(n)
    out, _ = run_scenario(sc, params, settings, devices=devices, compiler_options=options)
    got = {m: np.asarray(out[m])[pos] for m in metrics}
    want = {m: np.asarray(cols[m])[i] for m in metrics if m in cols}
    sc, params, settings = inputs(1)
    vals = resolve_settings(sc, params, settings)
    s = jitted_setup(sc, params, vals)
    res = s.rollout(record="all", compiler_options=options, devices=1)  # one vehicle: no split over devices
    one = jax.jit(lambda red: sc.evaluate(red, s, vals))(res.reduced)
    mismatch = {m: (float(want[m]), float(got[m])) for m in want if not _equal(want[m], got[m])}
    rec = flatten(_first(res.trajectory))
    channels = {"t": rec.pop("t"), **rec}
    return Replay(
        row,
        {p: float(np.asarray(cols[p])[i]) for p in paths},
        {m: float(v) for m, v in got.items()},
        {m: float(v) for m, v in want.items()},
        not mismatch,
        mismatch,
        channels,
        {m: float(np.asarray(one[m]).reshape(-1)[0]) for m in metrics},
    )


def _equal(a, b) -> bool:
    """Bitwise equal as float64 (NaN equal to NaN)."""
    a, b = float(np.asarray(a, np.float64)), float(np.asarray(b, np.float64))
    return a == b or (math.isnan(a) and math.isnan(b))


def _first(tree):
    """The fleet's one vehicle (the leading axis of a fleet's records) of every record leaf."""
    return jax.tree.map(lambda x: np.asarray(x)[0], tree)


#: Channels the plot sheet shows first (when they move); then the others that move, up to :data:`SHEET_MAX`.
SHEET_FIRST = ("state.vx", "state.vy", "state.yaw_rate", "controls.steer", "controls.throttle",
               "controls.brake[0]", "telemetry.ax", "telemetry.ay")  # fmt: skip
SHEET_MAX = 16


def write(rep: Replay, folder, fmt: str = "auto") -> Replay:
    """Write ``rep``'s channels (``channels.csv`` / ``.parquet``) and ``sheet.png`` (a grid of the channels
    that move, against ``t``) into ``folder``; returns ``rep`` with its folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table.write(rep.channels, folder / "channels", fmt)
    t = rep.channels["t"]
    moving = [k for k, v in rep.channels.items() if k != "t" and np.ptp(v.astype(np.float64)) > 0]
    order = [k for k in SHEET_FIRST if k in moving] + [k for k in moving if k not in SHEET_FIRST]
    show = order[:SHEET_MAX]
    if show:
        from sims.studies.report import _pyplot  # (matplotlib only for the sheet)

        plt = _pyplot()
        ncol = 4
        nrow = -(-len(show) // ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(14, 2.4 * nrow), squeeze=False, sharex=True)
        for ax, k in zip(axes.flat, show, strict=False):
            ax.plot(t, rep.channels[k], lw=1)
            ax.set_title(k, fontsize=9)
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(show) :]:
            ax.axis("off")
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        head = ", ".join(f"{m} = {v:.4g}" for m, v in rep.metrics.items())
        fig.suptitle(f"row {rep.row}: {head}", fontsize=10)
        fig.tight_layout()
        fig.savefig(folder / "sheet.png", dpi=80)
        plt.close(fig)
    return rep._replace(folder=folder)


__all__ = ["Replay", "SHEET_FIRST", "SHEET_MAX", "flatten", "replay", "write"]
