"""Environment steps per second of the sims.envs tasks at 1, 1k, 16k and 131k parallel environments.

    python -m benchmarks.envs                       # all tasks, 1 / 1024 / 16384 / 131072 envs
    python -m benchmarks.envs --tasks braking --sizes 1 1024 --steps 50

Each measurement jits one ``lax.scan`` of ``--steps`` vmapped ``env.step`` calls with uniform random
actions (auto-reset included), runs it once to compile and warm up, then times the best of
``--repeat`` runs. Batches above ``--chunk`` (16384) are also timed stepped in chunks of that size
inside the same jitted call (``sims.envs.base.chunked``), which keeps a CPU's caches warm. With
gymnax installed (optional, ``pip install gymnax``) the same harness runs gymnax's CartPole-v1 as
the reference, and the table gives each task's ratio to it. Not a test.
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp

import sims.envs as envs
from sims.envs.base import chunked

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=list(envs.REGISTRY))
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--steps", type=int, default=100, help="scan steps at 1 and up to 2048 envs (fewer above)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=16384,
                    help="also time batches above this size in chunks of it (0: never)")
    ap.add_argument("--no-gymnax", action="store_true")
    args = ap.parse_args(argv)

    print(f"jax {jax.__version__} on {jax.default_backend()} ({jax.devices()[0].device_kind}), "
          f"{platform.processor() or platform.machine()}")
    rows = {}
    ref = None if args.no_gymnax else gymnax_cartpole()
    if ref is not None:
        genv, gparams = ref
        rows["gymnax CartPole-v1"] = {}
        for n in args.sizes:
            steps = steps_for(n, args.steps * 10)
            sps, first = measure(make_runner(genv, gparams, n, steps, gymnax_env=True), n, steps, args.repeat)
            rows["gymnax CartPole-v1"][n] = sps
            print(f"  gymnax CartPole-v1  n={n:>7}  {sps:>14,.0f} steps/s  (compile+first {first:.1f} s)", flush=True)
    chunked_rows = {}
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
                print(f"  {name:<18} n={n:>7}  {sps_c:>14,.0f} steps/s  in chunks of {args.chunk} "
                      f"(compile+first {first:.1f} s)", flush=True)

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
