"""Inputs of the benchmark cases, built once from the same random numbers for JAX, NumPy and Python.

* tire inputs: wheel-centre velocities ``vx`` in [5, 40] m/s, ``vy`` and spin giving slip ratios and
  angles up to about +-0.3 (both sides of the force peak), camber in +-3 deg, loads 1-8 kN;
* fleets: ``n`` double-track cars that differ per vehicle in mass, yaw inertia, CG height, tire
  friction scales and the surface under each wheel (asphalt, wet, gravel, grass), rolling at 10-35 m/s
  with random steer, throttle and brake commands.
"""

from __future__ import annotations

import numpy as np

from benchmarks import reference as ref

#: Magic Formula coefficients of the bare-curve case (a typical lateral curve, unit peak).
MF_BCDE = (10.0, 1.9, 1.0, 0.97)
WHEEL_RADIUS = 0.31
SURFACE_IDS = (0, 2, 4, 6)  # asphalt_dry, asphalt_wet, gravel, grass in jaxtire.surfaces.preset_table


def curve_inputs(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.5, 0.5, n).astype(np.float32)


def tire_inputs(n: int, seed: int = 0) -> dict:
    """``vx, vy, omega, gamma, fz`` float32 arrays of length ``n``."""
    rng = np.random.default_rng(seed)
    vx = rng.uniform(5.0, 40.0, n)
    kappa = rng.uniform(-0.3, 0.3, n)
    alpha = rng.uniform(-0.3, 0.3, n)
    out = {
        "vx": vx,
        "vy": np.tan(alpha) * np.sqrt(vx * vx + ref.V_REG**2),
        "omega": (kappa * np.sqrt(vx * vx + ref.V_REG**2) + vx) / WHEEL_RADIUS,
        "gamma": rng.uniform(-0.05, 0.05, n),
        "fz": rng.uniform(1000.0, 8000.0, n),
    }
    return {k: v.astype(np.float32) for k, v in out.items()}


def chassis_arrays(n: int, seed: int = 0) -> dict:
    """Per-vehicle chassis overrides (float32 arrays) on top of the sims defaults."""
    rng = np.random.default_rng(seed)
    f = lambda lo, hi: rng.uniform(lo, hi, n).astype(np.float32)  # noqa: E731
    return {
        "mass": f(1150.0, 1650.0),
        "yaw_inertia": f(1900.0, 2700.0),
        "cg_height": f(0.45, 0.62),
        "max_drive_torque": f(2000.0, 3200.0),
        "brake_bias_front": f(0.6, 0.75),
        "mu_front": f(0.85, 1.1),
        "mu_rear": f(0.85, 1.1),
        "surface_ids": rng.choice(np.asarray(SURFACE_IDS, np.int32), size=(n, 4)),
    }


def fleet_controls(n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "steer": rng.uniform(-0.08, 0.08, n).astype(np.float32),
        "throttle": rng.uniform(-0.2, 0.8, n).astype(np.float32),
        "brake": (rng.uniform(0.0, 1.0, n) * (rng.uniform(0, 1, n) < 0.25)).astype(np.float32),
        "speed": rng.uniform(10.0, 35.0, n).astype(np.float32),
        "yaw_rate": rng.uniform(-0.2, 0.2, n).astype(np.float32),
    }


# --------------------------------------------------------------------------------------------------
# JAX side (sims API)


def jax_fleet(n: int, seed: int = 0, dtype=None):
    """``(params, state, controls)`` of a fleet of ``n`` double-track cars for :mod:`sims` (batched chassis),
    in ``dtype`` (default float32)."""
    import jax
    import jax.numpy as jnp

    import jaxtire
    from sims.roads.contact import make_contact
    from sims.vehicles import DOUBLE_TRACK, Controls, fleet_axes, make_chassis, make_vehicle
    from sims.vehicles.params import CHASSIS_DEFAULTS, TireScale

    dtype = dtype or jnp.float32
    arrs = chassis_arrays(n, seed)
    ctl = {k: jnp.asarray(v, dtype) for k, v in fleet_controls(n, seed + 1).items()}
    values = {k: np.full(n, v, np.float32) for k, v in CHASSIS_DEFAULTS.items()}
    for k in ("mass", "yaw_inertia", "cg_height", "max_drive_torque", "brake_bias_front"):
        values[k] = arrs[k]
    one = np.ones(n, np.float32)
    ch = make_chassis(
        **values,
        tire_scale_front=TireScale(arrs["mu_front"], arrs["mu_front"], one, one),
        tire_scale_rear=TireScale(arrs["mu_rear"], arrs["mu_rear"], one, one),
        tire_sides=(0.0, 0.0, 0.0, 0.0),  # every tire as measured, as the numpy reference step evaluates it
        dtype=dtype,
    )
    contact = make_contact(np.zeros(n), np.zeros(n), arrs["surface_ids"], dtype=dtype)
    params = make_vehicle(ch, jaxtire.default_tire(dtype=dtype), dtype=dtype, contact=contact)
    state = jax.vmap(lambda p, v, r: DOUBLE_TRACK.init_state(p, v, yaw_rate=r), in_axes=(fleet_axes(params), 0, 0))(
        params, ctl["speed"], ctl["yaw_rate"]
    )
    controls = Controls(steer=ctl["steer"], throttle=ctl["throttle"], brake=ctl["brake"])
    return params, state, controls


def fleet_step_fn(dt: float):
    """``step(params, state, controls) -> state`` for a fleet: :func:`sims.vehicles.integrators.make_step` of the
    double track, vmapped over the vehicles (chassis and contact batched, tires and surface table shared)."""
    import jax

    from sims.vehicles import DOUBLE_TRACK, fleet_axes
    from sims.vehicles.integrators import make_step

    one = make_step(DOUBLE_TRACK)

    def step(params, state, controls):
        return jax.vmap(one, in_axes=(fleet_axes(params), 0, 0, None))(params, state, controls, dt)

    return step


def fleet_rollout_fn(dt: float, n_steps: int, unroll: int = 1):
    """``run(params, state, controls) -> state`` after ``n_steps`` fleet steps in one ``lax.scan``."""
    import jax

    step = fleet_step_fn(dt)

    def run(params, state, controls):
        return jax.lax.scan(lambda s, _: (step(params, s, controls), None), state, None, length=n_steps, unroll=unroll)[
            0
        ]

    return run


# --------------------------------------------------------------------------------------------------
# NumPy / Python side (same numbers)


def _coef_values(tire) -> dict:
    return {k: float(np.asarray(v)) for k, v in tire.coef.items()}


def reference_tire(dtype=np.float32):
    """The bundled default tire as a reference-coefficient namespace (reads the .tir file via jaxtire)."""
    import jaxtire

    return ref.tire_coefs(_coef_values(jaxtire.default_tire()), dtype)


def reference_table(dtype=np.float32):
    from jaxtire.surfaces import PRESETS

    rows = np.array([tuple(s) for s in PRESETS.values()], np.float64)
    if dtype is float:
        return tuple([float(v) for v in rows[:, k]] for k in range(3))
    return tuple(rows[:, k].astype(dtype) for k in range(3))


def _chassis_dict(n: int, seed: int) -> dict:
    from sims.vehicles.params import CHASSIS_DEFAULTS

    arrs = chassis_arrays(n, seed)
    d = {k: np.full(n, v, np.float32) for k, v in CHASSIS_DEFAULTS.items()}
    for k in ("mass", "yaw_inertia", "cg_height", "max_drive_torque", "brake_bias_front"):
        d[k] = arrs[k]
    return d, arrs


def free_rolling_omega(n: int, seed: int = 0) -> list:
    """The four wheel speeds [rad/s] (a list of ``(n,)`` float32 arrays) of :func:`jax_fleet`'s start state: each
    wheel rolling free on its tire's effective rolling radius at the static load (``Model.init_state``), so the
    NumPy, Python and numba baselines start from exactly the JAX fleet's state."""
    omega = np.asarray(jax_fleet(n, seed)[1].omega, np.float32)
    return [omega[:, i] for i in range(4)]


def numpy_fleet(n: int, seed: int = 0):
    """``(chassis, tire, table, state, controls)`` for :func:`benchmarks.reference.vehicle_step` on NumPy arrays."""
    d, arrs = _chassis_dict(n, seed)
    ch = ref.chassis_values(d)
    one = np.ones(n, np.float32)
    ch.tire_scale_front = (arrs["mu_front"], arrs["mu_front"], one, one)
    ch.tire_scale_rear = (arrs["mu_rear"], arrs["mu_rear"], one, one)
    ch.surface_ids = [arrs["surface_ids"][:, i] for i in range(4)]
    ctl = fleet_controls(n, seed + 1)
    z = np.zeros(n, np.float32)
    speed = ctl["speed"]
    omega = [w.copy() for w in free_rolling_omega(n, seed)]
    state = (z, z.copy(), z.copy(), speed.copy(), z.copy(), ctl["yaw_rate"].copy(), omega, z.copy(), z.copy())
    return ch, reference_tire(), reference_table(), state, (ctl["steer"], ctl["throttle"], ctl["brake"])


def python_fleet(n: int, seed: int = 0):
    """Per-vehicle lists of Python-float namespaces / tuples for the pure-Python loop."""
    d, arrs = _chassis_dict(n, seed)
    ctl = fleet_controls(n, seed + 1)
    tire = reference_tire(float)
    table = reference_table(float)
    omega = free_rolling_omega(n, seed)
    chs, states, ctls = [], [], []
    for i in range(n):
        ch = ref.chassis_values({k: v[i] for k, v in d.items()}, float)
        mf, mr = float(arrs["mu_front"][i]), float(arrs["mu_rear"][i])
        ch.tire_scale_front, ch.tire_scale_rear = (mf, mf, 1.0, 1.0), (mr, mr, 1.0, 1.0)
        ch.surface_ids = [int(v) for v in arrs["surface_ids"][i]]
        chs.append(ch)
        v = float(ctl["speed"][i])
        states.append(
            (
                0.0,
                0.0,
                0.0,
                v,
                0.0,
                float(ctl["yaw_rate"][i]),
                [float(w[i]) for w in omega],
                0.0,
                0.0,
            )
        )
        ctls.append((float(ctl["steer"][i]), float(ctl["throttle"][i]), float(ctl["brake"][i])))
    return chs, tire, table, states, ctls
