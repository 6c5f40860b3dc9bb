"""A forked child never destroys a DuckDB database it inherited, DuckDB's default one included.

Destroying a DuckDB database joins its worker threads
(``TaskScheduler::~TaskScheduler`` -> ``std::thread::join``).  In a forked child
those threads do not exist: their ``pthread_t`` handles point at descriptors
that glibc's fork handler marked as exited and put in its cache of free thread
stacks.  What the join then does depends on what glibc did with that memory
since the fork, so on how many threads the process had and in which order they
were made (seen with DuckDB 1.5.5, pyarrow 26, glibc 2.36):

* nothing: the join returns and the child exits normally;
* the stack was unmapped (the cache holds at most 40 MiB of stacks, and the
  parent's stacks all count): the join reads freed memory, ``SIGSEGV``.  With
  four or more DuckDB threads (a machine of four cores or more) this happens
  on every normal exit;
* the stack was reused for a thread the child started (Arrow restarts its
  thread pool in a child that decodes Parquet): the join waits for that live
  thread, which never ends, and the child hangs;
* the join fails: ``std::system_error`` in a destructor, the child aborts.

The databases taco_gdal opens are kept unfreed in the child by
:mod:`taco_gdal.read.query._duck`.  The one it does not own is DuckDB's default
connection, which ``import duckdb`` opens (with one thread per core) and
DuckDB's module clean-up destroys when the interpreter exits.  Before each
fork this module takes a reference to it (``duckdb.default_connection()``, a
public call); the child adds one reference that is never released, so its
database outlives the interpreter and is never joined.  Children that end with
``os._exit`` (multiprocessing, PyTorch workers) never ran this clean-up anyway.

Nothing here imports DuckDB: a process that has not imported it has nothing to
shelter.  Connections a user opened in the parent and still holds in the child
are the user's: freeing one there crashes the same way (keep them unfreed, or
end the child with ``os._exit``).
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
    """How many inherited DuckDB connections this process keeps unfreed.

    Example:
        >>> sheltered() >= 0
        True
    """
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
