"""Argument checks shared by the CLIs (``fleet``, ``identify``, ``tune``): each raises nothing, it calls
``ap.error`` (one line on stderr, exit status 2, no traceback) before anything is built or compiled."""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path

SEED_MAX = 2**63 - 1  # jax.random.PRNGKey takes a signed 64-bit integer; the CLIs take [0, 2**63 - 1]
# host bytes per simulated vehicle, an upper estimate for the double-track fleet with an MF tire: params
# (two tires of ~200 float coefficients + chassis, ~2 KiB), state, driver and reducer (~0.5 KiB), the
# chunk's intermediates and XLA temporaries (~4x) -> 16 KiB.  Used only to refuse absurd fleet sizes up front.
BYTES_PER_VEHICLE = 16 * 1024


def check_seed(ap, seed: int, flag: str = "--seed") -> None:
    if not 0 <= seed <= SEED_MAX:
        ap.error(f"{flag} {seed} is outside the allowed range [0, {SEED_MAX}] (2**63 - 1)")


def check_float(ap, flag: str, value: float, lo: float, hi: float, lo_incl: bool = True) -> None:
    ok = math.isfinite(value) and (lo <= value if lo_incl else lo < value) and value <= hi
    if not ok:
        ap.error(f"{flag} {value} is outside the allowed range {'[' if lo_incl else '('}{lo:g}, {hi:g}]")


def check_int(ap, flag: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        ap.error(f"{flag} {value} is outside the allowed range [{lo}, {hi}]")


def available_memory() -> int:
    """Bytes of memory available to this process (MemAvailable, else physical pages), a large number if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def check_memory(ap, flag: str, vehicles: int) -> None:
    need = vehicles * BYTES_PER_VEHICLE
    have = available_memory()
    if need > have:
        ap.error(
            f"{flag} {vehicles} vehicles need about {need / 2**30:.3g} GiB "
            f"({BYTES_PER_VEHICLE // 1024} KiB each), only {have / 2**30:.3g} GiB is available"
        )


def check_out_dir(ap, out: str, flag: str = "--out") -> None:
    """``out`` must be a directory we can create and write to: made now (with parents), and a probe file
    written and removed, so a run never fails on its output after simulating."""
    p = Path(out)
    for q in (p, *p.parents):
        if q.exists() and not q.is_dir():
            ap.error(f"{flag} {out}: {q} is a file, not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".jaxtire-write-probe-{os.getpid()}"
        with open(probe, "wb") as f:
            f.write(b"ok")
        probe.unlink()
    except OSError as e:
        ap.error(f"{flag} {out}: not writable ({e.strerror or type(e).__name__})")


_ROLE = re.compile(r":[a-z]+:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")


def plain_text(text: str) -> str:
    """``text`` with the docstrings' reStructuredText markup removed for a terminal: ``:func:`~a.b.c``` ->
    ``c`` (the last component with ``~``, else the whole target), ``:class:`X``` -> ``X``, double
    backquotes dropped."""
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    return text.replace("``", "")


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (``prog: error: message``, exit status 2):
    no usage block, no traceback (``--help`` still prints the usage); its help is plain text
    (:func:`plain_text`: no reStructuredText roles from the docstrings it quotes)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def format_help(self) -> str:
        return plain_text(super().format_help())
