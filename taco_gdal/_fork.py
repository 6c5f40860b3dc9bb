"""What a forked child must not inherit from its parent, reset in one place.

``os.fork()`` (multiprocessing's ``fork`` start method, PyTorch DataLoader
workers on Linux) copies the parent's memory, threads excepted.  Two kinds of
state must not be shared across that copy:

* GDAL's ``/vsicurl/`` state (also ``/vsis3/``, ``/vsigs/``, ...): the curl
  handles of the forking thread keep the parent's open TCP connections, so
  parent and child would read and write the same sockets and receive each
  other's bytes (wrong pixels, "not a supported file format", ZIP decode
  errors).  The child calls ``gdal.VSICurlClearCache()``, which on GDAL 3.6
  drops the region cache, the file-property cache (sizes, ETags), the
  directory cache and the calling thread's curl connections (the only thread
  a child has).  The first read of a container in the child therefore asks
  its size again: one HEAD over HTTP (one ranged GET on S3) per container and
  process, which is also what re-arms :mod:`taco_gdal.io.pinning` (its pins
  stay: they describe the file, not the connection).
* DuckDB: the parent's databases and connections belong to the parent (their
  worker threads do not exist in the child, their locks may be held).  The
  child never uses them and never closes them (closing could wait for a thread
  that is gone); see :mod:`taco_gdal.read.query._duck`, which registers its reset
  here and builds a fresh database in the child on first use.

What stays unsafe: a GDAL or rasterio handle (an open ``rasterio`` dataset, a
:class:`~taco_gdal.io.vsi.VSIFile`) opened before the fork must not be used in
the child, and a fork taken while another parent thread is inside a GDAL
network read can leave that thread's GDAL lock held in the child.  Fork from a
quiet point (DataLoader workers fork when the iterator starts), or use the
``spawn``/``forkserver`` start methods, which pickle datasets instead.

Registering these handlers sets no GDAL option; it happens when
:mod:`taco_gdal.env` is imported (by ``import taco_gdal``).
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
