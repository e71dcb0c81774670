"""The results table of a study: one row per vehicle, every sampled factor and every metric.

Held as a ``{column: (n,) numpy array}`` dict (the one in-memory form, cheap to concatenate chunk by
chunk).  Written as Parquet when ``pyarrow`` is installed (:func:`write`), else as CSV with the standard
library (floats in their shortest round-trip form, so the CSV reads back bitwise); :func:`read` reads
either back, and :func:`to_frame` hands the table out as a :class:`pandas.DataFrame` when pandas is
installed (the ``studies`` extra).  Nothing else here needs pandas: a study's table, report and CSV work
after the README's plain install.  Columns: ``run`` (the row's index in the design), the varied paths
(``vehicle.chassis.mass``, ``scenario.speed``, ...; a surface as its id and ``vehicle.surface_name``),
each factor (``by = "factor"``) followed by the absolute values it makes, ``"<path> [<unit>]"``
(:func:`absolute_name`: ``vehicle.chassis.mass`` 0.95 beside ``vehicle.chassis.mass [kg]`` 1282.5 for the
hatchback; not for driver fields, whose nominal values the scenario's set-up makes), then the metrics by
name, flags (``passed``, ``failed``) as booleans.

**Units** (``units``: column -> SI unit, ``-`` dimensionless, ``""`` a name, ``?`` not recorded;
:func:`unit` for a varied path): in a Parquet file the schema's metadata ``units`` (JSON) and each
field's metadata ``unit``; beside a CSV file the sidecar ``<name>.units.json`` (``results.units.json``),
the CSV header holding the bare column names.  :func:`read_units` reads either back.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxtire import fields
from sims.drivers import DRIVER_UNITS  # the driver table's units (drivers.DRIVER_FIELDS)
from sims.roads.contact import CONTACT_FIELDS
from sims.run.longrun import atomic_write
from sims.studies.variation import resolve
from sims.vehicles.params import CHASSIS_UNITS  # the chassis table's units (params.CHASSIS_FIELDS)

#: SI units of the catalogue scenarios' settings (``scenario.<key>``).
SETTING_UNITS = dict(
    speed="m/s",
    target_speed="m/s",
    yaw_rate0="rad/s",
    abs_on="-",
    distance="m",
    throttle="-",
    grade="rad",
    reach_time="s",
    margin="-",
    grip="-",
    scale="-",
    steer_03g="rad",
    direction="-",
    steering_ratio="-",
    ay_target="m/s^2",
    yaw_limit="rad",
)


def unit(path: str) -> str:
    """The SI unit of the values of a varied ``path`` (:func:`sims.studies.variation.resolve`): ``-`` for tire
    scales and surface ids, :data:`sims.vehicles.params.CHASSIS_UNITS`, the road's (:data:`sims.roads.contact.CONTACT_FIELDS`), :data:`SETTING_UNITS`,
    :data:`sims.drivers.DRIVER_UNITS`; ``?`` where none is recorded (a custom scenario's setting)."""
    tgt = resolve(path)
    if tgt.kind in ("tire_scale", "surface"):
        return "-"
    table = {
        "chassis": CHASSIS_UNITS,
        "contact": fields.units(CONTACT_FIELDS),
        "setting": SETTING_UNITS,
        "driver": DRIVER_UNITS,
    }[tgt.kind]
    return table.get(tgt.field, "?")


def absolute_name(path: str) -> str:
    """The column of the absolute values beside a factor on ``path``: ``"<path> [<unit>]"`` (:func:`unit`)."""
    return f"{path} [{unit(path)}]"


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: blocked (``sys.modules[name] = None``)
        return False


def has_parquet() -> bool:
    """Whether ``pyarrow`` (Parquet) is importable."""
    return _importable("pyarrow")


def concat(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The chunks' column dicts joined row-wise (same columns, in order)."""
    if not parts:
        return {}
    return {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in parts[0]}


def to_frame(columns: Mapping[str, Any]):
    """The table as a :class:`pandas.DataFrame`; an :class:`ImportError` naming the extra without pandas."""
    if not _importable("pandas"):
        raise ImportError(
            "the results table as a DataFrame needs pandas: pip install 'jaxtire[studies]' "
            "(the column dict StudyResult.columns and results.csv need nothing extra)"
        )
    import pandas as pd  # optional dependency (extra "studies"): only the DataFrame needs it

    return pd.DataFrame({k: np.asarray(v) for k, v in columns.items()})


def write(columns: Mapping[str, Any], path, fmt: str = "auto", units: Mapping[str, str] | None = None) -> Path:
    """Write the table at ``path`` (suffix replaced): ``fmt`` ``"parquet"``, ``"csv"`` or ``"auto"`` (parquet
    when pyarrow is installed), with the ``units`` of its columns (module docstring); returns the path
    written."""
    if fmt not in ("auto", "parquet", "csv"):
        raise ValueError(f"table format {fmt!r}: allowed 'auto', 'parquet', 'csv'")
    path = Path(path)
    if fmt == "auto":
        fmt = "parquet" if has_parquet() else "csv"
    cols = {k: np.asarray(v) for k, v in columns.items()}
    if fmt == "parquet":
        import pyarrow as pa  # optional dependency (extra "studies"): only Parquet needs it
        import pyarrow.parquet as pq

        out = path.with_suffix(".parquet")
        raw = io.BytesIO()
        t = pa.table(cols)
        if units:
            fields = [f.with_metadata({"unit": units[f.name]}) if f.name in units else f for f in t.schema]
            t = t.cast(pa.schema(fields, metadata={"units": json.dumps(dict(units))}))
        pq.write_table(t, raw)
        atomic_write(str(out), raw.getvalue())  # whole or absent, never half a table
        return out
    out = path.with_suffix(".csv")
    rows = zip(*(v.tolist() for v in cols.values()), strict=True)  # Python floats: repr is round-trip
    text = io.StringIO(newline="")
    w = csv.writer(text)
    w.writerow(cols)
    w.writerows(rows)
    atomic_write(str(out), text.getvalue().encode())
    if units:
        atomic_write(str(units_sidecar(out)), json.dumps(dict(units), indent=1).encode())
    return out


def units_sidecar(path) -> Path:
    """The units file beside a CSV table: ``results.csv`` -> ``results.units.json``."""
    return Path(path).with_suffix(".units.json")


def read_units(path) -> dict[str, str]:
    """The column units of a table written by :func:`write` (``{}`` when it has none)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # optional dependency (extra "studies")

        meta = pq.read_schema(path).metadata or {}
        return json.loads(meta[b"units"]) if b"units" in meta else {}
    side = units_sidecar(path)
    return json.loads(side.read_text()) if side.is_file() else {}


def _column(cells: list[str]) -> np.ndarray:
    """A CSV column back as the narrowest of int64, float64, bool, str that holds every cell."""
    for kind in (np.int64, np.float64):
        try:
            return np.array([kind(c) for c in cells], dtype=kind)
        except ValueError:
            pass
    if cells and all(c in ("True", "False") for c in cells):
        return np.array([c == "True" for c in cells])
    return np.array(cells, dtype=str)


def read(path) -> dict[str, np.ndarray]:
    """A table written by :func:`write` (``.parquet`` or ``.csv``) as a column dict."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # optional dependency (extra "studies")

        t = pq.read_table(path)
        return {k: t.column(k).to_numpy() for k in t.column_names}
    with open(path, newline="") as f:
        header, *rows = list(csv.reader(f))
    cells = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    return {k: _column(list(c)) for k, c in zip(header, cells, strict=True)}


__all__ = [
    "SETTING_UNITS",
    "absolute_name",
    "concat",
    "has_parquet",
    "read",
    "read_units",
    "to_frame",
    "unit",
    "units_sidecar",
    "write",
]
