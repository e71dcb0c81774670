import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
SHARED_TIR = REPO.parent / "shared" / "tir"


def tir_path(name: str = "TNO_car205_60R15.tir") -> Path:
    """A real .tir file: from ../shared/tir when present, else the copy bundled in the package."""
    p = SHARED_TIR / name
    if p.exists():
        return p
    bundled = REPO / "jaxtire" / "data" / name
    if bundled.exists():
        return bundled
    pytest.skip(f"{name} not available")


@pytest.fixture(scope="session")
def tnop():
    import jaxtire
    return jaxtire.load_tir(tir_path())


@pytest.fixture
def x64():
    """Run a test in float64 (restores the previous setting afterwards)."""
    import jax

    with jax.enable_x64(True):
        yield
