"""Small local files read ahead of the ZIP writer, on the writing thread, by the kernel.

A write of many tiny samples opens, reads and closes one file per sample, and
read one by one each file not in the page cache costs a disk wait.
:func:`read_small_files` opens the files a window ahead of the one being written
and calls ``posix_fadvise(WILLNEED)`` on each, which starts reading its pages
without waiting; by the file's turn its bytes are usually cached and ``pread``
returns at once.  No other thread exists, so the writing thread never waits for
the GIL.  Where ``posix_fadvise`` does not exist the files are read without advice.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
from collections import deque
from collections.abc import Iterator, Sequence

__all__ = ["WINDOW", "Prefetched", "is_local", "read_small_files"]

WINDOW = 256
"""Files opened and advised ahead of the one being written (at most a quarter of the
process's open-file limit)."""

Prefetched = bytes | OSError | None
"""A small file: its bytes, the error reading it raised, or None (not local or too large)."""

_Opened = tuple[int, int] | str | OSError | None
"""An open descriptor and its size, a path to open when its turn comes, an error, or None
(not local, or larger than the limit)."""

_ADVISE = getattr(os, "posix_fadvise", None)
_TOO_MANY_FILES = frozenset({errno.EMFILE, errno.ENFILE})


def is_local(source: str | None) -> bool:
    """True for a local file path (not a GDAL ``/vsi...`` path, not None).

    Example:
        >>> is_local("/data/a.tif"), is_local("/vsis3/b/a.tif"), is_local(None)
        (True, False, False)
    """
    return source is not None and source[:1] == "/" and source[:4] != "/vsi"


def _window() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return WINDOW if soft == resource.RLIM_INFINITY else max(1, min(WINDOW, soft // 4))


def _open_ahead(source: str | None, limit: int) -> _Opened:
    """``source`` opened and its pages asked for, without waiting for them."""
    if source is None or not is_local(source):
        return None
    try:
        fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        # out of descriptors: the file is opened when it is read
        return source if exc.errno in _TOO_MANY_FILES else exc
    try:
        stat = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return exc
    if _ADVISE is not None:
        with contextlib.suppress(OSError):  # advice only: a file refusing it is read all the same
            _ADVISE(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    if stat.st_size > limit:  # copied by the writer, not read here
        os.close(fd)
        return None
    return fd, stat.st_size


def _read_opened(opened: _Opened, limit: int) -> Prefetched:
    """The bytes behind ``opened`` (closing it) if at most ``limit``; None if larger."""
    if opened is None or isinstance(opened, OSError):
        return opened
    try:
        fd, size = opened if isinstance(opened, tuple) else _open_now(opened)
    except OSError as exc:
        return exc
    try:
        if size > limit:
            return None
        data = os.pread(fd, size, 0)
        if len(data) != size:
            raise OSError(f"expected {size} bytes, read {len(data)} (file changed while reading?)")
        return data
    except OSError as exc:
        return exc
    finally:
        os.close(fd)


def _open_now(path: str) -> tuple[int, int]:
    """``path`` opened, and its size."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fd, os.fstat(fd).st_size
    except OSError:
        os.close(fd)
        raise


def read_small_files(sources: Sequence[str | None], limit: int) -> Iterator[Prefetched]:
    """One item per source, in order: the bytes of a local file of at most ``limit``
    bytes, the error reading it raised, or None (not local, or larger than ``limit``).

    The next files are opened and advised ahead (see module doc); descriptors
    still open when the iterator is closed early are closed.  A file larger
    than ``limit`` is closed when it is opened ahead.

    Example:
        >>> with open("a.bin", "wb") as f:
        ...     f.write(b"abc")
        3
        >>> list(read_small_files([os.path.abspath("a.bin"), None, "/vsis3/b/k"], 1024))
        [b'abc', None, None]
    """
    window = _window()
    opened: deque[_Opened] = deque(_open_ahead(s, limit) for s in sources[:window])
    try:
        for source in sources[window:]:
            yield _read_opened(opened.popleft(), limit)
            opened.append(_open_ahead(source, limit))
        while opened:
            yield _read_opened(opened.popleft(), limit)
    finally:
        for left in opened:
            if isinstance(left, tuple):
                os.close(left[0])
