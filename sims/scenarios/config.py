"""Validation of the scenario arguments (speeds, distances, durations, counts, time steps) in one table.

Every scenario entry point calls :func:`check_config` with its arguments before building anything, so a
bad value gives a :class:`~jaxtire.validation.ValidationError` naming the function, the argument, the
value and the allowed range instead of a silent NaN, an empty measurement window or a long run.
"""

from __future__ import annotations

import math

import numpy as np

from jaxtire.validation import ValidationError, check_finite, check_int, check_range, is_concrete

_INF = math.inf

#: Plausible speeds of a scenario [m/s] (324 km/h): above, most likely a speed in km/h given as m/s.
SPEED_LIMIT = 90.0

#: Allowed range of each real-valued scenario argument: name -> ``(low, high, low inclusive, high inclusive)``
#: (SI units; values may be per-vehicle arrays; every value must also be finite in float32).
SCENARIO_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "speed": (0.0, SPEED_LIMIT, False, True),  # [m/s] (above: check_speed's km/h hint)
    "speeds": (0.0, SPEED_LIMIT, False, True),  # [m/s]
    "yaw_rate0": (-10.0, 10.0, True, True),  # [rad/s]
    "dt": (0.0, 1.0, False, True),  # [s]
    "max_time": (0.0, 1e6, False, True),  # [s]
    "duration": (0.0, 1e6, False, True),  # [s]
    "settle": (0.0, 1e6, True, True),  # [s]
    "t_step": (0.0, 1e6, True, True),  # [s]
    "ramp": (0.0, 100.0, True, True),  # [s]
    "radius": (0.0, 1e5, False, True),  # [m]
    "tolerance": (0.0, 1.0, False, True),  # [-] of the radius
    "ay_target": (0.0, 100.0, False, True),  # [m/s^2]
    "ay_max": (0.0, 100.0, False, True),  # [m/s^2]
    "abs_fraction": (0.0, 1.0, True, True),  # [-]
    "stop_speed": (0.0, 100.0, False, True),  # [m/s] (BrakingReducer)
    "spin_angle": (0.0, math.pi, False, True),  # [rad] (BrakingReducer)
}

#: Allowed range of each count: name -> ``(low, high)`` (inclusive).
SCENARIO_COUNTS: dict[str, tuple[int, int]] = {
    "n": (1, 100_000_000),
    "n_points": (1, 1_000_000),
    "substeps": (1, 1000),
    "chunk_steps": (1, 10_000_000),
}


def check_config(source: str, **values) -> None:
    """Check each named argument against :data:`SCENARIO_RANGES` / :data:`SCENARIO_COUNTS` (``None`` skipped).

    Raises :class:`~jaxtire.validation.ValidationError` (``"{source}: {name} = {value} is outside the
    allowed range ..."``).  Traced values are not checked.
    """
    for name, value in values.items():
        if value is None:
            continue
        if name in SCENARIO_COUNTS:
            check_int(name, value, *SCENARIO_COUNTS[name], source=source)
        else:
            if name in ("speed", "speeds") and is_concrete(value):  # above the range: the km/h hint
                arr = check_finite(name, value, source=source)
                if np.any(arr > SPEED_LIMIT):
                    check_speed(name, arr, source)
            check_range(name, value, *SCENARIO_RANGES[name], source=source)


def check_speed(name: str, value, source: str, high: float = SPEED_LIMIT) -> None:
    """Refuse a concrete speed [m/s] outside ``[0, high]`` with a hint about units (km/h given as m/s); 0 is a
    standing start."""
    if not is_concrete(value):
        return
    arr = np.asarray(value, dtype=float)
    bad = ~np.isfinite(arr) | (arr < 0.0) | (arr > high)
    if bad.any():
        v = float(arr[bad].ravel()[0])
        raise ValidationError(
            f"{source}: {name} = {v:g} m/s is outside the plausible range [0, {high:g}] m/s "
            f"({high * 3.6:.0f} km/h); speeds are in m/s: {v:g} km/h is {v / 3.6:.4g} m/s "
            f"(pass {name}={v:g} / 3.6)"
        )


def check_window(source: str, name: str, duration: float, start: float) -> None:
    """``duration`` [s] must exceed ``start`` [s] (the end of the transient), or nothing is measured."""
    if float(duration) <= float(start):
        raise ValidationError(
            f"{source}: {name} = {float(duration):g} s leaves no measurement window (it must exceed {float(start):g} s)"
        )
