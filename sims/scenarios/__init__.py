"""Standard manoeuvres on fleets: :mod:`~sims.scenarios.braking` (incl. the CLI's Monte Carlo),
:mod:`~sims.scenarios.skidpad`, :mod:`~sims.scenarios.step_steer`."""
