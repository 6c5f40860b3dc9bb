"""SHA-256 of small members found in the ZIP as it is written, off the writing thread.

The writing thread tells the finder nothing per member: the finder reads the
output as it grows (up to its size), walks the ZIP's local headers, and
digests every member of up to ``limit`` bytes (the writer's small-member
limit; larger ones are digested as they are copied).  When the samples are
written the writer gives it where they end, waits for it, and takes the
answers (position, size and digest of each member) all at once, by position
(:meth:`OutputDigests.digests_at`).  An answer counts only when its position
and size are those the writer recorded for the row; a member the finder did
not give (it stopped, died, or met bytes that are not a member header) is
read back from the output and digested by the writer, so a digest is never
lost or wrong.

Two finders do this work:

* :class:`DigestScan`, a POSIX thread of the C extension
  (``taco_gdal/_sha256_scan.h``), which never takes the GIL and starts in
  microseconds;
* :class:`~taco_gdal.write._digest_process.DigestProcess`, a helper
  interpreter (``python -I -S``) running the same walk, for where the
  extension is not built (it then digests with ``hashlib``).

The thread is preferred: the process costs about 12 ms of the other CPU to
start and 8 ms to end, which a write of 10k small samples (0.27 s) felt.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import NATIVE_SHA256, raw_digests
from taco_gdal.write.zipstream import LOCAL_BLOCK

if TYPE_CHECKING:
    from taco_gdal._sha256_thread import Scanner

IntArray = npt.NDArray[np.int64]

__all__ = ["ANSWER", "DIGEST_SIZE", "SMALL_MEMBER", "DigestScan", "OutputDigests"]

log = logging.getLogger(__name__)

SMALL_MEMBER: Final = LOCAL_BLOCK
"""Members up to this size are the finder's: the ZIP writer holds them whole in memory and
digests nothing as it writes them (larger ones are digested as they are copied)."""
DIGEST_SIZE: Final = 32
"""Bytes of one raw SHA-256."""
ANSWER: Final = np.dtype(
    [("position", "<i8"), ("size", "<i8"), ("digest", np.uint8, (DIGEST_SIZE,))]
)
"""One answer of a finder: where a member's bytes start, how many, their digest."""
_HERE_BATCH: Final = 16
"""Members read back and digested together when the writer digests them itself."""


class OutputDigests:
    """Digests of the small members written to ``output``, found by a finder that
    reads the output, while the writer goes on (see the module's text).

    Subclasses say how the finder is ended and its answers taken (:meth:`_finish`)
    and how it is stopped early (:meth:`abort`).

    Args:
        algorithm: the digest (``"sha256"``).
        output: a descriptor of the output open for reading.
        flush: makes every byte written so far readable (the output's buffered
            writer's ``flush``).
    """

    reads_output = True
    """The finder reads the members in the output: :meth:`submit` need not be called."""

    def __init__(self, algorithm: str, output: int, flush: Callable[[], None]) -> None:
        self.algorithm = algorithm
        self.size = DIGEST_SIZE
        """Bytes of one raw digest."""
        self._output = output
        self._flush = flush
        self._answers: npt.NDArray[np.void] | None = None
        """What the finder found: position, size and digest of each member, in file order."""

    def submit(self, data: bytes, position: int) -> None:
        """Nothing to do: the finder reads each member in the output."""

    def digests_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """The raw digests (one row each) of the members whose ``sizes`` bytes start at
        ``positions`` of the output, in that order; the first call waits for the finder.

        Raises:
            TacoIOError: a member the finder did not digest could not be read
                back from the output here either.
        """
        if self._answers is None:
            self._answers = self._finish(len(positions))
        answers = self._answers
        at = np.minimum(np.searchsorted(answers["position"], positions), len(answers) - 1)
        known = np.zeros(len(positions), np.bool_)
        if len(answers):
            known = (answers["position"][at] == positions) & (answers["size"][at] == sizes)
        if known.all():
            return answers["digest"][at]
        digests = np.empty((len(positions), DIGEST_SIZE), np.uint8)
        digests[known] = answers["digest"][at[known]]
        missing = np.flatnonzero(~known)
        digests[missing] = np.frombuffer(
            self._digest_here(positions[missing], sizes[missing]), np.uint8
        ).reshape(-1, DIGEST_SIZE)
        return digests

    def abort(self) -> None:
        """Let the finder end now; digests not known yet are computed here if asked."""
        raise NotImplementedError

    def _finish(self, asked: int) -> npt.NDArray[np.void]:
        """End the finder's work, given the ``asked`` members the writer waits for;
        what it found (:data:`ANSWER` records, in file order)."""
        raise NotImplementedError

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
        >>> import hashlib
        >>> from taco_gdal.write.zipstream import ZipWriter
        >>> out = open("scanned.zip", "w+b")
        >>> writer = ZipWriter(out)
        >>> helper = DigestScan(out.fileno(), out.flush)
        >>> a, b = writer.add_bytes("a", b"abc"), writer.add_bytes("b", b"de")
        >>> digests = helper.digests_at(np.array([b.data_offset, a.data_offset]), np.array([2, 3]))
        >>> digests[1].tobytes() == hashlib.sha256(b"abc").digest(), digests[0, :4].tobytes().hex()
        (True, '959a45d4')
        >>> helper.abort(); writer.close(); out.close()
    """

    def __init__(
        self,
        output: int,
        flush: Callable[[], None],
        cpus: set[int] | None = None,
        limit: int = SMALL_MEMBER,
    ) -> None:
        super().__init__("sha256", output, flush)
        try:
            native = importlib.import_module(NATIVE_SHA256)
            self._scanner: Scanner = native.Scanner(output, limit, sorted(cpus) if cpus else None)
        except (ImportError, AttributeError, OSError) as exc:
            raise TacoIOError(f"no native SHA-256 scan thread here: {exc}") from exc

    def abort(self) -> None:
        """Stop the thread; digests not known yet are computed here if asked."""
        self._scanner.close()
        if self._answers is None:
            self._answers = np.empty(0, ANSWER)

    def _finish(self, asked: int) -> npt.NDArray[np.void]:
        try:
            found, status = self._scanner.finish(self._end_of_members())
        except (OSError, RuntimeError, ValueError) as exc:  # closed, or used after fork()
            log.warning("digest scan thread: %s; the writer computes the rest", exc)
            found, status = b"", 0
        finally:
            self._scanner.close()
        if status != 0:
            log.warning(
                "digest scan thread: it stopped (%s); the writer computes the rest",
                _SCAN_STATUS.get(status, f"status {status}"),
            )
        return np.frombuffer(found, ANSWER)


_SCAN_STATUS: Final = {
    3: (
        "a read failed, or the bytes at a member's place are not a member header "
        "or declare an impossible size"
    ),
    5: "no member was left to read before the end given",
}
"""What the scan thread's status codes mean, for a log message."""
