"""Issue 29, item 3: one name per environment (its Gymnasium id) accepted by every front end; the old short
names still work with a DeprecationWarning."""

import warnings

import pytest

import sims.envs as envs
from sims.envs.names import ENV_IDS

IDS = tuple(ENV_IDS)


def test_every_front_end_takes_the_id_silently(monkeypatch, tmp_path):
    gymnasium = pytest.importorskip("gymnasium")
    from sims.envs import gymnax as sg
    from sims.envs import ppo
    from sims.envs.sb3 import JaxVecEnv

    assert envs.registered() == IDS
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for i in IDS:
            short = ENV_IDS[i]
            assert envs.make(i).name == short
            env, _ = sg.make(i)
            assert env.name == i  # the gymnax adapter reports the same id
        assert gymnasium.make("jaxtire/Drift-v0").unwrapped.env.name == "drift"
        # the failing call: SB3 took only the short names
        assert JaxVecEnv("jaxtire/Braking-v0", num_envs=2).env.name == "braking"
        # the PPO trainer's command line (training stubbed out: only the name handling is under test)
        seen = {}

        class FakePPO:
            def __init__(self, cfg):
                seen["env"] = envs.make(cfg.task).name

            def train(self, **kw):
                return {"wall_s_total": 0.0}

        monkeypatch.setattr(ppo, "PPO", FakePPO)
        monkeypatch.setattr(ppo, "write_results", lambda hist, cfg, stem: seen.setdefault("stem", stem) and {
            "json": "j", "csv": "c"})
        monkeypatch.setattr(ppo, "plot_curve", lambda *a, **k: None)
        monkeypatch.chdir(tmp_path)
        ppo.main(["--task", "jaxtire/RaceOval-v0", "--no-progress"])
    assert seen["env"] == "race-oval" and seen["stem"].endswith("ppo_race-oval")


@pytest.mark.parametrize("short, new", [(s, i) for i, s in ENV_IDS.items()])
def test_short_names_still_work_and_warn(short, new):
    with pytest.warns(DeprecationWarning, match=f"{short!r} is deprecated; use {new!r}"):
        env = envs.make(short)
    assert env == envs.make(new)


def test_unknown_name_lists_the_ids():
    with pytest.raises(ValueError, match="unknown environment 'cartpole'; allowed: jaxtire/Braking-v0, "):
        envs.make("cartpole")
