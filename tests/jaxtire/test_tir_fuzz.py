"""Property-based .tir mutations (hypothesis): every generated file is a clean TirError or a correct load.

Bounded (max_examples ~100, no deadline) so it runs in seconds; the full seeded fuzz run is
benchmarks/fuzz_tir.py.  "Correct" = the loaded coefficients equal what a minimal independent
parser reads from the file, every required key is in the file, and forces and moments are
finite on a grid that includes Fz = 0.
"""

import re
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxtire  # noqa: E402
from jaxtire.bounds import REQUIRED, REQUIRED_MF6  # noqa: E402
from jaxtire.tir import TirError, data_path, load_tir  # noqa: E402

TEXT = data_path().read_text(encoding="utf-8")
LINES = TEXT.split("\n")
ENTRY = [i for i, ln in enumerate(LINES) if re.match(r"^[A-Za-z_]\w*\s*=", ln)]
HEADS = [i for i, ln in enumerate(LINES) if ln.startswith("[")]
SPECIAL = ["1e39", "-1e39", "1e400", "9" * 400, "nan", "inf", "0", "1e-300", "1e6", "-1e6", "abc", "", "1.0.0",
           "'x'", "3.4e38", "1e-45", "-0", "100"]

values = st.one_of(st.sampled_from(SPECIAL),
                   st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
                   st.text(alphabet="0123456789.eE+-x' $[]{}", max_size=12))
mutation = st.one_of(
    st.tuples(st.just("value"), st.sampled_from(ENTRY), values),
    st.tuples(st.just("delete"), st.sampled_from(range(len(LINES))), st.just("")),
    st.tuples(st.just("header"), st.sampled_from(HEADS), st.sampled_from(["{%s}", "[%s", "%s]", "[%s]]", "[ %s x]"])),
    st.tuples(st.just("dup"), st.sampled_from(ENTRY), st.sampled_from(HEADS)),
)


def _apply(lines, m):
    kind, i, arg = m
    lines = list(lines)
    if not lines:
        return lines
    i = i % len(lines)  # earlier mutations may have shortened the file
    if kind == "value":
        lines[i] = re.sub(r"^([A-Za-z_]\w*\s*=\s*)('[^']*'|[^\s$]*)", lambda g: g.group(1) + arg, lines[i], count=1)
    elif kind == "delete":
        del lines[i]
    elif kind == "header":
        lines[i] = arg % lines[i].strip("[] ")
    elif kind == "dup":
        lines.insert(arg + 1, lines[i])
    return lines


def _independent(text):
    vals, section = {}, None
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("["):
            section = s
        m = re.match(r"^([A-Za-z_]\w*)\s*=\s*([^\s$]*)", s)
        if m and section != "[UNITS]":
            try:
                vals[m.group(1).upper()] = float(m.group(2))
            except ValueError:
                pass
    return vals


@pytest.fixture(scope="module")
def grid():
    import dataclasses

    import jax
    import jax.numpy as jnp

    @jax.jit
    def f(p):
        fz = p.FNOMIN * jnp.array([0.0, 0.2, 1.0, 2.5])
        k = jnp.linspace(-1.0, 1.0, 9)
        a = jnp.linspace(-0.5, 0.5, 9)
        g = jnp.array([-0.1, 0.0, 0.1])
        o = jaxtire.mf_forces(p, k[:, None, None, None], a[None, :, None, None], g[None, None, :, None],
                              fz[None, None, None, :])
        return jnp.all(jnp.isfinite(jnp.stack([o.fx, o.fy, o.mz, o.mx, o.my])))

    return lambda p: bool(f(dataclasses.replace(p, meta=())))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(muts=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_file_is_clean_error_or_correct_load(tmp_path_factory, grid, muts):
    lines = LINES
    for m in muts:
        lines = _apply(lines, m)
    text = "\n".join(lines)
    path = tmp_path_factory.mktemp("fz") / "mut.tir"
    path.write_text(text, encoding="utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = load_tir(path)
    except TirError as e:
        assert "mut.tir" in str(e)
        return
    vals = _independent(text)
    required = REQUIRED + (REQUIRED_MF6 if p.fittyp in (61, 62) else ())
    assert all(k in vals for k in required)
    for k, v in vals.items():
        if k in p.coef:
            assert float(p.coef[k]) == float(np.float32(v)), k
    assert grid(p)
