"""MkDocs hooks (mkdocs.yml ``hooks:``): make notebook execution by mkdocs-jupyter robust.

mkdocs-jupyter executes each notebook through nbconvert/nbclient with no cell timeout, and
nbclient waits for a cell's reply with one ``poll(timeout)`` on the kernel's shell channel.  Now
and then (most often after an ipywidgets cell) that poll misses the reply's wake-up
(jupyter/nbclient#312): with no timeout the build would then hang for ever.  As in
``tests/test_notebooks.py``, channel reads are cut into slices of ``POLL_SLICE`` seconds, so a
missed wake-up costs at most one slice.
"""

from __future__ import annotations

import queue
import time

#: Longest single wait on a kernel channel [s].
POLL_SLICE = 0.5


def sliced(get_msg):
    """``get_msg`` (a kernel channel's async read) with its wait cut into slices of :data:`POLL_SLICE` seconds:
    the same total timeout, but a missed wake-up costs at most one slice.  Also used by
    ``tests/test_notebooks.py``."""

    async def wrapper(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            wait = POLL_SLICE if left is None else max(0.0, min(POLL_SLICE, left))
            try:
                return await get_msg(self, wait)
            except queue.Empty:
                if left is not None and left <= POLL_SLICE:
                    raise

    setattr(wrapper, "_sliced", True)  # noqa: B010 - a marker on a function object
    return wrapper


def on_startup(command, dirty):  # noqa: ARG001 - the MkDocs hook signature
    from jupyter_client.channels import AsyncZMQSocketChannel

    original = AsyncZMQSocketChannel.get_msg
    if not getattr(original, "_sliced", False):
        setattr(AsyncZMQSocketChannel, "get_msg", sliced(original))  # noqa: B010 - patch the class, as the tests do
