"""A forked child never destroys a DuckDB database it inherited, DuckDB's default one included.

Destroying one joins worker threads that do not exist in a forked child (it exits,
crashes, hangs or aborts).  :mod:`taco_gdal.read.query._duck` keeps its own databases
unfreed in a child; this module keeps DuckDB's default connection alive there by a
reference taken before each fork.  Nothing here imports DuckDB.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["install", "sheltered"]

_inherited: list[object] = []
"""The parent's default DuckDB connection, between the fork and its handlers."""
_sheltered: list[object] = []
"""In a child: inherited DuckDB connections given a reference that is never released."""
_installed = False


def sheltered() -> int:
    """How many inherited DuckDB connections this process keeps unfreed."""
    return len(_sheltered)


def _before_fork() -> None:
    duckdb = sys.modules.get("duckdb")
    default = getattr(duckdb, "default_connection", None)
    if default is not None:  # DuckDB imported (fully): its default connection exists
        _inherited.append(default())


def _after_fork_in_parent() -> None:
    _inherited.clear()


def _after_fork_in_child() -> None:
    for connection in _inherited:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(connection))
        _sheltered.append(connection)
    _inherited.clear()


def install() -> None:
    """Shelter DuckDB's default connection in every child forked from now on (once per process).

    Example:
        >>> install()
        >>> install()  # a second call changes nothing
    """
    global _installed
    if not _installed:
        _installed = True
        os.register_at_fork(
            before=_before_fork,
            after_in_parent=_after_fork_in_parent,
            after_in_child=_after_fork_in_child,
        )
