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
writer therefore defers SHA-256 past the sample (:class:`LateDigests`): it
copies plain, and the same helper thread reads the member back from the
output's pages (mapped: the bytes written, not the source again), a member
above 4 MiB a step behind its copy (:class:`GrowingRange`), while the next
members are copied; the digest column waits for the values.  One SHA-256
(about 1.6 GB/s) cannot follow a copy at 1.8 GB/s, so once a member is whole
the rest of it and what is written of the next are digested together, in
lanes (``Sha256Stream``, ``update_many``: about 3 GB/s for two on one core).
When the helper is 256 MiB or more behind (the other core is busy), the
writer digests the next member inline, and while it waits for the last
digests it takes queued ones itself, so both cores share the work.

Followed, the last member is digested alone and its digest ends after its
copy.  The TACO ZIP writer knows its sources before it copies them, so it
announces each dense local file above 4 MiB (:meth:`LateDigests.expect`,
when the read-ahead window opens it): the helper digests those from the
sources, two by two in lanes, up to 1 GiB ahead of the copies, and the
digest is usually ready when the copy ends.  It counts only when the file is
still the one announced (device, inode, size, times) and the CRC-32 of the
bytes digested is the copy's (:class:`Announced`); otherwise the member is
read back from the output.
"""

from __future__ import annotations

import functools
import logging
import mmap
import os
import queue
import shutil
import threading
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.format.checksum import Buffer, StreamingDigest, check_algorithm, crc32, digest_value
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile, to_vsi
from taco_gdal.io.vsi import VSIFile, file_size

if TYPE_CHECKING:
    from taco_gdal._sha256_thread import Sha256Stream

__all__ = [
    "BLOCK_SIZE",
    "COPY_BLOCK",
    "Announced",
    "Copied",
    "GrowingRange",
    "LateDigest",
    "LateDigests",
    "copy_fd",
    "copy_sample",
    "settle_digests",
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


_LATE_BACKLOG = 256 * 1024 * 1024
"""Bytes waiting for the digest thread (not started) above which a writer digests inline
(:attr:`LateDigests.busy`): the other core is busy, so both share the digests.

A backlog costs no memory of the writer's (the members are read back from the
output's page cache), and :meth:`LateDigests.wait` shares what is left at the
end between both cores, so the limit only bounds how far behind the digests may
fall (past it, written pages could be evicted and read again from the disk).
At 16 MiB a SHA-256 thread a few percent slower than the copy was "busy" at
the start of most 100 MiB members, and the writer digested every few members
itself: 20 x 100 MiB on tmpfs took 1.74 s against 1.52 s at 1 GiB (plain
1.22 s; medians of 5 interleaved rounds, load 0.7)."""
_LATE_BUFFERS = 16 * 1024 * 1024
"""Bytes of member buffers (:meth:`LateDigests.buffer`) allocated at most per writer."""
_LATE_BUFFERED = 4 * 1024 * 1024
"""Members up to this size are copied through a buffer of their own, which the digest
thread digests whole and hands back (no read-back: reading a 1 MiB member back from
the page cache cost about 0.13 ms, a fifth of its SHA-256); larger ones are read back."""
_FOLLOW_STEP = 16 * 1024 * 1024
"""Bytes the digest thread waits for before it digests more of a member being written
(:class:`GrowingRange`): the most left to digest once the member's last byte is written.

At 4 MiB the thread woke and mapped four times as often, and its CPU offset the
tail it saves: SHA-256 on 20 x 100 MiB (tmpfs, 30 interleaved blocks) was +8.9%
against +8.6% reading each member back after its copy, with 7.4% more CPU.  At
16 MiB (one mapped step) three runs pooled gave +4.6% [+3.0, +6.9] against
+8.0% [+5.5, +10.1] (64 blocks), and 3 x 100 MiB +14.2% against +33.7%."""
_AHEAD_LEAD = 1024 * 1024 * 1024
"""Bytes of announced sources (:meth:`LateDigests.expect`) the digest thread may digest
ahead of their copies, at most (an eighth of the free memory when that is less).

A source digested ahead should still be in the page cache when its copy reads
it, or it is read from the disk twice; two 1000 MiB samples still start
together in lanes (2 x 1000 MiB on tmpfs: +5.2% against +25.7% following each
copy, 10 blocks)."""
_MIB = 1024 * 1024
_LATE_BATCH_BYTES = 1024 * 1024
_LATE_BATCH_COUNT = 64
"""Small members handed to the digest thread together: one hand-off per batch, not per member."""


class GrowingRange:
    """A member being written to the output, which the digest thread digests as it grows.

    The writer calls :meth:`advance` after each block it writes and
    :meth:`abandon` if the copy fails; the digest thread calls :meth:`wait_for`
    and sleeps until the bytes it needs are written.  A large member's digest
    then runs a few MiB behind its copy instead of after it: when the last
    member's last byte is written, at most :data:`_FOLLOW_STEP` bytes are left
    to digest, not the whole member (the 100 MiB members of a SHA-256 write
    each took about 70 ms after their copy; a step is about 10 ms).

    Example:
        >>> growing = GrowingRange(10, 100)
        >>> growing.advance(60); growing.wait_for(50)
        60
        >>> growing.abandon(); growing.wait_for(110)
        Traceback (most recent call last):
        ...
        taco_gdal.errors.TacoIOError: the copy of the member at 10 (100 bytes) stopped at byte 60
    """

    def __init__(self, position: int, size: int) -> None:
        self.position = position
        self.end = position + size
        self.written = position
        """End of the bytes written so far (set by the writer only)."""
        self._failed = False
        self._wanted: int | None = None
        """The position the digest thread sleeps until (None while it is not asleep)."""
        self._ready = threading.Event()

    def advance(self, written: int) -> None:
        """The writer: the member's bytes up to ``written`` are in the output."""
        self.written = written
        wanted = self._wanted
        if wanted is not None and written >= wanted:
            self._wanted = None
            self._ready.set()

    def abandon(self) -> None:
        """The writer: the copy failed, the rest of the member will never be written."""
        self._failed = True
        self._ready.set()

    def wait_for(self, position: int) -> int:
        """The digest thread: wait until ``position`` is written; how far is written.

        Raises:
            TacoIOError: the copy was abandoned before ``position``.
        """
        while self.written < position and not self._failed:
            self._ready.clear()
            self._wanted = position  # published before the check: advance() sees one of them
            if self.written >= position or self._failed:
                break
            self._ready.wait()
        self._wanted = None
        if self.written < position:
            raise TacoIOError(
                f"the copy of the member at {self.position} ({self.end - self.position} "
                f"bytes) stopped at byte {self.written}"
            )
        return self.written


class LateDigest:
    """The digest of one member, finished by the digest thread after the writer moved on.

    :meth:`value` waits for it (and for every digest submitted before it by
    the same :class:`LateDigests`).
    """

    __slots__ = ("_owner", "_result")

    def __init__(self, owner: LateDigests) -> None:
        self._owner = owner
        self._result: str | Exception | None = None

    def value(self) -> str:
        """``"<algorithm>:<hex>"``, once computed.

        Raises:
            TacoIOError: the member could not be read back from the output.
        """
        if self._result is None:
            self._owner.wait()
        result = self._result
        if isinstance(result, Exception):
            raise TacoIOError(f"cannot digest a member written earlier: {result}") from result
        if result is None:  # pragma: no cover - wait() returns after every job ran
            raise TacoIOError("a digest job ended without a value")
        return result

    def __repr__(self) -> str:
        return f"LateDigest({self._result!r})"


class LateDigests:
    """Digests of members already written, computed by the digest thread while the writer goes on.

    A member copied into the output (:meth:`of_range`) is read back from the
    output's pages (mapped, in the page cache: no second read of the source,
    no copy into user memory), so its digest covers exactly the bytes written;
    a member written from memory (:meth:`of_bytes`) is digested from those
    bytes, small ones in batches.  The writer's thread only hands jobs over:
    the digest of member ``i`` runs on the other core while members ``i + 1``,
    ``i + 2``... are copied, and is needed only when the digest column is
    written (:meth:`LateDigest.value`).  The jobs run on the process's one
    digest thread (restarted after a fork, like the copy ring's); a
    ``LateDigests`` made before a fork cannot be waited for in the child.

    Args:
        algorithm: one of ``crc32c``, ``xxh3``, ``sha256``.
        output: a descriptor of the output open for reading (duplicated here
            on the first :meth:`of_range`, closed by :meth:`close`); None when
            only :meth:`of_bytes` is used.

    Example:
        >>> fd = os.open("late.bin", os.O_CREAT | os.O_RDWR, 0o644)
        >>> _ = os.pwrite(fd, b"abc", 0)
        >>> late = LateDigests("sha256", fd)
        >>> a, b = late.of_range(0, 3), late.of_bytes(b"abc")
        >>> a.value() == b.value() == digest_value("sha256", b"abc")
        True
        >>> late.close(); os.close(fd)
    """

    def __init__(self, algorithm: str, output: int | None) -> None:
        self.algorithm = check_algorithm(algorithm) or ""
        self._output = output
        self._fd: int | None = None
        self._worker = _digest_worker()
        self._batch: list[tuple[LateDigest, Buffer]] = []
        self._batch_bytes = 0
        self._jobs: deque[tuple[int, Job]] = deque()
        """Jobs not started yet, with their bytes: the digest thread runs them in order,
        :meth:`wait` helps."""
        self._lock = threading.Lock()
        self._backlog = 0
        """Bytes of the jobs not started yet."""
        self._followed: list[_Followed] = []
        """Members read back as they are written whose digest is not finished, in order."""
        self._free: list[bytearray] = []
        """Member buffers the digest thread is done with (:meth:`buffer`)."""
        self._allocated = 0
        self._close_fd: weakref.finalize[[Job], LateDigests] | None = None
        self._announced: dict[str, deque[Announced]] = {}
        """Sources announced (:meth:`expect`) and not claimed yet, by path, in order."""
        self._unsent: deque[Announced] = deque()
        """Announced sources not handed to the digest thread yet (past the lead)."""
        self._lead = 0
        """Bytes of the announced sources handed to the digest thread and not claimed."""
        self._lead_limit = _lead_limit()

    @property
    def readable(self) -> bool:
        """True when members written to the output can be read back (:meth:`of_range`)."""
        return self._output is not None

    @property
    def busy(self) -> bool:
        """True when the digest thread is behind (256 MiB or more not started).

        The writer then computes the next digest itself, inline, so the two
        cores share the digests instead of the writer running ahead alone.
        """
        return self._backlog >= _LATE_BACKLOG

    def of_bytes(self, data: bytes) -> LateDigest:
        """The digest of ``data`` (kept, unchanged, until it is computed)."""
        late = LateDigest(self)
        self._batch.append((late, data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= _LATE_BATCH_BYTES or len(self._batch) >= _LATE_BATCH_COUNT:
            self.flush()
        return late

    def buffer(self, size: int) -> bytearray | None:
        """A buffer of at least ``size`` bytes to copy a member through (:meth:`of_buffer`).

        None when ``size`` is above 4 MiB, or every buffer is still waiting for
        its digest and 16 MiB are allocated already.
        """
        if size > _LATE_BUFFERED:
            return None
        for i, free in enumerate(self._free):  # the digest thread only appends
            if len(free) >= size:
                return self._free.pop(i)
        rounded = -(-size // _MIB) * _MIB
        if self._allocated + rounded > _LATE_BUFFERS:
            return None
        self._allocated += rounded
        return bytearray(rounded)

    def of_buffer(self, buffer: bytearray, size: int) -> LateDigest:
        """The digest of the first ``size`` bytes of ``buffer`` (from :meth:`buffer`).

        The buffer must not change until the digest thread hands it back.
        """
        late = LateDigest(self)
        job = functools.partial(_digest_buffer, buffer, size, self.algorithm, late, self._free)
        self._submit(size, job)
        return late

    def of_range(self, position: int, size: int) -> LateDigest:
        """The digest of the ``size`` bytes written at ``position`` of the output."""
        growing = GrowingRange(position, size)
        growing.advance(growing.end)
        return self._follow(growing)

    def _read_fd(self) -> int:
        """The descriptor the digest thread reads the output with (duplicated once)."""
        if self._output is None:
            raise TacoIOError("no output descriptor to read the written bytes back from")
        if self._fd is None:
            fd = self._fd = os.dup(self._output)
            # a writer abandoned mid-way: the descriptor is closed after its last job
            self._close_fd = weakref.finalize(
                self, self._worker.submit, functools.partial(os.close, fd)
            )
        return self._fd

    def of_growing(self, position: int, size: int) -> tuple[LateDigest, GrowingRange]:
        """The digest of the ``size`` bytes being written at ``position`` of the output.

        The digest thread follows the copy (:class:`GrowingRange`): the writer
        must :meth:`~GrowingRange.advance` the range after each block it writes
        and :meth:`~GrowingRange.abandon` it if the copy fails.
        """
        growing = GrowingRange(position, size)
        return self._follow(growing), growing

    def _follow(self, growing: GrowingRange) -> LateDigest:
        self.flush()
        late = LateDigest(self)
        item = _Followed(growing, self.algorithm, late, self._read_fd())
        with self._lock:
            self._followed.append(item)
        self._submit(growing.end - growing.position, functools.partial(self._run_followed, item))
        return late

    def _run_followed(self, item: _Followed) -> None:
        try:
            _digest_followed(item, functools.partial(self._after, item))
        finally:
            with self._lock:
                self._followed.remove(item)

    def _after(self, item: _Followed) -> _Followed | None:
        """The member followed after ``item``, if any (the partner of its lanes)."""
        with self._lock:
            at = self._followed.index(item) + 1
            return self._followed[at] if at < len(self._followed) else None

    def expect(self, source: str, stat: os.stat_result) -> None:
        """Announce a local file that will be copied later (:meth:`claim`), if it is
        dense and above 4 MiB (:data:`_LATE_BUFFERED`).

        The digest thread digests it from the source, in lanes with the other
        announced files, as much as :data:`_AHEAD_LEAD` ahead of the copies:
        the digest of the last large member is then ready about when its copy
        ends, instead of following the copy at the speed of one SHA-256.
        """
        if stat.st_size <= _LATE_BUFFERED or stat.st_blocks * 512 < stat.st_size:
            return  # copied through a buffer of its own, or in chunks: nothing to gain
        item = Announced(source, stat, self)
        self._announced.setdefault(source, deque()).append(item)
        self._unsent.append(item)
        if len(self._unsent) > 1:  # two at once: the thread starts them together, in lanes
            self._send()

    def _send(self) -> None:
        """Hand announced sources to the digest thread while the lead allows."""
        sent: list[Announced] = []
        while self._unsent and (
            self._lead == 0 or self._lead + self._unsent[0].size <= self._lead_limit
        ):
            item = self._unsent.popleft()
            item.sent = True
            self._lead += item.size
            sent.append(item)
        with self._lock:  # all in the list before the first starts: each has its partner
            self._followed.extend(sent)
        for item in sent:
            self._submit(0, functools.partial(self._run_followed, item))

    def claim(self, source: str, stat: os.stat_result) -> Announced | None:
        """The announced digest of ``source``, about to be copied; None when there is none
        (not announced, or the file changed since)."""
        self._send()
        queued = self._announced.get(source)
        if not queued:
            return None
        item = queued.popleft()
        if not queued:
            del self._announced[source]
        if not item.sent:  # never handed to the digest thread
            if item in self._unsent:
                self._unsent.remove(item)
            return None
        self._lead -= item.size
        self._send()
        return item if _identity(stat) == _identity(item.stat) else None

    def of_ahead(self, item: Announced, crc: int, position: int) -> LateDigest:
        """The digest of a claimed source copied to ``position`` with ZIP CRC-32 ``crc``.

        It is the digest of the source when the CRC-32 of the bytes digested
        is the copy's; else (the file changed between the two reads) the
        member is read back from the output.
        """
        with self._lock:
            item.copied = (crc, position)
            result = item.result
        if result is None:  # the digest thread checks when it is done
            return item.late
        if isinstance(result, str) and item.crc == crc:
            item.late._result = result
            return item.late
        return self.of_range(position, item.size)

    def _settle(self, item: Announced, result: str | Exception) -> None:
        """The digest thread, done with an announced source: check it against its copy."""
        with self._lock:
            item.result = result
            copied = item.copied
        if copied is None:  # :meth:`of_ahead` checks when the copy is done
            return
        crc, position = copied
        if isinstance(result, str) and item.crc == crc:
            item.late._result = result
            return
        growing = GrowingRange(position, item.size)
        growing.advance(growing.end)
        again = _Followed(growing, self.algorithm, item.late, self._read_fd())
        _digest_followed(again, lambda: None)

    def flush(self) -> None:
        """Hand the batch of small members to the digest thread."""
        if self._batch:
            batch, size = self._batch, self._batch_bytes
            self._batch, self._batch_bytes = [], 0
            self._submit(size, functools.partial(_digest_batch, batch, self.algorithm))

    def _submit(self, size: int, job: Job) -> None:
        with self._lock:
            self._jobs.append((size, job))
            self._backlog += size
        self._worker.submit(self._run_one)

    def _take(self) -> Job | None:
        """The oldest job not started, now started; None when there is none."""
        with self._lock:
            if not self._jobs:
                return None
            size, job = self._jobs.popleft()
            self._backlog -= size
        return job

    def _run_one(self) -> None:
        """Run by the digest thread: the oldest job not started (none if :meth:`wait` took it)."""
        job = self._take()
        if job is not None:
            job()

    def wait(self) -> None:
        """Wait until every digest submitted so far is computed, computing some of them.

        The calling thread has nothing else to do until then, so it takes the
        jobs the digest thread has not started (at the end of a write of large
        SHA-256 samples, the last few members are digested on both cores).
        """
        if self._worker.pid != os.getpid():
            raise TacoIOError(
                f"digests started in process {self._worker.pid} cannot be awaited in "
                f"process {os.getpid()} (forked while writing?)"
            )
        self.flush()
        while (job := self._take()) is not None:
            job()
        done = threading.Event()
        self._worker.submit(done.set)
        done.wait()

    def close(self) -> None:
        """Wait for every digest, then close the duplicated descriptor."""
        self.wait()
        if self._close_fd is not None and self._close_fd.detach() is not None:
            os.close(cast(int, self._fd))
        self._fd = self._close_fd = None


def settle_digests(values: list[str | LateDigest | None]) -> list[str | None]:
    """``values`` with every :class:`LateDigest` replaced by its value, in place.

    Example:
        >>> settle_digests(["xxh3:00", None])
        ['xxh3:00', None]
    """
    values[:] = [value.value() if isinstance(value, LateDigest) else value for value in values]
    return cast(list[str | None], values)


def _digest_batch(batch: list[tuple[LateDigest, Buffer]], algorithm: str) -> None:
    for late, data in batch:
        try:
            late._result = digest_value(algorithm, data)
        except Exception as exc:  # handed to the writer by value()
            late._result = exc


def _digest_buffer(
    buffer: bytearray, size: int, algorithm: str, late: LateDigest, free: list[bytearray]
) -> None:
    try:
        with memoryview(buffer) as view:
            late._result = digest_value(algorithm, view[:size])
    except Exception as exc:  # handed to the writer by value()
        late._result = exc
    finally:
        free.append(buffer)


class _Followed:
    """A member whose digest the digest thread follows: its range, running digest, progress.

    ``lock`` is held by whoever feeds it (its own job, or the job of the
    member before it, which feeds both in lanes): the bytes go in, in order.
    ``fd`` is read from ``growing.position``: the output, or (:class:`Announced`)
    the member's source.
    """

    __slots__ = ("crc", "digested", "fd", "growing", "late", "lock", "stream")

    def __init__(self, growing: GrowingRange, algorithm: str, late: LateDigest, fd: int) -> None:
        self.growing = growing
        self.late = late
        self.fd = fd
        self.stream = _lane_stream(algorithm)
        self.digested = growing.position
        """End of the bytes fed so far."""
        self.crc: int | None = None
        """The ZIP CRC-32 of the bytes fed, when it is kept (:class:`Announced`)."""
        self.lock = threading.Lock()

    def ready(self) -> int:
        """Bytes written and not fed yet."""
        return min(self.growing.written, self.growing.end) - self.digested

    def readable(self) -> bool:
        """True when :attr:`fd` can be read (:class:`Announced` opens it on first use)."""
        return True

    def finish(self, result: str | Exception) -> None:
        """The digest thread: every byte is fed (or feeding failed)."""
        self.late._result = result


class Announced(_Followed):
    """An announced source (:meth:`LateDigests.expect`), digested from its own file.

    Its CRC-32 is kept beside the digest: the copy's CRC-32 must match for
    the digest to count (the file could change between the two reads).
    """

    __slots__ = ("copied", "owner", "path", "result", "sent", "size", "stat")

    def __init__(self, path: str, stat: os.stat_result, owner: LateDigests) -> None:
        growing = GrowingRange(0, stat.st_size)
        growing.advance(growing.end)
        super().__init__(growing, owner.algorithm, LateDigest(owner), -1)
        self.path, self.stat, self.size, self.owner = path, stat, stat.st_size, owner
        self.crc = 0
        self.result: str | Exception | None = None
        self.copied: tuple[int, int] | None = None
        """The copy's CRC-32 and position, once the writer copied it."""
        self.sent = False
        """Handed to the digest thread (:meth:`LateDigests._send`)."""

    def __repr__(self) -> str:
        return f"announced source {self.path!r} ({self.size} bytes)"

    def readable(self) -> bool:
        """Open the source when first fed (a descriptor held only while it is digested);
        False when it is gone or no longer the file announced (its own job then fails)."""
        if self.fd >= 0:
            return True
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        if _identity(os.fstat(fd)) != _identity(self.stat):
            os.close(fd)
            return False
        self.fd = fd
        return True

    def finish(self, result: str | Exception) -> None:
        if self.fd >= 0:
            try:
                if isinstance(result, str) and _identity(os.fstat(self.fd)) != _identity(self.stat):
                    result = TacoIOError(f"{self.path} changed while it was digested")
            finally:
                os.close(self.fd)
                self.fd = -1
        self.owner._settle(self, result)


def _identity(stat: os.stat_result) -> tuple[int, int, int, int, int]:
    """What tells one version of a file from another: device, inode, size, times."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _lead_limit() -> int:
    """:data:`_AHEAD_LEAD`, or an eighth of the free memory when that is less."""
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return _AHEAD_LEAD
    return max(64 * _MIB, min(_AHEAD_LEAD, free // 8))


def _lane_stream(algorithm: str) -> Sha256Stream | StreamingDigest:
    """A running digest that :func:`_update_lanes` can advance beside others."""
    if algorithm == "sha256":
        try:
            from taco_gdal._sha256_thread import Sha256Stream
        except ImportError:  # built without the C extension: hashlib, one member at a time
            pass
        else:
            return Sha256Stream()
    return StreamingDigest(algorithm)


def _lane_value(stream: Sha256Stream | StreamingDigest) -> str:
    if isinstance(stream, StreamingDigest):
        return stream.value()
    return f"sha256:{stream.digest().hex()}"


def _update_lanes(streams: list[Sha256Stream | StreamingDigest], buffers: list[memoryview]) -> None:
    """``streams[i].update(buffers[i])``: SHA-256 streams together, in lanes."""
    lanes = [s for s in streams if not isinstance(s, StreamingDigest)]
    if len(lanes) > 1 and len(lanes) == len(streams):
        from taco_gdal._sha256_thread import update_many  # a Sha256Stream exists: it imports

        update_many(lanes, buffers)
        return
    for stream, buffer in zip(streams, buffers, strict=True):
        stream.update(buffer)


def _digest_followed(item: _Followed, partner: Callable[[], _Followed | None]) -> None:
    """The digest job of one member read back as it is written: follow it to its end.

    While the member is being written, wait for each :data:`_FOLLOW_STEP` of
    it.  Once it is whole and the member after it (``partner()``) has bytes
    written, feed both in lanes: the rest of this one and the start of the
    next (one SHA-256 leaves the CPU's SHA unit idle three cycles in four, so
    two run at almost twice the speed of one, and the digests keep up with a
    copy faster than one SHA-256).  The next member's own job goes on from
    there.
    """
    growing = item.growing
    try:
        while True:
            with item.lock:
                if item.digested >= growing.end:
                    break
                if not item.readable():
                    raise TacoIOError(f"{item}: gone, or not the file announced")
                end = min(growing.end, item.digested + _FOLLOW_STEP)
                other = partner() if growing.written >= end else None
                if other is not None and other.lock.acquire(blocking=False):
                    try:
                        ready = min(other.ready(), end - item.digested)
                        if ready > 0 and other.readable():
                            _feed_lanes([(item, end), (other, other.digested + ready)])
                            continue
                    finally:
                        other.lock.release()
                growing.wait_for(end)
                _feed_lanes([(item, end)])
        result: str | Exception = _lane_value(item.stream)
    except Exception as exc:  # handed to the writer by value()
        result = exc
    item.finish(result)


def _feed_lanes(pieces: list[tuple[_Followed, int]]) -> None:
    """Feed each member its bytes up to the end given, from mapped pages, in lanes.

    Mapped, the bytes go from the page cache to the digest without a copy
    (``pread`` into a buffer cost SHA-256 about 15% more CPU); a range that
    cannot be mapped (a descriptor that cannot, or past the end of the file)
    is read with ``pread``, alone.  The mapped ranges go to the digest in one
    call, which releases the GIL once: fed in 1 MiB slices, each taking the
    GIL back, the writing thread waited for it and 20 x 100 MiB took 3% longer
    to copy (+8.9% against +5.8% over 10 interleaved rounds).
    """
    streams: list[Sha256Stream | StreamingDigest] = []
    views: list[memoryview] = []
    maps: list[mmap.mmap] = []
    try:
        for item, end in pieces:
            start = item.digested
            base = start - start % mmap.ALLOCATIONGRANULARITY
            try:
                mapped = mmap.mmap(
                    item.fd, end - base, mmap.MAP_SHARED, mmap.PROT_READ, offset=base
                )
            except (OSError, ValueError):
                _feed_read(item, end)
            else:
                maps.append(mapped)
                streams.append(item.stream)
                views.append(memoryview(mapped)[start - base :])
                if item.crc is not None:
                    item.crc = crc32(views[-1], item.crc)
        _update_lanes(streams, views)
    finally:
        for view in views:
            view.release()
        for mapped in maps:
            mapped.close()
    for item, end in pieces:
        item.digested = end


def _feed_read(item: _Followed, end: int) -> None:
    """Feed ``item`` its bytes up to ``end`` read with ``pread`` (a range that cannot be mapped)."""
    start = item.digested
    buffer = memoryview(bytearray(min(end - start, COPY_BLOCK)))
    for at in range(start, end, COPY_BLOCK):
        view = buffer[: min(COPY_BLOCK, end - at)]
        _read_full(item.fd, view, at, f"descriptor {item.fd}")
        item.stream.update(view)
        if item.crc is not None:
            item.crc = crc32(view, item.crc)


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
    block = bytearray(min(size, COPY_BLOCK) if into is None else 0)
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
