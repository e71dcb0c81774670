"""jaxtire._xp.namespace: the tire equations run in NumPy for host data (no trace, no compile), in JAX otherwise.

Expected numbers: the same functions in JAX float64 (an invariant: one set of equations, two namespaces).
"""

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

import jaxtire
from jaxtire import _math, _trig, vertical
from jaxtire._xp import namespace
from jaxtire.magic_formula import magic_formula, peak_phase

X = np.linspace(-3.0, 3.0, 13)


def _host(params):
    return dataclasses.replace(params, coef={k: np.asarray(v, np.float64) for k, v in params.coef.items()})


def test_namespace_rules():
    p = jaxtire.default_tire()
    assert namespace(np.ones(2)) is np and namespace(np.float64(1.0), 2.0) is np
    assert namespace(1.0) is jnp and namespace(1.0, None) is jnp  # Python numbers alone: JAX, as before
    assert namespace(np.ones(2), jnp.ones(2)) is jnp  # any JAX array wins
    assert namespace(p) is jnp and namespace(_host(p), 0.1) is np and namespace(_host(p), jnp.ones(2)) is jnp
    jax.jit(lambda x: namespace(np.ones(2), x) is jnp or pytest.fail("tracer not JAX"))(1.0)


HELPERS = [
    ("atan", _math.atan, (X,)),
    ("sin", _trig.sin, (X,)),
    ("cos", _trig.cos, (X,)),
    ("tan", _trig.tan, (X / 3,)),
    ("materialise", _math.materialise, (X,)),
    ("cos_atan", _math.cos_atan, (X,)),
    ("safe_div", _math.safe_div, (X, X - 1.0)),
    ("safe_sqrt", _math.safe_sqrt, (np.abs(X),)),
    ("safe_norm", _math.safe_norm, (X, 2 * X)),
    ("safe_pow", _math.safe_pow, (np.abs(X), 0.7)),
    ("trig.safe_pow", _trig.safe_pow, (np.abs(X), 0.7)),
    ("atan2", _trig.atan2, (X, X[::-1])),
    ("peak_phase", peak_phase, (X, 10.0, 1.9, 0.97, 0.01)),
    ("magic_formula", magic_formula, (X, 10.0, 1.9, 1.0, 0.97)),
]


@pytest.mark.parametrize("name, fn, args", HELPERS, ids=[h[0] for h in HELPERS])
def test_helper_numpy_input_gives_numpy_equal_to_jax_float64(x64, name, fn, args):
    host = fn(*args)
    assert isinstance(host, np.ndarray) and host.dtype == np.float64, type(host)
    dev = fn(*(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args))
    assert isinstance(dev, jax.Array)
    np.testing.assert_allclose(host, np.asarray(dev), rtol=1e-14, atol=1e-15)


def test_python_numbers_alone_still_give_jax_arrays():
    for fn in (_math.atan, _trig.sin, _trig.cos, _trig.tan, _math.safe_sqrt, _math.cos_atan):
        assert isinstance(fn(0.3), jax.Array)


def test_mf_forces_with_host_params_runs_in_numpy_and_compiles_nothing():
    """Every option of mf_forces (combined, side, speed, turn slip, pressure, convention) and the stiffness
    functions return NumPy arrays for host params and inputs, with no compile event."""
    p = _host(jaxtire.load_tir(jaxtire.tir.data_path(), check_forces=False))
    k, a = np.linspace(-0.3, 0.3, 5), np.linspace(-0.2, 0.2, 5)[:, None]
    events = []

    def listen(name, secs, **kw):
        events.append(name)

    monitoring.register_event_duration_secs_listener(listen)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [
                jaxtire.mf_forces(p, k, a, np.float64(0.05), np.float64(3000.0)),
                jaxtire.mf_forces(p, k, a, 0.02, 5000.0, vx=np.float64(8.0), side=-1, convention="mfeval"),
                jaxtire.mf_forces(p, k, a, 0.0, 4000.0, vx=10.0, phi=0.05 * a, pressure=2.4e5, combined=False),
            ]
            extra = [
                jaxtire.mf61.cornering_stiffness(p),
                jaxtire.mf61.slip_stiffness(p, 3000.0),
                *jaxtire.mf61.clamped_stiffness(p, 3000.0, 0.01),
                *jaxtire.mf61.peak_values(p),
                vertical.effective_rolling_radius(p, 3000.0, 30.0),
                vertical.free_radius(p, 30.0),
            ]
    finally:
        monitoring.unregister_event_duration_listener(listen)
    assert [e for e in events if "/compile" in e] == []
    for o in outs:
        for name, leaf in o._asdict().items():  # mux, muy: the shape of the load and camber
            assert isinstance(leaf, (np.ndarray, np.generic)) and np.shape(leaf) in ((5, 5), ()), name
            assert np.isfinite(leaf).all(), name
    assert all(isinstance(v, (np.ndarray, np.generic)) and np.isfinite(v) for v in extra)
