"""Vehicle presets: hatchback, sports car, kart (rear brakes only) and race car.

``get(name, tire=None, surfaces=None, dtype=None, **chassis_overrides) -> VehicleParams``; ``tire`` is any
jaxtire tire pytree (e.g. ``jaxtire.load_tir(path)``), ``None`` for the bundled tire, or the names
``"mf"`` (the bundled tire) and ``"simple"`` (the simple model).

The numbers are representative of the named class of vehicle, taken from public data; where a maker
does not publish a quantity (CG height, yaw inertia, wheel inertia, roll-stiffness split) it is a
textbook estimate, marked as such.  General references:

* [Gil] T. D. Gillespie, *Fundamentals of Vehicle Dynamics*, SAE 1992: CG heights, wheel inertias,
  brake proportioning (ch. 3), rolling radius.
* [RCVD] W. F. and D. L. Milliken, *Race Car Vehicle Dynamics*, SAE 1995: yaw inertia through the
  dynamic index ``k^2 / (a b)`` ~ 0.9-1.0 for cars (so ``Iz ~ m a b``), roll-stiffness distribution.
* [Hei] B. Heissing, M. Ersoy, *Chassis Handbook*, Vieweg+Teubner 2011: passenger-car CG heights
  0.5-0.6 m, Ackermann steering.
* [Katz] J. Katz, *Race Car Aerodynamics*, Bentley 1995: drag and lift areas of road and race cars.

Tires.  Any tire goes through the one tire interface (:mod:`jaxtire.tire`).  The default (``None`` or
``"mf"``): the bundled TNO 205/60 R15 MF-Tyre 6.2 file (:func:`jaxtire.default_tire`) with ``LMUV = 0`` (the file does not define the friction decay with slip speed, and MF-Tyre's default is 0;
a scale of 1 would halve the locked-wheel friction at 100 km/h), scaled per axle with
:class:`~sims.vehicles.params.TireScale` (friction and stiffness) and, for the kart, to the kart tire's
nominal load and radius (MF ``FNOMIN``, ``UNLOADED_RADIUS``; simple model ``fz0``, ``radius``).  A
tire passed in is used as given (its own friction and stiffness), with the same per-axle scales.  ``tire="simple"``: the simple model
(:func:`jaxtire.simple.default_simple_params`, a fit of the same TNO tire) with the same scales,
nominal load and radius.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxtire.simple import default_simple_params
from jaxtire.surfaces import SurfaceTable, preset_table
from jaxtire.tir import default_tire
from jaxtire.tire import is_tire, with_nominal
from jaxtire.validation import check_choice
from sims.roads.contact import make_contact
from sims.vehicles.driveline import Differential, Driveline, Engine, Gearbox, make_driveline, rpm, validate_driveline
from sims.vehicles.params import CHASSIS_DEFAULTS, TireScale, VehicleParams, make_chassis, make_vehicle

#: The chassis of every preset but the hatchback (whose chassis is
#: :data:`~sims.vehicles.params.CHASSIS_DEFAULTS`): field -> one value per preset, in the column order
#: below; unlisted fields take the defaults.  Sources: :data:`PRESET_DOCS`.
# fmt: off
_CHASSIS_COLUMNS = ("sports_car", "kart", "race_car")
_CHASSIS_TABLE: dict[str, tuple[float, ...]] = {
    #                        sports_car     kart  race_car
    "mass":                 (  1505.0,    150.0,    673.0),
    "yaw_inertia":          (  2200.0,     30.0,   1100.0),
    "cg_to_front":          (   1.507,    0.603,    1.595),
    "cg_to_rear":           (   0.943,    0.437,    1.305),
    "cg_height":            (    0.47,     0.25,     0.28),
    "track_front":          (   1.541,     1.15,     1.55),
    "track_rear":           (   1.518,     1.35,     1.47),
    "roll_stiffness_front": (    0.55,     0.45,     0.55),
    "wheel_radius_front":   (    0.32,    0.127,     0.33),
    "wheel_radius_rear":    (   0.345,     0.14,     0.33),
    "wheel_inertia_front":  (     1.3,     0.02,      1.0),
    "wheel_inertia_rear":   (     1.8,     0.05,      1.0),
    "max_drive_torque":     (  5000.0,    180.0,   4000.0),
    "max_power":            (   272e3,     21e3,    280e3),
    "drive_split_front":    (     0.0,      0.0,      0.0),
    "max_brake_torque":     (  9000.0,    400.0,   7000.0),
    "brake_bias_front":     (    0.62,      0.0,     0.58),
    "brake_omega_smooth":   (    0.02,     0.02,     0.02),
    "max_steer":            (    0.55,      0.5,     0.35),
    "ackermann":            (     1.0,      1.0,      0.5),
    "drag_area":            (     0.6,      0.5,      1.1),
    "lift_area":            (     0.1,      0.0,      3.0),
    "aero_balance_front":   (     0.4,      0.5,     0.45),
    "air_density":          (     1.2,      1.2,      1.2),
    "load_transfer_tau":    (    0.05,     0.03,     0.03),
    "body_width":           (   1.808,     1.40,    1.885),
    "overhang_front":       (    1.00,     0.45,     1.20),
    "overhang_rear":        (    1.05,     0.33,    0.865),
}
# fmt: on

#: name -> (front tire scale, rear tire scale, front and rear tire's nominal load [N] and unloaded
#: radius [m] as ``with_nominal`` keywords, ``None``: the base tire's own).  Each tire is sized to its
#: wheel: the unloaded radius ``R0`` for which the bundled tire's effective rolling radius ``Re`` at the
#: static load equals the chassis' ``wheel_radius`` (the torque arm), so ``T omega`` reaches the road
#: as ``Fx v`` (``Re / r`` is the share of the power that does: 0.88 on the sports car's rear axle
#: and 0.93 on the race car with the 205/60 R15's own ``R0`` = 0.3135 m; within 2 % now, tested over
#: every preset).  The hatchback's 205/55 R16 wheel (0.31 m) is the bundled tire's size (``Re`` 0.304 m).
_TIRES: dict[str, tuple[TireScale, TireScale, dict | None, dict | None]] = {
    "hatchback": (TireScale(), TireScale(), None, None),
    "sports_car": (
        TireScale(1.1, 1.1, 1.0, 1.15),
        TireScale(1.1, 1.1, 1.1, 1.4),
        dict(radius=0.3287),  # 245/35 ZR19 (wheel 0.32 m)
        dict(radius=0.3547),  # 295/35 ZR20 (wheel 0.345 m)
    ),
    "kart": (
        TireScale(1.5, 1.5, 1.0, 1.0),
        TireScale(1.5, 1.5, 1.0, 1.0),
        dict(load=320.0, radius=0.127),
        dict(load=430.0, radius=0.14),
    ),
    "race_car": (
        TireScale(1.6, 1.6, 1.3, 2.6),
        TireScale(1.6, 1.6, 1.3, 2.6),
        dict(radius=0.3377),  # 13-inch slick (wheel 0.33 m)
        dict(radius=0.3380),
    ),
}


def _chassis(name: str) -> dict:
    if name not in _CHASSIS_COLUMNS:
        return dict(CHASSIS_DEFAULTS)
    i = _CHASSIS_COLUMNS.index(name)
    return {**CHASSIS_DEFAULTS, **{k: v[i] for k, v in _CHASSIS_TABLE.items()}}


#: name -> dict(chassis fields, tire scales, kart-tire overrides), from the tables above.
#: Docstring of each: see PRESET_DOCS.
PRESETS: dict[str, dict] = {
    name: dict(chassis=_chassis(name), scale_front=sf, scale_rear=sr, tire_front=tf, tire_rear=tr)
    for name, (sf, sr, tf, tr) in _TIRES.items()
}

#: Where each preset's numbers come from.
PRESET_DOCS: dict[str, str] = {
    "hatchback": (
        "Compact front-wheel-drive hatchback, VW Golf VII 1.4 TSI class (maker's data: kerb mass 1270 kg, "
        "wheelbase 2.637 m, tracks 1.549 / 1.520 m, 92 kW, Cd 0.27 x A 2.19 m^2 -> CdA ~0.6 m^2; 61 % "
        "front axle load; width 1.799 m, length 4.255 m -> overhangs ~0.88 / 0.74 m, the split estimated); + 75 kg driver -> 1350 kg.  CG height 0.55 m [Hei], Iz ~ m a b [RCVD], wheel "
        "inertia ~1 kg m^2 (+ driveline on the driven axle) [Gil], 205/55 R16 rolling radius 0.31 m, brake "
        "bias 70 % front [Gil ch. 3]."
    ),
    "sports_car": (
        "Rear-engine sports car, Porsche 911 Carrera (991.2) class (maker's data: 1430 kg DIN + 75 kg "
        "driver, wheelbase 2.450 m, tracks 1.541 / 1.518 m, 272 kW, 38.5 / 61.5 % axle loads, 235/40 ZR19 "
        "front and 295/35 ZR20 rear tires -> radii 0.32 / 0.345 m, Cd ~0.30 x A ~2.0 m^2, width 1.808 m, length "
        "4.499 m -> overhangs ~1.00 / 1.05 m, the split estimated).  CG height "
        "0.47 m and Iz ~ m a b [RCVD] are estimates; the wider rear tires are a 1.4x rear cornering-"
        "stiffness scale and summer-tire friction 1.1x the reference tire."
    ),
    "kart": (
        "Direct-drive 125 cc racing kart, CIK-FIA OK class: 150 kg with driver (OK minimum 145 kg), wheelbase "
        "1.04 m (regulation 1.01-1.07 m), front / rear track 1.15 / 1.35 m (overall width <= 1.40 m, length <= 1.82 m: overhangs ~0.45 / 0.33 m), 21 kW, "
        "10x4.50-5 front and 11x7.10-5 rear tires (radii 0.127 / 0.14 m), hydraulic brake on the rear axle "
        "only (brake_bias_front = 0), ~42 / 58 % axle loads.  CG height 0.25 m, Iz 30 kg m^2, wheel inertia "
        "and the 1.5x slick friction are estimates; the solid rear axle is modelled as an open differential "
        "and the chassis flex as a 45 % front roll-stiffness share."
    ),
    "race_car": (
        "Single-seater with wings, FIA Formula 3 (Dallara F3 2019) class: 673 kg with driver (FIA F3 minimum), "
        "wheelbase ~2.9 m, length ~4.97 m and width ~1.89 m (overhangs ~1.20 / 0.87 m, estimated split), 280 kW 3.4 l V6, 45 / 55 % axle loads, 13-inch slicks (radius 0.33 m).  Aero from "
        "[Katz]: CdA ~1.1 m^2 and ClA ~3.0 m^2 (downforce equal to the weight near 57 m/s), 45 % front.  CG "
        "height 0.28 m, Iz and the slick scales are estimates: friction 1.6x, slip stiffness 1.3x and cornering "
        "stiffness 2.6x the road tire, which puts the lateral peak at a slip angle of 5-7 deg (0.09-0.13 rad from "
        "1.4 to 7 kN), where racing slicks peak [Milliken RCVD ch. 2]; with the road tire's 1.3x it sat at 0.2-0.33 "
        "rad, and the car on the limit slid at body slip angles no race car runs."
    ),
}

PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)
TIRE_MODELS = ("mf", "simple")


@functools.cache
def _bundled(kind: str, dtype_name: str):
    dtype = jnp.dtype(dtype_name)
    if kind == "simple":
        return default_simple_params(dtype=dtype)
    t = default_tire(dtype=dtype)
    return t.replace(LMUV=jnp.asarray(0.0, t.LMUV.dtype))


def base_tire(tire=None, dtype=None, load=None, radius=None):
    """The base tire of the presets: ``tire`` (a jaxtire tire pytree, ``None``/``"mf"`` for the bundled tire,
    ``"simple"`` for the simple model; see the module docstring), optionally moved to a nominal ``load`` [N]
    and unloaded ``radius`` [m] (:func:`jaxtire.tire.with_nominal`)."""
    if tire is None or isinstance(tire, str):
        check_choice("tire", "mf" if tire is None else tire, TIRE_MODELS, source="presets")
        tire = _bundled(tire or "mf", jnp.dtype(dtype or jnp.result_type(float)).name)
    elif not is_tire(tire):
        raise ValueError(
            f"presets: tire must be a jaxtire tire, None or one of {TIRE_MODELS}; got {type(tire).__name__}"
        )
    return with_nominal(tire, load=load, radius=radius)


def check_name(name: str) -> str:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(PRESET_NAMES)}")
    return name


def chassis_values(name: str) -> dict:
    """The preset's chassis fields as a plain dict (for overrides and sampling)."""
    return dict(PRESETS[check_name(name)]["chassis"])


def get(
    name: str,
    tire=None,
    surfaces: SurfaceTable | None = None,
    dtype=None,
    *,
    surface_ids=0,
    grade=0.0,
    bank=0.0,
    driveline: bool | Driveline = False,
    **overrides,
) -> VehicleParams:
    """Validated :class:`VehicleParams` of preset ``name`` (``hatchback``, ``sports_car``, ``kart``,
    ``race_car``) on ``tire`` (a jaxtire tire pytree, ``None`` the bundled tire, ``"mf"`` or ``"simple"``;
    :func:`base_tire`); ``overrides`` replace chassis fields; ``driveline`` ``True`` attaches the preset's
    :func:`get_driveline` (engine, gearbox, differentials), a :class:`~sims.vehicles.driveline.Driveline` that one,
    ``False`` (default) the chassis' one-number drive;
    the road under the car (:class:`~sims.roads.contact.Contact`): ``surface_ids`` (scalar or 4 values, default
    0) index ``surfaces`` (default :func:`jaxtire.surfaces.preset_table`), ``grade`` and ``bank`` [rad] (default
    0: flat)."""
    spec = PRESETS[check_name(name)]
    surfaces = preset_table() if surfaces is None else surfaces
    n_surf = int(jnp.shape(surfaces.grip)[-1])
    values = {**spec["chassis"], **overrides}
    ch = make_chassis(dtype=dtype, tire_scale_front=spec["scale_front"], tire_scale_rear=spec["scale_rear"], **values)
    contact = make_contact(grade, bank, surface_ids, n_surfaces=n_surf, dtype=dtype)
    tf = base_tire(tire, dtype, **(spec["tire_front"] or {}))
    tr = base_tire(tire, dtype, **(spec["tire_rear"] or {}))
    params = make_vehicle(ch, tf, tr, surfaces, dtype=dtype, contact=contact)
    if driveline is False:
        return params
    dl = get_driveline(name, dtype=dtype) if driveline is True else driveline
    validate_driveline(dl, source="presets.get")
    return params._replace(driveline=dl)


for _n, _d in PRESET_DOCS.items():
    get.__doc__ = (get.__doc__ or "") + f"\n\n    ``{_n}``: {_d}"


# ------------------------------------------------------------------------------------------ drivelines
def _rpm_table(points):
    rpm_, full, drag = (np.asarray(c, float) for c in zip(*points, strict=True))
    return rpm(rpm_), full, drag


# fmt: off
#: name -> (engine table ``(rpm, full-load torque [N m], closed-throttle torque [N m])``, idle [rpm], rev limit
#: [rpm], engine inertia [kg m^2], gear ratios, gear efficiency, final drive, final efficiency, reverse ratio,
#: upshift / part-throttle upshift / downshift [rpm], shift time [s], clutch capacity [N m], clutch
#: engaged [rpm], front / rear / centre differential).  Sources: :data:`DRIVELINE_DOCS`.
_DRIVELINES: dict[str, dict] = {
    "hatchback": dict(
        table=[(800, 120, -12), (1400, 200, -14), (4000, 200, -20), (5000, 176, -24), (6000, 146, -30), (6500, 125, -34)],
        idle=800, limit=6500, inertia=0.15,
        ratios=(3.62, 1.95, 1.28, 0.97, 0.78, 0.64), eff=0.97, final=3.65, final_eff=0.97, reverse=3.45,
        up=6200, up_part=2800, down=1200, shift_time=0.3, clutch=400.0, engage=2000,
        front=Differential(), rear=Differential(), centre=Differential(),
    ),
    "sports_car": dict(
        table=[(900, 200, -15), (1700, 450, -20), (5000, 450, -32), (6500, 400, -40), (7000, 350, -44), (7500, 300, -48)],
        idle=900, limit=7500, inertia=0.2,
        ratios=(3.91, 2.29, 1.65, 1.30, 1.08, 0.88, 0.62), eff=0.97, final=3.44, final_eff=0.97, reverse=3.55,
        up=7200, up_part=2800, down=1500, shift_time=0.1, clutch=700.0, engage=2500,
        front=Differential(), rear=Differential(30.0, 0.22, 0.27), centre=Differential(),
    ),
    "kart": dict(
        table=[(2000, 4, -1), (4000, 8, -1.5), (8000, 13, -2), (11000, 15.5, -2.5), (14000, 14.3, -3), (15500, 12, -3.5)],
        idle=2000, limit=15500, inertia=0.004,
        ratios=(1.0,), eff=1.0, final=78.0 / 12.0, final_eff=0.95, reverse=1.0,
        up=15000, up_part=15000, down=1000, shift_time=0.0, clutch=40.0, engage=4500,
        front=Differential(), rear=Differential(locked=1.0), centre=Differential(),
    ),
    "race_car": dict(
        table=[(2500, 250, -25), (4000, 350, -30), (6000, 380, -38), (7500, 365, -45), (8000, 334, -48), (8500, 300, -52)],
        idle=2500, limit=8500, inertia=0.08,
        ratios=(2.92, 2.19, 1.77, 1.48, 1.27, 1.10), eff=0.98, final=3.20, final_eff=0.97, reverse=2.9,
        up=8200, up_part=6000, down=4000, shift_time=0.05, clutch=600.0, engage=4000,
        front=Differential(), rear=Differential(100.0, 0.3, 0.4), centre=Differential(),
    ),
}
# fmt: on

#: Where each preset's driveline comes from.
DRIVELINE_DOCS: dict[str, str] = {
    "hatchback": (
        "VW Golf VII 1.4 TSI 92 kW class: maker's data 200 N m from 1400 to 4000 rpm, 92 kW from 5000 to 6000 "
        "rpm (the table's 176 / 146 N m); idle 800, limiter 6500 rpm, the six gear ratios and 3.65 final drive "
        "typical of the class, closed-throttle drag (2 bar friction mean effective pressure, rising with speed), "
        "crank + flywheel inertia 0.15 kg m^2, 97 % per gear stage and the automatic's schedule are estimates; "
        "open front differential."
    ),
    "sports_car": (
        "Porsche 911 Carrera (991.2) PDK class: maker's data 450 N m from 1700 to 5000 rpm, 272 kW at 6500 rpm, "
        "limiter 7500 rpm, seven-speed PDK ratios 3.91 / 2.29 / 1.65 / 1.30 / 1.08 / 0.88 / 0.62 with a 3.44 "
        "final drive, 0.1 s shifts; the drag curve, inertia, efficiencies and the rear limited-slip "
        "differential (30 N m preload, 22 % / 27 % locking on power / coast) are estimates."
    ),
    "kart": (
        "125 cc kart with a centrifugal clutch (IAME X30 class): ~15.5 N m at 11000 rpm, 21 kW at 14000 rpm, "
        "12 / 78 sprockets, clutch engaged by 4500 rpm; one gear (direct drive), a solid rear axle (a locked "
        "differential); table, drag and inertia are estimates."
    ),
    "race_car": (
        "FIA Formula 3 class 3.4 l V6: ~280 kW near 7500 rpm (the table's 365 N m), limiter 8500 rpm, six-speed "
        "sequential with 0.05 s shifts; ratios, final drive, drag, inertia and the preloaded limited-slip "
        "differential (100 N m, 30 % / 40 %) are estimates."
    ),
}


def get_driveline(name: str, dtype=None, **gearbox_overrides) -> Driveline:
    """The validated :class:`~sims.vehicles.driveline.Driveline` of preset ``name`` (:data:`DRIVELINE_DOCS`);
    ``gearbox_overrides`` replace :class:`~sims.vehicles.driveline.Gearbox` fields."""
    d = _DRIVELINES[check_name(name)]
    speeds, full, drag = _rpm_table(d["table"])
    engine = Engine(speeds, full, drag, float(rpm(d["idle"])), float(rpm(d["limit"])), d["inertia"])
    k = len(d["ratios"])
    box = Gearbox(
        np.asarray(d["ratios"], float),
        np.full(k, d["eff"]),
        d["final"],
        d["final_eff"],
        d["reverse"],
        float(k),
        float(rpm(d["up"])),
        float(rpm(d["up_part"])),
        float(rpm(d["down"])),
        d["shift_time"],
        1.0,
        d["clutch"],
        float(rpm(d["engage"])),
    )._replace(**gearbox_overrides)
    return make_driveline(engine, box, d["front"], d["rear"], d["centre"], dtype=dtype)


for _n, _d in DRIVELINE_DOCS.items():
    get_driveline.__doc__ = (get_driveline.__doc__ or "") + f"\n\n    ``{_n}``: {_d}"
