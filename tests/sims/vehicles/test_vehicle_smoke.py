import jax
import numpy as np

from sims.drivers import StraightBraking
from sims.run.rollout import rollout
from sims.vehicles import DOUBLE_TRACK, SINGLE_TRACK, presets


def test_every_preset_brakes_to_a_stop_both_models():
    for name in presets.PRESET_NAMES:
        p = presets.get(name)
        for model in (DOUBLE_TRACK, SINGLE_TRACK):
            s0 = model.init_state(p, 20.0)
            res = rollout(p, s0, StraightBraking(abs_on=1.0), 1500, dt=0.005, model=model)
            fs = res.final_state
            assert np.isfinite(np.asarray(jax.tree.leaves(fs)[0])).all()
            assert abs(float(fs.vx)) < 0.05, (name, model.name, float(fs.vx))
            assert 10.0 < float(fs.x) < 60.0, (name, model.name, float(fs.x))
