"""PPO smoke test: a small budget (200k steps, ~10 s of training) on the braking task must beat the
random policy; the whole test takes well under a minute on two CPU cores."""

import numpy as np

from sims.envs.ppo import PPO, PPOConfig, plot_curve


def test_ppo_beats_random_on_braking_quickly(tmp_path):
    cfg = PPOConfig(task="braking", total_steps=200_000, lr=3e-3, minibatches=8, seed=0)
    hist = PPO(cfg).train(verbose=False, evaluate_initial=False)
    assert len(hist["steps"]) == cfg.num_updates and hist["steps"][-1] == cfg.num_updates * 64 * 64
    assert np.isfinite(hist["mean_return"]).sum() >= cfg.num_updates // 2
    # uniform random pedals lock wheels and overload the rear axle: about 1.3 ideal stopping distances
    assert -0.6 < hist["random_score"] < -0.15
    # 48 updates gain 0.1-0.2 (10-20 % of the ideal stopping distance; seeds 0-3), 1M steps about 0.3
    assert hist["final_score"] > hist["random_score"] + 0.05, hist
    assert hist["sample_score"] > hist["random_score"] + 0.05, hist
    png = tmp_path / "curve.png"
    plot_curve(hist, png, "smoke")
    assert png.stat().st_size > 5000
