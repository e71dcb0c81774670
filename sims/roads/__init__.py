"""Where cars drive: road profiles along a path and circuits.

The bottom layer of :mod:`sims` (it imports only :mod:`jaxtire`): paths (sampled plane curves with
heading and curvature), circuits (centreline, widths, racing line) and 3-D road profiles (height,
normal and surface under each wheel).  Roads are data (pytrees), so a fleet can drive different roads
in one compiled program.
"""

__all__ = ["circuits", "contact", "path", "profile", "raceline", "road"]
