"""The host callback of the studies' optimisation loop (private): verbose lines and a progress bar."""

from __future__ import annotations

from collections.abc import Callable


def iteration_callback(line: Callable | None, progress=None) -> Callable | None:
    """``callback(i, loss, u)`` for :func:`jaxtire.fit.minimize` (called on the host every few iterations
    and at the last): prints ``line(i, loss, u)`` when ``line`` is given (the ``verbose`` output) and moves
    ``progress`` (anything with ``update(n)``, e.g. a tqdm bar) to ``i + 1`` iterations done; ``None``
    when there is nothing to do (the loop then schedules no callback)."""
    if line is None and progress is None:
        return None
    done = 0

    def callback(i, loss, u):
        nonlocal done
        if line is not None:
            print(line(i, loss, u), flush=True)
        if progress is not None:
            progress.update(i + 1 - done)
            done = i + 1

    return callback
