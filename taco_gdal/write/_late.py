"""Late digests: SHA-256 of ZIP members finished by the digest thread while the writer copies on.

The copy ring (:class:`~taco_gdal.write._copy._Ring`) keeps a copy in step with
SHA-256: it cannot run more than 2 MiB ahead, and it waits for the last blocks
at the end of every sample.  The ZIP writer therefore defers SHA-256 past the
sample (:class:`LateDigests`): it copies plain, and the ring's helper thread
reads the member back from the output's pages (mapped: the bytes written, not
the source again), a member above 4 MiB a step behind its copy
(:class:`GrowingRange`), while the next members are copied; the digest column
waits for the values.  One SHA-256 (about 1.6 GB/s) cannot follow a copy at
1.8 GB/s, so once a member is whole the rest of it and what is written of the
next are digested together, in lanes (``Sha256Stream``, ``update_many``: about
3 GB/s for two on one core).  When the helper is 256 MiB or more behind (the
other core is busy), the writer digests the next member inline, and while it
waits for the last digests it takes queued ones itself, so both cores share
the work.  Members up to 4 MiB are copied through buffers of their own instead
(:meth:`LateDigests.of_buffer`), which the thread digests three at a time in lanes.

The TACO ZIP writer knows its sources before it copies them, so it announces
each dense local file above 4 MiB (:meth:`LateDigests.expect`, when the
read-ahead window opens it): the helper digests those from the sources, two by
two in lanes, up to 1 GiB ahead of the copies, and the digest is usually ready
when the copy ends.  It counts only when the file is still the one announced
(device, inode, size, times) and the CRC-32 of the bytes digested is the
copy's (:class:`Announced`); otherwise the member is read back from the output.
"""

from __future__ import annotations

import functools
import mmap
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import (
    Buffer,
    StreamingDigest,
    check_algorithm,
    crc32,
    digest_value,
    raw_digests,
)
from taco_gdal.write._copy import COPY_BLOCK, Job, _digest_worker, _read_full

if TYPE_CHECKING:
    from taco_gdal._sha256_thread import Sha256Stream

__all__ = [
    "Announced",
    "GrowingRange",
    "LateDigest",
    "LateDigests",
    "settle_digests",
]


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
_LANES = 3
"""Members the digest thread feeds at once (``LANES_MAX`` of ``_sha256_lanes.h``).

Announced 96 MiB sources on tmpfs, mapped 16 MiB at a time with their CRC-32, took
0.539 ms per MiB digested in two lanes and 0.502 in three (one: 0.824; medians of 9
rounds).  Three files of 100 MiB are digested in about 150 ms instead of about 190
(a pair, then the third alone), and the whole write of them takes about 200."""
_MIB = 1024 * 1024
_BUFFERED_GROUP_BYTES = 2 * _LATE_BUFFERED
"""Members copied through their own buffers go to the digest thread :data:`_LANES` at a
time, or once they hold this many bytes (two 4 MiB members), so that SHA-256 digests
them in lanes; one at a time, one SHA-256 (about 1.8 GB/s) barely kept up with the
copy of 1 MiB samples (about 1.6 GB/s) and kept the other core busy throughout."""
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
        self._buffered: list[tuple[LateDigest, bytearray, int]] = []
        """Members copied through their own buffers (:meth:`of_buffer`), not handed over yet."""
        self._buffered_bytes = 0
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
        self._buffered.append((late, buffer, size))
        self._buffered_bytes += size
        if len(self._buffered) >= _LANES or self._buffered_bytes >= _BUFFERED_GROUP_BYTES:
            self._send_buffered()
        return late

    def _send_buffered(self) -> None:
        """Hand the members waiting in their buffers to the digest thread, as one job."""
        if self._buffered:
            group, size = self._buffered, self._buffered_bytes
            self._buffered, self._buffered_bytes = [], 0
            self._submit(
                size, functools.partial(_digest_buffers, group, self.algorithm, self._free)
            )

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

    def _after(self, item: _Followed) -> list[_Followed]:
        """The members followed after ``item``, up to :data:`_LANES` - 1 (its lanes' partners)."""
        with self._lock:
            at = self._followed.index(item) + 1
            return self._followed[at : at + _LANES - 1]

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
        if len(self._unsent) > 1:  # two at once or more: the thread starts them in lanes
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
        return item.late if item.accept(result, crc) else self.of_range(position, item.size)

    def _settle(self, item: Announced, result: str | Exception) -> None:
        """The digest thread, done with an announced source: check it against its copy."""
        with self._lock:
            item.result = result
            copied = item.copied
        if copied is None:  # :meth:`of_ahead` checks when the copy is done
            return
        crc, position = copied
        if item.accept(result, crc):
            return
        growing = GrowingRange(position, item.size)
        growing.advance(growing.end)
        again = _Followed(growing, self.algorithm, item.late, self._read_fd())
        _digest_followed(again, lambda: [])

    def flush(self) -> None:
        """Hand the batch of small members, and the members waiting in their buffers, to
        the digest thread."""
        self._send_buffered()
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


def _digest_buffers(
    group: list[tuple[LateDigest, bytearray, int]], algorithm: str, free: list[bytearray]
) -> None:
    """The digests of members copied through their own buffers, together (SHA-256 in
    lanes, :data:`_LANES` members a call), then the buffers back to ``free``."""
    views = [memoryview(buffer)[:size] for _, buffer, size in group]
    try:
        values = _values_together(algorithm, views)
        for (late, _, _), value in zip(group, values, strict=True):
            late._result = value
    except Exception as exc:  # handed to the writer by value()
        for late, _, _ in group:
            late._result = exc
    finally:
        for view in views:
            view.release()
        free.extend(buffer for _, buffer, _ in group)


def _values_together(algorithm: str, views: list[memoryview]) -> list[str]:
    """The stored digests of ``views``: SHA-256 in lanes (:func:`raw_digests`).

    Example:
        >>> _values_together("sha256", [memoryview(b"abc"), memoryview(b"")]) == [
        ...     digest_value("sha256", b"abc"), digest_value("sha256", b"")]
        True
    """
    if algorithm == "sha256" and len(views) > 1:
        raw = raw_digests(algorithm)(views)
        return [f"sha256:{raw[32 * i : 32 * i + 32].hex()}" for i in range(len(views))]
    return [digest_value(algorithm, view) for view in views]


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

    __slots__ = ("copied", "owner", "path", "result", "sent", "stat")

    def __init__(self, path: str, stat: os.stat_result, owner: LateDigests) -> None:
        growing = GrowingRange(0, stat.st_size)
        growing.advance(growing.end)
        super().__init__(growing, owner.algorithm, LateDigest(owner), -1)
        self.path, self.stat, self.owner = path, stat, owner
        self.crc = 0
        self.result: str | Exception | None = None
        self.copied: tuple[int, int] | None = None
        """The copy's CRC-32 and position, once the writer copied it."""
        self.sent = False
        """Handed to the digest thread (:meth:`LateDigests._send`)."""

    @property
    def size(self) -> int:
        return self.growing.end

    def __repr__(self) -> str:
        return f"announced source {self.path!r} ({self.size} bytes)"

    def accept(self, result: str | Exception, crc: int) -> bool:
        """Take ``result`` as the digest when it is one and the copy's CRC-32 ``crc`` is
        the CRC-32 of the bytes digested; False when the member must be read back."""
        if isinstance(result, str) and self.crc == crc:
            self.late._result = result
            return True
        return False

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


def _digest_followed(item: _Followed, partners: Callable[[], list[_Followed]]) -> None:
    """The digest job of one member read back as it is written: follow it to its end.

    While the member is being written, wait for each :data:`_FOLLOW_STEP` of
    it.  Once it is whole and the members after it (``partners()``) have bytes
    to digest, feed them together in lanes: the rest of this one and the next
    ones' bytes, as many as this one's step (one SHA-256 leaves the CPU's SHA
    unit idle three cycles in four, so two run at almost twice the speed of
    one, three a little faster still, and the digests keep up with a copy
    faster than one SHA-256).  Each member's own job goes on from where the
    lanes left it.
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
                others = partners() if growing.written >= end else []
                if others and _feed_with(item, end, others):
                    continue
                growing.wait_for(end)
                _feed_lanes([(item, end)])
        result: str | Exception = _lane_value(item.stream)
    except Exception as exc:  # handed to the writer by value()
        result = exc
    item.finish(result)


def _feed_with(item: _Followed, end: int, others: list[_Followed]) -> bool:
    """Feed ``item`` up to ``end`` in lanes with those of ``others`` that are free and
    have bytes to digest, each as many as ``item``'s; False (nothing fed) when none has."""
    step, held = end - item.digested, []
    try:
        pieces = [(item, end)]
        for other in others:
            if not other.lock.acquire(blocking=False):
                continue  # being fed by its own job: it goes on there
            held.append(other)
            ready = min(other.ready(), step)
            if ready > 0 and other.readable():
                pieces.append((other, other.digested + ready))
        if len(pieces) == 1:
            return False
        _feed_lanes(pieces)
        return True
    finally:
        for other in held:
            other.lock.release()


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
