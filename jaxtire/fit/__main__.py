"""``python -m jaxtire.fit``: see :mod:`jaxtire.fit.cli`."""

from jaxtire.fit.cli import main

raise SystemExit(main())
