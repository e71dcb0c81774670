"""The studies' progress and timing (private): the host callback of the optimisation loop (verbose lines and a
progress bar) and the timed phases of a Monte Carlo study, each with a progress bar on stderr.

A study's wall time ``T`` (from the start of :func:`sims.studies.study.run` to ``summary.json`` written) is
split into phases (:class:`Phases`) whose times are *exclusive*: a phase timed inside another (the compile
inside a fleet's set-up, the fleet runs inside a rare-event estimator) is subtracted from the outer one, so
``sum(phases) + other = T`` with ``other`` the few statements between phases.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from tqdm import tqdm


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


class _NoBar:
    """A progress bar that shows nothing (``update``, ``close``, ``total``)."""

    total = None
    n = 0

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


NO_BAR = _NoBar()
#: A phase without steps of its own shows its name and, once done, its time.
_UNTIMED = "{desc}: {elapsed}"


#: The phases of a study, in the order of ``summary.json``'s ``timing``: reading the study and drawing the
#: factors; each fleet's vehicle inputs, scenario set-up and evaluation (a lap's speed profiles included); XLA's
#: compile; the simulation; the journal's batches (saving, loading) and per-batch statistics; a rare-event
#: estimator's own work; the statistics and Sobol' / Morris indices; the pathwise gradients; the run folder.
PHASES = ("prepare", "setup", "compile", "run", "journal", "estimator", "statistics", "gradients", "write")


class Phases:
    """The exclusive wall-clock time of each phase of a study (:attr:`seconds`, name -> s, summed over
    repeats) from :attr:`t0` (the start) and, when ``enabled``, a tqdm bar on stderr per phase
    (``label: phase``).  ``nested``: the bars of inner phases (one fleet of many) are not left on screen."""

    def __init__(self, enabled: bool = True, label: str = "study"):
        self.t0 = time.perf_counter()
        self.enabled, self.label, self.nested = bool(enabled), label, False
        self.seconds: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + float(seconds)

    def wall(self) -> float:
        """Seconds since :attr:`t0`."""
        return time.perf_counter() - self.t0

    def bar(self, name: str, total: int | None = None, unit: str = "it", leave: bool = True) -> Any:
        """A bar ``label: name`` (``update(n)``, ``close()``): counts of ``unit`` out of ``total``, or with
        neither the phase's time alone; a no-op when not enabled."""
        if not self.enabled:
            return NO_BAR
        fmt = _UNTIMED if total is None and unit == "it" else None
        return tqdm(
            total=total,
            desc=f"{self.label}: {name}",
            unit=unit,
            file=sys.stderr,
            dynamic_ncols=True,
            leave=leave,
            bar_format=fmt,
        )

    @contextlib.contextmanager
    def phase(
        self, name: str, total: int | None = None, unit: str = "it", desc: str | None = None, show: bool = True
    ) -> Iterator[Any]:
        """Time the block as phase ``name`` (exclusive of the phases timed inside it) with a :meth:`bar`
        (``desc``: its label, default ``name``; none unless ``show``: a short phase, or one whose inner
        phases have bars of their own)."""
        bar = self.bar(desc or name, total, unit) if show else NO_BAR
        inner = sum(self.seconds.values())
        t = time.perf_counter()
        try:
            yield bar
        finally:
            self.add(name, time.perf_counter() - t - (sum(self.seconds.values()) - inner))
            bar.close()

    def timing(self, order: tuple[str, ...]) -> dict[str, float]:
        """``{name_s: seconds}`` for every phase of ``order`` (0 if it did not happen) and any other, then
        ``wall_s`` (:meth:`wall`) and ``other_s`` (the wall time outside every phase)."""
        names = list(order) + [k for k in self.seconds if k not in order]
        out = {f"{k}_s": self.seconds.get(k, 0.0) for k in names}
        wall = self.wall()
        return dict(out, wall_s=wall, other_s=wall - sum(self.seconds.values()))


class FleetBar:
    """The bars of one fleet run, as :func:`sims.scenarios.base.run_scenario`'s ``progress``: ``set-up +
    compile`` (its time) until the first steps arrive, then ``simulate`` (steps of ``vehicles`` vehicles).
    :meth:`close` after the run."""

    def __init__(self, phases: Phases, vehicles: int):
        self.phases, self.vehicles = phases, vehicles
        self.setup = phases.bar(f"set-up + compile ({vehicles} vehicles)", leave=not phases.nested)
        self.steps: Any = None

    def update(self, n: int) -> None:
        if self.steps is None:
            self.setup.close()
            self.steps = self.phases.bar(
                f"simulate {self.vehicles} vehicles", unit="step", leave=not self.phases.nested
            )
        self.steps.update(n)

    def close(self) -> None:
        self.setup.close()
        if self.steps is not None:
            self.steps.close()
