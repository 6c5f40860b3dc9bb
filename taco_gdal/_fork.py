"""What a forked child must not inherit from its parent, reset in one place.

The child clears GDAL's curl state (the parent's sockets would otherwise be
shared) and runs the resets other modules register (DuckDB). A GDAL or rasterio
handle opened before the fork stays unsafe in the child: fork from a quiet
point, or use ``spawn``/``forkserver``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

__all__ = ["after_fork_in_child"]

_callbacks: list[Callable[[], None]] = []
_lock = threading.Lock()


def after_fork_in_child(callback: Callable[[], None]) -> None:
    """Run ``callback`` in every child forked from now on (after the GDAL reset)."""
    with _lock:
        _callbacks.append(callback)


def _in_child() -> None:
    global _lock
    _lock = threading.Lock()  # the parent may have held it while forking
    gdal = sys.modules.get("osgeo.gdal")
    if gdal is not None:  # a process that never imported GDAL has no curl state to reset
        gdal.VSICurlClearCache()
    for callback in list(_callbacks):
        callback()


os.register_at_fork(after_in_child=_in_child)
