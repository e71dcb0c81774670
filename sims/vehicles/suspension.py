"""Suspension parameters of the full vehicle (:mod:`sims.vehicles.full`): the :class:`Suspension` pytree.

Every field is one per-vehicle number (a fleet batches them on axis 0, like
:class:`~sims.vehicles.params.Chassis`); ``_front`` / ``_rear`` fields apply to both corners of the
axle (left and right mirrored).  SI units, radians; travel ``s`` is the wheel's displacement towards
the body (compression, bump) [m], positive up.

* ``unsprung_mass_*`` [kg] one corner's unsprung mass (wheel, tire, upright, brake, half the links);
  the chassis ``mass`` is the whole car, so the sprung mass is ``m_s = m - 2 (m_uf + m_ur)``.
* ``roll_inertia``, ``pitch_inertia`` [kg m^2] of the sprung mass about its CG.
* ``spring_*`` [N/m] coil rate ``k_s``, ``damper_*`` [N s/m] damper rate ``c_s``, ``motion_ratio_*`` [-]
  ``MR`` = spring (and damper) travel per wheel travel: wheel rate ``k_w = k_s MR^2``, ``c_w = c_s MR^2``;
  the coil carries ``F_w / MR`` and compresses ``s MR``.
* ``bump_stop_gap_*`` [m] the wheel travel from the static ride height at which the bump stop touches;
  ``bump_stop_*`` [N/m^2] its progressive rate at the wheel, ``F = k_bs max(s - gap, 0)^2`` (0: none).
* ``arb_*`` [N m/rad] anti-roll bar roll stiffness of the axle at the wheels (``F = +-(arb / t^2)
  (s_L - s_R)``: a bar of roll stiffness ``arb`` acting on the differential travel).
* ``roll_centre_*`` [m] the axle's roll-centre height above the ground (the lateral link forces reach the
  body through it: geometric load transfer ``F_y h_rc / t``); ``anti_dive`` [-] the front side-view link
  angle as a fraction of ``atan(h / L)`` (1 = 100 % anti-dive with all of the braking on the front axle),
  ``anti_squat`` [-] the rear one (1 = 100 % anti-squat of a rear-wheel drive).
* ``camber_*`` [rad] static camber (vehicle convention: positive top outward, racing cars negative),
  ``toe_*`` [rad] static toe (positive toe-in), ``camber_gain_*`` [rad/m] camber change per bump travel
  (negative: the wheel gains negative camber in bump, and so the outer wheel in roll), ``bump_steer_*``
  [rad/m] toe-in change per bump travel.
* ``tire_stiffness_*`` [N/m] vertical stiffness of tires without a vertical model (the simple tire; an
  MF file's own vertical model is used where it has one, :func:`jaxtire.tire.vertical_force`).

:func:`default_suspension` derives a suspension from a :class:`~sims.vehicles.params.Chassis` (pure JAX,
traceable): ride frequencies, damping ratio and a roll gradient chosen per class of car (estimates,
stated in :data:`SUSPENSION_PRESETS`), bars set so that the front share of the roll stiffness is the
chassis' ``roll_stiffness_front``, roll centres on the ground, no anti geometry, zero camber and toe: so a
preset driven by the full model has the double track's load-transfer split.  :func:`bmw_320i` is
CommonRoad's BMW 320i (``parameters_vehicle2``) for the full model.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtire import fields
from jaxtire.constants import GRAVITY
from jaxtire.fields import Field
from jaxtire.validation import ValidationError, is_concrete


class Suspension(NamedTuple):
    """Per-vehicle suspension numbers (module docstring).  Build with :func:`make_suspension`."""

    unsprung_mass_front: Any
    unsprung_mass_rear: Any
    roll_inertia: Any
    pitch_inertia: Any
    spring_front: Any
    spring_rear: Any
    motion_ratio_front: Any
    motion_ratio_rear: Any
    damper_front: Any
    damper_rear: Any
    bump_stop_gap_front: Any
    bump_stop_gap_rear: Any
    bump_stop_front: Any
    bump_stop_rear: Any
    arb_front: Any
    arb_rear: Any
    roll_centre_front: Any
    roll_centre_rear: Any
    anti_dive: Any
    anti_squat: Any
    camber_front: Any
    camber_rear: Any
    toe_front: Any
    toe_rear: Any
    camber_gain_front: Any
    camber_gain_rear: Any
    bump_steer_front: Any
    bump_steer_rear: Any
    tire_stiffness_front: Any
    tire_stiffness_rear: Any


#: The one table of the suspension's fields: field -> :class:`jaxtire.fields.Field` (default, unit, range).  The
#: defaults (a compact hatchback of 1350 kg; estimates from [Gil] ch. 5-6: ~1.2 / 1.35 Hz ride, ~0.3 damping,
#: ~10 % unsprung mass) are :func:`default_suspension` of the hatchback preset rounded.
#: :data:`SUSPENSION_DEFAULTS` and :data:`SUSPENSION_RANGES` (construction, validation, the docs) are read from it.
SUSPENSION_FIELDS: dict[str, Field] = {
    "unsprung_mass_front": Field(37.0, "kg", 0.0, 1e4, False, True),
    "unsprung_mass_rear": Field(33.0, "kg", 0.0, 1e4, False, True),
    "roll_inertia": Field(450.0, "kg m^2", 0.0, 1e7, False, True),
    "pitch_inertia": Field(1800.0, "kg m^2", 0.0, 1e8, False, True),
    "spring_front": Field(30000.0, "N/m", 0.0, 1e9, False, True),
    "spring_rear": Field(25000.0, "N/m", 0.0, 1e9, False, True),
    "motion_ratio_front": Field(1.0, "-", 0.05, 5.0, True, True),
    "motion_ratio_rear": Field(1.0, "-", 0.05, 5.0, True, True),
    "damper_front": Field(2500.0, "N s/m", 0.0, 1e7, True, True),
    "damper_rear": Field(2100.0, "N s/m", 0.0, 1e7, True, True),
    "bump_stop_gap_front": Field(0.07, "m", 0.0, 1.0, True, True),
    "bump_stop_gap_rear": Field(0.08, "m", 0.0, 1.0, True, True),
    "bump_stop_front": Field(5e6, "N/m^2", 0.0, 1e10, True, True),
    "bump_stop_rear": Field(5e6, "N/m^2", 0.0, 1e10, True, True),
    "arb_front": Field(25000.0, "N m/rad", -1e7, 1e8, True, True),
    "arb_rear": Field(5000.0, "N m/rad", -1e7, 1e8, True, True),
    "roll_centre_front": Field(0.0, "m", -1.0, 2.0, True, True),
    "roll_centre_rear": Field(0.0, "m", -1.0, 2.0, True, True),
    "anti_dive": Field(0.0, "-", -2.0, 2.0, True, True),
    "anti_squat": Field(0.0, "-", -2.0, 2.0, True, True),
    "camber_front": Field(0.0, "rad", -0.2, 0.2, True, True),
    "camber_rear": Field(0.0, "rad", -0.2, 0.2, True, True),
    "toe_front": Field(0.0, "rad", -0.1, 0.1, True, True),
    "toe_rear": Field(0.0, "rad", -0.1, 0.1, True, True),
    "camber_gain_front": Field(0.0, "rad/m", -10.0, 10.0, True, True),
    "camber_gain_rear": Field(0.0, "rad/m", -10.0, 10.0, True, True),
    "bump_steer_front": Field(0.0, "rad/m", -5.0, 5.0, True, True),
    "bump_steer_rear": Field(0.0, "rad/m", -5.0, 5.0, True, True),
    "tire_stiffness_front": Field(2.0e5, "N/m", 0.0, 1e10, False, True),
    "tire_stiffness_rear": Field(2.0e5, "N/m", 0.0, 1e10, False, True),
}
#: Defaults of :func:`make_suspension` (from :data:`SUSPENSION_FIELDS`).
SUSPENSION_DEFAULTS: dict[str, float] = fields.defaults(SUSPENSION_FIELDS)
#: Allowed ranges: field -> (low, high, low inclusive, high inclusive) (from :data:`SUSPENSION_FIELDS`).
SUSPENSION_RANGES: dict[str, tuple[float, float, bool, bool]] = fields.ranges(SUSPENSION_FIELDS)


def validate_suspension(susp: Suspension, chassis=None, source: str = "Suspension", dtype=None) -> None:
    """Check every field of a concrete :class:`Suspension` against :data:`SUSPENSION_RANGES` (tracers are
    skipped); with ``chassis``, also that the sprung mass ``m - 2 (m_uf + m_ur)`` is positive and each
    axle's total roll stiffness ``k_w t^2 / 2 + arb`` too.  Raises
    :class:`~jaxtire.validation.ValidationError` naming the field, the value and the allowed range."""
    if not isinstance(susp, Suspension):
        raise ValidationError(f"{source}: expected a Suspension, got {type(susp).__name__}")
    if not is_concrete(susp):
        return
    fields.check(SUSPENSION_FIELDS, susp, source=source, dtype=dtype)
    if chassis is None or not is_concrete(chassis):
        return
    m_s = np.asarray(chassis.mass) - 2.0 * (np.asarray(susp.unsprung_mass_front) + np.asarray(susp.unsprung_mass_rear))
    if np.any(m_s <= 0.0):
        raise ValidationError(
            f"{source}: unsprung masses 2 (m_uf + m_ur) must be below the chassis mass "
            f"{np.asarray(chassis.mass).ravel()[:1]} kg (sprung mass {m_s.ravel()[:1]} kg)"
        )
    for axle in ("front", "rear"):
        k_w = np.asarray(getattr(susp, f"spring_{axle}")) * np.asarray(getattr(susp, f"motion_ratio_{axle}")) ** 2
        t = np.asarray(getattr(chassis, f"track_{axle}"))
        k_phi = 0.5 * k_w * t * t + np.asarray(getattr(susp, f"arb_{axle}"))
        if np.any(k_phi <= 0.0):
            raise ValidationError(
                f"{source}: arb_{axle} = {np.asarray(getattr(susp, f'arb_{axle}')).ravel()[:1]} N m/rad leaves the "
                f"axle's roll stiffness {k_phi.ravel()[:1]} N m/rad (allowed > 0)"
            )


def make_suspension(*, dtype=None, chassis=None, **values) -> Suspension:
    """A validated :class:`Suspension`; unspecified fields take :data:`SUSPENSION_DEFAULTS` (values may be
    arrays with a leading vehicle axis); with ``chassis`` the combination is checked too
    (:func:`validate_suspension`)."""
    dtype = dtype or jnp.result_type(float)
    raw = Suspension(**fields.merge(SUSPENSION_FIELDS, values, source="Suspension"))
    validate_suspension(raw, chassis, dtype=dtype)
    return Suspension(*(jnp.asarray(v, dtype) for v in raw))


#: Ride frequencies (front, rear) [Hz], damping ratio [-], roll gradient [rad per g] and unsprung mass
#: fraction [-] of :func:`default_suspension` per preset, and where they come from (estimates for the
#: class of car: [Gil] T. D. Gillespie, Fundamentals of Vehicle Dynamics, SAE 1992, ch. 5 (ride 1-1.5 Hz,
#: rear ~10 % above front, damping 0.2-0.4) and ch. 6 (roll gradients 3-7 deg/g for passenger cars);
#: [RCVD] Milliken & Milliken, Race Car Vehicle Dynamics, SAE 1995, ch. 16-18 (race cars 2.5-4 Hz with
#: wings, roll gradients 0.5-1.5 deg/g)).
SUSPENSION_PRESETS: dict[str, dict[str, Any]] = {
    "hatchback": dict(freq=(1.2, 1.35), zeta=0.3, roll_gradient=math.radians(4.5), unsprung=0.1,
                      doc="compact hatchback: soft comfort tuning [Gil] (estimate)"),
    "sports_car": dict(freq=(1.6, 1.8), zeta=0.35, roll_gradient=math.radians(2.0), unsprung=0.09,
                       doc="sports car: firm road tuning [Gil], [RCVD] (estimate)"),
    "kart": dict(freq=(6.0, 6.0), zeta=0.1, roll_gradient=math.radians(0.5), unsprung=0.15,
                 doc="kart: no suspension; the frame's and tires' compliance as a stiff lightly damped "
                     "spring (estimate)"),
    "race_car": dict(freq=(3.0, 3.3), zeta=0.4, roll_gradient=math.radians(1.0), unsprung=0.12,
                     doc="winged single-seater: stiff springs for the downforce [RCVD] (estimate)"),
}  # fmt: skip


def default_suspension(chassis, freq=(1.2, 1.35), zeta=0.3, roll_gradient=0.0785, unsprung=0.1):
    """A :class:`Suspension` for ``chassis`` (pure JAX: traceable and batched like the chassis).

    ``unsprung`` [-] the unsprung fraction of the mass (split over the corners by the static axle loads);
    each corner's wheel rate ``k_w = (2 pi f)^2 m_sc`` (``m_sc`` its sprung load over ``g``; the tire adds
    in series, ~5 % lower frequency) with the coil at ``MR = 1``; ``roll_gradient`` [rad per g] (default 4.5 deg/g); dampers ``c = 2 zeta sqrt(k_w m_sc)``;
    the total roll stiffness ``K = m_s g h' (1 / roll_gradient + 1)`` (``h'`` the sprung CG over the
    ground: roll centres at 0), split by ``roll_stiffness_front``, the springs' share ``k_w t^2 / 2``
    topped up by the bars (never below 0); inertias of the sprung mass ``I_x = 0.2 I_z``, ``I_y = 0.9
    I_z`` ([RCVD] ch. 7: ``I_x / I_z`` ~0.2-0.3, ``I_y`` ~``I_z``); bump stops 7 / 8 cm from the static
    height, 5e6 N/m^2; tire stiffness 2e5 N/m for tires without a vertical model."""
    ch = chassis
    m, a, b, h = ch.mass, ch.cg_to_front, ch.cg_to_rear, ch.cg_height
    L = a + b
    one = jnp.ones_like(jnp.asarray(m))
    m_uf = 0.5 * unsprung * m * b / L
    m_ur = 0.5 * unsprung * m * a / L
    m_s = m - 2.0 * (m_uf + m_ur)
    m_sf = 0.5 * m_s * b / L
    m_sr = 0.5 * m_s * a / L
    w_f, w_r = (2.0 * math.pi * freq[0]), (2.0 * math.pi * freq[1])
    k_f, k_r = w_f * w_f * m_sf, w_r * w_r * m_sr
    c_f, c_r = 2.0 * zeta * jnp.sqrt(k_f * m_sf), 2.0 * zeta * jnp.sqrt(k_r * m_sr)
    h_s = jnp.maximum(h, 0.05)
    k_total = m_s * GRAVITY * h_s * (1.0 / roll_gradient + 1.0)
    lam = ch.roll_stiffness_front
    tf, tr = ch.track_front, ch.track_rear
    arb_f = jnp.maximum(lam * k_total - 0.5 * k_f * tf * tf, 0.0)
    arb_r = jnp.maximum((1.0 - lam) * k_total - 0.5 * k_r * tr * tr, 0.0)
    d = SUSPENSION_DEFAULTS
    vals = dict(
        d,
        unsprung_mass_front=m_uf,
        unsprung_mass_rear=m_ur,
        roll_inertia=0.2 * ch.yaw_inertia,
        pitch_inertia=0.9 * ch.yaw_inertia,
        spring_front=k_f,
        spring_rear=k_r,
        damper_front=c_f,
        damper_rear=c_r,
        arb_front=arb_f,
        arb_rear=arb_r,
    )
    dtype = jnp.asarray(m).dtype
    return Suspension(**{k: jnp.asarray(v * one, dtype) for k, v in vals.items()})


def preset_suspension(name: str, chassis) -> Suspension:
    """:func:`default_suspension` of ``chassis`` with the numbers of :data:`SUSPENSION_PRESETS` ``[name]``."""
    if name not in SUSPENSION_PRESETS:
        raise ValidationError(f"preset_suspension: unknown preset {name!r}; known: {', '.join(SUSPENSION_PRESETS)}")
    spec = {k: v for k, v in SUSPENSION_PRESETS[name].items() if k != "doc"}
    return default_suspension(chassis, **spec)


#: CommonRoad's BMW 320i (``vehiclemodels.parameters_vehicle2``, commonroad-vehicle-models 3.0.2, BSD-3:
#: M. Althoff, M. Koschi, S. Manzinger, "CommonRoad: Composable benchmarks for motion planning on
#: roads", IEEE IV 2017; vehicle models documentation "CommonRoad: Vehicle Models", 2020).  Chassis
#: fields of :func:`sims.vehicles.params.make_chassis` and suspension fields; MB's per-axle unsprung mass
#: is split over two corners, its auxiliary torsion roll stiffness ``K_tsf``, ``K_tsr`` (negative in MB's
#: sign convention, adding roll stiffness) are the bars, ``D_f``, ``D_r`` the camber gains (MB: camber =
#: roll + D z_s).  The roll axis is on the ground (``h_raf = h_rar = 0``).
BMW_320I_CHASSIS: dict[str, float] = dict(
    mass=1093.2952334674046,
    yaw_inertia=1791.5995300122856,
    cg_to_front=1.1561957064,
    cg_to_rear=1.4227170936,
    cg_height=0.5748689544,
    track_front=1.38684,
    track_rear=1.36398,
    wheel_radius_front=0.344,
    wheel_radius_rear=0.344,
    wheel_inertia_front=1.7,
    wheel_inertia_rear=1.7,
    brake_bias_front=0.66,  # T_sb
    drive_split_front=0.0,  # T_se = 0: rear-wheel drive
    max_steer=1.066,
)
BMW_320I_SUSPENSION: dict[str, float] = dict(
    unsprung_mass_front=0.5 * 63.7921826056784,
    unsprung_mass_rear=0.5 * 63.7921826056784,
    roll_inertia=207.26524557936952,
    pitch_inertia=1565.8178787125541,
    spring_front=24453.137879749014,
    spring_rear=19635.504745231297,
    damper_front=1786.2441002440723,
    damper_rear=1649.0833034887382,
    arb_front=6914.881688272133,
    arb_rear=2643.6009520155308,
    camber_gain_front=-0.39370078740157477,
    camber_gain_rear=-0.905511811023622,
    tire_stiffness_front=158294.1398119115,
    tire_stiffness_rear=158294.1398119115,
    bump_stop_front=0.0,
    bump_stop_rear=0.0,
)
