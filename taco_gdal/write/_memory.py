"""How a write allocates: Arrow on the system allocator, large blocks mapped, memory released.

:func:`release_memory` (shared with the reader) returns what one phase freed
before the next.  :func:`writer_allocation` goes further for the time of a
``create()``, because the peak of a large write sits *inside* one C++ call,
where no release can run: the zstd-13 compression of a level Parquet's
dictionary page of just over 1 MiB takes a 34 MiB compression context, on top
of the level table and of whatever the allocators kept from the data pages
compressed before it.  On a 20k/80k/320k cascade two allocator policies held
about 40 MiB of freed memory at that moment:

* Arrow's default pool (mimalloc) keeps freed pages committed: it purges
  them only after a delay that ``release_unused()`` does not shorten.  The
  pool pyarrow allocates from is swapped for the system pool during the
  write and restored afterwards (buffers remember their pool, so tables made
  before or after are freed where they were allocated); glibc gives freed
  blocks back at ``malloc_trim``.  The Parquet writer's column buffers still
  come from the C++ default pool whatever pyarrow's default is (about 20 MiB
  of mimalloc pages stay committed after the first level Parquet).
* glibc's dynamic mmap threshold: each freed mapped block of up to 32 MiB
  raises the size below which blocks come from the heap, and the heap's free
  top is returned only past twice that.  zstd's per-page contexts (up to
  17 MiB) then stayed in the heap while the 34 MiB dictionary-page context
  was mapped beside them (11-15 MiB more on the 320k-row level).  During the
  write the threshold is fixed low (:data:`WRITE_MMAP_THRESHOLD`), so every
  compression context is mapped and unmapped.  A higher write threshold
  keeps more in the heap: cascade-20k peaked at 257 MiB raw with 128 KiB,
  265 with 1 MiB, 273 with 4 MiB and 278 without the setting (one run each,
  low priority).  glibc cannot be given its dynamic threshold back:
  afterwards the threshold is left at 32 MiB (trim at 64 MiB), the ceiling
  the dynamic rule itself reaches once a process has freed a large mapped
  block, which the write has done by then.
* Small files, read whole (up to 256 KiB, ``zipstream.LOCAL_BLOCK``): with
  the write threshold at 128 KiB (glibc's starting value, until the
  twenty-fourth session) every file of 128 to 256 KiB was a mapping of its
  own, faulted in page by page and unmapped once written; with the heap's
  free top trimmed past 256 KiB, a heap block churned the same way.  The
  write threshold is 512 KiB and the trim threshold 8 MiB, so a small file
  is a heap block reused from file to file.  A ``create()`` of 300 files of
  200 KiB took 2.1k page faults instead of 15.9k, and one of 10k files of
  256 KiB on tmpfs ran at 3.1 s where the 128 KiB threshold took 50% [23%,
  79%] longer (16 interleaved blocks, slower in 15,
  ``bench/results/digest_s24_tmpfs_10000x256k_heap.json``).  cascade-20k
  peaked 3 MiB higher (274 against 271 MiB, two rounds).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from collections.abc import Callable, Iterator

import pyarrow as pa

from taco_gdal._memory import release_memory as _release_default
from taco_gdal.write.zipstream import LOCAL_BLOCK

__all__ = ["release_memory", "writer_allocation"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
WRITE_MMAP_THRESHOLD = 2 * LOCAL_BLOCK
"""Blocks from this size up (512 KiB) are mapped while writing: above the small files read
whole (up to :data:`~taco_gdal.write.zipstream.LOCAL_BLOCK`, plus the object's header)."""
WRITE_TRIM_THRESHOLD = 8 * 1024 * 1024
"""Free heap top kept while writing, so that the small files' blocks are reused, not refaulted."""
AFTER_MMAP_THRESHOLD = 32 * 1024 * 1024
"""Where glibc's dynamic rule ends (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit)."""

_lock = threading.Lock()
_active = 0
_previous: pa.MemoryPool | None = None


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return None
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt  # type: ignore[no-any-return]


def _set_mmap_threshold(threshold: int, trim: int) -> None:
    mallopt = _mallopt()
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, threshold)
        mallopt(_M_TRIM_THRESHOLD, trim)


def release_memory() -> None:
    """:func:`taco_gdal._memory.release_memory`, and during a write also the pool it replaced.

    Arrow's C++ code that takes no pool (compute kernels' default context, some
    of the Parquet writer) still allocates from the process's default pool.

    Example:
        >>> release_memory()
    """
    _release_default()
    previous = _previous
    if previous is not None:
        previous.release_unused()


@contextlib.contextmanager
def writer_allocation() -> Iterator[None]:
    """Arrow's system pool and mapped large blocks for the time of a write (see module doc).

    Nested and concurrent writes share one setting; the last to leave restores
    Arrow's previous default pool.

    Example:
        >>> with writer_allocation():
        ...     pa.default_memory_pool().backend_name
        'system'
    """
    global _active, _previous
    with _lock:
        if _active == 0:
            _previous = pa.default_memory_pool()
            _previous.release_unused()
            pa.set_memory_pool(pa.system_memory_pool())
            _set_mmap_threshold(WRITE_MMAP_THRESHOLD, WRITE_TRIM_THRESHOLD)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _previous is not None:
                pa.set_memory_pool(_previous)
                _previous = None
                _set_mmap_threshold(AFTER_MMAP_THRESHOLD, 2 * AFTER_MMAP_THRESHOLD)
        release_memory()
