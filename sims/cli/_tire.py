"""The tire flags every CLI shares: ``--tir PATH`` (any tire file, through the one tire interface) and
``--tire mf|simple`` (the bundled tire or the simple model); the bundled tire is the default."""

from __future__ import annotations

import argparse
import os
import sys

from jaxtire.tir import TirError, data_path, load_tir
from sims.vehicles.presets import TIRE_MODELS


def add_tire_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--tir",
        default=None,
        metavar="PATH",
        help=f"tire property file (.tir) of the vehicles' tires; None: the bundled {data_path().name}",
    )
    ap.add_argument("--tire", default="mf", help="without --tir: mf (the bundled .tir) or simple (the simple model)")


def _fail(ap: argparse.ArgumentParser, msg: str):
    """One line on stderr and exit status 2 (as argparse's own errors), no traceback."""
    sys.stderr.write(f"{ap.prog}: error: {msg}\n")
    raise SystemExit(2)


def check_tire_arguments(ap: argparse.ArgumentParser, args) -> None:
    """Validate ``--tir`` / ``--tire`` without loading anything."""
    if args.tire not in TIRE_MODELS:
        _fail(ap, f"--tire {args.tire!r} is unknown; allowed: {', '.join(TIRE_MODELS)}")
    if args.tir is not None:
        if args.tire != "mf":
            _fail(ap, "--tir and --tire simple exclude each other (the file says which model it is)")
        if not os.path.isfile(args.tir):
            _fail(ap, f"--tir {args.tir}: no such file")


def tire_from_args(ap: argparse.ArgumentParser, args):
    """The tire the flags ask for: the ``--tir`` file, or the name of a bundled tire (``"mf"``/``"simple"``,
    which :func:`sims.vehicles.presets.get` resolves).  A file that does not parse exits with status 2."""
    check_tire_arguments(ap, args)
    if args.tir is None:
        return args.tire
    try:
        return load_tir(args.tir)
    except (OSError, ValueError, KeyError, TirError) as e:
        _fail(ap, f"--tir {args.tir}: {e}")


def tire_label(args) -> str:
    """What the run's tires are, for the header line."""
    return os.path.basename(args.tir) if args.tir else {"mf": data_path().name}.get(args.tire, args.tire)
