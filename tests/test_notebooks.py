"""Every notebook in ``notebooks/`` executes headless (nbclient) without a cell error, and is stored stripped.

Notebooks keep their sizes small in their first code cell, so this runs in CI in a minute or two.
Skipped when the ``notebooks`` extra (nbclient, nbformat, ipykernel) is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

#: Seconds a single cell may run before the notebook counts as failed.
CELL_TIMEOUT = 300


def _ensure_kernel() -> str:
    """Name of a python3 kernel spec that runs this interpreter (installed into sys.prefix if missing)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3"],
                       check=True, capture_output=True)
    return "python3"


@pytest.fixture(scope="module")
def kernel_name():
    return _ensure_kernel()


@pytest.fixture
def sliced_polls(monkeypatch):
    """Wait on the kernel's channels in short slices instead of one long ``poll(timeout)``.

    nbclient waits for a cell's execute reply with one ``socket.poll(timeout)`` on the shell channel.
    Now and then (most often after an ipywidgets cell) that poll misses the reply's wake-up and only
    returns when the whole cell ``timeout`` has run out, with the reply, so the notebook passes after
    idling for ``timeout`` seconds (jupyter/nbclient#312).  Polling in slices of ``POLL_SLICE``
    (``docs/hooks.py``) seconds re-checks the socket each slice, so a missed wake-up costs at most one slice.
    """
    from jupyter_client.channels import AsyncZMQSocketChannel

    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)  # the docs build's own wrapper (one copy)
    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", hooks.sliced(AsyncZMQSocketChannel.get_msg))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stripped(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert "widgets" not in nb.metadata, f"{path.name}: widget state stored (run notebooks/strip_outputs.py)"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: outputs stored (run notebooks/strip_outputs.py)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, kernel_name, sliced_polls, monkeypatch):
    # the kernel inherits the environment: let ipykernel pick its inline backend, as in Jupyter
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(REPO), prepend=":")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=kernel_name, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, f"{path.name} drew no figure"
