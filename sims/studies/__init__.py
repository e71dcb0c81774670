"""Studies by ``grad`` through rollouts, on :func:`jaxtire.fit.minimize` (the project's one optimisation loop):
:mod:`~sims.studies.identify` (vehicle parameters from a log) and :mod:`~sims.studies.tuning`
(ABS and lane-change controller gains)."""
