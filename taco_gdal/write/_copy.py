"""Copy one sample's bytes: to a new file, or into an open file at a position (the ZIP writer).

Without a digest, a whole local file or ``/vsisubfile/`` range copied to a new
file stays in the kernel (``copy_file_range``).  Otherwise bytes pass through
user memory in 256 KiB blocks, each read, checksummed and written while it is
in the CPU cache (:func:`copy_fd`), so digests and CRCs are computed on exactly
the buffers written and the source is read once.

CRC-32C and XXH3 run inline, on the block while it is in cache.  SHA-256,
slower than the copy itself, of a copy of at least 4 MiB is computed by one
helper thread per process, a block at a time, while this thread reads,
checksums and writes the next blocks (:class:`_Ring`); moving a block to the
other core costs about as much as a fast digest of it, so XXH3 (34-60 GB/s
from the system ``libxxhash``, 24-27 GB/s from the wheel) and CRC-32C (24-50
GB/s, see ``format/checksum.py``) stay inline.  Before an XXH3 or SHA-256 update the upper
vector state is cleared (see :data:`_THREADED_DIGESTS`): ISA-L's CRC of the
same block leaves it dirty, which made XXH3 4.7x slower.  A block's CRC-32C is
computed by address on the block buffer.  Remote sources are streamed through
GDAL's VSI layer in 8 MiB blocks.

The ring keeps the copy in step with SHA-256: it cannot run more than 2 MiB
ahead, and it waits for the last blocks at the end of every sample.  The ZIP
writer therefore defers SHA-256 past the sample (:mod:`taco_gdal.write._late`),
on the same helper thread (:func:`_digest_worker`).
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.format.checksum import StreamingDigest, check_algorithm, crc32
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile, to_vsi
from taco_gdal.io.vsi import VSIFile, file_size

if TYPE_CHECKING:
    pass

__all__ = [
    "BLOCK_SIZE",
    "COPY_BLOCK",
    "Copied",
    "copy_fd",
    "copy_sample",
    "source_size",
]

log = logging.getLogger(__name__)

BLOCK_SIZE = 8 * 1024 * 1024
"""Block of a remote (VSI) copy."""
COPY_BLOCK = 256 * 1024
"""Block of a local copy through user memory: read, checksummed and written while in L2."""

_THREADED_DIGESTS = frozenset({"sha256"})
"""Digests computed by the helper thread (:class:`_DigestWorker`); CRC-32C and XXH3 stay inline.

The wheel's XXH3 and SHA-256 are legacy-SSE code (the xxhash wheel is built for
SSE2; SHA-NI has no VEX form; the system ``libxxhash``'s AVX2/AVX-512 XXH3, used
when present, is not).  ISA-L's AVX-512 CRCs, called on every block for the ZIP CRC-32,
return with the upper vector state dirty, and every legacy-SSE instruction that
follows on that thread pays for it until a ``vzeroupper``: on this machine's CPU
XXH3 of a cached 256 KiB block took 44 us after an ISA-L call instead of 9.4 us
(27 GB/s), SHA-256 188 us instead of 143 us.  ``format.checksum`` clears the
state before each of their updates.  Inline, the wheel's XXH3 then costs about 5 ms
per 100 MiB copied (about 60 ms), ``libxxhash``'s about 3 ms; a block handed to the
other core costs about as much.
SHA-256 (143 us per block, more than the copy's 128 us) gains from the thread
when the other core is free (``bench/bench_digest_copy.py``)."""
_SEGMENT = COPY_BLOCK
"""Bytes handed to the digest thread at once: one block, read and written in place."""
_RING = 8
"""Blocks in flight between a copy and the digest thread (2 MiB)."""
_THREADED_MIN = 16 * COPY_BLOCK
"""Copies of at least this many bytes (4 MiB) hand their blocks to the digest thread: at
1 MiB, the hand-offs and the wait for the last block cost more than the overlap saves
(+0.80 ms threaded vs +0.63 ms inline; 16 MiB: +8.3 vs +9.6 ms; 7 rounds at load 3.4)."""

OnWritten = Callable[[int, int], None]
"""``on_written(position, n)``: ``n`` bytes were just written at ``position`` of the output."""


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_sample` wrote: the size and, when asked, the digest of the bytes."""

    size: int
    digest: str | None = None


def source_size(source: str | None) -> int:
    """Size in bytes of a sample source (0 for a zero-byte sample given as None).

    Example:
        >>> source_size(None)
        0
    """
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


def _read_full(src: int, view: memoryview, offset: int, where: str) -> memoryview:
    """Exactly ``len(view)`` bytes of ``src`` from ``offset``; TacoIOError when it ends early."""
    got = 0
    while got < len(view):
        n = os.preadv(src, [view[got:]], offset + got)
        if n == 0:
            raise TacoIOError(
                f"{where}: expected {len(view) - got} more bytes at offset {offset + got}, "
                f"the source ended (changed while copying?)"
            )
        got += n
    return view


def _pwrite_all(fd: int, view: memoryview, position: int) -> None:
    written = 0
    while written < len(view):
        written += os.pwrite(fd, view[written:], position + written)


Job = Callable[[], None]
"""Work for the digest thread: digest one block, one member, or a batch of small members."""


class _DigestWorker:
    """One helper thread per process that runs digest jobs, in the order they are submitted.

    Started on first use and again in a forked child (the thread does not
    survive a fork).  A job is one block of one copy's ring (:class:`_Ring`) or
    members already written (:class:`LateDigests`); jobs of concurrent writers
    interleave, each writer's in order.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        thread = threading.Thread(target=self._run, name="taco-digest", daemon=True)
        thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # a job hands its own errors over; this keeps the thread alive
                log.exception("digest job %r failed", job)
            del job

    def submit(self, job: Job) -> None:
        self._jobs.put(job)


_worker_lock = threading.Lock()
_worker: _DigestWorker | None = None
_spare_blocks: list[list[memoryview]] = []
"""Rings of blocks of finished copies, reused (a fresh 2 MiB costs page faults per copy)."""


def _digest_worker() -> _DigestWorker:
    global _worker
    with _worker_lock:
        if _worker is None or _worker.pid != os.getpid():
            _worker = _DigestWorker()
            _spare_blocks.clear()
        return _worker


class _Ring:
    """The blocks of one copy whose digest the helper thread computes.

    The copy takes a free block (:meth:`take`), reads into it, hands it over
    (:meth:`give`) and then checksums and writes it while the helper digests
    it (both only read it).  A block is refilled only after its digest is done,
    so the digest covers exactly the bytes written, in order.
    """

    def __init__(self, digest: StreamingDigest) -> None:
        self._worker = _digest_worker()
        self._update = digest.update
        with _worker_lock:
            spare = _spare_blocks.pop() if _spare_blocks else None
        self._blocks = spare or [memoryview(bytearray(_SEGMENT)) for _ in range(_RING)]
        self._free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(_RING):
            self._free.put(index)
        self._error: BaseException | None = None
        self._held: int | None = None
        """The block taken and not yet given (the copy failed while filling it?)."""

    def digest_block(self, index: int, n: int) -> None:
        """Run by the helper thread: digest block ``index``'s first ``n`` bytes, free it."""
        if self._error is None:
            try:
                self._update(self._blocks[index][:n])
            except BaseException as exc:  # handed to the copy by close()
                self._error = exc
        self._free.put(index)

    def take(self) -> tuple[int, memoryview]:
        index = self._held = self._free.get()
        return index, self._blocks[index]

    def give(self, index: int, n: int) -> None:
        self._held = None
        self._worker.submit(functools.partial(self.digest_block, index, n))

    def close(self, check: bool = True) -> None:
        """Wait for every block given so far; re-raise the digest's error if ``check``."""
        if self._held is not None:
            self._free.put(self._held)
            self._held = None
        for _ in range(_RING):
            self._free.get()
        with _worker_lock:
            if len(_spare_blocks) < 4:
                _spare_blocks.append(self._blocks)
        if check and self._error is not None:
            raise self._error


def _copy_piped(
    src: int,
    offset: int,
    size: int,
    dst: int,
    position: int,
    digest: StreamingDigest,
    on_written: OnWritten | None,
    where: str,
) -> int:
    """:func:`copy_fd` with the digest computed by the helper thread, a block at a time."""
    ring = _Ring(digest)
    crc = 0
    try:
        for start in range(0, size, COPY_BLOCK):
            index, block = ring.take()
            view = _read_full(src, block[: min(COPY_BLOCK, size - start)], offset + start, where)
            ring.give(index, len(view))
            crc = crc32(view, crc)
            _pwrite_all(dst, view, position + start)
            if on_written is not None:
                on_written(position + start, len(view))
    except BaseException:
        ring.close(check=False)
        raise
    ring.close()
    return crc


def copy_fd(
    src: int,
    offset: int,
    size: int,
    dst: int,
    position: int,
    digest: StreamingDigest | None = None,
    on_written: OnWritten | None = None,
    where: str = "source",
    threaded: bool = True,
    into: memoryview | None = None,
) -> int:
    """Copy ``size`` bytes of ``src`` from ``offset`` to ``dst`` at ``position``; the CRC-32.

    One pass: each 256 KiB block is read with ``pread``, its CRC-32 (and the
    digest, if given, fed from the same buffer) computed, and written with
    ``pwrite``.  A SHA-256 of a copy of at least 4 MiB is computed by the helper
    thread, block by block, while the copy goes on (see :data:`_THREADED_DIGESTS`).

    Args:
        src: file descriptor to read (``pread``: its position is not used).
        offset: first byte of ``src`` to copy.
        size: bytes to copy; a source that ends earlier raises TacoIOError.
        dst: file descriptor to write (``pwrite``).
        position: where the first byte goes in ``dst``.
        digest: also feed the copied bytes, in order, to this digest.
        on_written: called after each block is written (progress, write-back).
        where: the source's name, for error messages.
        threaded: False computes a SHA-256 on this thread whatever the size
            (the digest thread is busy with a writer's late digests).
        into: copy through this buffer of at least ``size`` bytes, each block
            at its own place (the buffer then holds the whole copy), instead of
            one reused block; only without ``digest``.

    Example:
        >>> src = os.open("src/s000.tif", os.O_RDONLY)
        >>> dst = os.open("copy.bin", os.O_CREAT | os.O_WRONLY, 0o644)
        >>> d = StreamingDigest("xxh3")
        >>> copy_fd(src, 0, 622, dst, 0, d) == crc32(Path("src/s000.tif").read_bytes())
        True
        >>> os.close(src); os.close(dst)
        >>> again = StreamingDigest("xxh3"); again.update(Path("copy.bin").read_bytes())
        >>> d.value() == again.value()
        True
    """
    if (
        threaded
        and digest is not None
        and digest.algorithm in _THREADED_DIGESTS
        and size >= _THREADED_MIN
    ):
        return _copy_piped(src, offset, size, dst, position, digest, on_written, where)
    if into is not None and (digest is not None or len(into) < size):
        raise TacoValidationError(
            f"into: expected a buffer of {size} bytes or more and no digest, "
            f"found {len(into)} bytes and digest {digest!r}"
        )
    block = _take_block(size) if into is None else bytearray(0)
    try:
        buffer = memoryview(block)
        both = None if digest is None else digest.with_zip_crc(block)
        feed = None if digest is None or both is not None else digest.update_from(block)
        crc = 0
        for start in range(0, size, COPY_BLOCK):
            n = min(COPY_BLOCK, size - start)
            target = buffer[:n] if into is None else into[start : start + n]
            view = _read_full(src, target, offset + start, where)
            if both is not None:  # the ZIP CRC-32 and a CRC-32C in one pass
                crc = both(n, crc)
            else:
                crc = crc32(view, crc)
                if feed is not None:
                    feed(n)
            _pwrite_all(dst, view, position + start)
            if on_written is not None:
                on_written(position + start, len(view))
        return crc
    finally:
        _give_back(block)


_spare = threading.local()
"""Each thread's spare copy block (``_spare.block``), reused from copy to copy."""


def _take_block(size: int) -> bytearray:
    """A block for one copy of ``size`` bytes: the thread's spare one for copies of a whole
    block or more, so that a write of many samples does not map a new block for each.

    During a write glibc maps every allocation from 128 KiB up (:mod:`._memory`), so a
    fresh 256 KiB block per sample was an ``mmap``, 64 page faults and an ``munmap``
    (CHANGELOG, twenty-second session, has what that cost).  A copy running inside
    another on the same thread (none does today) finds no spare and gets its own block.

    Example:
        >>> a = _take_block(COPY_BLOCK); _give_back(a)
        >>> _take_block(10 * COPY_BLOCK) is a, len(a) == COPY_BLOCK
        (True, True)
        >>> len(_take_block(1000))
        1000
    """
    if size < COPY_BLOCK:
        return bytearray(size)
    block: bytearray | None = _spare.__dict__.pop("block", None)
    return bytearray(COPY_BLOCK) if block is None else block


def _give_back(block: bytearray) -> None:
    """Keep a whole block as the thread's spare, for its next copy."""
    if len(block) == COPY_BLOCK:
        _spare.block = block


def _copy_local_hashed(
    path: str, offset: int, size: int | None, dest: Path, h: StreamingDigest
) -> int:
    """Copy ``size`` bytes (None: to the end) from ``offset`` through user memory, hashing them."""
    src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if size is None:
            size = max(os.fstat(src).st_size - offset, 0)
        dst = os.open(dest, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644)
        try:
            copy_fd(src, offset, size, dst, 0, h, where=path)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return size


def _copy_vsi(source: str, dest: Path, h: StreamingDigest | None) -> int:
    with VSIFile(source) as src, open(dest, "xb") as dst:
        size = src.size()
        offset = 0
        while offset < size:
            block = src.read_exact(offset, min(BLOCK_SIZE, size - offset), "sample data")
            if h is not None:
                h.update(block)
            dst.write(block)
            offset += len(block)
    return size


def _copy(path: str, dest: Path, h: StreamingDigest | None) -> int:
    if path.startswith(SUBFILE_PREFIX):
        sub = parse_subfile(path)
        if not sub.container.startswith("/vsi"):
            if h is None:
                _copy_range(sub.container, sub.offset, sub.size, dest)
            else:
                _copy_local_hashed(sub.container, sub.offset, sub.size, dest, h)
            return sub.size
    if path.startswith("/vsi"):
        return _copy_vsi(path, dest, h)
    if h is not None:
        return _copy_local_hashed(path, 0, None, dest, h)
    shutil.copyfile(path, dest)
    return dest.stat().st_size


def copy_sample(source: str | None, dest: Path, digest: str | None = None) -> Copied:
    """Copy ``source`` to the new file ``dest``; None gives an empty file (and its digest).

    Args:
        source: a local path or any GDAL path (``/vsisubfile/`` ranges of a local
            container are copied in the kernel when no digest is asked).
        dest: the file to create (must not exist).
        digest: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: also return the digest of
            the copied bytes, computed from the buffers that were written.

    Example:
        >>> Path("out").mkdir()
        >>> copy_sample("src/s000.tif", Path("out/a.tif"), digest="xxh3")
        Copied(size=622, digest='xxh3:...')
    """
    h = None if check_algorithm(digest) is None else StreamingDigest(digest or "")
    try:
        if source is None:
            dest.touch(exist_ok=False)
            return Copied(0, None if h is None else h.value())
        size = _copy(to_vsi(source), dest, h)
        return Copied(size, None if h is None else h.value())
    except OSError as exc:
        if isinstance(exc, TacoIOError):
            raise
        raise TacoIOError(f"cannot copy sample {source!r} to {str(dest)!r}: {exc}") from exc
