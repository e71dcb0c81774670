"""Vehicle models: :mod:`~sims.vehicles.single_track`, :mod:`~sims.vehicles.double_track`, presets."""

from sims.vehicles import double_track, single_track
from sims.vehicles.core import Model, Telemetry
from sims.vehicles.params import (
    WHEELS,
    Chassis,
    Controls,
    G,
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
MODELS = {"double_track": DOUBLE_TRACK, "single_track": SINGLE_TRACK}


def get_model(name) -> Model:
    """A model by name (``"double_track"``, ``"single_track"``) or the :class:`Model` itself."""
    if isinstance(name, Model):
        return name
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; allowed: {', '.join(MODELS)}") from None


__all__ = [
    "G",
    "WHEELS",
    "Chassis",
    "Controls",
    "DOUBLE_TRACK",
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
    "get_model",
    "init_state",
    "make_chassis",
    "make_vehicle",
    "single_track",
    "validate_params",
]
