"""Give memory freed by one phase of work back to the system before the next.

Writes and large loads work in phases; Arrow's pool and glibc's heap keep what
a phase freed, which still counts as resident and stacks under the next phase's
temporaries. Releasing it costs a few milliseconds; ``load`` does it after a
level of :data:`RELEASE_BYTES` or more.
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
    """Return free pages of Arrow's pool and of the C heap to the system."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
