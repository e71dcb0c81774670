"""One ``replace`` semantics for every parameter pytree (jaxtire._pytree), and dtype overflow at construction."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire import surfaces
from jaxtire.load_table import load_table_force, make_load_table
from jaxtire.simple import make_simple_params, simple_forces
from jaxtire.spline import make_spline, spline_curve
from jaxtire.validation import ValidationError

# (builder, field changed, a valid new value, an out-of-range value, the first bad element,
#  f(params) -> a number that depends on the field)
CASES = {
    "simple": (make_simple_params, "Dx", 1.2, -1.0, -1.0, lambda p: simple_forces(p, 0.3, 0.0).fx),
    "spline": (make_spline, "extremum_value", 15000.0, -5.0, -5.0, lambda p: spline_curve(p, 0.5)),
    "load_table": (lambda: make_load_table([2000.0, 4000.0], 10.0, 1.6, [2000.0, 3800.0], 0.0), "C",
                   np.array([1.4, 1.5]), np.array([1.5, 2.5]), 2.5, lambda p: load_table_force(p, 0.05, 3000.0)),
}


@pytest.fixture(params=sorted(CASES))
def case(request):
    return CASES[request.param]


def test_replace_eager_validates_and_keeps_dtype(case):
    build, field, good, bad, first_bad, _ = case
    p = build()
    q = p.replace(**{field: good})
    np.testing.assert_allclose(np.asarray(getattr(q, field)), good, rtol=1e-6)
    assert jnp.result_type(getattr(q, field)) == jnp.result_type(getattr(p, field))
    assert type(q) is type(p)
    with pytest.raises(ValidationError, match=rf"{field} = {first_bad}"):
        p.replace(**{field: bad})
    with pytest.raises(ValidationError, match="unknown field"):
        p.replace(nope=1.0)


def test_replace_works_with_tracers_under_jit(case):
    build, field, good, _, _, evaluate = case
    p = build()

    @jax.jit
    def f(v):
        return evaluate(p.replace(**{field: v}))

    np.testing.assert_allclose(f(jnp.asarray(good)), evaluate(p.replace(**{field: good})), rtol=1e-6)
    # a traced params pytree with a concrete change: the change is cast to the leaf's dtype
    g = jax.jit(lambda q: q.replace(**{field: good}))(p)
    assert jnp.result_type(getattr(g, field)) == jnp.result_type(getattr(p, field))
    # unknown field: an error also at trace time
    with pytest.raises(ValidationError, match="unknown field"):
        jax.jit(lambda v: evaluate(p.replace(nope=v)))(1.0)
    # gradient flows through replace
    d = np.asarray(jax.grad(lambda v: evaluate(p.replace(**{field: v})))(jnp.asarray(good, jnp.float32)))
    assert np.all(np.isfinite(d)) and np.any(d != 0.0)


def test_replace_static_flags():
    p = make_simple_params()
    assert p.replace(ellipse=False).ellipse is False
    with pytest.raises(ValidationError, match="ellipse"):
        p.replace(ellipse=1)
    t = make_load_table([1000.0, 2000.0], 10.0, 1.5, 1.0, 0.0)
    assert t.replace(direct=True).direct is True


def test_spline_replace_checks_the_knot_order():
    with pytest.raises(ValidationError, match="asymptote_slip = 0.5 must be > extremum_slip = 1.0"):
        make_spline().replace(asymptote_slip=0.5)


@pytest.mark.parametrize("build", [
    lambda v: make_simple_params(fz0=v),
    lambda v: make_spline(extremum_value=v),
    lambda v: make_load_table([1000.0, 2000.0], 10.0, 1.5, v, 0.0),
    lambda v: make_load_table([1000.0, v], 10.0, 1.5, 1.0, 0.0),
])
def test_values_that_overflow_float32_are_refused(build):
    # 1e39 is finite in float64 but inf in float32 (max 3.4e38); float64 storage takes it
    with pytest.raises(ValidationError, match="1e[+]?39 is not finite"):
        build(1e39)
    with jax.enable_x64(True):
        build(1e39)


def test_make_surface_validates():
    s = surfaces.make_surface(0.5, 2.0, 0.1)
    assert isinstance(s, surfaces.Surface)
    np.testing.assert_allclose([float(x) for x in s], [0.5, 2.0, 0.1], rtol=1e-6)
    batch = surfaces.make_surface(jnp.array([0.3, 1.0]))
    assert batch.grip.shape == (2,)
    with pytest.raises(ValidationError, match=r"Surface: grip = 6.0 is outside the allowed range \[0.0, 5.0\]"):
        surfaces.make_surface(grip=6.0)
    with pytest.raises(ValidationError, match=r"drag = -0.1 is outside"):
        surfaces.make_surface(drag=[0.0, -0.1])
    with pytest.raises(ValidationError, match="rolling_resistance = inf is not finite"):
        surfaces.make_surface(rolling_resistance=np.inf)
