"""SHA-256 of small members found in the ZIP as it is written, off the writing thread.

The writing thread tells the finder nothing per member: the finder reads the
output as it grows (up to its size), walks the ZIP's local headers, and
digests every member of up to ``limit`` bytes (the writer's small-member
limit; larger ones are digested as they are copied).  It appends, in file
order, each member's position and size to one file in memory and the
digest's stored form (``sha256:`` and 64 hex digits, the digest column's
value) to another.  When the samples are written the writer gives it where
they end, waits for it, maps both files and takes the stored forms of each
level's rows by position (:meth:`OutputDigests.stored_at`): when the level's
rows are a run of the members found, in file order, the column is built on
the mapped text itself.  Formatting the digests on the writing thread had cost 2-4 ms of a
10k-member write (a copy of the digests, their hex, the rows: 540 fresh pages),
against 0.4 ms to map and check the answers.  An answer counts only when its position
and size are those the writer recorded for the row; a member the finder did
not give (it stopped, died, or met bytes that are not a member header) is
read back from the output and digested by the writer, so a digest is never
lost or wrong.

Two finders do this work:

* :class:`~taco_gdal.write._digest_process.DigestProcess`, a helper
  interpreter (``python -I -S``) loading only the package's extension
  (``hashlib`` where it was not built), the first choice where a Python
  interpreter can be started;
* :class:`DigestScan`, a POSIX thread of the C extension
  (``taco_gdal/_sha256_scan.h``) that never takes the GIL, where none can
  (embedded as in QGIS, or frozen).  It starts in microseconds where the
  process takes about 12 ms of the other CPU, yet it did not make the writer
  faster where both can run (10k x 4 KiB, 30 in-process rounds: +4.2%
  against +3.6%); it replaced handing every member to the ring thread
  (:class:`~taco_gdal.write._digest_thread.DigestThread`) where no process
  starts (10k x 16 KiB: +2.7% against +8.9%).
"""

from __future__ import annotations

import importlib
import logging
import mmap
import os
import tempfile
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import NATIVE_SHA256, raw_digests, stored_ascii
from taco_gdal.write.zipstream import LOCAL_BLOCK

if TYPE_CHECKING:
    from taco_gdal._sha256_thread import Scanner

IntArray = npt.NDArray[np.int64]

__all__ = [
    "DIGEST_SIZE",
    "PLACE",
    "SMALL_MEMBER",
    "STORED_WIDTH",
    "DigestScan",
    "OutputDigests",
    "answer_files",
]

log = logging.getLogger(__name__)

SMALL_MEMBER: Final = LOCAL_BLOCK
"""Members up to this size are the finder's: the ZIP writer holds them whole in memory and
digests nothing as it writes them (larger ones are digested as they are copied)."""
DIGEST_SIZE: Final = 32
"""Bytes of one raw SHA-256."""
STORED_PREFIX: Final = b"sha256:"
STORED_WIDTH: Final = len(STORED_PREFIX) + 2 * DIGEST_SIZE
"""Bytes of one stored form: ``sha256:`` and 64 hex digits."""
PLACE: Final = np.dtype([("position", "<i8"), ("size", "<i8")])
"""Where a member the finder digested starts, and its size (in the places file)."""
_HERE_BATCH: Final = 16
"""Members read back and digested together when the writer digests them itself."""


def answer_files() -> tuple[int, int]:
    """Two files in memory for a finder's answers (places, stored forms), each
    appended to by the finder and mapped by the writer once, at the end: no
    pipe fills while the writer writes."""
    places = _memory_file("taco-digest-places")
    try:
        return places, _memory_file("taco-digest-stored")
    except OSError:
        os.close(places)
        raise


def _memory_file(name: str) -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create(name, os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as f:  # pragma: no cover - Linux has memfd_create
        return os.dup(f.fileno())


def _mapped(fd: int, length: int) -> npt.NDArray[np.uint8]:
    """The first ``length`` bytes of the file ``fd``, mapped read-only (its pages are
    the finder's, already in memory: nothing is copied or zeroed here)."""
    if length == 0:
        return np.empty(0, np.uint8)
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    return np.frombuffer(mmap.mmap(fd, length, flags=flags, prot=mmap.PROT_READ), np.uint8)


class OutputDigests:
    """Digests of the small members written to ``output``, found by a finder that
    reads the output, while the writer goes on (see the module's text).

    Subclasses say how the finder is ended (:meth:`_finish`) and stopped early
    (:meth:`_let_go`).

    Args:
        algorithm: the digest (``"sha256"``).
        output: a descriptor of the output open for reading.
        flush: makes every byte written so far readable (the output's buffered
            writer's ``flush``).
        answers: the files the finder appends to (:func:`answer_files`), closed here.
    """

    reads_output = True
    """The finder reads the members in the output: :meth:`submit` need not be called."""

    def __init__(
        self, algorithm: str, output: int, flush: Callable[[], None], answers: tuple[int, int]
    ) -> None:
        self.algorithm = algorithm
        self.size = DIGEST_SIZE
        """Bytes of one raw digest."""
        self._output = output
        self._flush = flush
        self._files = answers
        self._close_files = weakref.finalize(self, _close, answers)
        self._answers: tuple[npt.NDArray[np.void], npt.NDArray[np.uint8]] | None = None
        """What the finder found: the places and the stored forms, in file order."""

    def submit(self, data: bytes, position: int) -> None:
        """Nothing to do: the finder reads each member in the output."""

    def stored_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """The stored forms (one row of :data:`STORED_WIDTH` ASCII bytes each) of the
        members whose ``sizes`` bytes start at ``positions`` of the output, in that
        order; the first call waits for the finder.  When ``positions`` are a run
        of the members found, in file order, the rows are the mapped answers
        themselves (read-only).

        Raises:
            TacoIOError: a member the finder did not digest could not be read
                back from the output here either.
        """
        if self._answers is None:
            self._finish(len(positions))
            self._answers = self._take()
        places, stored = self._answers
        if len(positions):  # a run of members in file order (the TACO_HEADER may precede them)
            first = int(np.searchsorted(places["position"], positions[0]))
            run = slice(first, first + len(positions))
            if np.array_equal(places["position"][run], positions) and np.array_equal(
                places["size"][run], sizes
            ):
                return stored[run]
        at = np.minimum(np.searchsorted(places["position"], positions), len(places) - 1)
        known = np.zeros(len(positions), np.bool_)
        if len(places):
            known = (places["position"][at] == positions) & (places["size"][at] == sizes)
        rows = np.empty((len(positions), STORED_WIDTH), np.uint8)
        rows[known] = stored[at[known]]
        missing = np.flatnonzero(~known)
        if missing.size:
            raw = self._digest_here(positions[missing], sizes[missing])
            digests = np.frombuffer(raw, np.uint8).reshape(-1, DIGEST_SIZE)
            rows[missing] = stored_ascii(self.algorithm, digests)
        return rows

    def members_written(self) -> None:
        """Nothing to do here: :meth:`stored_at` gives the finder the end and waits."""

    def abort(self) -> None:
        """Let the finder end now; digests not known yet are computed here if asked."""
        self._let_go()
        if self._answers is None:
            self._answers = (np.empty(0, PLACE), np.empty((0, STORED_WIDTH), np.uint8))
        self._close_files()

    def _finish(self, asked: int) -> None:
        """End the finder's work, given the ``asked`` members the writer waits for."""
        raise NotImplementedError

    def _let_go(self) -> None:
        """Stop the finder now (once its answers are taken, or instead of them)."""
        raise NotImplementedError

    def _take(self) -> tuple[npt.NDArray[np.void], npt.NDArray[np.uint8]]:
        """The answers the finder appended, mapped; the finder is let go and the files
        closed (the mappings stay).  A member is counted once both its place and its
        stored form are whole (the finder appends the stored form first)."""
        if not self._close_files.alive:
            return np.empty(0, PLACE), np.empty((0, STORED_WIDTH), np.uint8)
        places_fd, stored_fd = self._files
        count = min(
            os.fstat(places_fd).st_size // PLACE.itemsize,
            os.fstat(stored_fd).st_size // STORED_WIDTH,
        )
        places = _mapped(places_fd, count * PLACE.itemsize).view(PLACE)
        stored = _mapped(stored_fd, count * STORED_WIDTH).reshape(count, STORED_WIDTH)
        self._let_go()
        self._close_files()
        return places, stored

    def _end_of_members(self) -> int:
        """Where the members end: the output's position, once its buffer is flushed."""
        self._flush()
        return os.lseek(self._output, 0, os.SEEK_CUR)

    def _digest_here(self, positions: IntArray, sizes: IntArray) -> bytes:
        """The digests of members the finder did not give, computed here from the output."""
        self._flush()
        many = raw_digests(self.algorithm)
        done = bytearray()
        for first in range(0, len(positions), _HERE_BATCH):
            places = zip(
                positions[first : first + _HERE_BATCH].tolist(),
                sizes[first : first + _HERE_BATCH].tolist(),
                strict=True,
            )
            done += many([self._read_back(position, size) for position, size in places])
        return bytes(done)

    def _read_back(self, position: int, size: int) -> bytes:
        data = os.pread(self._output, size, position)
        if len(data) != size:
            raise TacoIOError(
                f"cannot digest the member of {size} bytes at {position} of the output: "
                f"read {len(data)} bytes back"
            )
        return data


def _close(fds: tuple[int, ...]) -> None:
    for fd in fds:
        os.close(fd)


class DigestScan(OutputDigests):
    """SHA-256 of the small members of ``output``, found by a native thread
    (the extension's ``Scanner``) reading the output as it grows.

    Args:
        output: a descriptor of the output open for reading (the thread reads
            its own duplicate of it).
        flush: makes every byte written so far readable.
        cpus: where the thread may run (None: anywhere).
        limit: the largest member it digests.

    Raises:
        TacoIOError: the extension is not built here, or its thread cannot start.

    Example:
        >>> from taco_gdal.write.zipstream import ZipWriter
        >>> out = open("scanned.zip", "w+b")
        >>> writer = ZipWriter(out)
        >>> helper = DigestScan(out.fileno(), out.flush, limit=2)  # members of 2 bytes at most
        >>> a, b = writer.add_bytes("a", b"abc"), writer.add_bytes("b", b"de")
        >>> rows = helper.stored_at(np.array([a.data_offset, b.data_offset]), np.array([3, 2]))
        >>> [row[:15].tobytes() for row in rows]  # "abc" was read back and digested here
        [b'sha256:ba7816bf', b'sha256:959a45d4']
        >>> helper.abort(); writer.close(); out.close()
    """

    def __init__(
        self,
        output: int,
        flush: Callable[[], None],
        cpus: set[int] | None = None,
        limit: int = SMALL_MEMBER,
    ) -> None:
        try:
            native = importlib.import_module(NATIVE_SHA256)
            answers = answer_files()
        except (ImportError, OSError) as exc:
            raise TacoIOError(f"no native SHA-256 scan thread here: {exc}") from exc
        super().__init__("sha256", output, flush, answers)
        try:
            self._scanner: Scanner = native.Scanner(
                output, limit, *answers, sorted(cpus) if cpus else None
            )
        except (AttributeError, OSError) as exc:
            self._close_files()
            raise TacoIOError(f"no native SHA-256 scan thread here: {exc}") from exc

    def _let_go(self) -> None:
        self._scanner.close()

    def _finish(self, asked: int) -> None:
        try:
            status = self._scanner.finish(self._end_of_members())
        except (OSError, RuntimeError, ValueError) as exc:  # closed, or used after fork()
            log.warning("digest scan thread: %s; the writer computes the rest", exc)
            return
        if status != 0:
            log.warning(
                "digest scan thread: it stopped (%s); the writer computes the rest",
                _SCAN_STATUS.get(status, f"status {status}"),
            )


_SCAN_STATUS: Final = {
    3: (
        "a read or an append failed, or the bytes at a member's place are not a "
        "member header or declare an impossible size"
    ),
    5: "no member was left to read before the end given",
}
"""What the scan thread's status codes mean, for a log message."""
