"""The command lines of sims: argument parsing and printing only; every computation lives in
:mod:`sims.scenarios`, :mod:`sims.studies` and :mod:`sims.run`.

* ``python -m sims [flags]``: the fleet CLI (:mod:`sims.cli.fleet`: the braking Monte Carlo and the
  table and throughput scenarios);
* ``python -m sims identify [flags]``: vehicle identification (:mod:`sims.cli.identify`);
* ``python -m sims tune [flags]``: controller tuning (:mod:`sims.cli.tune`);
* ``python -m sims study STUDY.toml``: a Monte Carlo study (:mod:`sims.cli.study`);
* ``python -m sims rl train|eval``: train PPO on an environment, evaluate a saved policy (:mod:`sims.cli.rl`).

Every one takes ``--tir PATH`` (any tire file) or ``--tire mf|simple``; the bundled tire is the default.
"""

from __future__ import annotations

import sys

from sims.cli import fleet, identify, rl, study, tune
from sims.run import use_host_devices

COMMANDS = {"identify": identify.main, "rl": rl.main, "study": study.main, "tune": tune.main}


def main(argv=None):
    """Dispatch ``argv`` (default ``sys.argv[1:]``) to a sub-command, or to the fleet CLI; returns its result."""
    from_command_line = argv is None  # the CLI then sets XLA up before JAX starts (sims/run/_xla.py)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        if from_command_line:  # a sub-command's fleets over one host device per core (the fleet CLI: its --devices)
            use_host_devices()
        return COMMANDS[argv[0]](argv[1:])
    return fleet.main(None if from_command_line else argv)


__all__ = ["COMMANDS", "main"]
