"""The results table of a study: one row per vehicle, every sampled factor and every metric.

Held as a ``{column: (n,) numpy array}`` dict (the one in-memory form, cheap to concatenate chunk by
chunk) and handed out as a :class:`pandas.DataFrame` (:func:`to_frame`).  Written as Parquet when
``pyarrow`` is installed (:func:`write`), else as CSV (floats in their shortest round-trip form, so the
CSV reads back bitwise as well).  Columns: ``run`` (the row's index in the design), the varied paths
(``vehicle.chassis.mass``, ``scenario.speed``, ...; a surface as its id and ``vehicle.surface_name``),
then the metrics by name.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def has_parquet() -> bool:
    """Whether ``pyarrow`` (Parquet) is importable."""
    return importlib.util.find_spec("pyarrow") is not None


def concat(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The chunks' column dicts joined row-wise (same columns, in order)."""
    if not parts:
        return {}
    return {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in parts[0]}


def to_frame(columns: Mapping[str, Any]):
    """The table as a :class:`pandas.DataFrame` (the ``studies`` extra installs pandas)."""
    import pandas as pd  # optional dependency (extra "studies"): only the DataFrame needs it

    return pd.DataFrame({k: np.asarray(v) for k, v in columns.items()})


def write(columns: Mapping[str, Any], path, fmt: str = "auto") -> Path:
    """Write the table at ``path`` (suffix replaced): ``fmt`` ``"parquet"``, ``"csv"`` or ``"auto"`` (parquet
    when pyarrow is installed); returns the path written."""
    path = Path(path)
    if fmt == "auto":
        fmt = "parquet" if has_parquet() else "csv"
    if fmt == "parquet":
        to_frame(columns).to_parquet(path.with_suffix(".parquet"), index=False)
        return path.with_suffix(".parquet")
    out = path.with_suffix(".csv")
    to_frame(columns).to_csv(out, index=False)  # floats written shortest-round-trip: read back bitwise
    return out


def read(path) -> dict[str, np.ndarray]:
    """A table written by :func:`write` as a column dict."""
    import pandas as pd  # optional dependency (extra "studies")

    path = Path(path)
    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    return {k: df[k].to_numpy() for k in df.columns}


__all__ = ["concat", "has_parquet", "read", "to_frame", "write"]
