"""Every core for the envs: a batch of environments split over the local devices.

:class:`DeviceEnv` wraps an :class:`~sims.envs.base.Environment` and fixed params (brax / gymnax style: a
wrapper, not a flag) and runs a batch of ``n`` environments, one PRNG key per environment, with the batch
split along its leading axis over the local devices (``jax.local_devices()``; on a CPU the host devices of
``XLA_FLAGS=--xla_force_host_platform_device_count=N``, which :func:`sims.run.tune_cpu` sets, before
JAX starts)::

    from sims.run import tune_cpu
    tune_cpu(host_devices=os.cpu_count())          # before the first JAX computation
    denv = DeviceEnv(sims.envs.make("jaxtire/Braking-v0"))     # devices=None: every local device
    keys = jax.random.split(jax.random.key(0), 4096)
    obs, state = denv.reset(keys)
    (keys, obs, state), out = denv.rollout(keys, obs, state, steps=100, policy=policy, policy_params=theta)
    out["reward"], out["episodes"]                  # (4096,) summed reward and finished episodes per env

Why: XLA:CPU runs one jitted elementwise program on one core, so a plain ``jit(vmap(env.step))`` uses one
core of the machine whatever the batch.  Here every device runs the *same* compiled program (a ``lax.scan``
of ``steps`` vmapped env steps, or one reset / step) on its own block of the batch, all at once (asynchronous
dispatch through :func:`sims.run.mesh.split_call`, the dispatch of :class:`sims.run.fleet.FleetRun`), with no
communication: environments are independent.  Each environment's random numbers come from its own key:
every rollout step splits each environment's key ``k`` into ``(k', k_action, k_step)``, ``k_action`` goes to
the policy and ``k_step`` to :meth:`~sims.envs.base.Environment.step` (which splits it again for its automatic
reset), so no random number depends on the batch layout, and the results are **bitwise** those of
``devices=1`` (the plain one-program run), auto-reset included, whenever the whole batch and each device's
block are multiples of the SIMD width (8 float32 with 256-bit vectors, 16 with 512; e.g. 4096 envs on 2 devices).  Other
sizes agree to float32 rounding: XLA:CPU contracts multiply-adds in its vector loops but not in their scalar
tails, so an environment that moves between the two differs by an ulp (``tests/sims/envs/test_env_devices.py``).
A batch that is not a multiple of the device count is padded with copies of its last environment (dropped
from every output).  The arrays returned are split over the devices (``jax.sharding.NamedSharding``); pass
them back as they are (no copy) or read them with ``np.asarray``.

``params`` are compile-time constants of the programs (closed over by ``jit``): the task's coefficients that
are a concrete zero drop out of the compiled step (~20 % cheaper for the braking env, see
``benchmarks/RESULTS.md``); other params need another :class:`DeviceEnv` (and a compile).  Each distinct
``(policy, steps, record)`` compiles one rollout program per device, the first call of each from one thread
per device so that the compiles overlap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from sims.envs.base import Environment, dtype_of
from sims.run.mesh import device_mesh, padded_size, place, split_call, unpad


def random_policy(space) -> Callable:
    """The policy ``(policy_params, obs, key) -> action`` of uniform random actions in the action ``space``
    (a :class:`~sims.envs.base.Box`; ``policy_params`` and ``obs`` unused)."""

    def policy(policy_params, obs, key):
        return space.sample(key)

    return policy


class DeviceEnv:
    """``env`` with fixed ``params`` (default: ``env.default_params``), a batch of environments split over
    ``devices`` (module docstring).

    ``devices``: ``None`` (default) every local device of the default backend; an integer ``k`` the first ``k``;
    or a sequence of devices; one device is the plain single-program run.  Every method takes and returns
    arrays with a leading axis of ``n`` environments (``keys``: ``(n,)`` PRNG keys).  ``compiler_options``: XLA
    options of every program (e.g. :func:`sims.run.spec.fast_compile_options` in tests)."""

    def __init__(self, env: Environment, params=None, devices=None, compiler_options: dict | None = None):
        self.env = env
        self.params = env.default_params if params is None else params
        self.mesh = device_mesh(devices, source="DeviceEnv")
        self.devices = 1 if self.mesh is None else int(self.mesh.devices.size)
        self._seen: set = set()
        self._rollouts: dict = {}
        self._jit = functools.partial(jax.jit, compiler_options=dict(compiler_options) if compiler_options else None)
        p = self.params
        self._reset = self._jit(lambda keys: jax.vmap(env.reset, in_axes=(0, None))(keys, p))
        self._step = self._jit(
            lambda keys, state, act: jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, state, act, p)
        )

    def _run(self, fn, args: tuple, axes: tuple):
        """``fn(*args)`` on the devices: batched arguments (axis 0) padded and split, the others replicated."""
        if self.mesh is None:
            return fn(*args)
        n = next(jnp.shape(x)[0] for a, ax in zip(args, axes, strict=True) if ax == 0 for x in jax.tree.leaves(a))
        n_pad = padded_size(n, self.mesh)
        placed = tuple(place(a, ax, self.mesh, n_pad) for a, ax in zip(args, axes, strict=True))
        out = split_call(fn, placed, self.mesh, self._seen)
        return out if n_pad == n else unpad(out, n)

    def reset(self, keys):
        """``(obs, state)`` of ``n`` new episodes, environment ``i`` drawn with ``keys[i]``."""
        return self._run(self._reset, (keys,), (0,))

    def step(self, keys, state, actions):
        """One step of every environment (:meth:`Environment.step`, automatic reset): ``(obs, state, reward,
        terminated, truncated, info)``."""
        actions = jnp.asarray(actions, dtype_of(self.params))
        return self._run(self._step, (keys, state, actions), (0, 0, 0))

    def rollout_fn(self, steps: int, policy: Callable | None = None, record: bool = False):
        """The jitted rollout of one device block (what :meth:`rollout` runs per device; for lowering and HLO)."""
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise ValueError(f"steps = {steps!r} must be an integer >= 1")
        cache_key = (steps, policy, bool(record))
        if cache_key not in self._rollouts:
            self._rollouts[cache_key] = self._jit(self._rollout_body(steps, policy, bool(record)))
        return self._rollouts[cache_key]

    def _rollout_body(self, steps: int, policy, record: bool):
        env, params = self.env, self.params
        pol = policy if policy is not None else random_policy(env.action_space(params))
        vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
        vpol = jax.vmap(pol, in_axes=(None, 0, 0))
        split3 = jax.vmap(lambda k: jax.random.split(k, 3))

        def run(keys, obs, state, policy_params):
            def body(carry, _):
                keys, obs, state, total, episodes = carry
                ks = split3(keys)
                action = vpol(policy_params, obs, ks[:, 1])
                obs2, state, reward, term, trunc, _ = vstep(ks[:, 2], state, action, params)
                done = (term | trunc).astype(jnp.int32)
                rec = (obs, action, reward, term, trunc) if record else None
                return (ks[:, 0], obs2, state, total + reward, episodes + done), rec

            n = jnp.shape(keys)[0]
            zero = (jnp.zeros((n,), dtype_of(params)), jnp.zeros((n,), jnp.int32))
            carry, rec = jax.lax.scan(body, (keys, obs, state, *zero), None, length=steps)
            out = {"reward": carry[3], "episodes": carry[4]}
            if record:  # environment-major, so every output splits along its leading axis
                names = ("obs", "action", "reward_t", "terminated", "truncated")
                out.update({k: jnp.swapaxes(v, 0, 1) for k, v in zip(names, rec, strict=True)})
            return (carry[0], carry[1], carry[2]), out

        return run

    def rollout(self, keys, obs, state, steps: int, policy: Callable | None = None, policy_params=None, record=False):
        """``steps`` steps of every environment with actions from ``policy`` (automatic reset).

        ``policy(policy_params, obs, key) -> action`` acts for one environment (it is vmapped; a static
        Python callable, part of the compile key; ``policy_params`` any pytree, shared by all environments);
        default :func:`random_policy`.  Returns ``((keys, obs, state), out)``: the carry to pass to the next
        call, and ``out["reward"]`` (n,) the summed reward, ``out["episodes"]`` (n,) int32 the number of episodes
        that ended (terminated or truncated); with ``record=True`` also the trajectories ``obs`` (the observation
        acted on), ``action``, ``reward_t``, ``terminated``, ``truncated``, each ``(n, steps, ...)``."""
        fn = self.rollout_fn(steps, policy, record)
        return self._run(fn, (keys, obs, state, policy_params), (0, 0, 0, None))

    def __repr__(self):
        return f"DeviceEnv({self.env!r}, devices={self.devices})"


__all__ = ["DeviceEnv", "random_policy"]
