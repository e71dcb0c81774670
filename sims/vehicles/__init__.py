"""Vehicle models: :mod:`~sims.vehicles.single_track`, :mod:`~sims.vehicles.double_track`,
:mod:`~sims.vehicles.full` (sprung body in 6 DOF, suspension, vertical tires), presets."""

from sims.vehicles import double_track, full, single_track
from sims.vehicles.core import Model, Telemetry
from sims.vehicles.params import (
    WHEELS,
    Chassis,
    Controls,
    TireScale,
    VehicleParams,
    VehicleState,
    astype,
    fleet_axes,
    init_state,
    make_chassis,
    make_vehicle,
    validate_params,
)

DOUBLE_TRACK = double_track.MODEL
SINGLE_TRACK = single_track.MODEL
FULL = full.MODEL
MODELS = {"double_track": DOUBLE_TRACK, "single_track": SINGLE_TRACK, "full": FULL}


def get_model(name) -> Model:
    """A model by name (``"double_track"``, ``"single_track"``, ``"full"``) or the :class:`Model` itself."""
    if isinstance(name, Model):
        return name
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; allowed: {', '.join(MODELS)}") from None


__all__ = [
    "WHEELS",
    "Chassis",
    "Controls",
    "DOUBLE_TRACK",
    "FULL",
    "MODELS",
    "Model",
    "SINGLE_TRACK",
    "Telemetry",
    "TireScale",
    "VehicleParams",
    "VehicleState",
    "astype",
    "double_track",
    "fleet_axes",
    "full",
    "get_model",
    "init_state",
    "make_chassis",
    "make_vehicle",
    "single_track",
    "validate_params",
]
