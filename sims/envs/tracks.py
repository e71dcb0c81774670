"""Race tracks of the RL envs: an alias of :mod:`sims.roads.circuits` (the one home of tracks).

Every name of the old module (``Track``, ``TrackPose``, ``make_track``, ``get_track``, ``TRACKS``,
``oval_points``, ``twisty_points``, ``TWISTY_POINTS``, ``project``, ``track_pose``, ``curvature_at``,
``point_at``, ``progress_delta``) is re-exported from there; :func:`~sims.roads.circuits.get_track` now also
takes the shipped circuits (``"Monza"``, ...) and circuit files.
"""

from __future__ import annotations

from sims.roads.circuits import (
    CIRCUITS,
    TRACKS,
    TWISTY_POINTS,
    Track,
    TrackPose,
    astype,
    curvature_at,
    get_track,
    make_circuit,
    make_track,
    oval_points,
    point_at,
    progress_delta,
    project,
    track_pose,
    twisty_points,
    widths_at,
)

__all__ = [
    "CIRCUITS",
    "TRACKS",
    "TWISTY_POINTS",
    "Track",
    "TrackPose",
    "astype",
    "curvature_at",
    "get_track",
    "make_circuit",
    "make_track",
    "oval_points",
    "point_at",
    "progress_delta",
    "project",
    "track_pose",
    "twisty_points",
    "widths_at",
]
