"""Give memory freed by one phase of work back to the system before the next.

A write builds large temporary Arrow buffers and NumPy arrays in phases
(level tables, layout, ``__meta__`` tables, level Parquet), and a load of a
large level decodes, checks and renumbers it.  Both allocators
keep what was freed for reuse: Arrow's mimalloc pool and glibc's heap (whose
mmap threshold rises after large frees, so later large blocks come from a heap
that is trimmed only at its top).  What they keep counts in the process's
resident size, and the next phase's own temporaries then stack on top of it:
on a 20k/80k/320k cascade about 60 MB of the peak was memory already freed.
Releasing it costs a few milliseconds per phase; ``load`` does it once after
a level of :data:`RELEASE_BYTES` or more (at 1M rows about 45 MB were freed
memory still resident when ``.data`` then added its own).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

import pyarrow as pa

__all__ = ["RELEASE_BYTES", "release_memory"]

RELEASE_BYTES = 32 * 1024 * 1024
"""Below this many bytes of tables, what a phase freed is not worth a release."""


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release_memory() -> None:
    """Return free pages of Arrow's pool and of the C heap to the system.

    Example:
        >>> release_memory()
    """
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
