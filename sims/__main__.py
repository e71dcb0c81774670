"""``python -m sims`` and the console script ``jaxtire-fleet``: see :mod:`sims.cli`."""

from sims import cli


def main(argv=None) -> int:
    """Run :func:`sims.cli.main`; the exit status (0 after a scenario, whose summary dict is discarded)."""
    result = cli.main(argv)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
