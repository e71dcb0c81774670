"""A study's journal: every batch of vehicle runs saved as it finishes, so that a killed study resumes.

A study run with a folder writes each batch's inputs' digest and its metric arrays to ``<folder>/chunks/
batch-<k>.npz`` (atomically: a temporary file, fsync, rename; :func:`sims.run.longrun.atomic_write`) before it
uses them.  Rerun on the same folder, the study asks for the same batches in the same order (its draws and
its estimators are deterministic in the seed and the results), and :meth:`Journal.call` answers each from
its file when the inputs' digest matches, so the resumed study ends with the same table and summary,
bit for bit, as one that was never killed.  A batch whose file is missing, or was cut short, is run again;
a file whose digest differs (the study file was edited) is an error naming the folder.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from jaxtire.validation import ValidationError
from sims.run.longrun import atomic_write


def digest(inputs: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of the inputs' names, dtypes, shapes and bytes (in name order)."""
    h = hashlib.sha256()
    for k in sorted(inputs):
        x = np.ascontiguousarray(inputs[k])
        h.update(f"{k}:{x.dtype.str}:{x.shape};".encode())
        h.update(x.tobytes())
    return h.hexdigest()


class Journal:
    """The batches of one study run under ``folder`` (module docstring); ``None`` folder: nothing saved.
    ``replayed`` counts the batches answered from files, ``ran`` those computed."""

    def __init__(self, folder: str | Path | None):
        self.folder = None if folder is None else Path(folder)
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.replayed = 0
        self.ran = 0

    def call(
        self, inputs: Mapping[str, np.ndarray], fn: Callable[[], Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        """The outputs of the next batch: from its file if the inputs match, else ``fn()`` saved first."""
        k = self.count
        self.count += 1
        if self.folder is None:
            self.ran += 1
            return {m: np.asarray(v) for m, v in fn().items()}
        path = self.folder / f"batch-{k:06d}.npz"
        key = digest(inputs)
        if path.is_file():
            try:
                with np.load(path, allow_pickle=False) as z:
                    saved = {m: z[m] for m in z.files}
            except (OSError, ValueError, EOFError):
                saved = None  # (atomic writes leave no partial files; a damaged one is run again)
            if saved is not None:
                if str(saved.pop("__digest__")) != key:
                    raise ValidationError(
                        f"{self.folder}: batch {k} was run with other inputs (the study changed since): "
                        "use a new folder or delete this one"
                    )
                self.replayed += 1
                return saved
        out = {m: np.asarray(v) for m, v in fn().items()}
        buf = io.BytesIO()
        arrays: dict[str, np.ndarray] = {"__digest__": np.asarray(key), **out}
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        atomic_write(str(path), buf.getvalue())
        self.ran += 1
        return out


__all__ = ["Journal", "digest"]
