"""Environment protocol, spaces and the shared vehicle plumbing of the RL tasks.

The API is gymnax's (1.0.x ``gymnax.environments.environment.Environment``): every method is a pure
function of its arguments, so it can be ``jit``-ed and ``vmap``-ed over keys *and* over ``params``::

    env = sims.envs.make("jaxtire/Braking-v0")
    params = env.default_params                        # a pytree: vehicle physics + task settings
    obs, state = env.reset(key, params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)

with gymnax's split into ``reset_env`` / ``step_env`` (no automatic reset) / ``is_truncated``.
:mod:`sims.envs.gymnax` makes it a subclass of gymnax's own ``Environment`` with gymnax spaces, for
gymnax's wrappers and gymnax-based training code.

``step`` resets automatically: when an episode ends (``done = terminated | truncated``), the returned
``obs`` and ``state`` are those of a fresh episode drawn with the step's key, and
``info["final_observation"]`` is the observation of the state the episode ended in.  ``info`` always
holds the same keys:

* ``terminated`` (bool): the episode ended in a terminal state (off-track, spin, stopped, ...);
* ``truncated`` (bool): it hit the time limit (``params.max_steps`` steps) and did not terminate;
* ``discount`` (float): ``1 - terminated``;
* ``final_observation``: the observation before the automatic reset (equal to ``obs`` unless ``done``);
* ``episode_return``, ``episode_length``: return and number of steps of the episode so far, *including*
  this step (on ``done``, the finished episode's totals);
* task metrics (``speed``, ``progress``, ...; see each task).

Spaces (:class:`Box`) give ``shape``, ``dtype``, ``low`` and ``high`` of a single (unbatched)
observation or action.  Every task takes continuous actions in ``[-1, 1]`` (the mapping to steering,
throttle and brake is documented per task; actions outside are clipped).

Physics.  Each env step holds the action for ``params.dt`` seconds (default 0.05 s) and advances the
four-wheel Magic Formula vehicle of :mod:`sims.vehicles.double_track` with ``substeps`` (default 10)
steps of :func:`sims.vehicles.integrators.semi_implicit_euler`, i.e. 5 ms, the step at which the stopping
distance of a braked car is converged to a few per cent.  ``model="full"`` (a constructor / ``make``
keyword, static like ``substeps``) runs the 14-DOF :mod:`sims.vehicles.full` instead (body roll, pitch,
heave, suspension, vertical tires; its state the same :class:`~sims.vehicles.params.VehicleState` with a
:class:`~sims.vehicles.full.BodyState` in ``body``, so the observations and rewards read it unchanged).  The tires are evaluated by :mod:`jaxtire`
only (through the vehicle model); nothing here re-derives a tire equation.

Domain randomisation.  ``params`` holds the base :class:`~sims.vehicles.params.VehicleParams` and
*ranges* (``mass_scale``, ``mu_scale``, task-specific ones); ``reset`` samples one value per episode
from them with the reset key and keeps the sample in the state (:class:`Physics`), so changing a range
never recompiles.  Vmap over a batched ``params`` for one physics per environment.

Dtypes.  Every floating-point leaf of the state, observation and reward has the dtype of the vehicle
params (float32 by default, float64 for params built under ``jax.enable_x64``); counters are int32, flags
bool, so ``jnp.where(done, reset_state, state)`` never changes a dtype.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.surfaces import preset_table
from sims.run.chunked import chunked as _chunked
from sims.run.fleet import scale_vehicle
from sims.vehicles import MODELS, get_model, presets
from sims.vehicles.core import rolling_radii
from sims.vehicles.integrators import make_step_with_telemetry
from sims.vehicles.params import VehicleParams, VehicleState


class Box(NamedTuple):
    """A box-shaped space of one observation or action: ``shape`` (tuple), ``dtype`` (numpy dtype) and the
    element-wise bounds ``low`` / ``high`` (numpy arrays of ``shape``)."""

    shape: tuple
    dtype: Any
    low: np.ndarray
    high: np.ndarray

    def sample(self, key):
        """A uniform sample (``jax`` array of ``shape`` and ``dtype``)."""
        return jax.random.uniform(
            key, self.shape, self.dtype, jnp.asarray(self.low, self.dtype), jnp.asarray(self.high, self.dtype)
        )

    def contains(self, x) -> bool:
        """Whether ``x`` (concrete) has the shape and lies within the bounds."""
        x = np.asarray(x)
        return x.shape == tuple(self.shape) and bool(np.all(x >= self.low) and np.all(x <= self.high))


def box(n: int, low, high, dtype) -> Box:
    """A ``(n,)`` :class:`Box` space of ``dtype`` between ``low`` and ``high`` (scalars or ``(n,)``)."""
    dtype = np.dtype(dtype)
    return Box(
        (n,),
        dtype,
        np.broadcast_to(np.asarray(low, dtype), (n,)).copy(),
        np.broadcast_to(np.asarray(high, dtype), (n,)).copy(),
    )


class Physics(NamedTuple):
    """What ``reset`` sampled for the episode: ``mass_scale`` [-] on mass and yaw inertia, ``mu_scale``
    [-] on the tire friction of both axles (``TireScale.mu_x``, ``mu_y``), ``surface_ids`` int32 (4,)
    per wheel FL, FR, RL, RR into the surface table."""

    mass_scale: Any
    mu_scale: Any
    surface_ids: Any


class Transition(NamedTuple):
    """What a task's ``transition`` returns: next state, reward, terminated flag, task metrics (dict)."""

    state: Any
    reward: Any
    terminated: Any
    metrics: dict


def dtype_of(params) -> Any:
    """The floating dtype of the env params (that of the vehicle mass)."""
    return jnp.asarray(params.vehicle.chassis.mass).dtype


def uniform(key, rng, dtype, shape=()):
    """A uniform sample in ``[rng[0], rng[1]]`` (``rng`` a (2,) array; equal bounds give that value)."""
    rng = jnp.asarray(rng, dtype)
    u = jax.random.uniform(key, shape, dtype)
    return rng[0] + (rng[1] - rng[0]) * u


WHEELS = ("fl", "fr", "rl", "rr")


def vehicle_for(params, phys: Physics) -> VehicleParams:
    """The base vehicle of ``params`` with the episode's sampled :class:`Physics` applied (the fleet's own
    :func:`sims.run.fleet.scale_vehicle`, tire stiffness unchanged)."""
    vp = params.vehicle
    return scale_vehicle(vp, phys.mass_scale, phys.mu_scale, 1.0, phys.surface_ids)


#: the vehicle models an environment can run (four wheels: the observations have one entry per wheel)
ENV_MODELS = tuple(name for name, m in MODELS.items() if m.n_wheels == 4)


def safe_vehicle(vs: VehicleState) -> Any:
    """Whether every number of the vehicle state is finite (a diverged episode is terminated); a scalar bool."""
    leaves = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(vs)]
    return functools.reduce(jnp.logical_and, leaves)


# --------------------------------------------------------------------------------------------------
# vehicles


def make_env_vehicle(name: str = "hatchback", dtype=None, **overrides) -> VehicleParams:
    """Validated :class:`VehicleParams` of a :mod:`sims.vehicles.presets` vehicle (``"hatchback"``,
    ``"sports_car"``, ``"kart"``, ``"race_car"``; MF 6.2 tire, the preset surface table) with chassis
    ``overrides``, cast to ``dtype`` (default float: float32 unless x64 is enabled)."""
    dtype = dtype or jnp.result_type(float)
    return presets.get(name, "mf", preset_table(), dtype=dtype, **overrides)


def as_params_array(x, dtype):
    """``x`` (a number, sequence or array, in the field's unit) as a JAX array of ``dtype``, same shape."""
    return jnp.asarray(np.asarray(x, dtype=np.float64), dtype)


class Environment:
    """Base class of the tasks.  Subclasses implement :meth:`init_params`, :meth:`reset_state`,
    :meth:`transition`, :meth:`get_obs` and the space sizes; :meth:`reset` and :meth:`step` (auto-reset,
    bookkeeping) are shared.

    ``substeps`` (Python int, static) vehicle steps per env step; ``privileged`` (static) appends the
    privileged observations (surface grip under the wheels, friction scale, mass scale) to the observation;
    ``model`` (static, a name of :data:`ENV_MODELS`: ``"double_track"`` or ``"full"``) the vehicle model.
    """

    name: str = "env"
    #: number of action components (all in [-1, 1])
    num_actions: int = 0
    #: names of the action components, in order
    action_names: tuple = ()

    def __init__(self, substeps: int = 10, privileged: bool = False, model: str = "double_track"):
        if not isinstance(substeps, int) or not 1 <= substeps <= 1000:
            raise ValueError(f"substeps = {substeps!r} must be an integer in [1, 1000]")
        if model not in ENV_MODELS:
            raise ValueError(
                f"model = {model!r} is not an environment's vehicle model; allowed: {', '.join(ENV_MODELS)}"
            )
        self.substeps = substeps
        self.privileged = bool(privileged)
        self.model = model

    @property
    def vehicle_model(self):
        """The :class:`sims.vehicles.core.Model` of :attr:`model`."""
        return get_model(self.model)

    def init_vehicle(self, vehicle: VehicleParams, speed, **kw):
        """The vehicle rolling straight at ``speed`` [m/s] (keywords ``x, y, yaw``): the model's ``init_state``."""
        return self.vehicle_model.init_state(vehicle, speed, **kw)

    # -- to implement ------------------------------------------------------------------------------
    def init_params(self, dtype):  # pragma: no cover - abstract
        raise NotImplementedError

    def reset_state(self, key, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def transition(self, key, state, action, params) -> Transition:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_obs(self, state, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def controls(self, action, params):  # pragma: no cover - abstract
        """The vehicle :class:`~sims.vehicles.params.Controls` of a (clipped) action."""
        raise NotImplementedError

    @staticmethod
    def wheel_speeds(vehicle: VehicleParams, vs: VehicleState):
        """Circumferential wheel speeds ``omega Re`` [m/s] (4,) of the vehicle state: on the tires' effective rolling
        radii at the static load (:func:`sims.vehicles.core.rolling_radii`), the radius the model's slip uses."""
        return vs.omega * rolling_radii(vehicle, 4, vs.omega)

    @staticmethod
    def per_wheel(*names: str) -> tuple:
        """Observation names ``<name>_fl, <name>_fr, <name>_rl, <name>_rr`` for each of ``names``, in order."""
        return tuple(f"{name}_{w}" for name in names for w in WHEELS)

    def sample_physics(self, key, params, surface_ids) -> Physics:
        """Mass and friction scales [-] drawn uniformly in ``params.mass_scale`` / ``params.mu_scale`` (scalars
        of the params dtype), with the given surface ids (int32, ``(4,)``: FL, FR, RL, RR)."""
        dtype = dtype_of(params)
        k1, k2 = jax.random.split(key)
        return Physics(
            uniform(k1, params.mass_scale, dtype),
            uniform(k2, params.mu_scale, dtype),
            jnp.asarray(surface_ids, jnp.int32),
        )

    def simulate(self, params, state, controls):
        """``(vehicle state, telemetry)`` after one env step: :attr:`substeps` vehicle steps over ``params.dt`` of
        ``state.vehicle`` with the episode's :class:`Physics` (``state.phys``) applied, through the runners' one
        step function (:func:`sims.vehicles.integrators.make_step_with_telemetry`, the last substep's telemetry)."""
        vp = vehicle_for(params, state.phys)
        step = make_step_with_telemetry(self.vehicle_model, "semi_implicit_euler", self.substeps, telemetry="last")
        return step(vp, state.vehicle, controls, params.dt)

    #: names of the observation components (without the privileged ones)
    obs_names: tuple = ()
    privileged_names: tuple = ("grip", "mu_scale", "mass_scale")

    # -- shared -------------------------------------------------------------------------------------
    @property
    def default_params(self):
        """The task's default params (floats in the current default float dtype: float32, or float64 under x64)."""
        name = jnp.dtype(jnp.result_type(float)).name
        cache = self.__dict__.setdefault("_params_cache", {})
        if name not in cache:
            cache[name] = self.init_params(jnp.dtype(name))
        return cache[name]

    def params(self, dtype=None, **overrides):
        """Default params with fields replaced (e.g. ``env.params(max_steps=200, mu_scale=(0.8, 1.1))``);
        numbers are cast to the params' dtype, ranges to (2,) arrays."""
        p = self.init_params(dtype or jnp.result_type(float))
        dt = dtype_of(p)
        rep = {}
        for k, v in overrides.items():
            if k not in p._fields:
                raise ValueError(f"{self.name}: unknown param {k!r}; allowed {p._fields}")
            old = getattr(p, k)
            if isinstance(old, (VehicleParams, tuple)) and not hasattr(old, "dtype"):
                rep[k] = v
            else:
                old = jnp.asarray(old)
                new = jnp.asarray(np.asarray(v), old.dtype if not jnp.issubdtype(old.dtype, jnp.floating) else dt)
                if new.shape != old.shape:
                    raise ValueError(f"{self.name}: param {k!r} must have shape {old.shape}, got {new.shape}")
                rep[k] = new
        return p._replace(**rep)

    @property
    def num_obs(self) -> int:
        return len(self.obs_names) + (len(self.privileged_names) if self.privileged else 0)

    #: bounds of observation components: name prefix -> ``(low, high)`` (first match); others [-10, 10]
    obs_bounds: dict = {}

    def obs_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float64 arrays ``(num_obs,)``: each component's bounds (:attr:`obs_bounds` by name
        prefix, else [-10, 10]); :meth:`finish_obs` clips to them, so every observation lies in its space."""
        names = self.obs_names + (self.privileged_names if self.privileged else ())
        lim = [next((b for p, b in self.obs_bounds.items() if n.startswith(p)), (-10.0, 10.0)) for n in names]
        arr = np.asarray(lim, np.float64).reshape(-1, 2)
        return arr[:, 0].copy(), arr[:, 1].copy()

    def observation_space(self, params=None) -> Box:
        """Box of one observation: every component is scaled to order one and clipped to its bounds
        (:meth:`obs_limits`: [-10, 10] unless the task narrows them, e.g. [-1, 1] for a sine)."""
        dtype = dtype_of(params) if params is not None else jnp.result_type(float)
        low, high = self.obs_limits()
        return box(self.num_obs, low, high, dtype)

    def action_space(self, params=None) -> Box:
        """Box of one action: ``num_actions`` components in [-1, 1] (see :attr:`action_names`)."""
        dtype = dtype_of(params) if params is not None else jnp.result_type(float)
        return box(self.num_actions, -1.0, 1.0, dtype)

    def reset_env(self, key, params):
        """``(obs, state)`` of a new episode drawn with ``key`` (gymnax's ``reset_env``)."""
        state = self.reset_state(key, params)
        return self.get_obs(state, params), state

    def step_env(self, key, state, action, params):
        """One step without the automatic reset (gymnax's ``step_env``): ``(obs, state, reward, terminated,
        info)``.  Clips the action to [-1, 1], ends a non-finite episode (reward 0) and counts ``t`` and
        ``ret``; ``info`` holds ``episode_return``, ``episode_length`` and the task metrics."""
        dtype = dtype_of(params)
        action = jnp.clip(jnp.asarray(action, dtype), -1.0, 1.0)
        tr = self.transition(key, state, action, params)
        finite = safe_vehicle(tr.state.vehicle)
        terminated = jnp.asarray(tr.terminated, bool) | ~finite
        reward = jnp.where(finite, jnp.asarray(tr.reward, dtype), jnp.zeros((), dtype))
        t = state.t + 1
        ret = state.ret + reward
        st = tr.state._replace(t=t, ret=ret)
        info = {"episode_return": ret, "episode_length": t}
        info.update({k: jnp.asarray(v, dtype) for k, v in tr.metrics.items()})
        return self.get_obs(st, params), st, reward, terminated, info

    def is_truncated(self, state, params):
        """Whether the episode hit the time limit (``state.t >= params.max_steps``)."""
        return state.t >= params.max_steps

    def reset(self, key, params=None):
        """``(obs, state)`` of a new episode drawn with ``key``."""
        params = self.default_params if params is None else params
        return self.reset_env(key, params)

    def step(self, key, state, action, params=None):
        """One env step, gymnax's signature and return tuple: ``(obs, state, reward, terminated, truncated,
        info)``, resetting automatically when ``terminated | truncated`` (module docstring).

        ``key`` splits into ``(k_step, k_reset)``: the reset of a finished episode is exactly
        ``reset(k_reset, params)``.  ``truncated`` excludes ``terminated``."""
        params = self.default_params if params is None else params
        k_step, k_reset = jax.random.split(key)
        obs_st, st, reward, terminated, info = self.step_env(k_step, state, action, params)
        truncated = self.is_truncated(st, params) & ~terminated
        done = terminated | truncated
        obs_re, st_re = self.reset_env(k_reset, params)
        new_state = jax.tree.map(lambda a, b: jnp.where(done, a, b), st_re, st)
        obs = jnp.where(done, obs_re, obs_st)
        info = {
            "terminated": terminated,
            "truncated": truncated,
            "discount": 1.0 - terminated.astype(reward.dtype),
            "final_observation": obs_st,
            **info,
        }
        return obs, new_state, reward, terminated, truncated, info

    def finish_obs(self, parts, state, params):
        """Concatenate observation parts, append the privileged ones if enabled, clip to :meth:`obs_limits`."""
        dtype = dtype_of(params)
        parts = [jnp.atleast_1d(jnp.asarray(p, dtype)) for p in parts]
        if self.privileged:
            grip = jnp.mean(params.vehicle.surfaces.grip[state.phys.surface_ids])
            parts += [jnp.atleast_1d(jnp.asarray(v, dtype)) for v in (grip, state.phys.mu_scale, state.phys.mass_scale)]
        low, high = self.obs_limits()
        return jnp.clip(jnp.concatenate(parts), jnp.asarray(low, dtype), jnp.asarray(high, dtype))

    def config(self) -> tuple:
        """The static configuration (what ``jit`` specialises on); equal configs give equal envs."""
        extra = tuple(
            (k, v if isinstance(v, (str, int, float, bool)) else id(v))
            for k, v in sorted(vars(self).items())
            if not k.startswith("_")
        )
        return (type(self).__qualname__,) + extra

    def __eq__(self, other):
        return isinstance(other, Environment) and self.config() == other.config()

    def __hash__(self):
        return hash(self.config())

    def __repr__(self):
        model = "" if self.model == "double_track" else f", model={self.model!r}"
        return (
            f"{type(self).__name__}(name={self.name!r}, substeps={self.substeps}, privileged={self.privileged}{model})"
        )


def chunked(fn, chunk: int | None, in_axes=(0, 0, 0, None)):
    """``fn`` (vmapped, ``params`` last and shared) stepped ``chunk`` environments at a time inside the same
    call (:func:`sims.run.chunked.chunked`, ``lax.map`` over blocks; identical results): on a CPU a batch far
    larger than the caches (131k environments) runs up to 3x faster in blocks of ~16k.  ``None``: ``fn``."""
    if not chunk:
        return fn
    return _chunked(fn, int(chunk), in_axes=in_axes)


@functools.lru_cache(maxsize=64)
def batched(env: Environment, chunk: int | None = None):
    """Jitted, vmapped ``(reset, step)`` of ``env`` (shared params, one key per environment)::

        obs, state = reset(keys, params)                                 # keys (n,)
        obs, state, reward, terminated, truncated, info = step(keys, state, actions, params)

    ``chunk``: process that many environments at a time (:func:`chunked`; for huge batches on a CPU).
    Cached per env configuration, so every user of an equal env (tests, the Gymnasium wrappers, PPO)
    shares the compiled executables."""
    reset = jax.jit(chunked(jax.vmap(env.reset, in_axes=(0, None)), chunk, in_axes=(0, None)))
    jstep = jax.jit(chunked(jax.vmap(env.step, in_axes=(0, 0, 0, None)), chunk))

    def step(keys, state, actions, params):
        # a strongly typed action of the params' dtype: weakly typed or float64 input would recompile
        return jstep(keys, state, jnp.asarray(actions, dtype_of(params)), params)

    step.jitted = jstep  # type: ignore[attr-defined]  # function attribute: the raw jitted step, for lowering
    return reset, step
