"""Running a function in a forked child and getting its answer back, for fork-safety tests."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_forked_child(report: Callable[[], str]) -> str:
    """``report()`` run in a child forked now; its text comes back through a pipe.

    The child leaves with ``os._exit(0)`` whatever happens (an exception
    leaves the text empty), as a DataLoader worker would, without running the
    parent's exit handlers.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write, report().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return text
