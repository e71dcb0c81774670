"""A small PPO (optax, pure JAX) for the sims.envs tasks, with a learning-curve plot.

    python -m sims.envs.ppo --task jaxtire/Braking-v0 --steps 1000000     # about 1-2 min on 2 CPU cores
    python -m sims.envs.ppo --task jaxtire/RaceOval-v0 --steps 2000000 --num-envs 128

Clipped-surrogate PPO with GAE on ``num_envs`` environments stepped in a jitted ``lax.scan`` of
``num_steps`` steps per update; a Gaussian policy (tanh MLP mean, state-independent log std) and a
separate value MLP.  Truncated episodes bootstrap from the value of ``info["final_observation"]``; terminated
ones do not.  Actions are sampled unbounded and clipped to [-1, 1] by the env.

One jitted rollout serves training (stochastic policy), evaluation (the policy mean) and the random
baseline (uniform actions in [-1, 1]): the mode is an argument, so it compiles once. The score is
the mean return of the first episode of ``eval_rounds x num_envs`` environments started from the
same keys for every policy (the learned policy is scored by its mean action, and also as sampled in
training). The run shows a progress bar (tqdm) with the latest mean return, and writes the learning
curve three ways: ``<out>.json`` (config, scores, timings and the per-update curve; :func:`write_results`),
``<out>.csv`` (one row per update: ``update, steps, mean_return, episodes, loss, wall_s``) and a PNG.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

import sims.envs as envs
from sims.envs.base import batched
from sims.envs.names import ENV_IDS, SHORT_NAMES, env_id


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    task: str = "jaxtire/Braking-v0"
    total_steps: int = 1_000_000
    num_envs: int = 64
    num_steps: int = 64
    lr: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatches: int = 4
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: tuple = (64, 64)
    init_log_std: float = -1.0
    seed: int = 0
    eval_chunks: int = 8  # evaluation runs at most eval_chunks * num_steps steps per policy and round
    eval_rounds: int = 4  # evaluation episodes: eval_rounds * num_envs (the first episode of each env)

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // (self.num_envs * self.num_steps))


MODE_SAMPLE, MODE_MEAN, MODE_RANDOM = 0, 1, 2

#: Tuned settings per task family (the published baselines, ``docs/getting-started/rl.md``): what
#: :func:`config_for` and ``python -m sims rl train`` start from.  The race tasks: 1024 environments x 64 steps
#: (65 536 samples an update), ``gamma`` 0.995 (a 10 s horizon at 0.05 s steps, longer than a full stop from top
#: speed), learning rate 1e-3 decaying linearly to 1e-4, entropy bonus 0.01 (without it the policy's standard
#: deviation collapsed to ~0.02 by 30 M steps and runs that differed only in their random stream settled on laps
#: 1.16 or 1.5 times the QSS lap).
TASK_DEFAULTS: dict[str, dict] = {
    "race": dict(
        total_steps=150_000_000, num_envs=1024, num_steps=64, lr=1e-3, gamma=0.995, minibatches=8, ent_coef=0.001
    ),
    "braking": dict(total_steps=1_000_000, lr=3e-3, minibatches=8),
    "drift": dict(total_steps=5_000_000, num_envs=256, num_steps=64, lr=1e-3, gamma=0.99, minibatches=8),
}
#: the race tracks whose default budget differs from the family's (env steps)
TRACK_STEPS = {"jaxtire/RaceOval-v0": 5_000_000}


def task_family(task: str) -> str:
    """``"race"``, ``"braking"`` or ``"drift"``: the family of an environment id (keys of :data:`TASK_DEFAULTS`)."""
    name = ENV_IDS[env_id(task)]
    return "race" if name.startswith("race") else name


def config_for(task: str, **overrides) -> PPOConfig:
    """The tuned :class:`PPOConfig` of ``task`` (:data:`TASK_DEFAULTS` of its family, :data:`TRACK_STEPS`), with
    ``overrides`` (``None`` values ignored); ``ValueError`` naming an unknown field."""
    task = env_id(task)
    fields = {f.name for f in dataclasses.fields(PPOConfig)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise ValueError(f"unknown PPO setting(s) {bad}; allowed: {sorted(fields)}")
    kw = dict(TASK_DEFAULTS[task_family(task)])
    if task in TRACK_STEPS:
        kw["total_steps"] = TRACK_STEPS[task]
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return PPOConfig(task=task, **kw)


# ------------------------------------------------------------------------------------------------ networks


def _mlp_init(key, sizes, last_scale):
    params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (k, m, n) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True)):
        scale = last_scale if i == len(sizes) - 2 else np.sqrt(2.0)
        w = jax.nn.initializers.orthogonal(scale)(k, (m, n), jnp.float32)
        params.append((w, jnp.zeros((n,), jnp.float32)))
    return params


def _mlp(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = jnp.tanh(x)
    return x


def init_network(key, n_obs: int, n_act: int, cfg: PPOConfig):
    """Initial PPO parameters: ``{"actor", "critic"}`` MLPs (orthogonal init) and the ``(n_act,)`` log std."""
    k1, k2 = jax.random.split(key)
    return {
        "actor": _mlp_init(k1, (n_obs, *cfg.hidden, n_act), 0.01),
        "critic": _mlp_init(k2, (n_obs, *cfg.hidden, 1), 1.0),
        "log_std": jnp.full((n_act,), cfg.init_log_std, jnp.float32),
    }


def policy(net, obs):
    """``(mean, log_std, value)`` for (batched) observations."""
    obs = obs.astype(jnp.float32)
    return _mlp(net["actor"], obs), net["log_std"], _mlp(net["critic"], obs)[..., 0]


def log_prob(mean, log_std, a):
    """Log density of actions ``a`` under a diagonal Gaussian, summed over the last (action) axis."""
    return jnp.sum(-0.5 * jnp.square((a - mean) / jnp.exp(log_std)) - log_std - 0.5 * np.log(2 * np.pi), axis=-1)


# ------------------------------------------------------------------------------------------------ PPO


class Trajectory(NamedTuple):
    obs: Any
    action: Any
    logp: Any
    value: Any
    reward: Any  # reward + gamma V(final_observation) on truncation
    done: Any
    discount: Any  # 0 on termination, else 1
    episode_return: Any
    finished: Any  # episode finished on this step


class PPO:
    """PPO on one task: ``train()`` returns the history (see :func:`main`)."""

    def __init__(self, cfg: PPOConfig, env=None, params=None):
        self.cfg = cfg
        self.env = env if env is not None else envs.make(cfg.task)
        self.params = self.env.default_params if params is None else params
        self.n_obs = self.env.observation_space(self.params).shape[0]
        self.n_act = self.env.num_actions
        self.reset_batch, _ = batched(self.env)
        total_updates = cfg.num_updates * cfg.epochs * cfg.minibatches
        sched = optax.linear_schedule(cfg.lr, cfg.lr * 0.1, total_updates)
        self.opt = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(sched, eps=1e-5))
        self.rollout = jax.jit(self._rollout)
        self.learn = jax.jit(self._learn)

    # one jitted rollout of num_steps steps for every mode
    def _rollout(self, net, state, obs, key, mode):
        cfg, env, params = self.cfg, self.env, self.params
        step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
        dtype = obs.dtype

        def body(carry, k):
            state, obs = carry
            k_a, k_r, k_s = jax.random.split(k, 3)
            mean, log_std, value = policy(net, obs)
            noise = jax.random.normal(k_a, mean.shape)
            sampled = mean + jnp.exp(log_std) * noise
            uniform = jax.random.uniform(k_r, mean.shape, minval=-1.0, maxval=1.0)
            action = jnp.where(mode == MODE_SAMPLE, sampled, jnp.where(mode == MODE_MEAN, mean, uniform))
            obs2, state2, reward, term, trunc, info = step(
                jax.random.split(k_s, cfg.num_envs), state, action.astype(dtype), params
            )
            done = term | trunc
            _, _, v_final = policy(net, info["final_observation"])
            reward = reward.astype(jnp.float32)
            reward_b = reward + cfg.gamma * v_final * info["truncated"]
            tr = Trajectory(
                obs.astype(jnp.float32),
                action,
                log_prob(mean, log_std, action),
                value,
                reward_b,
                done,
                info["discount"].astype(jnp.float32),
                info["episode_return"].astype(jnp.float32),
                done,
            )
            return (state2, obs2), tr

        (state, obs), traj = jax.lax.scan(body, (state, obs), jax.random.split(key, cfg.num_steps))
        _, _, last_value = policy(net, obs)
        return traj, state, obs, last_value

    def _gae(self, traj: Trajectory, last_value):
        cfg = self.cfg

        def body(carry, t):
            gae, next_value = carry
            # after a done the next value belongs to the new episode: cut the bootstrap
            nonterminal = 1.0 - t.done.astype(jnp.float32)
            delta = t.reward + cfg.gamma * next_value * nonterminal - t.value
            gae = delta + cfg.gamma * cfg.gae_lambda * nonterminal * gae
            return (gae, t.value), gae

        _, adv = jax.lax.scan(body, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
        return adv, adv + traj.value

    def _learn(self, net, opt_state, traj: Trajectory, last_value, key):
        cfg = self.cfg
        adv, targets = self._gae(traj, last_value)
        flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731
        data = (flat(traj.obs), flat(traj.action), flat(traj.logp), flat(adv), flat(targets))
        n = data[0].shape[0]
        mb = n // cfg.minibatches

        def loss_fn(net, obs, act, logp_old, adv, target):
            mean, log_std, value = policy(net, obs)
            logp = log_prob(mean, log_std, act)
            ratio = jnp.exp(logp - logp_old)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv))
            vf = 0.5 * jnp.mean(jnp.square(value - target))
            ent = jnp.sum(log_std + 0.5 * np.log(2 * np.pi * np.e))
            return pg + cfg.vf_coef * vf - cfg.ent_coef * ent, (pg, vf)

        def epoch(carry, k):
            net, opt_state = carry
            perm = jax.random.permutation(k, n)

            def minibatch(carry, idx):
                net, opt_state = carry
                batch = [x[idx] for x in data]
                (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(net, *batch)
                updates, opt_state = self.opt.update(grads, opt_state, net)
                return (optax.apply_updates(net, updates), opt_state), loss

            idx = perm[: mb * cfg.minibatches].reshape(cfg.minibatches, mb)
            (net, opt_state), losses = jax.lax.scan(minibatch, (net, opt_state), idx)
            return (net, opt_state), losses.mean()

        (net, opt_state), losses = jax.lax.scan(epoch, (net, opt_state), jax.random.split(key, cfg.epochs))
        finished = traj.finished.astype(jnp.float32)
        n_ep = finished.sum()
        mean_ret = jnp.where(n_ep > 0, jnp.sum(traj.episode_return * finished) / jnp.maximum(n_ep, 1.0), jnp.nan)
        return net, opt_state, {"loss": losses.mean(), "episodes": n_ep, "mean_return": mean_ret}

    def evaluate(self, net, mode: int, seed: int = 12345, rounds: int | None = None) -> float:
        """Mean first-episode return over ``rounds x num_envs`` environments, started from the same keys for
        every policy (``mode``: :data:`MODE_MEAN`, :data:`MODE_SAMPLE` or :data:`MODE_RANDOM`)."""
        cfg = self.cfg
        rounds = cfg.eval_rounds if rounds is None else rounds
        scores = []
        for r in range(rounds):
            key = jax.random.key(seed + 1000 * r)
            k0, key = jax.random.split(key)
            obs, state = self.reset_batch(jax.random.split(k0, cfg.num_envs), self.params)
            first = np.full(cfg.num_envs, np.nan)
            for _ in range(cfg.eval_chunks):
                key, k = jax.random.split(key)
                traj, state, obs, _ = self.rollout(net, state, obs, k, jnp.asarray(mode))
                fin = np.asarray(traj.finished)
                ret = np.asarray(traj.episode_return)
                for i in np.flatnonzero(np.isnan(first) & fin.any(axis=0)):
                    first[i] = ret[np.argmax(fin[:, i]), i]
                if not np.isnan(first).any():
                    break
            # an episode longer than the evaluation counts with its return so far
            first = np.where(np.isnan(first), ret[-1], first)
            scores.append(first)
        return float(np.mean(np.concatenate(scores)))

    def train(
        self,
        verbose: bool = True,
        log_every: int = 1,
        evaluate_initial: bool = True,
        progress: bool = False,
        checkpoint=None,
        checkpoint_every: int = 0,
    ) -> dict:
        """Train; returns the history: per update ``steps``, ``mean_return``, ``episodes``, ``loss``,
        ``wall_s`` (lists), and ``random_score``, ``initial_score``, ``final_score``, ``sample_score``,
        ``wall_s_total``, ``compile_s``.  ``progress``: a tqdm bar over the updates (with ``verbose``
        the per-update lines go through ``tqdm.write``).  ``checkpoint(net, history)``: called every
        ``checkpoint_every`` updates (e.g. :func:`save_policy`), so a killed run keeps its last saved policy."""
        cfg = self.cfg
        key = jax.random.key(cfg.seed)
        k_net, k_env, key = jax.random.split(key, 3)
        net = init_network(k_net, self.n_obs, self.n_act, cfg)
        opt_state = self.opt.init(net)
        t0 = time.perf_counter()
        random_score = self.evaluate(net, MODE_RANDOM)
        initial_score = self.evaluate(net, MODE_MEAN) if evaluate_initial else float("nan")
        compile_s = time.perf_counter() - t0
        if verbose:
            print(
                f"[ppo] {cfg.task}: {cfg.num_updates} updates x {cfg.num_envs} envs x {cfg.num_steps} steps; "
                f"random score {random_score:.3f}, initial policy {initial_score:.3f} "
                f"(compile + eval {compile_s:.1f} s)",
                flush=True,
            )
        obs, state = self.reset_batch(jax.random.split(k_env, cfg.num_envs), self.params)
        hist: dict[str, list[float]] = {"steps": [], "mean_return": [], "episodes": [], "loss": [], "wall_s": []}
        t_train = time.perf_counter()
        bar = tqdm(
            total=cfg.num_updates * cfg.num_envs * cfg.num_steps,
            unit="step",
            unit_scale=True,
            desc=f"ppo {cfg.task}",
            disable=not progress,
            dynamic_ncols=True,
        )
        say = tqdm.write if progress else print
        for u in range(cfg.num_updates):
            key, k_roll, k_learn = jax.random.split(key, 3)
            traj, state, obs, last_value = self.rollout(net, state, obs, k_roll, jnp.asarray(MODE_SAMPLE))
            net, opt_state, m = self.learn(net, opt_state, traj, last_value, k_learn)
            steps = (u + 1) * cfg.num_envs * cfg.num_steps
            mr = float(m["mean_return"])
            hist["steps"].append(steps)
            hist["mean_return"].append(mr)
            hist["episodes"].append(int(m["episodes"]))
            hist["loss"].append(float(m["loss"]))
            hist["wall_s"].append(time.perf_counter() - t_train)
            if checkpoint is not None and checkpoint_every and (u + 1) % checkpoint_every == 0:
                checkpoint(net, hist)
            bar.update(cfg.num_envs * cfg.num_steps)
            bar.set_postfix(mean_return=f"{mr:.3f}")
            if verbose and (u % log_every == 0 or u == cfg.num_updates - 1):
                say(
                    f"[ppo] update {u + 1:4d}  steps {steps:9d}  mean return {mr:9.3f}  "
                    f"episodes {int(m['episodes']):5d}  loss {float(m['loss']):8.4f}  "
                    f"{hist['wall_s'][-1]:6.1f} s"
                )
        bar.close()
        final_score = self.evaluate(net, MODE_MEAN)
        sample_score = self.evaluate(net, MODE_SAMPLE)
        wall = time.perf_counter() - t0
        if verbose:
            print(
                f"[ppo] done: random {random_score:.3f} -> learned {final_score:.3f} (mean action; sampled "
                f"{sample_score:.3f}; initial {initial_score:.3f}); {wall:.1f} s wall",
                flush=True,
            )
        self.net = net
        return {
            **hist,
            "random_score": random_score,
            "initial_score": initial_score,
            "final_score": final_score,
            "sample_score": sample_score,
            "wall_s_total": wall,
            "compile_s": compile_s,
        }


CSV_COLUMNS = ("update", "steps", "mean_return", "episodes", "loss", "wall_s")


def write_results(history: dict, cfg: PPOConfig, stem) -> dict:
    """Write the run as ``<stem>.json`` (``config``, the scores and timings, and ``curve``: the per-update
    lists) and ``<stem>.csv`` (:data:`CSV_COLUMNS`, one row per update; NaN where no episode finished).
    Returns ``{"json": path, "csv": path}``."""
    stem = str(stem)
    os.makedirs(os.path.dirname(stem) or ".", exist_ok=True)
    curve = {k: list(history[k]) for k in CSV_COLUMNS[1:]}
    scalars = {k: v for k, v in history.items() if k not in curve}
    cfg_d = dataclasses.asdict(cfg)
    cfg_d["hidden"] = list(cfg_d["hidden"])
    doc = {"config": cfg_d, "num_updates": cfg.num_updates, **scalars, "curve": curve}

    def clean(x):  # JSON has no NaN: null instead
        if isinstance(x, float) and not np.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    with open(stem + ".json", "w") as f:
        json.dump(clean(doc), f, indent=1)
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for i in range(len(curve["steps"])):
            w.writerow([i + 1] + [curve[k][i] for k in CSV_COLUMNS[1:]])
    return {"json": stem + ".json", "csv": stem + ".csv"}


def plot_curve(history: dict, path, title: str = "") -> None:
    """Learning curve (mean training return per update, random and final scores) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = np.asarray(history["steps"])
    ret = np.asarray(history["mean_return"], dtype=float)
    ok = np.isfinite(ret)
    ax.plot(steps[ok], ret[ok], lw=1.0, color="C0", alpha=0.5, label="training episodes (mean per update)")
    if ok.sum() >= 5:
        w = max(ok.sum() // 20, 1)
        smooth = np.convolve(ret[ok], np.ones(w) / w, mode="valid")
        ax.plot(steps[ok][w - 1 :], smooth, color="C0", lw=2.0)
    ax.axhline(history["random_score"], color="C3", ls="--", label=f"random policy {history['random_score']:.2f}")
    ax.axhline(history["final_score"], color="C2", ls="-.", label=f"learned (mean action) {history['final_score']:.2f}")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    """``python -m sims.envs.ppo``: train PPO on a task; ``argv`` the command-line arguments."""
    ap = argparse.ArgumentParser(description="PPO on a sims.envs task; writes the learning curve as JSON, CSV and PNG")
    ap.add_argument(
        "--task",
        default="jaxtire/Braking-v0",
        choices=[*ENV_IDS, *SHORT_NAMES],
        help="environment id (short names deprecated)",
    )
    ap.add_argument("--steps", type=int, default=PPOConfig.total_steps, help="total environment steps")
    ap.add_argument("--num-envs", type=int, default=PPOConfig.num_envs)
    ap.add_argument("--num-steps", type=int, default=PPOConfig.num_steps, help="rollout length per update")
    ap.add_argument("--lr", type=float, default=PPOConfig.lr)
    ap.add_argument("--minibatches", type=int, default=PPOConfig.minibatches)
    ap.add_argument("--seed", type=int, default=PPOConfig.seed)
    ap.add_argument(
        "--out", default=None, help="output stem: <out>.json, <out>.csv, <out>.png (default out/ppo_<task>)"
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--no-initial", action="store_true", help="skip scoring the untrained policy")
    args = ap.parse_args(argv)
    cfg = PPOConfig(
        task=args.task,
        total_steps=args.steps,
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        lr=args.lr,
        minibatches=args.minibatches,
        seed=args.seed,
    )
    hist = PPO(cfg).train(
        log_every=max(cfg.num_updates // 40, 1), progress=not args.no_progress, evaluate_initial=not args.no_initial
    )
    stem = args.out or os.path.join("out", f"ppo_{ENV_IDS[env_id(args.task)]}")  # out/ppo_braking: no "/" in it
    stem = stem[:-4] if stem.endswith((".png", ".csv")) else stem[:-5] if stem.endswith(".json") else stem
    paths = write_results(hist, cfg, stem)
    plot_curve(hist, stem + ".png", f"PPO on {args.task}: {cfg.total_steps:,} steps, {hist['wall_s_total']:.0f} s")
    print(f"[ppo] learning curve written to {paths['json']}, {paths['csv']}, {stem}.png")
    return hist


if __name__ == "__main__":
    main()


def mean_action(net, obs):
    """The deterministic action of a trained policy: the Gaussian's mean (``net`` from :class:`PPO`), clipped to
    [-1, 1]; batched over the leading axes of ``obs``.  The evaluation policy (:func:`sims.envs.evaluate.evaluate`)."""
    return jnp.clip(_mlp(net["actor"], obs.astype(jnp.float32)), -1.0, 1.0)


# ------------------------------------------------------------------------------------------------ saving

POLICY_FILE = "policy.npz"
CONFIG_FILE = "config.json"


def _leaves(net) -> dict:
    """``{"actor/0/w": array, ...}``: the network as flat named numpy arrays."""
    out = {"log_std": np.asarray(net["log_std"])}
    for part in ("actor", "critic"):
        for i, (w, b) in enumerate(net[part]):
            out[f"{part}/{i}/w"] = np.asarray(w)
            out[f"{part}/{i}/b"] = np.asarray(b)
    return out


def save_policy(directory, net, cfg: PPOConfig, extra: dict | None = None) -> str:
    """Write ``net`` to ``<directory>/policy.npz`` and the config (``cfg``, the env id, ``extra``) to
    ``config.json``, each through a temporary file and an atomic rename (a kill never leaves a half-written
    policy).  Returns the policy path; :func:`load_policy` reads it back."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, POLICY_FILE)
    tmp = path + ".tmp.npz"
    np.savez(tmp, **_leaves(net))
    os.replace(tmp, path)
    cfg_d = dataclasses.asdict(cfg)
    cfg_d["hidden"] = list(cfg_d["hidden"])
    doc = {"env": cfg.task, "ppo": cfg_d, **(extra or {})}
    cpath = os.path.join(directory, CONFIG_FILE)
    with open(cpath + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(cpath + ".tmp", cpath)
    return path


def load_policy(directory) -> tuple[dict, PPOConfig]:
    """``(net, cfg)`` of a policy saved by :func:`save_policy` (``python -m sims rl train``); ``net`` feeds
    :func:`mean_action` and :func:`policy`.  ``FileNotFoundError`` naming the missing file."""
    path = os.path.join(directory, POLICY_FILE)
    cpath = os.path.join(directory, CONFIG_FILE)
    for p in (path, cpath):
        if not os.path.isfile(p):
            raise FileNotFoundError(
                f"{p}: no such file (a run folder of `python -m sims rl train` holds {POLICY_FILE} and {CONFIG_FILE})"
            )
    doc = json.load(open(cpath))
    kw = dict(doc["ppo"])
    kw["hidden"] = tuple(kw["hidden"])
    cfg = PPOConfig(**kw)
    with np.load(path) as z:
        arrays = {k: jnp.asarray(z[k]) for k in z.files}
    n_layers = len(cfg.hidden) + 1
    net: dict[str, Any] = {
        part: [(arrays[f"{part}/{i}/w"], arrays[f"{part}/{i}/b"]) for i in range(n_layers)]
        for part in ("actor", "critic")
    }
    net["log_std"] = arrays["log_std"]
    return net, cfg
