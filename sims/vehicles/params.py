"""Vehicle parameter, state and control pytrees shared by the single- and double-track models.

Axes and signs (ISO 8855 / TYDEX, as in :mod:`jaxtire`): the body frame has x
forward, y left, z up, at the centre of gravity (CG); the ground frame has X, Y
in the road plane and yaw ``psi`` counter-clockwise from X.  SI units, radians.

* :class:`Chassis` holds every per-vehicle number (mass, geometry, brakes,
  aero, per-axle tire scales, per-wheel surface ids).  Fleets batch it with a
  leading vehicle axis.
* :class:`VehicleParams` groups the chassis with the two *base* tires (front
  and rear, :class:`jaxtire.params.MFParams` or :class:`jaxtire.simple.SimpleParams`)
  and the surface table.  In a fleet the tires and the table are shared,
  unbatched leaves (``in_axes=None``, see :func:`fleet_axes`); only the small
  :class:`TireScale` multipliers in the chassis vary per vehicle.
* :class:`VehicleState` is the state of either model (``omega`` has 4 entries
  FL, FR, RL, RR for the double track, 2 entries front, rear for the single track).
* :class:`Controls` are the driver's inputs.

Validation (:func:`make_chassis`, :func:`make_vehicle`, :func:`validate_params`)
raises ``ValueError`` naming the field, the value and the allowed range.  It
runs on concrete values only, at the boundary; nothing raises inside ``jit``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire import fields
from jaxtire.fields import Field
from jaxtire.surfaces import SurfaceTable, preset_table
from jaxtire.validation import ValidationError, check_choice, check_range, is_concrete
from sims.roads.contact import Contact, contact_axes, make_contact, validate_contact
from sims.roads.road import check_road
from sims.vehicles.driveline import fleet_axis, validate_driveline

#: Wheel order of the double-track model.
WHEELS = ("FL", "FR", "RL", "RR")


class TireScale(NamedTuple):
    """Per-vehicle multipliers on a shared base tire (one per axle) [-].

    * ``mu_x``, ``mu_y``: peak and sliding friction, longitudinal / lateral
      (MF: ``LMUX``, ``LMUY``; simple model: ``Dx``, ``Dy``);
    * ``k_x``, ``k_y``: longitudinal slip stiffness / cornering stiffness
      (MF: ``LKX``, ``LKY``; simple model: ``B C D``), independent of ``mu``.
    """

    mu_x: Any = 1.0
    mu_y: Any = 1.0
    k_x: Any = 1.0
    k_y: Any = 1.0

    def with_friction(self, factor) -> TireScale:
        """These scales with both frictions (``mu_x``, ``mu_y``) times ``factor`` [-]."""
        return self._replace(mu_x=self.mu_x * factor, mu_y=self.mu_y * factor)


class Chassis(NamedTuple):
    """Per-vehicle parameters (SI units).  Build with :func:`make_chassis` (validated, defaults filled).

    Mass and geometry: ``mass`` [kg] (with driver), ``yaw_inertia`` [kg m^2] about the CG's z axis,
    ``cg_to_front`` ``a`` / ``cg_to_rear`` ``b`` [m] (wheelbase ``L = a + b``), ``cg_height`` ``h`` [m],
    ``track_front`` / ``track_rear`` [m], ``roll_stiffness_front`` [-] the front share of the total roll
    stiffness (how the lateral load transfer ``m a_y h`` divides between the axles).

    Wheels: ``wheel_radius_*`` [m] the wheel radius ``r``: the arm of the drive, brake and tire torques
    (``r Fx``), and the slip radius of tires without a vertical model (an MF tire's slip ``kappa = (omega Re -
    vx) / |vx|`` uses its effective rolling radius ``Re``, :func:`jaxtire.tire.rolling_radius`),
    ``wheel_inertia_*`` [kg m^2] spin inertia of one wheel incl. its share of brake disc and driveline.

    Drive: ``max_drive_torque`` [N m] total wheel torque at full throttle, ``max_power`` [W] (the torque
    fades as ``T P / sqrt(P^2 + (T omega)^2)``, i.e. ``min(T, P / omega)`` smoothed), ``drive_split_front``
    [-] front share (1 front-wheel drive, 0 rear-wheel drive); each axle has an open differential (equal
    torque left and right).

    Brakes: ``max_brake_torque`` [N m] total at full pedal, ``brake_bias_front`` [-] front share (0 for a
    kart with rear brakes only), ``brake_omega_smooth`` [rad/s] kept for compatibility, unused: the brake
    is an exact implicit Coulomb friction (:func:`sims.vehicles.core.coulomb_spin_update`), no smoothing.

    Steering: ``max_steer`` [rad] road-wheel limit, ``ackermann`` [-] 0 parallel steer, 1 full Ackermann.

    Aero: ``drag_area`` ``Cd A`` [m^2], ``lift_area`` ``Cl A`` [m^2] (positive = downforce),
    ``aero_balance_front`` [-] front share of the downforce, ``air_density`` [kg/m^3].

    Loads: ``load_transfer_tau`` [s] time constant of the first-order filter on the accelerations that
    drive the quasi-static load transfer (the unmodelled pitch/roll dynamics; 0 = the last step's value).

    The road under the car (grade, bank, surfaces) is not the chassis': :attr:`VehicleParams.contact`.

    Per vehicle: ``tire_scale_front`` / ``tire_scale_rear`` (:class:`TireScale`); ``tire_sides`` float (4,)
    the side each tire is mounted on, FL, FR, RL, RR (default ``(+1, -1, +1, -1)``: left tires +1, right
    tires -1, so an asymmetric tire file, e.g. one with conicity or ply steer, is mirrored on the right
    and the car runs straight; 0 evaluates the tire as measured).  Passed to the tire as its ``side``
    option where the tire model has one (:func:`jaxtire.tire.model_options`), ignored otherwise.

    Body (for geometric criteria such as cone hits; no effect on the dynamics): ``body_width`` [m] the
    overall width without mirrors (ISO 612), ``overhang_front`` / ``overhang_rear`` [m] from the front /
    rear axle to the front / rear end of the body; :attr:`body_length` is the overall length.  The body is
    the rectangle ``-(b + overhang_rear) <= x <= a + overhang_front``, ``|y| <= body_width / 2`` in the
    body frame.
    """

    mass: Any
    yaw_inertia: Any
    cg_to_front: Any
    cg_to_rear: Any
    cg_height: Any
    track_front: Any
    track_rear: Any
    roll_stiffness_front: Any
    wheel_radius_front: Any
    wheel_radius_rear: Any
    wheel_inertia_front: Any
    wheel_inertia_rear: Any
    max_drive_torque: Any
    max_power: Any
    drive_split_front: Any
    max_brake_torque: Any
    brake_bias_front: Any
    brake_omega_smooth: Any
    max_steer: Any
    ackermann: Any
    drag_area: Any
    lift_area: Any
    aero_balance_front: Any
    air_density: Any
    load_transfer_tau: Any
    tire_scale_front: TireScale
    tire_scale_rear: TireScale
    tire_sides: Any = (1.0, -1.0, 1.0, -1.0)
    body_width: Any = 1.80
    overhang_front: Any = 0.88
    overhang_rear: Any = 0.74

    @property
    def wheelbase(self):
        return self.cg_to_front + self.cg_to_rear

    @property
    def body_length(self):
        """Overall length [m]: ``overhang_front + wheelbase + overhang_rear``."""
        return self.overhang_front + self.cg_to_front + self.cg_to_rear + self.overhang_rear


class VehicleParams(NamedTuple):
    """What a model's ``step`` takes as ``params``: chassis + base tires + surface table + the road under it.

    ``tire_front`` / ``tire_rear`` are jaxtire tire pytrees (the static choice of tire model is the
    pytree type: :class:`~jaxtire.params.MFParams` or :class:`~jaxtire.simple.SimpleParams`);
    ``surfaces`` a :class:`jaxtire.surfaces.SurfaceTable` (at most 16 entries); ``contact`` the road under the
    car (:class:`sims.roads.contact.Contact`: grade, bank [rad], the surface id of each wheel into
    ``surfaces``), constant per vehicle unless ``road`` is given: ``road`` ``None`` or a
    :class:`sims.roads.road.Road` (or a :class:`sims.roads.profile.Profile`) whose grade, bank and per-wheel
    surfaces along the road replace the contact at every step (:func:`sims.vehicles.road.on_road`).
    ``suspension``: the full vehicle's :class:`sims.vehicles.suspension.Suspension` (batched like the
    chassis), ``None`` for the planar models or a suspension derived from the chassis.
    ``driveline`` ``None`` (the chassis' one-number drive) or a per-vehicle
    :class:`sims.vehicles.driveline.Driveline` (engine, gearbox, differentials, traction / stability control).
    """

    chassis: Chassis
    tire_front: Any
    tire_rear: Any
    surfaces: SurfaceTable
    contact: Contact
    road: Any = None
    suspension: Any = None
    driveline: Any = None


class VehicleState(NamedTuple):
    """The vehicle state: the planar fields every model has, and the full vehicle's vertical ones in ``body``.

    ``x``, ``y`` [m] CG position and ``yaw`` [rad] heading in the ground frame; ``vx``, ``vy`` [m/s]
    CG velocity and ``yaw_rate`` [rad/s] in the body frame; ``omega`` [rad/s] wheel spin rates
    (positive rolling forward; double track FL, FR, RL, RR, single track front, rear);
    ``ax``, ``ay`` [m/s^2] filtered body-frame CG accelerations that set the load transfer;
    ``defl_x``, ``defl_y`` [m] the tires' contact deflections (the transient tire of
    :mod:`sims.vehicles.core`, one per wheel state like ``omega``: lagged slips ``kappa' = defl_x /
    sigma_x``, ``tan(alpha') = defl_y / sigma_y``).  They default to ``0.0`` (broadcast over the wheels) so
    states built without them keep working; :func:`init_state` gives zeros of ``omega``'s shape, which a
    ``lax.scan`` carry needs.  ``drive``: the :class:`sims.vehicles.driveline.DriveState` of a car with a
    driveline (``None`` without one).  ``body``: the :class:`sims.vehicles.full.BodyState` (heave, roll, pitch,
    unsprung masses) of the full vehicle (``None`` for the planar models).
    """

    x: Any
    y: Any
    yaw: Any
    vx: Any
    vy: Any
    yaw_rate: Any
    omega: Any
    ax: Any
    ay: Any
    defl_x: Any = 0.0
    defl_y: Any = 0.0
    drive: Any = None
    body: Any = None


class Controls(NamedTuple):
    """Driver inputs: ``steer`` [rad] mean front road-wheel angle (positive turns left, clipped to
    ``max_steer``), ``throttle`` [-] in [-1, 1] (negative drives backwards), ``brake`` [-] in [0, 1],
    a scalar or one value per wheel state (4 or 2) so an ABS can modulate each wheel."""

    steer: Any = 0.0
    throttle: Any = 0.0
    brake: Any = 0.0


#: The one table of the chassis's scalar fields (defaults: a compact hatchback, see :mod:`sims.vehicles.presets`):
#: field -> :class:`jaxtire.fields.Field` (default, unit, range).  :data:`CHASSIS_DEFAULTS`, :data:`CHASSIS_RANGES`
#: and :data:`CHASSIS_UNITS` (construction, validation, :func:`replace_chassis`, the study table's units and the
#: docs' parameter page) are read from it through :mod:`jaxtire.fields`.
CHASSIS_FIELDS: dict[str, Field] = {
    "mass": Field(1350.0, "kg", 0.0, 1e6, False, True),
    "yaw_inertia": Field(2250.0, "kg m^2", 0.0, 1e8, False, True),
    "cg_to_front": Field(1.03, "m", 0.0, 20.0, False, True),
    "cg_to_rear": Field(1.61, "m", 0.0, 20.0, False, True),
    "cg_height": Field(0.55, "m", 0.0, 10.0, True, True),
    "track_front": Field(1.55, "m", 0.0, 10.0, False, True),
    "track_rear": Field(1.52, "m", 0.0, 10.0, False, True),
    "roll_stiffness_front": Field(0.6, "-", 0.0, 1.0, True, True),
    "wheel_radius_front": Field(0.31, "m", 0.0, 5.0, False, True),
    "wheel_radius_rear": Field(0.31, "m", 0.0, 5.0, False, True),
    "wheel_inertia_front": Field(1.2, "kg m^2", 0.0, 1e4, False, True),
    "wheel_inertia_rear": Field(1.0, "kg m^2", 0.0, 1e4, False, True),
    "max_drive_torque": Field(2500.0, "N m", 0.0, 1e7, True, True),
    "max_power": Field(92e3, "W", 0.0, math.inf, False, True),
    "drive_split_front": Field(1.0, "-", 0.0, 1.0, True, True),
    "max_brake_torque": Field(6000.0, "N m", 0.0, 1e7, True, True),
    "brake_bias_front": Field(0.7, "-", 0.0, 1.0, True, True),
    "brake_omega_smooth": Field(0.02, "rad/s", 0.0, 100.0, False, True),
    "max_steer": Field(0.6, "rad", 0.0, 1.2, False, True),
    "ackermann": Field(1.0, "-", 0.0, 1.0, True, True),
    "drag_area": Field(0.64, "m^2", 0.0, 100.0, True, True),
    "lift_area": Field(0.0, "m^2", -100.0, 100.0, True, True),
    "aero_balance_front": Field(0.5, "-", 0.0, 1.0, True, True),
    "air_density": Field(1.2, "kg/m^3", 0.0, 10.0, True, True),
    "load_transfer_tau": Field(0.05, "s", 0.0, 10.0, True, True),
    "body_width": Field(1.80, "m", 0.0, 10.0, False, True),
    "overhang_front": Field(0.88, "m", 0.0, 10.0, True, True),
    "overhang_rear": Field(0.74, "m", 0.0, 10.0, True, True),
}
#: Defaults of :func:`make_chassis` (from :data:`CHASSIS_FIELDS`).
CHASSIS_DEFAULTS: dict[str, Any] = fields.defaults(CHASSIS_FIELDS)
#: Allowed ranges: field -> (low, high, low inclusive, high inclusive) (from :data:`CHASSIS_FIELDS`).
CHASSIS_RANGES: dict[str, tuple[float, float, bool, bool]] = fields.ranges(CHASSIS_FIELDS)
#: SI units of the chassis's scalar fields (from :data:`CHASSIS_FIELDS`).
CHASSIS_UNITS: dict[str, str] = fields.units(CHASSIS_FIELDS)
TIRE_SCALE_RANGE = (0.0, 10.0, False, True)


def validate_chassis(ch: Chassis, source: str = "Chassis", dtype=None) -> None:
    """Check every field of a (possibly batched) concrete :class:`Chassis`; tracers are skipped.

    Each value must lie in its :data:`CHASSIS_RANGES` entry and be finite once stored in ``dtype`` (default
    the default float: ``1e39`` is refused as ``inf`` in float32); raises
    :class:`~jaxtire.validation.ValidationError` naming the field."""
    if not is_concrete(ch):
        return
    fields.check(CHASSIS_FIELDS, ch, source=source, allow_inf=True, dtype=dtype)
    for axle in ("front", "rear"):
        sc = getattr(ch, f"tire_scale_{axle}")
        for f in TireScale._fields:
            check_range(
                f"tire_scale_{axle}.{f}", getattr(sc, f), *TIRE_SCALE_RANGE, source=source, allow_inf=True, dtype=dtype
            )
    check_tire_sides(ch.tire_sides, source=source)


#: Default mounted side of each tire FL, FR, RL, RR (+1 left, -1 right).
DEFAULT_TIRE_SIDES = (1.0, -1.0, 1.0, -1.0)


def check_tire_sides(sides, source: str = "Chassis") -> None:
    """Raise :class:`~jaxtire.validation.ValidationError` unless ``sides`` has a last axis of 4 with values
    -1 (right), 0 (as measured) or +1 (left)."""
    arr = np.asarray(sides, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValidationError(
            f"{source}: tire_sides must have a last axis of 4 (FL, FR, RL, RR), got shape {arr.shape}"
        )
    for v in np.unique(arr):
        check_choice("tire_sides", float(v), (-1.0, 0.0, 1.0), source=source)


def validate_params(params: VehicleParams, source: str = "VehicleParams") -> None:
    """Validate a concrete :class:`VehicleParams` (chassis ranges, the contact's angles and its surface ids
    against the table, the road, the driveline)."""
    if not isinstance(params, VehicleParams):
        raise ValueError(f"{source}: expected VehicleParams, got {type(params).__name__}")
    n = int(np.shape(params.surfaces.grip)[-1])
    validate_chassis(params.chassis, source=source)
    validate_contact(params.contact, n, source=source)
    if params.road is not None and is_concrete(params.road):
        check_road(params.road, n, source=source)
    if params.driveline is not None:
        validate_driveline(params.driveline, source=source)


def make_chassis(
    *,
    dtype=None,
    tire_scale_front=None,
    tire_scale_rear=None,
    tire_sides=None,
    **values,
) -> Chassis:
    """A validated :class:`Chassis`; unspecified fields take :data:`CHASSIS_DEFAULTS`.

    ``tire_sides`` (default :data:`DEFAULT_TIRE_SIDES`) 4 values of
    +1 / -1 / 0 (see :class:`Chassis`).  Values may be arrays with a leading vehicle axis.
    """
    full = fields.merge(CHASSIS_FIELDS, values, source="Chassis")
    sf = TireScale(*tire_scale_front) if tire_scale_front is not None else TireScale()
    sr = TireScale(*tire_scale_rear) if tire_scale_rear is not None else TireScale()
    sides = np.asarray(DEFAULT_TIRE_SIDES if tire_sides is None else tire_sides, dtype=float)
    if sides.ndim >= 1 and sides.shape[-1] == 4:  # batch the sides like the other per-vehicle fields
        batch = np.broadcast_shapes(*(np.shape(v) for v in full.values()), sides.shape[:-1])
        sides = np.broadcast_to(sides, batch + (4,))
    raw = Chassis(**full, tire_scale_front=sf, tire_scale_rear=sr, tire_sides=sides)
    dtype = dtype or jnp.result_type(float)
    validate_chassis(raw, dtype=dtype)
    as_f = lambda v: jnp.asarray(v, dtype)  # noqa: E731
    return Chassis(
        **{k: as_f(v) for k, v in full.items()},
        tire_scale_front=TireScale(*(as_f(v) for v in sf)),
        tire_scale_rear=TireScale(*(as_f(v) for v in sr)),
        tire_sides=as_f(sides),
    )


def replace_chassis(ch: Chassis, **changes) -> Chassis:
    """``ch`` with ``changes`` (scalars or per-vehicle arrays, in the fields' units), each changed scalar field
    checked against :data:`CHASSIS_FIELDS` first (:func:`jaxtire.fields.replace`): a value outside its range
    raises :class:`~jaxtire.validation.ValidationError` naming the field, the value and the range, where
    ``ch._replace`` would store it."""
    return fields.replace(ch, CHASSIS_FIELDS, source="Chassis", **changes)


def _tire_dtype(tire):
    leaves = jax.tree.leaves(tire)
    return leaves[0].dtype if leaves else jnp.result_type(float)


def make_vehicle(
    chassis: Chassis,
    tire_front,
    tire_rear=None,
    surfaces: SurfaceTable | None = None,
    dtype=None,
    *,
    contact: Contact | None = None,
) -> VehicleParams:
    """Assemble validated :class:`VehicleParams` (``tire_rear`` defaults to ``tire_front``,
    ``surfaces`` to :func:`jaxtire.surfaces.preset_table`, ``contact`` to a flat road on surface 0,
    :func:`sims.roads.contact.make_contact`).  Everything is cast to ``dtype`` (default: the default float
    dtype, float32 unless x64 is enabled)."""
    if tire_rear is None:
        tire_rear = tire_front
    if surfaces is None:
        surfaces = preset_table()
    if not isinstance(chassis, Chassis):
        raise ValueError(f"make_vehicle: chassis must be a Chassis, got {type(chassis).__name__}")
    dtype = dtype or jnp.result_type(float)
    params = VehicleParams(chassis, tire_front, tire_rear, surfaces, make_contact() if contact is None else contact)
    validate_params(params, source="make_vehicle")
    return astype(params, dtype)


def astype(params: VehicleParams, dtype) -> VehicleParams:
    """All floating-point leaves of ``params`` cast to ``dtype`` (surface ids stay int32)."""

    def cast(x):
        x = jnp.asarray(x)
        return x.astype(dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x

    return jax.tree.map(cast, params)


def fleet_axes(params: VehicleParams) -> VehicleParams:
    """``vmap`` ``in_axes`` for a fleet: chassis (and suspension) batched on axis 0, tires and surface table
    shared, the contact per vehicle or shared (:func:`sims.roads.contact.contact_axes`), the road shared (a road
    with a leading vehicle axis, :func:`sims.roads.profile.batched`, batched too), the driveline batched or
    shared (:func:`sims.vehicles.driveline.fleet_axis`)."""
    road = getattr(params, "road", None)
    road_axis = 0 if getattr(road, "per_vehicle", False) else None
    axes = (0, None, None, None, contact_axes(params.contact), road_axis, 0, fleet_axis(params.driveline))
    # the leaves are vmap axes (int / None), not parameters: _make skips the field types
    return VehicleParams._make(axes)


def init_state(
    params: VehicleParams,
    n_wheels: int = 4,
    speed=0.0,
    *,
    x=0.0,
    y=0.0,
    yaw=0.0,
    vy=0.0,
    yaw_rate=0.0,
    radii=None,
) -> VehicleState:
    """A state rolling straight at ``speed`` [m/s] (wheels spinning at ``speed / radii``), zero accelerations
    and zero contact deflections (the lagged slips start at 0).  ``radii`` [m] (per wheel state, last axis):
    the slip's rolling radii; ``None``: the chassis radii (:func:`wheel_radii`).  The models'
    :meth:`sims.vehicles.core.Model.init_state` passes the tires' effective rolling radii at the static
    loads, so that the wheels roll free (zero slip, no force transient at the start): that is the documented
    way to start a car (``double_track.init_state(params, speed)``); this builder alone, with the chassis
    radii, starts it with the slip of the radius difference (~2 % for the presets)."""
    ch = params.chassis
    dtype = jnp.asarray(ch.mass).dtype
    f = lambda v: jnp.asarray(v, dtype)  # noqa: E731
    speed = f(speed)
    if n_wheels not in (2, 4):
        raise ValueError(f"init_state: n_wheels must be 2 or 4, got {n_wheels}")
    radii = wheel_radii(ch, n_wheels) if radii is None else f(radii)
    zero = jnp.zeros_like(speed + jnp.zeros_like(ch.mass))
    omega = speed[..., None] / radii + zero[..., None]
    return VehicleState(
        f(x) + zero,
        f(y) + zero,
        f(yaw) + zero,
        speed + zero,
        f(vy) + zero,
        f(yaw_rate) + zero,
        omega,
        zero,
        zero,
        jnp.zeros_like(omega),
        jnp.zeros_like(omega),
    )


class WheelLayout(NamedTuple):
    """Where the wheel states sit and what they share, each a Python list with one (possibly batched)
    value per wheel state (4: FL, FR, RL, RR; 2: front, rear axle of the single track): contact
    position ``x``, ``y`` [m] from the CG, rolling ``radius`` [m], spin ``inertia`` [kg m^2] (both
    wheels of an axle for the single track), ``drive`` and ``brake`` shares [-] of the drive torque and
    of ``max_brake_torque`` (each summing to 1: ``drive_split_front`` and ``brake_bias_front`` to the
    front axle, half per wheel on four wheels)."""

    x: list
    y: list
    radius: list
    inertia: list
    drive: list
    brake: list


def wheel_layout(ch: Chassis, n_wheels: int) -> WheelLayout:
    """The :class:`WheelLayout` of the double track (``n_wheels = 4``) or single track (2): the one
    place the wheel order, positions, radii, inertias and drive / brake splits are written."""
    a, b = ch.cg_to_front, ch.cg_to_rear
    rf, rr, i_f, i_r = ch.wheel_radius_front, ch.wheel_radius_rear, ch.wheel_inertia_front, ch.wheel_inertia_rear
    sf, bf = ch.drive_split_front, ch.brake_bias_front
    if n_wheels == 4:
        tf, tr = 0.5 * ch.track_front, 0.5 * ch.track_rear
        return WheelLayout(
            x=[a, a, -b, -b],
            y=[tf, -tf, tr, -tr],
            radius=[rf, rf, rr, rr],
            inertia=[i_f, i_f, i_r, i_r],
            drive=[0.5 * sf, 0.5 * sf, 0.5 * (1.0 - sf), 0.5 * (1.0 - sf)],
            brake=[0.5 * bf, 0.5 * bf, 0.5 * (1.0 - bf), 0.5 * (1.0 - bf)],
        )
    if n_wheels != 2:
        raise ValueError(f"wheel_layout: n_wheels must be 2 or 4, got {n_wheels}")
    zero = jnp.zeros_like(jnp.asarray(a))
    return WheelLayout(
        x=[a, -b],
        y=[zero, zero],
        radius=[rf, rr],
        inertia=[2.0 * i_f, 2.0 * i_r],
        drive=[sf, 1.0 - sf],
        brake=[bf, 1.0 - bf],
    )


def per_wheel_array(values: list):
    """A :class:`WheelLayout` field as one array with the wheel states on the last axis."""
    return jnp.stack(jnp.broadcast_arrays(*values), axis=-1)


def wheel_radii(ch: Chassis, n_wheels: int):
    """Rolling radius per wheel state: (4,) FL, FR, RL, RR or (2,) front, rear."""
    return per_wheel_array(wheel_layout(ch, n_wheels).radius)
