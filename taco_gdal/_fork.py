"""What a forked child must not inherit from its parent, reset in one place.

After ``os.fork()`` (multiprocessing, DataLoader workers on Linux) the child
calls ``gdal.VSICurlClearCache()``, since the curl handles would otherwise
share the parent's sockets and receive each other's bytes; pins stay, as they
describe files, not connections. DuckDB state registers its own reset here:
the parent's databases are never used nor closed in the child.

Still unsafe: a GDAL or rasterio handle opened before the fork, or a fork while
another thread is inside a GDAL network read. Fork from a quiet point, or use
``spawn``/``forkserver``. Handlers are registered when :mod:`taco_gdal.env` is
imported; no GDAL option is set.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

__all__ = ["after_fork_in_child", "forks_seen"]

_callbacks: list[Callable[[], None]] = []
_lock = threading.Lock()
_forks = 0


def after_fork_in_child(callback: Callable[[], None]) -> None:
    """Run ``callback`` in every child forked from now on (after the GDAL reset).

    Example:
        >>> after_fork_in_child(lambda: None)
    """
    with _lock:
        _callbacks.append(callback)


def forks_seen() -> int:
    """How many forks this process descends from since taco_gdal was imported.

    Example:
        >>> forks_seen() >= 0
        True
    """
    return _forks


def _reset_gdal_network_state() -> None:
    gdal = sys.modules.get("osgeo.gdal")
    if gdal is not None:  # a process that never imported GDAL has nothing to reset
        gdal.VSICurlClearCache()


def _in_child() -> None:
    global _lock, _forks
    _lock = threading.Lock()  # the parent may have held it while forking
    _forks += 1
    _reset_gdal_network_state()
    for callback in list(_callbacks):
        callback()


os.register_at_fork(after_in_child=_in_child)
