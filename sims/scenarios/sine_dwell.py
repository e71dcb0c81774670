"""The sine with dwell of FMVSS 126 (49 CFR 571.126 S7.9) and UN R140: the stability-control test.

Each vehicle coasts at ``speed`` (default 80 km/h, throttle released) and gets the steer of
:class:`sims.drivers.SineWithDwell` (0.7 Hz, 500 ms dwell at the second peak) with the amplitude ``scale``
x ``A``: ``A`` the road-wheel angle at which the car reaches 0.3 g in the slowly increasing steer test
(S7.6; :func:`slowly_increasing_steer` runs it; the setting ``steer_03g`` [rad], 0 takes the linear
bicycle's ``(L / v^2 + K_us) 0.3 g``, :func:`bicycle_steer`).  The regulation's amplitudes run from 1.5 A
to 6.5 A; the displacement criterion applies from 5 A.

Measured (:class:`SineDwellReducer`), with ``T0`` the completion of steer (COS, ``1 / f + dwell`` after
the beginning, BOS) and ``r_peak`` the first peak of the yaw rate after the steer changes sign (its
extreme in the direction of the second half-wave, between the sign change and COS)::

    yaw_ratio_100 = |r(T0 + 1.00 s)| / r_peak  <= 0.35      (S5.2.1)
    yaw_ratio_175 = |r(T0 + 1.75 s)| / r_peak  <= 0.20      (S5.2.2)
    lateral_displacement = Y(BOS + 1.07 s)   >= 1.83 m      (S5.2.3, GVWR <= 3500 kg, amplitudes >= 5 A)

(``Y`` the lateral displacement of the centre of gravity from the initial straight path, positive in the
direction of the first steer).  Passed: all three (the third only for ``scale >= 5``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire.constants import GRAVITY
from jaxtire.tire import linear_stiffness, scale_tire
from sims.drivers import OpenLoop, SineWithDwell, pytree_dataclass
from sims.run.fleet import fleet_size, fleet_start
from sims.run.rollout import rollout
from sims.scenarios._config import check_config
from sims.scenarios.base import PASSED, Metric, ScenarioBase, Setup, per_vehicle
from sims.vehicles import get_model
from sims.vehicles.core import axle_loads
from sims.vehicles.params import Controls, VehicleParams

#: FMVSS 126 S5.2: yaw-rate ratios at 1.00 s and 1.75 s after COS, lateral displacement at 1.07 s after BOS.
YAW_RATIO_100, YAW_RATIO_175, DISPLACEMENT = 0.35, 0.20, 1.83
#: Times [s] of the criteria.
T_100, T_175, T_DISP = 1.00, 1.75, 1.07
#: Lateral acceleration [m/s^2] of the amplitude ``A`` (0.3 g).
AY_03G = 0.3 * GRAVITY


def understeer_gradient(params: VehicleParams):
    """``K_us = (m / L) (b / C_f - a / C_r)`` [rad s^2/m] of the linear bicycle, ``C_f``, ``C_r`` [N/rad] the
    axles' cornering stiffnesses (two tires each, :func:`jaxtire.tire.linear_stiffness` at the static
    loads with the vehicle's tire scales, on the surface table's entry 0)."""
    ch = params.chassis
    z = jnp.zeros_like(ch.mass)
    ff, fr = axle_loads(ch, z, z)
    cf = 2.0 * linear_stiffness(scale_tire(params.tire_front, *ch.tire_scale_front), 0.5 * ff)[1]
    cr = 2.0 * linear_stiffness(scale_tire(params.tire_rear, *ch.tire_scale_rear), 0.5 * fr)[1]
    L = ch.cg_to_front + ch.cg_to_rear
    return ch.mass / L * (ch.cg_to_rear / cf - ch.cg_to_front / cr)


def bicycle_steer(params: VehicleParams, speed, ay=AY_03G):
    """Road-wheel angle [rad] of the linear bicycle in a steady turn at ``speed`` [m/s] and lateral
    acceleration ``ay`` [m/s^2]: ``ay (L / v^2 + K_us)`` (:func:`understeer_gradient`)."""
    ch = params.chassis
    return ay * ((ch.cg_to_front + ch.cg_to_rear) / (speed * speed) + understeer_gradient(params))


def slowly_increasing_steer(
    params: VehicleParams, speed=80.0 / 3.6, rate=0.015, dt=0.005, model="double_track", compiler_options=None
):
    """``A`` [rad]: the road-wheel angle at 0.3 g in the slowly increasing steer test (S7.6) of one vehicle:
    coasting from ``speed`` [m/s], the steer ramps at ``rate`` [rad/s] (the regulation's 13.5 deg/s at the
    steering wheel over a ~16:1 steering ratio); the line fitted to steer against lateral acceleration
    between 0.1 g and 0.375 g, evaluated at 0.3 g.  A host function (one rollout, numpy fit);
    ``compiler_options`` those of :func:`sims.run.rollout.rollout`."""
    m = get_model(model)
    t_end = float(2.0 * bicycle_steer(params, speed) / rate) + 2.0
    n = int(math.ceil(t_end / dt))
    t = np.arange(n) * dt
    dtype = jnp.asarray(params.chassis.mass).dtype
    steer = jnp.asarray(rate * np.maximum(t - 0.5, 0.0), dtype)
    drv = OpenLoop(Controls(steer, jnp.zeros_like(steer), jnp.zeros_like(steer)), dt)
    rec = lambda t, s, c, tel: (c.steer, tel.ay)  # noqa: E731
    res = rollout(
        params, m.init_state(params, speed), drv, n, dt=dt, model=m, record=rec, compiler_options=compiler_options
    )
    st, ay = (np.asarray(a) for a in res.trajectory)
    sel = (ay >= 0.1 * GRAVITY) & (ay <= 0.375 * GRAVITY)
    if sel.sum() < 2:
        raise ValueError("slowly_increasing_steer: the car did not reach 0.1-0.375 g")
    slope, icpt = np.polyfit(ay[sel], st[sel], 1)
    return float(slope * AY_03G + icpt)


class SineDwellAcc(NamedTuple):
    """Running accumulators of :class:`SineDwellReducer` (one value per vehicle)."""

    r_peak: Any
    r_100: Any
    r_175: Any
    y_disp: Any
    max_yaw: Any
    y0: Any
    yaw0: Any


@pytree_dataclass
class SineDwellReducer:
    """In-scan measurement of the sine with dwell (module docstring): ``sign`` [-] +1 when the first steer is
    to the left, ``t_start`` [s] BOS, ``frequency`` [Hz], ``dwell`` [s]."""

    sign: Any = 1.0
    t_start: Any = 0.0
    frequency: Any = 0.7
    dwell: Any = 0.5

    def init(self, params, state) -> SineDwellAcc:
        z = jnp.zeros_like(state.vx)
        return SineDwellAcc(z, z, z, z, z, state.y, state.yaw)

    def update(self, acc: SineDwellAcc, t, state, controls, tel, new, params, dt) -> SineDwellAcc:
        t1 = t + dt
        cos = self.t_start + 1.0 / self.frequency + self.dwell
        change = self.t_start + 0.5 / self.frequency

        def at(acc_v, target, v0, v1):  # the value at time target, interpolated inside the step that crosses it
            hit = (t < target) & (t1 >= target)
            return jnp.where(hit, v0 + (target - t) / dt * (v1 - v0), acc_v)

        r1 = -self.sign * new.yaw_rate  # the second half-wave's direction positive
        window = (t1 > change) & (t1 <= cos)
        # the lateral displacement from the initial path, positive towards the first steer
        y_rel0 = self.sign * (state.y - acc.y0)
        y_rel1 = self.sign * (new.y - acc.y0)
        return SineDwellAcc(
            jnp.where(window, jnp.maximum(acc.r_peak, r1), acc.r_peak),
            at(acc.r_100, cos + T_100, -self.sign * state.yaw_rate, r1),
            at(acc.r_175, cos + T_175, -self.sign * state.yaw_rate, r1),
            at(acc.y_disp, self.t_start + T_DISP, y_rel0, y_rel1),
            jnp.maximum(acc.max_yaw, jnp.abs(new.yaw - acc.yaw0)),
            acc.y0,
            acc.yaw0,
        )


SINE_DWELL_METRICS = (
    Metric("yaw_ratio_100", "-", "value", True, "yaw rate 1.00 s after the completion of steer over its first peak"),
    Metric("yaw_ratio_175", "-", "value", True, "yaw rate 1.75 s after the completion of steer over its first peak"),
    Metric("lateral_displacement", "m", "value", True, "lateral displacement 1.07 s after the beginning of steer"),
    Metric("peak_yaw_rate", "rad/s", "value", True, "first peak of the yaw rate after the steer changes sign"),
    Metric("spun", "-", "flag", False, "1 when the heading turned more than 90 degrees"),
    PASSED._replace(doc="1 when the FMVSS 126 S5.2 criteria hold (displacement only from 5 A)"),
)


@dataclasses.dataclass(frozen=True)
class SineDwell(ScenarioBase):
    """The sine with dwell (module docstring).  Settings: ``speed`` [m/s], ``scale`` [-] the amplitude in
    units of ``A``, ``steer_03g`` [rad] ``A`` (0: :func:`bicycle_steer`), ``direction`` [-] +1 first steer
    left, -1 right.  Static: ``frequency`` [Hz], ``dwell`` [s], ``t_start`` [s], ``dt`` [s], ``max_time``
    [s], ``model``."""

    name: str = "sine_with_dwell"
    frequency: float = 0.7
    dwell: float = 0.5
    t_start: float = 0.2
    dt: float = 0.005
    max_time: float = 5.0
    model: Any = "double_track"
    settings: Any = dataclasses.field(
        default_factory=lambda: {"speed": 80.0 / 3.6, "scale": 6.5, "steer_03g": 0.0, "direction": 1.0}
    )
    metrics: Any = SINE_DWELL_METRICS
    ranges: Any = dataclasses.field(
        default_factory=lambda: {"scale": (0.0, 20.0), "steer_03g": (0.0, 0.5), "direction": (-1.0, 1.0)}
    )

    def setup(self, params: VehicleParams, settings) -> Setup:
        check_config(self.name, dt=self.dt, max_time=self.max_time)
        a = jnp.where(settings["steer_03g"] > 0.0, settings["steer_03g"], bicycle_steer(params, settings["speed"]))
        sign = jnp.where(settings["direction"] >= 0.0, 1.0, -1.0)
        drv = SineWithDwell(frequency=self.frequency, dwell=self.dwell, t_start=self.t_start)
        m, state0, drv = fleet_start(
            params, self.model, drv, speed=settings["speed"], amplitude=sign * settings["scale"] * a
        )
        dtype = jnp.asarray(params.chassis.mass).dtype
        red = per_vehicle(
            SineDwellReducer(),
            fleet_size(params),
            dtype,
            sign=sign,
            t_start=self.t_start,
            frequency=self.frequency,
            dwell=self.dwell,
        )
        n_steps = max(1, int(math.ceil(self.max_time / self.dt)))
        return Setup(params, state0, drv, red, m, self.dt, n_steps)

    def evaluate(self, acc: SineDwellAcc, setup: Setup, settings) -> dict:
        peak = jnp.maximum(acc.r_peak, 1e-6)
        r100, r175 = jnp.abs(acc.r_100) / peak, jnp.abs(acc.r_175) / peak
        disp_ok = (acc.y_disp >= DISPLACEMENT) | (settings["scale"] < 5.0)
        passed = (r100 <= YAW_RATIO_100) & (r175 <= YAW_RATIO_175) & disp_ok
        dtype = acc.r_peak.dtype
        return dict(
            yaw_ratio_100=r100,
            yaw_ratio_175=r175,
            lateral_displacement=acc.y_disp,
            peak_yaw_rate=acc.r_peak,
            spun=(acc.max_yaw > 0.5 * math.pi).astype(dtype),
            passed=passed.astype(dtype),
        )
