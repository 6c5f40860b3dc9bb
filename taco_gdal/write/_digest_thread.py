"""SHA-256 of small members off the writing thread: a helper process, else a native thread.

A :class:`~taco_gdal.write._digest_process.DigestProcess` finds the members
in the output as it grows and digests them on the other CPU; the writing
thread tells it nothing per member.  Where no helper process can start
(no Python interpreter to run: embedded as in QGIS, or frozen), a
:class:`~taco_gdal.write._output_digests.DigestScan` does the same work on a
POSIX thread of the C extension ``taco_gdal._sha256_thread`` that never
takes the GIL.  Where the output cannot be read back (a write-only
descriptor), :class:`DigestThread` is handed each small member the writer
holds in memory: one C call per member puts a reference to its bytes in a
ring (no lock, no system call), and the extension's thread digests them in
place, woken once per 64 members.

:func:`start_member_digests` picks in that order.  The process comes first
because no benchmark showed a thread faster where both can run: the ring
thread +1.3% [-2.0, +4.0] and +5.0% [-1.7, +11.0] paired with the process
(10k x 16 KiB on tmpfs, 60 and 80 blocks, ``bench/results/digest_s11_tmpfs_10k_*.json``),
the scan thread +4.2% against the process's +3.6% (10k x 4 KiB, 30 in-process
rounds, ``bench/bench_digest_embedded.py``).  Where no process can start, the
scan thread is the better one: +2.7% and +2.8% against the ring's +8.9% and
+8.8% (10k x 16 KiB, two runs), +4.2% and +7.1% against +7.4% and +5.7% (10k x
4 KiB; ``bench/results/digest_embedded_s25_*.json``).

Where none can help (the writing thread may use one CPU only, or no
helper starts), :class:`LaneDigests` digests on the writing thread, 16
members at a time, so that the extension's SHA-256 keeps three members in
flight (``taco_gdal/_sha256_lanes.h``: about twice the speed of one at a
time).

All of them are :class:`MemberDigests`: the digests of a level's members are
asked for at once, by the position of their bytes in the output, and come
back in the order asked, to be formatted together.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np
import numpy.typing as npt

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import NATIVE_SHA256, stored_ascii
from taco_gdal.write._cpus import other_cpus
from taco_gdal.write._digest_process import PROCESS_DIGESTS, start_digest_process
from taco_gdal.write._output_digests import DigestScan, IntArray

if TYPE_CHECKING:
    from taco_gdal._sha256_thread import Digester

__all__ = [
    "NATIVE_SHA256",
    "DigestThread",
    "LaneDigests",
    "MemberDigests",
    "start_member_digests",
]

log = logging.getLogger(__name__)

_LANE_BATCH: Final = 16
"""Members :class:`LaneDigests` holds before it digests them together."""


class MemberDigests(Protocol):
    """Digests of small members computed off the writing thread."""

    algorithm: str
    size: int
    """Bytes of one raw digest."""
    reads_output: bool
    """True when the helper finds the members in the output itself: the writer
    then does not call :meth:`submit`."""

    def submit(self, data: bytes, position: int) -> None:
        """Digest ``data``, the member whose bytes were just written at
        ``position`` of the output."""
        ...

    def stored_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """The digests' stored forms (``sha256:`` and the hex, one row of ASCII bytes
        each) of the members whose ``sizes`` bytes start at ``positions`` of the
        output, in that order (waits for the last ones)."""
        ...

    def members_written(self) -> None:
        """Every member to digest is written (others may follow: metadata): a helper
        may finish its work now, while the writer goes on."""
        ...

    def abort(self) -> None:
        """Stop now; digests not known yet are never computed."""
        ...


class DigestThread:
    """SHA-256 of submitted members, computed by a native thread without the GIL.

    Args:
        cpus: the CPUs the thread may run on (None: anywhere).

    Raises:
        TacoIOError: the extension is not built here, or its thread cannot start.

    Example:
        >>> import hashlib
        >>> helper = DigestThread()
        >>> helper.submit(b"abc", 0), helper.submit(b"def", 3)
        (None, None)
        >>> digests = helper.digests_at(np.array([3, 0]), np.array([3, 3])).tobytes()
        >>> digests[32:] == hashlib.sha256(b"abc").digest(), digests[:4].hex()
        (True, 'cb8379ac')
        >>> helper.abort()
    """

    algorithm = "sha256"
    size = 32
    reads_output = False

    def __init__(self, cpus: set[int] | None = None) -> None:
        try:
            native = importlib.import_module(NATIVE_SHA256)
            self._digester: Digester = native.Digester(sorted(cpus) if cpus else None)
        except (ImportError, OSError, RuntimeError) as exc:
            raise TacoIOError(f"no native SHA-256 thread here: {exc}") from exc
        self._submit: Callable[[bytes], int] = self._digester.submit
        self._positions = _Positions()

    def submit(self, data: bytes, position: int) -> None:
        """Digest ``data`` (held, unchanged, until digested), written at ``position``."""
        self._submit(data)
        self._positions.append(position)

    def digests_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """The raw digests of the members submitted at ``positions``, in that order.

        Raises:
            TacoIOError: OpenSSL failed to digest a member, or none was submitted
                at one of ``positions``.
        """
        try:
            every = self._digester.digests()
        except RuntimeError as exc:
            raise TacoIOError(f"cannot digest the members written: {exc}") from exc
        return self._positions.pick(every, self.size, positions)

    def members_written(self) -> None:
        """Nothing to do: the thread digests what it is handed; :meth:`stored_at` waits."""

    def stored_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """:meth:`digests_at` in their stored forms (``sha256:`` and the hex)."""
        return stored_ascii(self.algorithm, self.digests_at(positions, sizes))

    def abort(self) -> None:
        """Stop the thread; digests not taken yet are dropped."""
        self._digester.close()


class LaneDigests:
    """SHA-256 of submitted members on the writing thread, several at once.

    Members are held until :data:`_LANE_BATCH` are waiting, then digested in
    one call of the extension's ``sha256_many``.

    Raises:
        TacoIOError: the extension is not built here.

    Example:
        >>> import hashlib
        >>> lanes = LaneDigests()
        >>> for i in range(3):
        ...     lanes.submit(bytes([i]) * 100, 100 * i)
        >>> found = lanes.digests_at(np.array([200]), np.array([100]))
        >>> found.tobytes() == hashlib.sha256(bytes([2]) * 100).digest()
        True
    """

    algorithm = "sha256"
    size = 32
    reads_output = False

    def __init__(self) -> None:
        try:
            native = importlib.import_module(NATIVE_SHA256)
        except ImportError as exc:
            raise TacoIOError(f"no native SHA-256 here: {exc}") from exc
        self._many: Callable[[list[bytes]], bytes] = native.sha256_many
        self._held: list[bytes] = []
        self._done = bytearray()
        self._positions = _Positions()

    def submit(self, data: bytes, position: int) -> None:
        """Digest ``data`` (with the next members), written at ``position``."""
        held = self._held
        held.append(data)
        self._positions.append(position)
        if len(held) == _LANE_BATCH:
            self._done += self._many(held)
            held.clear()

    def digests_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """The raw digests of the members submitted at ``positions``, in that order.

        Raises:
            TacoIOError: none was submitted at one of ``positions``.
        """
        if self._held:
            self._done += self._many(self._held)
            self._held.clear()
        return self._positions.pick(self._done, self.size, positions)

    def members_written(self) -> None:
        """Nothing to do: the members held are digested when :meth:`stored_at` asks."""

    def stored_at(self, positions: IntArray, sizes: IntArray) -> npt.NDArray[np.uint8]:
        """:meth:`digests_at` in their stored forms (``sha256:`` and the hex)."""
        return stored_ascii(self.algorithm, self.digests_at(positions, sizes))

    def abort(self) -> None:
        """Drop the members not digested yet."""
        self._held.clear()


class _Positions:
    """Where each submitted member was written, in submitted order, to find its digest."""

    def __init__(self) -> None:
        self._list: list[int] = []
        self.append = self._list.append

    def pick(
        self, digests: bytes | bytearray, size: int, positions: IntArray
    ) -> npt.NDArray[np.uint8]:
        """The ``size``-byte ``digests`` (in submitted order) of the members at ``positions``.

        Example:
            >>> places = _Positions()
            >>> places.append(0); places.append(10)
            >>> places.pick(b"aabb", 2, np.array([10, 0, 10])).tobytes()
            b'bbaabb'
        """
        submitted = np.asarray(self._list, np.int64)
        order = np.argsort(submitted, kind="stable")
        at = np.searchsorted(submitted[order], positions)
        inside = at < len(order)
        found = order[np.where(inside, at, 0)] if len(order) else np.zeros(len(positions), np.int64)
        wrong = ~inside | (submitted[found] != positions) if len(order) else ~inside
        if wrong.any():
            raise TacoIOError(
                f"no member was digested at {int(positions[np.argmax(wrong)])} of the output"
            )
        every = np.frombuffer(digests, np.uint8).reshape(-1, size)
        return every[found]


def _on_this_thread() -> MemberDigests | None:
    try:
        return LaneDigests()
    except TacoIOError as exc:
        log.debug("%s: the writer digests one member at a time", exc)
        return None


def start_member_digests(
    algorithm: str, output: int | None, flush: Callable[[], None]
) -> MemberDigests | None:
    """What digests the small members of a write off the writing thread, kept
    off this thread's CPU: a helper process reading ``output`` (a descriptor
    open for reading; None when the output cannot be read back), whose
    ``flush`` makes what was written readable
    (see :class:`~taco_gdal.write._digest_process.DigestProcess`), else a
    native thread reading it (:class:`~taco_gdal.write._output_digests.DigestScan`),
    else a :class:`DigestThread` the writer hands the members to.

    Where this thread may use one CPU only, or neither can start, a
    :class:`LaneDigests` on this thread; None when ``algorithm`` is not one of
    :data:`~taco_gdal.write._digest_process.PROCESS_DIGESTS` or the extension
    is not built either (the writer digests inline, one member at a time)."""
    if algorithm not in PROCESS_DIGESTS:
        return None
    others = other_cpus()
    if others is not None and not others:  # one CPU: a helper could only take turns
        return _on_this_thread()
    if output is not None:
        process = start_digest_process(algorithm, output, flush, others)
        if process is not None:
            return process
        try:
            return DigestScan(output, flush, others)
        except TacoIOError as exc:
            log.debug("%s: the members are handed to a digest thread", exc)
    try:
        return DigestThread(others)
    except TacoIOError as exc:
        log.debug("%s: the writer digests on its own thread", exc)
    return _on_this_thread()
