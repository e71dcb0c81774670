"""Fleets: the same step and rollout functions ``vmap``-ped over a leading vehicle axis.

A fleet is a :class:`~sims.vehicles.params.VehicleParams` whose :class:`~sims.vehicles.params.Chassis`
leaves carry a leading axis of ``n`` vehicles while the base tires and the surface table stay shared
and unbatched (:func:`~sims.vehicles.params.fleet_axes`); every per-vehicle difference in the tires is
a small :class:`~sims.vehicles.params.TireScale` applied inside the vmapped step.  So a million
vehicles cost a million copies of ~35 numbers, not of the 160-leaf Magic Formula parameter set.

* :func:`sample_fleet`: per-vehicle mass, tire friction and stiffness scales and surfaces drawn from a
  :class:`Sampling`, deterministic given the PRNG key (bitwise identical on rerun on one backend).
* :func:`fleet_rollout`: :func:`sims.run.rollout.rollout` vmapped over vehicles (one jitted program), split
  over the local devices (``devices=``; :func:`sims.run.mesh.place`, bitwise the one-device result).
* :class:`FleetRun`: the same in chunks of steps (one compiled chunk function, called repeatedly), so
  a CLI can show progress, time the compile separately and stop early once every vehicle is done; the same
  placement.

Reductions (stopping distance, spin flags, ...) are folded over the steps inside the scan
(``reducer``), so no trajectory is stored unless ``record`` asks for one.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtire.surfaces import surface_id
from jaxtire.validation import ValidationError, check_int, check_range, is_concrete
from sims.drivers import check_target_speed
from sims.roads.contact import check_surface_ids
from sims.run._scan import blocked, check_steps, chunk_fns
from sims.run.mesh import block_of, global_mesh, padded_size, place, process_rows, split_call, to_global, unpad
from sims.run.placement import Placement
from sims.run.rollout import RolloutResult, _rollout_impl, launch
from sims.run.spec import RunSpec, run_config
from sims.vehicles import get_model
from sims.vehicles.params import Controls, TireScale, VehicleParams, fleet_axes


def broadcast(tree, n: int):
    """Every leaf of ``tree`` with a new leading axis of length ``n`` (a copy per vehicle)."""
    return jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (n,) + jnp.shape(x)), tree)


def fleet_start(params: VehicleParams, model, driver, *, speed=0.0, yaw_rate=0.0, **per_vehicle):
    """The start of a scenario run of the fleet ``params``: ``(model, state0, driver)``.

    ``model``: a name or model (:func:`sims.vehicles.get_model`); ``state0``: every vehicle rolling straight
    at ``speed`` [m/s] with ``yaw_rate`` [rad/s] (scalars or one value per vehicle); ``driver``: the
    given driver copied per vehicle (:func:`broadcast`) with the fields named in ``per_vehicle`` set per
    vehicle (scalars or shape ``(n,)``); every driver leaf and both initial values in the fleet's dtype.
    """
    n = fleet_size(params)
    m = get_model(model)
    dtype = jnp.asarray(params.chassis.mass).dtype
    per = lambda x: jnp.broadcast_to(jnp.asarray(x, dtype), (n,))  # noqa: E731
    state0 = jax.vmap(lambda p, v, r: m.init_state(p, v, yaw_rate=r), in_axes=(fleet_axes(params), 0, 0))(
        params, per(speed), per(yaw_rate)
    )
    drv = jax.tree.map(lambda x: jnp.asarray(x, dtype), broadcast(driver, n))
    drv = dataclasses.replace(drv, **{k: per(v) for k, v in per_vehicle.items()})
    check_target_speed(drv, params, source=f"{type(driver).__name__} (fleet_start)")
    return m, state0, drv


def fleet_size(params: VehicleParams) -> int:
    """Number of vehicles of a fleet (the leading size of its chassis leaves)."""
    shapes = {jnp.shape(x)[0] for x in jax.tree.leaves(params.chassis) if jnp.ndim(x)}
    if len(shapes) != 1:
        raise ValueError(f"fleet chassis leaves must share one leading vehicle axis, got sizes {sorted(shapes)}")
    return shapes.pop()


def vehicles(params: VehicleParams, index) -> VehicleParams:
    """The vehicles ``index`` of the fleet ``params``: every batched leaf (:func:`~sims.vehicles.params.fleet_axes`:
    the chassis, a per-vehicle contact, road or driveline) indexed on its vehicle axis, the shared ones kept.  An
    integer gives one vehicle (no vehicle axis), a slice or an index array a smaller fleet."""
    take = lambda ax, sub: sub if ax is None else jax.tree.map(lambda x: jnp.asarray(x)[index], sub)  # noqa: E731
    return jax.tree.map(take, fleet_axes(params), params, is_leaf=lambda x: x is None)


def make_fleet(params: VehicleParams, n: int) -> VehicleParams:
    """``n`` identical copies of one vehicle, as a fleet (chassis and contact batched, tires and surfaces
    shared)."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n = {n!r} vehicles must be an integer >= 1")
    return params._replace(chassis=broadcast(params.chassis, n), contact=broadcast(params.contact, n))


class Sampling(NamedTuple):
    """Monte Carlo distributions of the per-vehicle parameters (uniform ranges ``(low, high)``).

    ``mass``: factor on mass and yaw inertia (payload); ``mu``: factor on the tire friction scales
    ``mu_x``, ``mu_y`` of both axles (tread, temperature, wear); ``stiffness``: factor on ``k_x``,
    ``k_y`` (pressure, construction); ``surfaces``: surface ids, one drawn uniformly per vehicle for
    all four wheels."""

    mass: tuple = (0.9, 1.25)
    mu: tuple = (0.85, 1.1)
    stiffness: tuple = (0.8, 1.2)
    surfaces: tuple = (0,)


class FleetSample(NamedTuple):
    """What :func:`sample_fleet` drew, one value per vehicle (numpy-convertible arrays)."""

    mass_factor: Any
    mu_factor: Any
    stiffness_factor: Any
    surface_id: Any


def _check_range(name, rng, lo, hi):
    """A ``(low, high)`` range inside ``(lo, hi]`` with ``low <= high`` (through :mod:`jaxtire.validation`);
    the errors name the field, the value, and what to write instead."""
    if isinstance(rng, (str, bytes)) or not hasattr(rng, "__len__") or len(rng) != 2:
        raise ValidationError(
            f"Sampling: {name} = {rng!r} is not a range; give (low, high), e.g. {name}=({rng!r}, {rng!r}) "
            f"for a fixed factor"
            if not hasattr(rng, "__len__")
            else f"Sampling: {name} = {rng!r} must be two numbers (low, high), got {len(rng)}"
        )
    try:
        vals = [float(v) for v in rng]
    except (TypeError, ValueError):
        raise ValidationError(f"Sampling: {name} = {rng!r} must be two numbers (low, high)") from None
    if vals[0] > vals[1]:
        raise ValidationError(
            f"Sampling: {name} = {tuple(rng)!r} has low > high ({vals[0]:g} > {vals[1]:g}); "
            f"swap them: {name}=({vals[1]:g}, {vals[0]:g})"
        )
    check_range(f"{name}", vals, lo, hi, lo_incl=False, source="Sampling")


def surface_ids_of(surfaces, source: str = "Sampling.surfaces") -> tuple[int, ...]:
    """Surface names (``"asphalt_wet"``, of :data:`jaxtire.surfaces.PRESETS`) or integer ids, as ids; a single
    name or id is one surface.  Raises :class:`~jaxtire.validation.ValidationError` naming the bad entry."""
    if isinstance(surfaces, (str, int, np.integer)):
        surfaces = (surfaces,)
    out = []
    for s in surfaces:
        if isinstance(s, str):
            try:
                out.append(surface_id(s))
            except (KeyError, ValueError) as e:
                raise ValidationError(f"{source}: unknown surface {s!r} ({e})") from None
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            out.append(int(s))
        else:
            raise ValidationError(f"{source}: {s!r} is neither a surface name nor an integer id")
    return tuple(out)


def scale_vehicle(params: VehicleParams, mass_f, mu_f, k_f, surface_ids) -> VehicleParams:
    """``params`` with sampled factors applied: ``mass_f`` [-] on mass and yaw inertia, ``mu_f`` [-] on the tire
    friction scales ``mu_x``, ``mu_y`` and ``k_f`` [-] on ``k_x``, ``k_y`` of both axles, and the contact's
    ``surface_ids`` (int32, FL FR RL RR); the one place the fleet sampler and the RL environments randomise a
    vehicle."""
    ch = params.chassis

    def scaled(ts: TireScale) -> TireScale:
        return TireScale(ts.mu_x * mu_f, ts.mu_y * mu_f, ts.k_x * k_f, ts.k_y * k_f)

    chassis = ch._replace(
        mass=ch.mass * mass_f,
        yaw_inertia=ch.yaw_inertia * mass_f,
        tire_scale_front=scaled(ch.tire_scale_front),
        tire_scale_rear=scaled(ch.tire_scale_rear),
    )
    return params._replace(chassis=chassis, contact=params.contact._replace(surface_ids=surface_ids))


def sample_fleet(key, params: VehicleParams, n: int, sampling: Sampling = Sampling()):
    """``(fleet params, FleetSample)``: ``n`` vehicles around the single vehicle ``params``.

    Deterministic given ``key``: the same key gives bitwise identical fleets.
    """
    check_int("n", n, 1, source="sample_fleet")
    _check_range("mass", sampling.mass, 0.0, 100.0)
    _check_range("mu", sampling.mu, 0.0, 10.0)
    _check_range("stiffness", sampling.stiffness, 0.0, 10.0)
    ids = np.asarray(surface_ids_of(sampling.surfaces))
    n_surf = int(jnp.shape(params.surfaces.grip)[-1])
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"Sampling.surfaces must be a non-empty list of surface ids, got {sampling.surfaces!r}")
    check_surface_ids(np.repeat(ids[:, None], 4, axis=1), n_surf, source="Sampling.surfaces")
    dtype = jnp.asarray(params.chassis.mass).dtype
    k_mass, k_mu, k_stiff, k_surf = jax.random.split(key, 4)
    u = lambda k, rng: jax.random.uniform(k, (n,), dtype, rng[0], rng[1])  # noqa: E731
    mass_f, mu_f, k_f = u(k_mass, sampling.mass), u(k_mu, sampling.mu), u(k_stiff, sampling.stiffness)
    sid = jnp.asarray(ids, jnp.int32)[jax.random.randint(k_surf, (n,), 0, ids.size)]
    fleet = scale_vehicle(make_fleet(params, n), mass_f, mu_f, k_f, jnp.broadcast_to(sid[:, None], (n, 4)))
    return fleet, FleetSample(mass_f, mu_f, k_f, sid)


def _fleet_impl(params, state0, controls, reducer, t0, *, params_axes, driver_axes, reducer_axes, block, **static):
    fn = functools.partial(_rollout_impl, **static)
    axes = (params_axes, 0, driver_axes, reducer_axes, None)
    return blocked(jax.vmap(fn, in_axes=axes), block, axes)(params, state0, controls, reducer, t0)


def fleet_rollout(
    params: VehicleParams,
    state0,
    controls,
    n_steps: int,
    spec: RunSpec | None = None,
    *,
    reducer=None,
    t0=0.0,
    driver_axes=0,
    reducer_axes=None,
    placement: Placement | None = None,
    **fields,
) -> RolloutResult:
    """:func:`sims.run.rollout.rollout` over a fleet: ``params`` a fleet (chassis batched), ``state0`` batched,
    ``controls`` a driver or open-loop :class:`Controls` batched on axis 0 (``driver_axes=0``) or shared
    (``None``); ``reducer`` shared (``reducer_axes=None``) or batched (0).  Every output has a leading
    vehicle axis.  Equal to a Python loop of single rollouts (tested), in one compiled program.
    ``spec``: the run's :class:`~sims.run.spec.RunSpec`, or its fields as keywords (``dt`` required), as
    :func:`~sims.run.rollout.rollout`.

    ``placement``: a :class:`~sims.run.placement.Placement`, or its fields as keywords (``devices``: ``None``
    every local device, ``k`` the first ``k``, or a sequence; ``block``: vehicles per cache-sized block), the
    placement of :class:`FleetRun` (the same code): the fleet is padded to a multiple of the device count, each
    device runs the one-device program on its block, the outputs (padding dropped) are bitwise those of one
    device.  ``hosts=True``: every device of every process after :func:`sims.run.distributed.initialize` (the
    same call on every process, each with the whole fleet; :func:`global_rollout`), and every process gets the
    whole result (gathered, padding dropped).  Under a transformation (``jit``, ``grad``, ``vmap`` of this call)
    the devices are the caller's: its program runs (blocks still apply)."""
    spec, where = run_config(spec, placement, "fleet_rollout", **fields)
    if where.hosts and is_concrete((params, state0, controls, reducer)):
        from jax.experimental import multihost_utils

        n = fleet_size(params)
        kw = dict(t0=t0, driver_axes=driver_axes, reducer_axes=reducer_axes, block=where.block)
        out, _ = global_rollout((params, state0, controls, reducer), n_steps, spec, n=n, **kw)
        return unpad(jax.tree.map(jnp.asarray, multihost_utils.process_allgather(out, tiled=True)), n)
    if where.devices != 1 and is_concrete((params, state0, controls, reducer)):
        mesh = where.mesh("fleet_rollout")
        if mesh is not None:
            n = fleet_size(params)
            n_pad = padded_size(n, mesh)
            axes = (fleet_axes(params), 0, driver_axes, reducer_axes)
            args = tuple(
                place(x, ax, mesh, n_pad) for x, ax in zip((params, state0, controls, reducer), axes, strict=True)
            )

            def one(p, s, c, r):
                kw = dict(reducer=r, t0=t0, driver_axes=driver_axes, reducer_axes=reducer_axes)
                return fleet_rollout(p, s, c, n_steps, spec, placement=where._replace(devices=1), **kw)

            out = split_call(one, args, mesh, set())
            return unpad(out, n) if n_pad != n else out
    n = fleet_size(params)

    def check_batched(n_steps):
        for name, tree, axes in (("state0", state0, 0), ("controls", controls, driver_axes)):
            if axes == 0:
                sizes = {jnp.shape(x)[0] if jnp.ndim(x) else None for x in jax.tree.leaves(tree)}
                if sizes - {n}:
                    hint = (
                        "; a driver (or controls) shared by every vehicle needs driver_axes=None, or copy it "
                        "per vehicle with sims.run.fleet.broadcast(driver, n)"
                        if name == "controls"
                        else ""
                    )
                    raise ValueError(f"{name}: every leaf needs a leading vehicle axis of {n}, got sizes {sizes}{hint}")

    return launch(
        _fleet_impl,
        (params, state0, controls, reducer, t0),
        n_steps,
        spec,
        check_batched,
        params_axes=fleet_axes(params),
        driver_axes=driver_axes,
        reducer_axes=reducer_axes,
        block=where.block_size(),
    )


def global_rollout(
    args: tuple,
    n_steps: int,
    spec: RunSpec,
    *,
    n: int,
    driver_axes=0,
    reducer_axes=None,
    t0=0.0,
    local_inputs: bool = False,
    block="auto",
) -> tuple[RolloutResult, tuple[int, int, int]]:
    """:func:`fleet_rollout` of ``args`` (``(params, state0, controls, reducer)``, a fleet of ``n`` vehicles)
    over the global mesh of every process's devices (:func:`sims.run.mesh.global_mesh`): each process passes
    the whole fleet (or, ``local_inputs``, only its rows) and gets ``(the output as global arrays, padded to a
    multiple of the device count; this process's rows (start, stop, n_padded))``; ``driver_axes``,
    ``reducer_axes``, ``t0`` and ``block`` as :func:`fleet_rollout`'s.  The one multi-host run of :func:`fleet_rollout` (``hosts=True``) and
    :func:`sims.run.distributed.monte_carlo`."""
    mesh = global_mesh()
    rows = process_rows(n, mesh)
    axes = (fleet_axes(args[0]), 0, driver_axes, reducer_axes)
    g = [to_global(a, ax, mesh, rows, local_inputs, n) for a, ax in zip(args, axes, strict=True)]
    kw = dict(reducer_axes=reducer_axes, driver_axes=driver_axes, t0=t0, devices=1, block=block)

    def fn(p, s, c, r):
        return fleet_rollout(p, s, c, n_steps, spec, reducer=r, **kw)

    return jax.jit(fn, compiler_options=spec.options())(*g), rows


class RunStats(NamedTuple):
    """Timings of a :class:`FleetRun`: ``compile_s``, ``run_s`` [s], ``steps`` run, ``vehicles``,
    ``vehicle_steps_per_s`` (vehicles x steps / run_s, compile excluded)."""

    compile_s: float
    run_s: float
    steps: int
    vehicles: int
    vehicle_steps_per_s: float


class FleetRun:
    """A fleet rollout in chunks of ``chunk_steps`` steps with a closed-loop ``driver`` and a ``reducer``.

    ::

        run = FleetRun(params, state0, driver, dt=0.005, reducer=reducer, chunk_steps=200)
        run.compile()                                  # seconds (optional: run() compiles on first use)
        state, dstate, acc, stats = run.run(n_steps, progress=tqdm_bar, done=lambda acc: bool(...))

    One compiled chunk function (vmap over vehicles of a ``lax.scan`` over ``chunk_steps`` steps) is
    called ``ceil(n_steps / chunk_steps)`` times, the last one a shorter chunk of the remaining steps when
    ``chunk_steps`` does not divide ``n_steps`` (exactly ``n_steps`` steps run); between calls the host updates ``progress``
    (anything with ``update(n)``) and stops early when ``done(acc)`` is true.  ``driver_axes`` is 0 when
    the driver's leaves are batched per vehicle (see :func:`broadcast`), ``None`` when shared; ``spec`` the
    run's :class:`~sims.run.spec.RunSpec` or its fields as keywords (``dt`` required; e.g.
    ``compiler_options=fast_compile_options()``, :func:`sims.run.spec.fast_compile_options`; the records of ``spec.record`` are
    what :meth:`chunks` yields); ``placement`` its :class:`~sims.run.placement.Placement`, or the placement's
    fields as keywords (``block`` vehicles per cache-sized block, ``devices``).

    ``devices``: where the vehicles run.  ``None`` (default): every local device of the default backend
    (of ``jax.default_device`` when one is set); an integer ``k``: the first ``k`` of them; or a sequence of
    devices.  With more than one device the fleet is split along its vehicle axis over a 1-D mesh
    (:func:`sims.run.sharding.fleet_mesh`) and every device runs the *same* compiled chunk program as the
    one-device run on its own block, all devices at once (asynchronous dispatch, no communication); the
    carry and the reducer's accumulator stay split on that axis and the results are bitwise those of the
    one-device run.  (A ``shard_map`` of the chunk was tried: XLA compiles the partitioned program
    differently and the float32 results differ in the last bits, amplified near standstill.)  The fleet is
    padded to a multiple of the device count with copies of its last vehicle (dropped from every result).  One device
    (``devices=1``, or a machine with one) is the plain single-program run.  On a CPU, several host devices
    exist only when ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` is set before JAX starts
    (:func:`sims.run._xla.tune_cpu`; the fleet CLI does this).
    """

    def __init__(
        self,
        params: VehicleParams,
        state0,
        driver,
        spec: RunSpec | None = None,
        *,
        reducer=None,
        chunk_steps: int = 200,
        driver_axes=0,
        reducer_axes=None,
        t0: float = 0.0,
        placement: Placement | None = None,
        **fields,
    ):
        if isinstance(driver, Controls):
            raise ValueError("FleetRun needs a driver (wrap open-loop controls in sims.drivers.OpenLoop)")
        spec, where = run_config(spec, placement, "FleetRun", **fields)
        self.placement = where.local("FleetRun")
        self.spec = spec.check(params, "FleetRun", chunk_steps=chunk_steps)
        self.n = fleet_size(params)
        self.params, self.state, self.driver, self.reducer = params, state0, driver, reducer
        self.chunk_steps = chunk_steps
        self.t0 = float(t0)
        self.block = self.placement.block_size()
        self._driver_axes, self._reducer_axes = driver_axes, reducer_axes
        self.mesh = self.placement.mesh("FleetRun")
        self.devices = 1 if self.mesh is None else int(self.mesh.devices.size)
        self._n_pad = padded_size(self.n, self.mesh)
        self._axes = (fleet_axes(params), 0, driver_axes, reducer_axes)
        self._args = tuple(
            self._place(x, ax) for x, ax in zip((params, state0, driver, reducer), self._axes, strict=True)
        )
        self._init, self._chunk = self.chunk_fns(chunk_steps)
        self._compiled: Any = None
        self._partial: dict = {}  # steps -> the compiled shorter last chunk
        self._compacted: dict = {}  # (steps, batch) -> the compiled program of a gathered batch
        self._seen: set = set()  # signatures already run on every device (their per-device programs compiled)
        self._ready = False
        self.compile_s = 0.0

    def _place(self, tree, axes):
        """``tree`` padded to the device multiple and split over the mesh (unchanged on one device)."""
        return place(tree, axes, self.mesh, self._n_pad)

    def chunk_fns(self, steps: int):
        """The jitted ``(init, chunk)`` of a chunk of ``steps`` steps of this run (:func:`sims.run._scan.chunk_fns`,
        cached per configuration)."""
        p_axes, _, d_axes, r_axes = self._axes
        return chunk_fns(self.spec, steps, self.t0, p_axes, d_axes, r_axes, self.block)

    def _call(self, fn, *args, split: bool = True):
        """``fn(*args)``, on several devices: ``fn`` (one function, or one compiled program per device) on each
        device's block of ``args``, every output leaf reassembled as one array split over the mesh.  A
        signature not called before runs from one thread per device, so the per-device compiles overlap."""
        return split_call(fn, args, self.mesh if split else None, self._seen)

    def _initialise(self):
        if not self._ready:
            self.dstate, self.acc = self._call(self._init, *self._args)
            self._ready = True

    def start(self):
        """The carry at the run's start: ``(state, driver state, accumulator)``, placed as the run places it."""
        self._initialise()
        return (self._args[1], self.dstate, self.acc)

    @property
    def dt(self) -> float:
        """The step [s] (the spec's)."""
        return self.spec.dt

    def record_shapes(self):
        """The shapes and dtypes of one full chunk's records (``jax.eval_shape``: nothing runs)."""
        params, _, driver, reducer = self._args
        return jax.eval_shape(self._chunk, params, *self.start(), driver, reducer, jnp.int32(0))[1]

    def place_rows(self, tree):
        """A carry of ``n`` vehicle rows (e.g. read back from disk) padded and placed as :meth:`start`'s."""
        return self._place(tree, 0)

    def rows(self, tree):
        """``tree`` (every leaf with the vehicle axis first) without the padding rows: the ``n`` vehicles."""
        return tree if self._n_pad == self.n else unpad(tree, self.n)

    def chunks(self, n_steps: int, carry=None, start: int = 0):
        """Yield ``(i, k0, steps, carry, records)`` for chunks ``start, start + 1, ...`` of a run of ``n_steps``
        steps: chunk ``i`` runs ``steps`` steps from step ``k0 = i chunk_steps`` (the last one shorter when
        ``chunk_steps`` does not divide ``n_steps``) from ``carry`` (:meth:`start`'s when ``None``) and yields the
        carry after it and its records (``spec.record``; ``None`` without).  No early stop, no compaction: the
        plain chunk loop that :func:`sims.run.longrun.long_run` checkpoints."""
        cs = self.chunk_steps
        check_steps("FleetRun.chunks", self.spec.every, n_steps=n_steps, last_chunk_steps=n_steps % cs or cs)
        carry = self.start() if carry is None else carry
        params, _, driver, reducer = self._args
        for i in range(start, -(-n_steps // cs)):
            k0 = i * cs
            steps_i = min(cs, n_steps - k0)
            fn = self._chunk if steps_i == cs else self.chunk_fns(steps_i)[1]
            carry, ys = self._call(fn, params, *carry, driver, reducer, jnp.int32(k0))
            yield i, k0, steps_i, carry, ys

    def compile(self) -> float:
        """Compile the chunk function ahead of time; returns the seconds it took (also the initial driver
        state and accumulator's program).  :meth:`run` calls it first, so its ``RunStats.run_s`` never
        includes compiling."""
        if self._compiled is None:
            t = time.perf_counter()
            self._initialise()
            self._compiled = self._aot(self._chunk)
            self.compile_s += time.perf_counter() - t
        return self.compile_s

    def _aot(self, chunk):
        """``chunk`` compiled for this run's arguments: one executable, or one per device (the same HLO,
        compiled in parallel threads)."""
        p, s, drv, red = self._args
        args = (p, s, self.dstate, self.acc, drv, red, jnp.int32(0))
        if self.mesh is None:
            return chunk.lower(*args).compile()
        blocks = [jax.tree.map(lambda x, d=d: block_of(x, d), args) for d in self.mesh.devices.flat]
        lowered = [chunk.lower(*b) for b in blocks]
        with concurrent.futures.ThreadPoolExecutor(len(lowered)) as pool:
            return list(pool.map(lambda low: low.compile(), lowered))

    def run(self, n_steps: int, progress=None, done=None, active=None, min_batch: int = 1024, max_compactions: int = 1):
        """Run ``n_steps`` steps (the last chunk partial if needed); returns ``(state, dstate, acc, RunStats)``.

        ``done(acc) -> bool``: stop early.  ``active(acc) -> bool array``: which vehicles still need
        simulating; when at most a quarter of the batch is active (and the batch has at least ``2 min_batch``
        vehicles), the active ones are gathered into a smaller batch (a multiple of ``min_batch``, compiled
        on first use, at most ``max_compactions`` times) and the finished ones keep their last state and
        accumulator.
        Vehicles are independent, so the results are those of the full batch.  ``RunStats.steps`` counts
        the steps run and ``vehicle_steps_per_s`` the vehicle-steps actually simulated per second.  On several
        devices the gathered batch runs on the first device alone (the one-device program, compiled once).
        """
        if not isinstance(n_steps, int) or isinstance(n_steps, bool) or n_steps < 1:
            raise ValueError(f"n_steps = {n_steps!r} must be an integer >= 1")
        self.compile()  # compiled before the clock starts: run_s is the run alone
        fn = self._compiled
        last = n_steps % self.chunk_steps
        if last and last not in self._partial:  # the shorter last chunk, compiled now as well
            t_c = time.perf_counter()
            self._partial[last] = self._aot(self.chunk_fns(last)[1])
            self.compile_s += time.perf_counter() - t_c
        params, state, driver, reducer = self._args
        full = (state, self.dstate, self.acc)
        cur = full
        idx, n_valid = None, self.n  # current subset of the fleet (None: all of it)
        n_chunks = -(-n_steps // self.chunk_steps)
        t = time.perf_counter()
        steps = work = compactions = 0
        for i in range(n_chunks):
            s, d, a = cur
            k0 = i * self.chunk_steps
            steps_i = min(self.chunk_steps, n_steps - k0)
            if idx is not None:
                fn = self._chunk  # a compacted batch has another shape
            if steps_i < self.chunk_steps:
                # the partial last chunk: compiled above for the whole fleet, on first use for a compacted batch
                fn = self._partial[steps_i] if idx is None else self.chunk_fns(steps_i)[1]
            args = (params, s, d, a, driver, reducer, jnp.int32(k0))
            if idx is not None and fn is not self._compiled:
                key = (steps_i, len(idx))
                if key not in self._compacted:  # compile the gathered batch's program off the clock
                    t_c = time.perf_counter()
                    self._compacted[key] = fn.lower(*args).compile()
                    spent = time.perf_counter() - t_c
                    self.compile_s += spent
                    t += spent
                fn = self._compacted[key]
            (s, d, a), _ = self._call(fn, *args, split=idx is None)
            cur = (s, d, a)
            jax.block_until_ready(s)
            steps += steps_i
            work += steps_i * (self.n if idx is None else len(idx))
            if progress is not None:
                progress.update(steps_i)
            if done is not None and done(a):
                break
            if active is None:
                continue
            act = np.asarray(active(a), bool)[:n_valid]
            # the batch size of the one-device run decides, so every device count drops vehicles at the same steps
            size = self.n if idx is None else min_batch * int(math.ceil(n_valid / min_batch))
            n_act = int(act.sum())
            if n_act == 0:
                break
            if compactions < max_compactions and size >= 2 * min_batch and n_act * 4 <= size:
                compactions += 1
                full = self._scatter(full, cur, idx, n_valid)
                glob = np.nonzero(act)[0] if idx is None else idx[:n_valid][act]
                bucket = min_batch * int(math.ceil(n_act / min_batch))
                idx = np.concatenate([glob, np.full(bucket - n_act, glob[0])]).astype(np.int32)
                n_valid = n_act
                take = lambda x, idx=idx: jnp.asarray(x)[idx]  # noqa: E731
                p0, _, d0, _ = self._args
                # the gathered batch runs on the first device (the one-device program: no per-device compiles)
                first = None if self.mesh is None else self.mesh.devices.flat[0]

                def one(t, d=first):
                    return t if d is None else jax.device_put(t, d)

                params = one(vehicles(p0, idx))
                driver = one(jax.tree.map(take, d0) if self._driver_axes == 0 else d0)
                r0 = self._args[3]
                reducer = one(jax.tree.map(take, r0) if self._reducer_axes == 0 else r0)
                cur = one(jax.tree.map(take, full))
        full = self._scatter(full, cur, idx, n_valid)
        run_s = time.perf_counter() - t
        s, d, a = full if self._n_pad == self.n else unpad(full, self.n)
        return s, d, a, RunStats(self.compile_s, run_s, steps, self.n, work / max(run_s, 1e-9))

    def _scatter(self, full, cur, idx, n_valid):
        if idx is None:
            return cur
        if self.mesh is not None:  # from the first device back into the split arrays
            cur = jax.device_put(cur, NamedSharding(self.mesh, P()))
        sel = jnp.asarray(idx[:n_valid])
        return jax.tree.map(lambda f, c: jnp.asarray(f).at[sel].set(jnp.asarray(c)[:n_valid]), full, cur)
