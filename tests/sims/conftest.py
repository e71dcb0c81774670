import functools

import pytest

from jaxtire.surfaces import make_table
from sims.run.rollout import rollout
from sims.run.spec import fast_compile_options

#: Tests compile with the fast XLA:CPU options (compile ~2x faster; they run few steps).
FAST = fast_compile_options()
roll = functools.partial(rollout, compiler_options=FAST)


@pytest.fixture(scope="session")
def hatch():
    from sims.vehicles import presets

    return presets.get("hatchback")


@pytest.fixture(scope="session")
def no_rr_table():
    """A table whose entry 0 has no rolling resistance and entry 1 is the reference surface."""
    return make_table([(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), "gravel"])
