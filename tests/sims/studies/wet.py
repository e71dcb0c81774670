"""The short wet-braking study the study tests share: the hatchback on wet asphalt from 12 m/s, single track,
10 ms steps, a 3 s horizon (stops in about 2 s); each test adds its runs, seed, design, metrics and variations."""

MU = "vehicle.tire_scale.mu_x"
MASS = "vehicle.chassis.mass"
#: friction factor path and the path that shares its draw
MU_ALSO = ["vehicle.tire_scale.mu_y"]
BASE = dict(
    name="wet",
    scenario="braking",
    vehicle={"surface": "asphalt_wet"},
    settings={"speed": 12.0},
    options={"max_time": 3.0, "dt": 0.01, "model": "single_track"},
)
