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


def on_startup(command, dirty):  # noqa: ARG001 - the MkDocs hook signature
    from jupyter_client.channels import AsyncZMQSocketChannel

    original = AsyncZMQSocketChannel.get_msg
    if getattr(original, "_sliced", False):
        return

    async def get_msg(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            wait = POLL_SLICE if left is None else max(0.0, min(POLL_SLICE, left))
            try:
                return await original(self, wait)
            except queue.Empty:
                if left is not None and left <= POLL_SLICE:
                    raise

    setattr(get_msg, "_sliced", True)  # noqa: B010 - a marker on a function object
    setattr(AsyncZMQSocketChannel, "get_msg", get_msg)  # noqa: B010 - patch the class, as the tests do
