"""Copy one sample's bytes in one pass, its checksums computed on the blocks written.

The SHA-256 of a large sample is computed on a worker thread while this thread writes
the block and reads the next; small local files of a ZIP write are opened and advised
``WILLNEED`` a window ahead, so their reads rarely wait.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shutil
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import Buffer, StreamingDigest, bytes_only, check_algorithm, crc32
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile, to_vsi
from taco_gdal.io.vsi import VSIFile, file_size

__all__ = [
    "BLOCK_SIZE",
    "COPY_BLOCK",
    "THREADED_MIN",
    "WINDOW",
    "Block",
    "Checksums",
    "Copied",
    "Prefetched",
    "Reader",
    "copy_blocks",
    "copy_sample",
    "is_local",
    "pread_full",
    "read_small_files",
    "source_size",
]

BLOCK_SIZE = 8 * 1024 * 1024
"""Block of a remote (VSI) copy: a remote sample up to this size is fetched in one read."""
COPY_BLOCK = 256 * 1024
"""Block of a local copy."""
THREADED_MIN = 4 * 1024 * 1024
"""Samples of at least this many bytes, with a SHA-256, are hashed and written on the
worker thread while the next block is read."""
THREADED_BLOCK = 1024 * 1024
"""Block of a copy whose digest is on the worker thread: larger, so hand-offs are few."""
THREADED_BUFFERS = 4
"""Blocks in flight between this thread and the worker."""
_THREADED_DIGESTS = frozenset({"sha256"})
"""Digests slow enough next to a copy to be worth the hand-off to the worker thread; the
ZIP CRC-32, CRC-32C and XXH3 run inline, where a thread would only add hand-offs."""

Block = bytes | memoryview
"""A block of a copy: a reused buffer's view, or new ``bytes``."""
Reader = Callable[[memoryview, int], Block]
"""``read(view, offset)``: ``len(view)`` bytes from ``offset`` of the source, as ``view``
filled or as new ``bytes`` (TacoIOError if short)."""
Writer = Callable[[Block], object]


class Checksums:
    """The ZIP CRC-32 (when ``zip_crc``) and the digest (when ``digest``) of a stream."""

    def __init__(self, digest: str | None, zip_crc: bool) -> None:
        self.crc = 0
        self._zip_crc = zip_crc
        self.algorithm = check_algorithm(digest)
        self._digest = None if self.algorithm is None else StreamingDigest(digest or "")
        self.threaded = digest in _THREADED_DIGESTS

    def update(self, view: Buffer) -> None:
        self.update_crc(view)
        self.update_digest(view)

    def update_crc(self, view: Buffer) -> None:
        """The ZIP CRC-32 alone (the worker thread takes the digest)."""
        if self._zip_crc:
            self.crc = crc32(view, self.crc)

    def update_digest(self, view: Buffer) -> None:
        """The digest alone."""
        if self._digest is not None:
            self._digest.update(view)

    def stored(self) -> str | None:
        """The digest's stored form, or None without a digest."""
        return None if self._digest is None else self._digest.stored()


def copy_blocks(read: Reader, size: int, write: Writer, sums: Checksums, block: int) -> None:
    """Copy ``size`` bytes from ``read`` to ``write`` in blocks, updating ``sums`` on each.

    With a SHA-256 of a large sample, the worker thread hashes each block (hashlib
    releases the GIL) while this thread computes the ZIP CRC-32, writes it and reads the
    next ones; a block's buffer is reused only once the worker has hashed it.
    """
    if size < THREADED_MIN or not sums.threaded:
        buffer = memoryview(bytearray(min(block, size)))
        for offset in range(0, size, block):
            view = read(buffer[: min(block, size - offset)], offset)
            sums.update(view)
            write(view)
        return
    block = max(block, THREADED_BLOCK)
    buffers = [memoryview(bytearray(block)) for _ in range(THREADED_BUFFERS)]
    pending: list[Future[None] | None] = [None] * THREADED_BUFFERS
    with ThreadPoolExecutor(1, thread_name_prefix="taco-digest") as worker:
        try:
            for index, offset in enumerate(range(0, size, block)):
                slot = index % THREADED_BUFFERS
                hashed = pending[slot]
                if hashed is not None:  # its buffer is hashed: free to read into
                    hashed.result()
                view = read(buffers[slot][: min(block, size - offset)], offset)
                pending[slot] = worker.submit(sums.update_digest, view)
                sums.update_crc(view)
                write(view)
        finally:
            for future in pending:  # the worker's error, if any, before this thread's
                if future is not None:
                    future.result()


def pread_full(fd: int, where: str, fresh: bool = False) -> Reader:
    """A reader of the descriptor ``fd``; ``fresh`` returns new ``bytes`` (for a digest
    that takes only those, see :func:`~taco_gdal.format.checksum.bytes_only`)."""

    def read_bytes(view: memoryview, offset: int) -> Block:
        data = os.pread(fd, len(view), offset)
        return data if len(data) == len(view) else read(view, offset)

    def read(view: memoryview, offset: int) -> memoryview:
        got = 0
        while got < len(view):
            n = os.preadv(fd, [view[got:]], offset + got)
            if n == 0:
                raise TacoIOError(
                    f"{where}: expected {len(view) - got} more bytes at offset {offset + got}, "
                    f"the source ended (changed while copying?)"
                )
            got += n
        return view

    return read_bytes if fresh else read


def vsi_reader(src: VSIFile) -> Reader:

    def read(view: memoryview, offset: int) -> Block:
        return src.read_exact(offset, len(view), "sample data")

    return read


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_sample` wrote: the size and, when asked, the digest of the bytes."""

    size: int
    digest: str | None = None


def source_size(source: str | None) -> int:
    """Size in bytes of a sample source (0 for a zero-byte sample given as None)."""
    if source is None:
        return 0
    path = to_vsi(source)
    if path.startswith(SUBFILE_PREFIX):
        return parse_subfile(path).size
    if path.startswith("/vsi"):
        return file_size(path)
    try:
        return os.stat(path).st_size
    except OSError as exc:
        raise TacoIOError(f"cannot stat sample source {source!r}: {exc}") from exc


def _copy_range(container: str, offset: int, size: int, dest: Path) -> None:
    with open(container, "rb") as src, open(dest, "xb") as dst:
        copied = 0
        while copied < size:
            n = os.copy_file_range(src.fileno(), dst.fileno(), size - copied, offset + copied)
            if n == 0:
                raise TacoIOError(
                    f"{container}: ends before byte {offset + size} while copying "
                    f"{size} bytes at offset {offset} to {dest}"
                )
            copied += n


def _copy_local(path: str, offset: int, size: int | None, dest: Path, sums: Checksums) -> int:
    """Copy ``size`` bytes (None: to the end) from ``offset`` of a local file through ``sums``."""
    with open(path, "rb") as src, open(dest, "xb") as dst:
        if size is None:
            size = max(os.fstat(src.fileno()).st_size - offset, 0)
        read = pread_full(src.fileno(), path, fresh=bytes_only(sums.algorithm))
        at = offset
        copy_blocks(lambda view, o: read(view, at + o), size, dst.write, sums, COPY_BLOCK)
    return size


def _copy(path: str, dest: Path, sums: Checksums | None) -> int:
    if path.startswith(SUBFILE_PREFIX):
        sub = parse_subfile(path)
        if not sub.container.startswith("/vsi"):
            if sums is None:
                _copy_range(sub.container, sub.offset, sub.size, dest)
            else:
                _copy_local(sub.container, sub.offset, sub.size, dest, sums)
            return sub.size
    if path.startswith("/vsi"):
        with VSIFile(path) as src, open(dest, "xb") as dst:
            size = src.size()
            sums = sums or Checksums(None, zip_crc=False)
            copy_blocks(vsi_reader(src), size, dst.write, sums, BLOCK_SIZE)
        return size
    if sums is not None:
        return _copy_local(path, 0, None, dest, sums)
    shutil.copyfile(path, dest)
    return dest.stat().st_size


def copy_sample(source: str | None, dest: Path, digest: str | None = None) -> Copied:
    """Copy ``source`` to the new file ``dest`` (None: an empty file), with its ``digest``."""
    sums = None if check_algorithm(digest) is None else Checksums(digest, zip_crc=False)
    try:
        if source is None:
            dest.touch(exist_ok=False)
            return Copied(0, None if sums is None else sums.stored())
        size = _copy(to_vsi(source), dest, sums)
        return Copied(size, None if sums is None else sums.stored())
    except OSError as exc:
        if isinstance(exc, TacoIOError):
            raise
        raise TacoIOError(f"cannot copy sample {source!r} to {str(dest)!r}: {exc}") from exc


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
    """True for a local file path (not a GDAL ``/vsi...`` path, not None)."""
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
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fd, os.fstat(fd).st_size
    except OSError:
        os.close(fd)
        raise


def read_small_files(sources: Sequence[str | None], limit: int) -> Iterator[Prefetched]:
    """Per source, in order: a small local file's bytes, the error reading it, or None.

    None for a non-local source or one larger than ``limit``; descriptors left open
    when the iterator is closed early are closed.
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
