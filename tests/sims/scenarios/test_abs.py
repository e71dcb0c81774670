"""ABS on every preset and surface (issue 14 item 7): never longer than locked wheels, close to the friction bound.

The friction bound (:func:`sims.scenarios.braking.friction_bound`) is ``v^2 / (2 (mu_peak + drag) g)`` with
``mu_peak`` from the peak of each braked tire's braking curve (jaxtire, at the load of that deceleration)
on the surface; e.g. the hatchback's ``mu_peak`` is 1.03 on dry asphalt, 0.31 on snow, 0.126 on ice.
Low speed (8 m/s) keeps the runs short; aerodynamic drag is off so the bound is the whole story.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.surfaces import surface_id
from sims.run.fleet import broadcast
from sims.scenarios import braking
from sims.vehicles import presets
from tests.sims.conftest import FAST

SURFACES = ("asphalt_dry", "snow", "ice")
SPEED = 8.0
#: ABS distance / friction bound: measured 0.999-1.009 (float32, 5 ms steps; below 1 where rolling
#: resistance, left out of the bound, adds to the deceleration, above where the ABS spends its first
#: hundredths of a second finding the peak, at 8 m/s a race car stops in 1.9 m, and where the ABS fades
#: out below 1 m/s).
LOW, HIGH = 0.94, 1.05


def _fleet(names):
    """Every preset in ``names`` (sharing the bundled tire) x SURFACES x (locked, ABS) as one fleet."""
    ps = [presets.get(n, drag_area=0.0, lift_area=0.0) for n in names]
    k = 2 * len(SURFACES)
    ch = jax.tree.map(lambda *x: jnp.concatenate(x), *(broadcast(p.chassis, k) for p in ps))
    ids = np.tile(np.repeat([surface_id(s) for s in SURFACES], 2), len(names))
    ids = jnp.broadcast_to(jnp.asarray(ids, jnp.int32)[:, None], (len(ids), 4))
    contact = broadcast(ps[0].contact, len(ids))._replace(surface_ids=ids)
    abs_on = np.tile([0.0, 1.0], len(names) * len(SURFACES))
    res, _, _ = braking.brake_test(
        ps[0]._replace(chassis=ch, contact=contact), abs_on, speed=SPEED, yaw_rate0=0.0, max_time=10.0, compiler_options=FAST
    )
    out = {}
    for i in range(len(ids)):
        n, s = names[i // k], SURFACES[(i % k) // 2]
        out[n, s, "abs" if abs_on[i] else "locked"] = (float(res.distance[i]), bool(res.stopped[i]), bool(res.spun[i]))
    return ps, out


@pytest.mark.parametrize("names", [("hatchback", "sports_car", "race_car"), ("kart",)])
def test_abs_beats_locked_wheels_and_stops_within_5pct_of_the_friction_bound(names):
    ps, out = _fleet(names)
    for p, n in zip(ps, names, strict=True):
        for s in SURFACES:
            d_abs, stopped, spun = out[n, s, "abs"]
            d_lock, _, lock_spun = out[n, s, "locked"]
            bound, mu = braking.friction_bound(p, s, SPEED)
            assert stopped and not spun, (n, s)
            assert LOW * bound <= d_abs <= HIGH * bound, (n, s, d_abs, bound, mu)
            if lock_spun:  # the rear-braked kart swaps ends with locked wheels: not a stop to compare with
                assert n == "kart"
            else:
                assert d_abs < d_lock, (n, s, d_abs, d_lock)


def test_friction_bound_of_the_hatchback_by_hand():
    """Hand check of the bound: both axles braked, so load transfer moves force between axles only through
    the tire's load sensitivity; mu_peak lies between the peaks at the static loads' extremes."""
    p = presets.get("hatchback")
    d, mu = braking.friction_bound(p, "asphalt_dry", 20.0)
    assert 1.0 < mu < 1.1  # the bundled tire's peak mu_x at 2-5 kN is 1.02-1.09
    assert d == pytest.approx(20.0**2 / (2 * mu * GRAVITY), rel=1e-6)
    d_ice, mu_ice = braking.friction_bound(p, "ice", 20.0)
    assert mu_ice == pytest.approx(0.12 * mu, rel=0.05)  # grip scales the friction
