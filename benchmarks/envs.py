"""Environment steps per second of the sims.envs tasks at 1, 1k, 16k and 131k parallel environments.

    python -m benchmarks.envs                       # all tasks, 1 / 1024 / 16384 / 131072 envs
    python -m benchmarks.envs --tasks braking --sizes 1 1024 --steps 50

Each measurement jits one ``lax.scan`` of ``--steps`` vmapped ``env.step`` calls with uniform random
actions (auto-reset included), runs it once to compile and warm up, then times the best of
``--repeat`` runs. Batches above ``--chunk`` (16384) are also timed stepped in chunks of that size
inside the same jitted call (``sims.envs.base.chunked``), which keeps a CPU's caches warm. With
gymnax installed (optional, ``pip install gymnax``) the same harness runs gymnax's CartPole-v1 as
the reference, and the table gives each task's ratio to it. Not a test.

    python -m benchmarks.envs --adapters                # raw / gymnax-wrapped / Gymnasium vector / SB3 VecEnv
    python -m benchmarks.envs --sb3                     # SB3 PPO: JaxVecEnv vs CartPole vs the single-env path

``--adapters`` times, per task, the raw jitted scan at ``--adapter-size`` (4096) environments, the same
scan through gymnax's ``LogWrapper(FlattenObservationWrapper(GymnaxEnv))``, and host loops of
``step`` on the Gymnasium ``JaxVectorEnv`` (next-step autoreset) and the SB3 ``JaxVecEnv`` at
``--host-envs`` (16) environments (numpy in and out, one jitted call per step).  ``--sb3`` trains SB3's
PPO (``MlpPolicy``, 16 envs x 128 steps per rollout, batch 256, 5 epochs, one torch thread) for
``--sb3-steps`` env steps on ``JaxVecEnv("jaxtire/Braking-v0")``, on gymnasium's CartPole-v1 in SB3's
``DummyVecEnv`` and on 16 single ``JaxEnv("jaxtire/Braking-v0")`` in a ``DummyVecEnv``, alternating A/B/A/B, and
prints env-steps/s of ``learn`` (compile excluded) and the ratio to CartPole.  ``--json PATH`` writes
every figure.

    python -m benchmarks.envs --devices-ab               # braking at 4096 envs: one device vs every device

``--devices-ab`` times :class:`sims.envs.devices.DeviceEnv` rollouts (``--steps`` env steps of uniform random
actions, auto-reset included, one ``lax.scan`` per device) of ``--tasks`` (default braking) at ``--ab-size``
(4096) environments on each of ``--device-counts`` devices (default ``1 0``: one, and every host device; there
are ``--host-devices`` of them, default one per core) and (``--shard-map``) as one ``shard_map`` program over
every device; ``--rounds`` rounds alternate in one process (figures: ``benchmarks/PERF_NOTES.md``, "Every core for the RL envs").  Per variant: env-steps/s (wall), process
CPU ns per env-step and the 1-minute load average.  ``main`` applies the CLI's XLA:CPU tuning first
(:func:`sims.run._xla.tune_cpu`: one host device per core), unless JAX already
started or ``JAXTIRE_XLA_DEFAULT=1``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import sims.envs as envs
from sims.envs.base import chunked
from sims.envs.devices import DeviceEnv
from sims.run.mesh import pad, shard

SIZES = (1, 1024, 16384, 131072)


def make_runner(env, params, n: int, steps: int, gymnax_env: bool = False, chunk: int | None = None):
    """A jitted ``run(key) -> summed reward`` of ``steps`` steps of ``n`` parallel environments (``chunk``
    at a time, :func:`sims.envs.base.chunked`, if given)."""
    if gymnax_env:
        space = env.action_space(params)
        sample = lambda k: space.sample(k)  # noqa: E731
    else:
        space = env.action_space(params)
        sample = lambda k: jax.random.uniform(k, space.shape, space.dtype, -1.0, 1.0)  # noqa: E731

    reset = chunked(jax.vmap(env.reset, in_axes=(0, None)), chunk, in_axes=(0, None))
    step = chunked(jax.vmap(env.step, in_axes=(0, 0, 0, None)), chunk)

    @jax.jit
    def run(key):
        k0, k1 = jax.random.split(key)
        _, state = reset(jax.random.split(k0, n), params)

        def body(carry, k):
            state, total = carry
            ka, ks = jax.random.split(k)
            actions = jax.vmap(sample)(jax.random.split(ka, n))
            out = step(jax.random.split(ks, n), state, actions, params)  # gymnax 1.x returns 6 values
            state, reward = out[1], out[2]
            return (state, total + jnp.sum(reward)), None

        (_, total), _ = jax.lax.scan(body, (state, jnp.zeros((), jnp.float32)), jax.random.split(k1, steps))
        return total

    return run


def measure(run, n: int, steps: int, repeat: int) -> tuple[float, float]:
    """``(steps per second, compile + first run seconds)``; the reset is timed with the steps."""
    t0 = time.perf_counter()
    jax.block_until_ready(run(jax.random.key(0)))
    first = time.perf_counter() - t0
    best = float("inf")
    for i in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(run(jax.random.key(i + 1)))
        best = min(best, time.perf_counter() - t0)
    return n * steps / best, first


def steps_for(n: int, base: int) -> int:
    """Fewer scan steps for the big batches so every cell takes a few seconds on a CPU."""
    return max(2, min(base, int(base * 2048 / max(n, 1))))


def gymnax_cartpole():
    try:
        import gymnax  # noqa: F401
    except Exception as e:  # pragma: no cover - optional
        print(f"gymnax not available ({type(e).__name__}: {e}); no CartPole reference")
        return None
    env, params = gymnax.make("CartPole-v1")
    return env, params


def host_loop(venv, steps: int, sb3: bool = False) -> float:
    """Steps/s of ``steps`` host-side steps of a vector env with constant numpy actions (after a warm-up)."""
    n = venv.num_envs
    a = np.zeros((n,) + tuple(venv.action_space.shape[-1:]), np.float32)

    def one():
        if sb3:
            venv.step_async(a)
            venv.step_wait()
        else:
            venv.step(a)

    if sb3:
        venv.reset()
    else:
        venv.reset(seed=0)
    for _ in range(5):
        one()
    t0 = time.perf_counter()
    for _ in range(steps):
        one()
    return n * steps / (time.perf_counter() - t0)


def adapters(tasks, n: int, host_envs: int, steps: int, repeat: int) -> dict:
    """Raw, gymnax-wrapped, Gymnasium vector and SB3 VecEnv env-steps/s per task."""
    out = {}
    for name in tasks:
        env = envs.make(name)
        params = env.default_params
        row = {}
        sps, first = measure(make_runner(env, params, n, steps), n, steps, repeat)
        row[f"raw jit+vmap ({n} envs)"] = sps
        print(f"  {name:<12} raw      n={n:>6} {sps:>12,.0f} steps/s (compile+first {first:.1f} s)", flush=True)
        try:
            from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

            from sims.envs.gymnax import GymnaxEnv

            genv = LogWrapper(FlattenObservationWrapper(GymnaxEnv(env)))
            sps, first = measure(make_runner(genv, params, n, steps, gymnax_env=True), n, steps, repeat)
            row[f"gymnax LogWrapper(Flatten) ({n} envs)"] = sps
            print(f"  {name:<12} gymnax   n={n:>6} {sps:>12,.0f} steps/s (compile+first {first:.1f} s)", flush=True)
        except ImportError as e:
            print(f"  gymnax not available ({e})")
        try:
            from sims.envs.gymnasium import JaxVectorEnv

            sps = host_loop(JaxVectorEnv(env, host_envs), 300)
            row[f"Gymnasium JaxVectorEnv ({host_envs} envs)"] = sps
            print(f"  {name:<12} gym vec  n={host_envs:>6} {sps:>12,.0f} steps/s", flush=True)
        except ImportError as e:
            print(f"  gymnasium not available ({e})")
        try:
            from sims.envs.sb3 import JaxVecEnv

            sps = host_loop(JaxVecEnv(env, host_envs), 300, sb3=True)
            row[f"SB3 JaxVecEnv ({host_envs} envs)"] = sps
            print(f"  {name:<12} sb3 vec  n={host_envs:>6} {sps:>12,.0f} steps/s", flush=True)
        except ImportError as e:
            print(f"  stable-baselines3 not available ({e})")
        out[name] = row
    return out


def sb3_ppo(total: int, rounds: int = 2, single_env: bool = True) -> dict:
    """SB3 PPO env-steps/s through :class:`sims.envs.sb3.JaxVecEnv` (braking) and on CartPole-v1 in a
    ``DummyVecEnv``, same configuration, alternating; plus the single-env path (``JaxEnv`` in a
    ``DummyVecEnv``) once at a tenth of the steps."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    from sims.envs.gymnasium import JaxEnv
    from sims.envs.sb3 import JaxVecEnv

    torch.set_num_threads(1)
    kw: dict[str, Any] = dict(
        n_steps=128, batch_size=256, n_epochs=5, learning_rate=3e-4, seed=0, verbose=0, device="cpu"
    )
    venvs = {
        "SB3 PPO, JaxVecEnv braking (16 envs)": lambda: JaxVecEnv("jaxtire/Braking-v0", 16),
        "SB3 PPO, CartPole-v1 DummyVecEnv (16 envs)": lambda: make_vec_env("CartPole-v1", n_envs=16, seed=0),
    }
    res: dict[str, list[float]] = {k: [] for k in venvs}
    models = {k: PPO("MlpPolicy", make(), **kw) for k, make in venvs.items()}
    for m in models.values():
        m.learn(2048)  # compile / warm up
    for _ in range(rounds):
        for k, m in models.items():
            t0 = time.perf_counter()
            m.learn(total, reset_num_timesteps=False)
            res[k].append(total / (time.perf_counter() - t0))
            print(f"  {k:<48} {res[k][-1]:>10,.0f} env-steps/s", flush=True)
    out = {k: max(v) for k, v in res.items()}
    if single_env:
        k = "SB3 PPO, 16 x JaxEnv braking in DummyVecEnv (single-env path)"
        m = PPO("MlpPolicy", DummyVecEnv([lambda: JaxEnv("jaxtire/Braking-v0")] * 16), **kw)
        m.learn(2048)
        t0 = time.perf_counter()
        m.learn(max(total // 10, 2048), reset_num_timesteps=False)
        out[k] = max(total // 10, 2048) / (time.perf_counter() - t0)
        print(f"  {k:<48} {out[k]:>10,.0f} env-steps/s", flush=True)
    keys = list(venvs)
    out["ratio JaxVecEnv / CartPole"] = out[keys[0]] / out[keys[1]]
    print(f"  ratio JaxVecEnv / CartPole: {out['ratio JaxVecEnv / CartPole']:.2f}")
    return out


def shard_map_rollout(denv: DeviceEnv, steps: int):
    """``denv.rollout`` (random actions, no record) as ONE ``jax.shard_map`` program over the devices of ``denv``
    (the alternative to :class:`DeviceEnv`'s per-device programs): ``run(keys, obs, state) -> (carry, out)``."""
    from jax.sharding import PartitionSpec as P

    assert denv.mesh is not None, "shard_map needs several devices"
    body = denv.rollout_fn(steps)
    spec = P(denv.mesh.axis_names[0])
    # check_vma=False: the env's substep loop starts from an unbatched zero telemetry (not "varying" over the mesh)
    fn = jax.jit(
        jax.shard_map(
            lambda k, o, s: body(k, o, s, None), mesh=denv.mesh, in_specs=spec, out_specs=spec, check_vma=False
        )
    )

    def run(keys, obs, state):
        n = jnp.shape(keys)[0]
        assert n % denv.devices == 0, "shard_map variant: the batch must be a multiple of the device count"
        return fn(*(shard(pad(a, 0, n), denv.mesh, 0) for a in (keys, obs, state)))

    return run


def devices_ab(
    task: str = "jaxtire/Braking-v0",
    n: int = 4096,
    steps: int = 50,
    repeat: int = 3,
    rounds: int = 3,
    use_shard_map: bool = False,
    counts=(1, None),
) -> dict:
    """Env-steps/s of ``task`` at ``n`` environments on ``counts`` devices (default one, and every local device).

    Each variant (a :class:`DeviceEnv` on ``k`` devices, ``None``: every local device; with ``use_shard_map`` also
    one ``shard_map`` program over every device) runs ``steps`` env steps per call (:meth:`DeviceEnv.rollout`,
    uniform random actions, the carry passed on from call to call); ``rounds`` alternated rounds of ``repeat``
    calls each, the best call of a round counts.  Returns per variant: ``devices``, ``compile_s`` (first call),
    ``equal`` (its first call's results bitwise those of the first variant), and per round ``env_steps_per_s``
    (wall), ``cpu_ns_per_env_step`` (process CPU time: every thread) and ``load`` (1-minute load average at the
    end of the round)."""
    env = envs.make(task)
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), n)
    variants: dict[str, Any] = {}
    for k in dict.fromkeys(min(c or jax.local_device_count(), jax.local_device_count()) for c in counts):
        denv = DeviceEnv(env, params, devices=k)
        variants[f"{denv.devices} device(s)"] = (denv, lambda c, d=denv: d.rollout(*c, steps))
    if use_shard_map and jax.local_device_count() > 1:
        denv = DeviceEnv(env, params)
        sm = shard_map_rollout(denv, steps)
        variants[f"{denv.devices} devices, shard_map"] = (denv, lambda c, sm=sm: sm(*c))
    runs, carries, res, first = {}, {}, {}, {}
    for name, (denv, run) in variants.items():
        obs, state = denv.reset(keys)
        runs[name] = run
        t0 = time.perf_counter()
        carries[name], out = run((keys, obs, state))
        first[name] = jax.block_until_ready(out)
        res[name] = dict(devices=denv.devices, compile_s=time.perf_counter() - t0, rounds=[])
    ref = jax.tree.leaves(first[next(iter(first))])
    for name in res:
        got = jax.tree.leaves(first[name])
        res[name]["equal"] = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(ref, got, strict=True))
    for _ in range(rounds):
        for name, run in runs.items():
            best_wall, best_cpu = float("inf"), float("inf")
            for _ in range(repeat):
                w0, c0 = time.perf_counter(), time.process_time()
                carries[name], out = run(carries[name])
                jax.block_until_ready(out)
                best_wall = min(best_wall, time.perf_counter() - w0)
                best_cpu = min(best_cpu, time.process_time() - c0)
            r = dict(
                env_steps_per_s=n * steps / best_wall,
                cpu_ns_per_env_step=best_cpu * 1e9 / (n * steps),
                load=os.getloadavg()[0],
            )
            res[name]["rounds"].append(r)
            print(
                f"  {task} n={n} {name:<24} {r['env_steps_per_s']:>12,.0f} env-steps/s "
                f"{r['cpu_ns_per_env_step']:>7,.0f} CPU ns/env-step  load {r['load']:.1f}",
                flush=True,
            )
    for name, r in res.items():
        med = float(np.median([x["env_steps_per_s"] for x in r["rounds"]]))
        r["median_env_steps_per_s"] = med
        print(f"  {name:<24} median {med:,.0f} env-steps/s, compile+first {r['compile_s']:.1f} s, equal {r['equal']}")
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=list(envs.REGISTRY))
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--steps", type=int, default=100, help="scan steps at 1 and up to 2048 envs (fewer above)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--chunk", type=int, default=16384, help="also time batches above this size in chunks of it (0: never)"
    )
    ap.add_argument("--no-gymnax", action="store_true")
    ap.add_argument("--adapters", action="store_true", help="raw / gymnax / Gymnasium vector / SB3 VecEnv table")
    ap.add_argument("--adapter-size", type=int, default=4096)
    ap.add_argument("--host-envs", type=int, default=16)
    ap.add_argument("--sb3", action="store_true", help="SB3 PPO through the adapter vs CartPole")
    ap.add_argument("--sb3-steps", type=int, default=20480)
    ap.add_argument("--devices-ab", action="store_true", help="one device vs every device (DeviceEnv)")
    ap.add_argument("--ab-size", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shard-map", action="store_true", help="with --devices-ab: also one shard_map program")
    ap.add_argument("--device-counts", nargs="+", type=int, default=[1, 0], help="--devices-ab counts (0: all)")
    ap.add_argument("--host-devices", type=int, default=os.cpu_count(), help="host devices (tune_cpu; default: cores)")
    ap.add_argument("--json", default=None, help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    from sims.run._xla import tune_cpu  # the CLI's XLA:CPU tuning, before JAX starts (no-op once it has)

    tune_cpu(host_devices=args.host_devices)

    header = (
        f"jax {jax.__version__} on {jax.default_backend()} ({jax.devices()[0].device_kind}), "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {jax.device_count()} device(s), "
        f"load {os.getloadavg()[0]:.1f}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}"
    )
    print(header)
    if args.devices_ab:
        tasks = args.tasks if args.tasks != list(envs.REGISTRY) else ["jaxtire/Braking-v0"]
        counts = [c or None for c in args.device_counts]
        ab = {
            t: devices_ab(t, args.ab_size, args.steps, args.repeat, args.rounds, args.shard_map, counts) for t in tasks
        }
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"header": header, "devices_ab": ab}, f, indent=1)
        return ab
    if args.adapters or args.sb3:
        result: dict[str, Any] = {"header": header}
        if args.adapters:
            result["adapters"] = adapters(
                args.tasks, args.adapter_size, args.host_envs, steps_for(args.adapter_size, args.steps), args.repeat
            )
        if args.sb3:
            result["sb3_ppo"] = sb3_ppo(args.sb3_steps)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return result
    rows: dict[str, dict[int, float]] = {}
    ref = None if args.no_gymnax else gymnax_cartpole()
    if ref is not None:
        genv, gparams = ref
        rows["gymnax CartPole-v1"] = {}
        for n in args.sizes:
            steps = steps_for(n, args.steps * 10)
            sps, first = measure(make_runner(genv, gparams, n, steps, gymnax_env=True), n, steps, args.repeat)
            rows["gymnax CartPole-v1"][n] = sps
            print(f"  gymnax CartPole-v1  n={n:>7}  {sps:>14,.0f} steps/s  (compile+first {first:.1f} s)", flush=True)
    chunked_rows: dict[str, dict[int, float]] = {}
    for name in args.tasks:
        env = envs.make(name)
        params = env.default_params
        rows[name] = {}
        for n in args.sizes:
            steps = steps_for(n, args.steps)
            sps, first = measure(make_runner(env, params, n, steps), n, steps, args.repeat)
            rows[name][n] = sps
            print(f"  {name:<18} n={n:>7}  {sps:>14,.0f} steps/s  (compile+first {first:.1f} s)", flush=True)
            if args.chunk and n > args.chunk:
                sps_c, first = measure(make_runner(env, params, n, steps, chunk=args.chunk), n, steps, args.repeat)
                chunked_rows.setdefault(f"{name} (chunks of {args.chunk})", {})[n] = sps_c
                print(
                    f"  {name:<18} n={n:>7}  {sps_c:>14,.0f} steps/s  in chunks of {args.chunk} "
                    f"(compile+first {first:.1f} s)",
                    flush=True,
                )

    print()
    head = "| task | " + " | ".join(f"{n:,} envs" for n in args.sizes) + " |"
    print(head)
    print("|" + "---|" * (len(args.sizes) + 1))
    cart = rows.get("gymnax CartPole-v1")
    for name, r in {**rows, **chunked_rows}.items():
        cells = []
        for n in args.sizes:
            if n not in r:
                cells.append("")
                continue
            c = f"{r[n]:,.0f}"
            if cart and name != "gymnax CartPole-v1":
                c += f" ({r[n] / cart[n]:.2g}x)"
            cells.append(c)
        print(f"| {name} | " + " | ".join(cells) + " |")
    if cart:
        print("\n(x: ratio to gymnax CartPole-v1 in the same process)")
    return rows


if __name__ == "__main__":
    main()
