"""A streaming STORE ZIP writer that measures what it writes.

Members are appended one after another; each member's bytes are copied in large
blocks with the CRC-32 computed on the way, then the CRC is patched into the
local header (no data descriptors, so every reader sees real sizes and CRCs in
the local header, as libzip writes them).  The offset of every member's data is
*measured* (``tell()`` after its local header), never predicted.  ZIP64 records
appear only when a size, an offset or the member count needs them.

Three copy paths, one memory bound (two 256 KiB buffers, plus two 8 MiB
buffers once a remote source is copied):

* a local member up to 256 KiB is read whole, its CRC computed, then header
  and data are written (no patch);
* a larger local file is copied in one pass by :func:`~taco_gdal.write._copy.copy_fd`:
  256 KiB blocks, each read with ``pread``, CRC-32'd (``format.checksum.crc32``)
  and written with ``pwrite`` while it is in the CPU cache; the per-sample
  digest, if asked, is computed on the same buffers (a CRC-32C in the same
  pass as the CRC-32).  The source is read once, the checksums
  cover exactly the bytes written;
* a sparse local file, or a remote (VSI) source, is copied block by block
  (8 MiB remote blocks, a helper thread fetching block ``i + 1`` while block
  ``i`` is checksummed and written); blocks of zeros become holes.

The disk is put to work while the copy runs: every 16 MiB written, a helper
thread hands the range to write-back (``sync_file_range(SYNC_FILE_RANGE_WRITE)``
starts the writes without waiting for them), so the final ``fsync`` of the
atomic output finds little left to write instead of the whole archive
(20 x 100 MiB, 2 interleaved rounds: 1.79 s median vs 2.20 s without).

Every copy path can also compute a per-sample digest (``digest="xxh3"``...,
see :mod:`taco_gdal.format.checksum`) from the same buffers as the CRC-32.
With ``late_digests=True`` (the TACO ZIP writer) a SHA-256, slower than the
copy, is finished by the digest thread from the output's pages, following
the copy of a large member at most 16 MiB behind, while the next members are copied
(:class:`~taco_gdal.write._late.LateDigests`); a file announced with
:meth:`ZipWriter.expect` is digested from the source ahead of its copy instead.

A TACO ZIP starts with the ``TACO_HEADER`` member: call :meth:`ZipWriter.add_taco_header`
first, and :meth:`ZipWriter.set_header_entries` once the metadata offsets are known.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import io
import os
import queue
import shutil
import struct
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO, Final

import numpy as np

from taco_gdal.errors import TacoError, TacoFormatError, TacoIOError
from taco_gdal.format import header as hdr
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.checksum import StreamingDigest, check_algorithm, crc32, value_call
from taco_gdal.format.names import HEADER_MEMBER
from taco_gdal.io.vsi import VSIFile
from taco_gdal.write._copy import _THREADED_DIGESTS, copy_fd
from taco_gdal.write._cpus import other_cpus
from taco_gdal.write._late import Announced, LateDigest, LateDigests

_AHEAD_DIGESTS: Final = frozenset({"sha256", "crc32c", "xxh3"})
"""Digests of announced files (:meth:`ZipWriter.expect`) computed from the source by
the digest thread, ahead of the copy; only SHA-256 goes there otherwise
(``_THREADED_DIGESTS``).  Inline, CRC-32C and XXH3 cost the copying thread their
own CPU: +5.0% [+2.8, +6.5] and +4.9% [+2.4, +5.5] on 20 x 100 MiB (tmpfs, 20
blocks, ``bench/results/digest_s20_tmpfs_20x100_fast_inline.json``).  Ahead, on the
other CPU, -0.1% [-9.2, +4.5] and +1.2% [-0.1, +6.1] against +4.3% and +6.3% inline
in the same 16 blocks (paired -3.1% and -2.1%; fastest writes +1.7% and +2.5%
against +3.4% and +5.4%), for about 30% more CPU: the thread's page faults and the
CRC-32 of the bytes it digests (``digest_s20_tmpfs_20x100_fast_ahead.json``).
Checked again with the 512-bit ``both`` (twenty-third session, 30 blocks, A/A +0.2%):
CRC-32C ahead +2.5% [+1.3, +3.5], inline +3.5% [+2.6, +5.0]
(``digest_s23_tmpfs_20x100_crc_wide.json``); with the 256-bit one, on a noisier host,
+5.9% against +7.0% (``digest_s23_tmpfs_20x100_crc_inline.json``)."""

__all__ = ["BLOCK_SIZE", "LOCAL_BLOCK", "MemberInfo", "ZipWriter", "readable_fd"]

BLOCK_SIZE = 8 * 1024 * 1024
"""Block of a remote (VSI) copy; a remote sample up to this size is fetched in one read."""
LOCAL_BLOCK = 256 * 1024
"""Block of a local copy: small enough to stay in the CPU cache from read to write."""
_LFH_CRC_OFFSET = 14
_CD_CRC_OFFSET = 16
CENTRAL_IN_MEMORY = 4 * 1024 * 1024
"""Central directory bytes kept in memory; past that it is spooled to a temporary file
(a million members make about 60 MB of directory, written only when the archive closes)."""
_HOLE_MIN = 64 * 1024
WRITEBACK_EVERY = 16 * 1024 * 1024
"""Bytes written between two write-back requests."""
_SYNC_FILE_RANGE_WRITE = 2


@functools.cache
def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):  # not Linux/glibc: the final fsync writes everything
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


class _WriteBack:
    """Starts write-back of what the archive has so far, every :data:`WRITEBACK_EVERY` bytes.

    The output is fsynced once complete (atomic link); without this, the whole
    archive would still be in the page cache then, and the fsync would write
    all of it while nothing else runs.  The requests are made by a helper
    thread on its own duplicate of the descriptor (ctypes releases the GIL, and
    the file system's work of submitting the writes runs beside the copy, not
    in it).  They are advisory: a file without a descriptor, or a system
    without the call, skips them, and the final fsync writes everything.
    """

    def __init__(self, fileobj: BinaryIO) -> None:
        self._started = 0
        self._todo: queue.SimpleQueue[tuple[int, int] | None] | None = None
        call = _sync_file_range()
        if call is None:
            return
        try:
            fd = os.dup(fileobj.fileno())
        except (AttributeError, OSError, io.UnsupportedOperation):  # BytesIO, a wrapper
            return
        todo: queue.SimpleQueue[tuple[int, int] | None] = queue.SimpleQueue()
        self._todo = todo
        thread = threading.Thread(
            target=_request_writeback, args=(call, fd, todo), name="taco-writeback", daemon=True
        )
        thread.start()
        self._thread = thread
        weakref.finalize(self, todo.put, None)  # an abandoned writer still ends the thread

    def written(self, end: int) -> None:
        """Bytes up to ``end`` are written: hand them to write-back if enough piled up."""
        if self._todo is not None and end - self._started >= WRITEBACK_EVERY:
            self._todo.put((self._started, end - self._started))
            self._started = end

    def close(self) -> None:
        """Let the helper thread finish its requests and close its descriptor."""
        if self._todo is not None:
            self._todo.put(None)
            self._thread.join()
            self._todo = None


def _request_writeback(
    call: Callable[[int, int, int, int], int],
    fd: int,
    todo: queue.SimpleQueue[tuple[int, int] | None],
) -> None:
    try:
        while (item := todo.get()) is not None:
            if call(fd, item[0], item[1], _SYNC_FILE_RANGE_WRITE):
                break  # refused (not a regular file, unsupported): the fsync writes it all
    finally:
        os.close(fd)


def _all_zero(chunk: bytes | memoryview) -> bool:
    """True for a block of at least 64 KiB of zeros (written as a hole)."""
    n = len(chunk)
    if n < _HOLE_MIN or n % 8:
        return False
    words = np.frombuffer(chunk, dtype=np.uint64)
    if words[0] or words[-1] or words[len(words) // 2]:
        return False  # real data: decided without scanning the block
    return not np.count_nonzero(words)


Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """Where a member ended up: its local header and its data, measured."""

    name: str
    lfh_offset: int
    data_offset: int
    size: int
    crc32: int
    digest: str | LateDigest | None = None
    """``"<algorithm>:<hex>"`` when the member was added with ``digest=``; a
    :class:`~taco_gdal.write._late.LateDigest` still being computed when the
    writer was made with ``late_digests=True``."""


def readable_fd(fileobj: BinaryIO) -> int | None:
    """The descriptor of ``fileobj`` when it is open for reading too, else None."""
    try:
        import fcntl

        fd = fileobj.fileno()
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
    except (ImportError, AttributeError, OSError, io.UnsupportedOperation):  # BytesIO, not POSIX
        return None
    return fd if mode == os.O_RDWR else None


def _dense(fd: int, size: int) -> bool:
    """True when a file has (about) as many allocated blocks as bytes: no holes to keep."""
    return os.fstat(fd).st_blocks * 512 >= size


Reader = Callable[[memoryview, int], int]
"""``read(view, offset)``: fill ``view`` from ``offset``, return the bytes read (0 at the end)."""


def _read_full(read: Reader, view: memoryview, offset: int, source: str) -> memoryview:
    """Exactly ``len(view)`` bytes from ``offset``; TacoIOError when the source ends early."""
    got = 0
    while got < len(view):
        n = read(view[got:], offset + got)
        if n == 0:
            raise TacoIOError(
                f"{source}: expected {len(view) - got} more bytes at offset {offset + got}, "
                f"the source ended (changed while copying?)"
            )
        got += n
    return view


def _pread(fd: int) -> Reader:
    return lambda view, offset: os.preadv(fd, [view], offset)


def _read_ahead(
    read: Reader, size: int, buffers: tuple[memoryview, memoryview], source: str
) -> Iterator[memoryview]:
    """Blocks of a source, the next one read by a helper thread while the caller uses this one.

    Two buffers alternate: the caller must be done with a block before asking
    for the next one (the block after next reuses its buffer).
    """
    block = len(buffers[0])

    def fetch(index: int, offset: int) -> memoryview:
        view = buffers[index][: min(block, size - offset)]
        return _read_full(read, view, offset, source)

    with ThreadPoolExecutor(1, thread_name_prefix="taco-read") as pool:
        pending: Future[memoryview] | None = pool.submit(fetch, 0, 0) if size else None
        offset, index = 0, 0
        while pending is not None:
            view = pending.result()
            offset += len(view)
            index ^= 1
            pending = pool.submit(fetch, index, offset) if offset < size else None
            yield view


def _hasher(digest: str | None) -> StreamingDigest | None:
    return None if check_algorithm(digest) is None else StreamingDigest(digest or "")


class ZipWriter:
    """Append STORE members to a seekable binary file and finish with a central directory.

    Args:
        fileobj: a seekable binary file positioned at byte 0 (normally empty).
        mtime: timestamp written into every member (defaults to now).
        on_bytes: called with the number of bytes copied, for progress bars.
        check_names: refuse a member name given twice.  A caller that already
            knows its names are unique (the TACO ZIP writer checks them with
            Arrow) passes False, so no set of every name is kept.
        late_digests: a SHA-256 (slower than the copy) is finished by the
            digest thread while the next members are copied, and
            :attr:`MemberInfo.digest` is a
            :class:`~taco_gdal.write._late.LateDigest` (its ``value()`` waits
            for it): a member copied from a file goes through a buffer handed
            to the thread (up to 4 MiB) or is read back from the output's page
            cache, a member from memory is digested from its bytes.  Members
            up to 256 KiB are digested inline all the same: the thread's
            hashlib call releases the GIL for each, and among the writer's 8
            read-ahead threads getting it back cost more than the digest
            (10k x 16 KiB: +0.24 s of CPU late vs +0.09 s inline).  Without
            it, every digest is computed before the member's method returns.

    The central directory is kept packed (about 50 bytes plus the name per
    member), not as one object per member, and past :data:`CENTRAL_IN_MEMORY`
    bytes it is spooled to an unnamed temporary file until :meth:`close`.

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> w = ZipWriter(buf)
        >>> info = w.add_bytes("hello.txt", b"hi")
        >>> w.close()
        >>> info.data_offset
        39
    """

    def __init__(
        self,
        fileobj: BinaryIO,
        mtime: float | None = None,
        on_bytes: Progress | None = None,
        check_names: bool = True,
        late_digests: bool = False,
    ) -> None:
        self._f = fileobj
        self._late_digests = late_digests
        self._late: dict[str, LateDigests] = {}
        self._spare_cpu: bool | None = None
        """Whether another CPU may digest announced files (:meth:`_late_for`); None: unasked."""
        self._dos = zipfmt.dos_datetime(mtime)
        self._on_bytes = on_bytes
        # closed by close(), or when an abandoned writer is collected
        self._central = tempfile.SpooledTemporaryFile(max_size=CENTRAL_IN_MEMORY)  # noqa: SIM115
        weakref.finalize(self, self._central.close)
        """Packed central directory entries, in member order (spilled to disk when large)."""
        self._count = 0
        self._names: set[str] | None = set() if check_names else None
        self._header_index: int | None = None
        self._local = bytearray(LOCAL_BLOCK)
        self._remote: tuple[bytearray, bytearray] | None = None
        self._writeback = _WriteBack(fileobj)
        self._closed = False
        self._end: int | None = None
        """End of the last member, measured with ``tell()`` when it was finished."""

    @property
    def position(self) -> int:
        return self._f.tell()

    # -- members ---------------------------------------------------------------
    def _begin(self, name: str, size: int, crc: int = 0) -> tuple[zipfmt.LocalFileHeader, int]:
        if self._closed:
            raise TacoError("ZipWriter is closed")
        if self._names is not None:
            if name in self._names:
                raise TacoFormatError(f"duplicate ZIP member name {name!r}")
            self._names.add(name)
        lfh = zipfmt.LocalFileHeader.for_member(name, size, crc, *self._dos)
        # where the previous member ended, as measured by its _finish (one tell per member)
        lfh_offset = self._f.tell() if self._end is None else self._end
        self._f.write(lfh.pack())
        return lfh, lfh_offset

    def _finish(
        self,
        lfh: zipfmt.LocalFileHeader,
        lfh_offset: int,
        size: int,
        crc: int,
        digest: StreamingDigest | LateDigest | str | None = None,
    ) -> MemberInfo:
        data_offset = lfh_offset + lfh.packed_size
        end = self._end = self._f.tell()
        self._writeback.written(end)
        if end - data_offset != size:
            raise TacoIOError(
                f"member {lfh.name.decode('utf-8', 'replace')!r}: expected {size} bytes, "
                f"copied {end - data_offset} (source changed while writing?)"
            )
        if crc != lfh.crc32:
            self._f.seek(lfh_offset + _LFH_CRC_OFFSET)
            self._f.write(struct.pack("<I", crc))
            self._f.seek(end)
            lfh = dataclasses.replace(lfh, crc32=crc)
        self._central.write(zipfmt.CentralDirectoryEntry.for_member(lfh, size, lfh_offset).pack())
        self._count += 1
        return MemberInfo(
            zipfmt.decode_name(lfh.name, lfh.flags),
            lfh_offset,
            data_offset,
            size,
            crc,
            digest.value() if isinstance(digest, StreamingDigest) else digest,
        )

    def add_bytes(
        self,
        name: str,
        data: bytes | memoryview,
        digest: str | None = None,
        *,
        digested: str | None = None,
    ) -> MemberInfo:
        """Append a member whose bytes are in memory (metadata, small files).

        Args:
            name: member name.
            data: its bytes.
            digest: also compute this per-sample digest (``"crc32c"``, ``"xxh3"``,
                ``"sha256"``); it is returned in :attr:`MemberInfo.digest`.
            digested: that digest of ``data``, already computed by the caller
                (``value_call(digest)(data)``, several files at a time); stored as given.
        """
        crc = crc32(data)
        late = self._late_for(digest) if len(data) > LOCAL_BLOCK else None
        value: LateDigest | str | None
        if digested is not None:
            value = digested
        elif late is not None and not late.busy:  # a view of a reused buffer is copied first
            value = late.of_bytes(data if isinstance(data, bytes) else bytes(data))
        else:
            value = None if digest is None else value_call(digest)(data)
        lfh, lfh_offset = self._begin(name, len(data), crc)
        self._f.write(data)
        if self._on_bytes:
            self._on_bytes(len(data))
        return self._finish(lfh, lfh_offset, len(data), crc, value)

    def add_chunks(
        self,
        name: str,
        size: int,
        chunks: Iterable[bytes | memoryview],
        digest: str | None = None,
    ) -> MemberInfo:
        """Append a member of known ``size`` from an iterable of byte blocks.

        The CRC-32 (and the ``digest``, if asked) is computed on each block before
        it is written, and patched into the local header afterwards.  Blocks of
        zeros are skipped with a seek, so a sparse source gives a sparse archive
        (the file is extended by whatever follows).
        """
        hasher = _hasher(digest)
        lfh, lfh_offset = self._begin(name, size)
        crc = 0
        position = lfh_offset + lfh.packed_size
        write, seek = self._f.write, self._f.seek
        for chunk in chunks:
            n = len(chunk)
            crc = crc32(chunk, crc)
            if hasher is not None:
                hasher.update(chunk)
            if _all_zero(chunk):
                seek(n, os.SEEK_CUR)
            else:
                write(chunk)
            position += n
            self._writeback.written(position)
            if self._on_bytes:
                self._on_bytes(n)
        return self._finish(lfh, lfh_offset, size, crc, hasher)

    def add_file(
        self, name: str, source: str, size: int | None = None, digest: str | None = None
    ) -> MemberInfo:
        """Append a member copied from a local path or any GDAL VSI path, in one pass.

        Args:
            name: member name.
            source: a local path or a GDAL path (``/vsicurl/``, ``/vsis3/``,
                ``/vsisubfile/``...).
            size: the size the caller expects; a source of another size is refused.
            digest: also compute this per-sample digest from the copied bytes.

        Example:
            >>> import io
            >>> w = ZipWriter(io.BytesIO())
            >>> w.add_file("DATA/a.tif", "src/s000.tif", digest="xxh3")
            MemberInfo(name='DATA/a.tif', ..., data_offset=40, size=622, ..., digest='xxh3:...')
            >>> w.close()
        """
        if source.startswith("/vsi"):
            return self._add_vsi(name, source, size, digest)
        try:
            fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise TacoIOError(f"cannot copy {source!r} into member {name!r}: {exc}") from exc
        try:
            stat = os.fstat(fd)
            real = stat.st_size
            if size is not None and size != real:
                raise TacoIOError(f"{source}: expected {size} bytes, the file has {real}")
            read = _pread(fd)
            if real <= LOCAL_BLOCK:
                view = _read_full(read, memoryview(self._local)[:real], 0, source)
                return self.add_bytes(name, view, digest)
            late = self._late_for(digest, ahead=True)
            ahead = None if late is None else late.claim(source, stat)
            if _dense(fd, real):
                return self._add_local(name, fd, real, source, digest, ahead)
            return self.add_chunks(name, real, self._local_blocks(read, real, source), digest)
        except OSError as exc:
            if isinstance(exc, TacoError):
                raise
            raise TacoIOError(f"cannot copy {source!r} into member {name!r}: {exc}") from exc
        finally:
            os.close(fd)

    def _local_blocks(self, read: Reader, size: int, source: str) -> Iterator[memoryview]:
        view = memoryview(self._local)
        for offset in range(0, size, LOCAL_BLOCK):
            yield _read_full(read, view[: min(LOCAL_BLOCK, size - offset)], offset, source)

    def _read_ahead(self, read: Reader, size: int, source: str) -> Iterator[memoryview]:
        if self._remote is None:
            self._remote = (bytearray(BLOCK_SIZE), bytearray(BLOCK_SIZE))
        views = (memoryview(self._remote[0]), memoryview(self._remote[1]))
        return _read_ahead(read, size, views, source)

    def _add_local(
        self,
        name: str,
        src: int,
        size: int,
        source: str,
        digest: str | None,
        ahead: Announced | None = None,
    ) -> MemberInfo:
        """One pass over a dense local file (:func:`~taco_gdal.write._copy.copy_fd`);
        ``ahead``: its digest, from the source, on the digest thread (:meth:`expect`)."""
        hasher = _hasher(digest)
        lfh, lfh_offset = self._begin(name, size)
        self._f.flush()
        position = lfh_offset + lfh.packed_size
        on_bytes, writeback = self._on_bytes, self._writeback

        def written(at: int, n: int) -> None:
            writeback.written(at + n)
            if on_bytes is not None:
                on_bytes(n)

        if ahead is not None:
            crc = copy_fd(src, 0, size, self._f.fileno(), position, None, written, source)
            self._f.seek(position + size)
            return self._finish(
                lfh, lfh_offset, size, crc, ahead.owner.of_ahead(ahead, crc, position)
            )
        late = self._late_for(digest)
        if late is not None and not late.busy:  # the digest thread digests it later
            buffer = late.buffer(size)
            if buffer is not None:  # up to 4 MiB: the copy's own buffer is handed over
                with memoryview(buffer) as into:
                    crc = copy_fd(
                        src, 0, size, self._f.fileno(), position, None, written, source, into=into
                    )
                self._f.seek(position + size)
                return self._finish(lfh, lfh_offset, size, crc, late.of_buffer(buffer, size))
            if late.readable:  # larger: read back from the output as it is written
                value, growing = late.of_growing(position, size)

                def followed(at: int, n: int) -> None:
                    written(at, n)
                    growing.advance(at + n)

                try:
                    crc = copy_fd(src, 0, size, self._f.fileno(), position, None, followed, source)
                except BaseException:
                    growing.abandon()
                    raise
                self._f.seek(position + size)
                return self._finish(lfh, lfh_offset, size, crc, value)
        threaded = late is None  # a busy digest thread: the ring would wait behind its backlog
        crc = copy_fd(src, 0, size, self._f.fileno(), position, hasher, written, source, threaded)
        self._f.seek(position + size)
        return self._finish(lfh, lfh_offset, size, crc, hasher)

    def expect(self, source: str, stat: os.stat_result, digest: str | None) -> None:
        """Announce a local file that :meth:`add_file` will copy later with ``digest``.

        With ``late_digests=True``, the digest of a dense file above 4 MiB is
        then computed from the source by the digest thread, ahead of the copy
        (a SHA-256 in lanes with the other announced files; a CRC-32C or XXH3
        only when another CPU may run the thread)
        (:meth:`~taco_gdal.write._late.LateDigests.expect`); it counts only if
        the CRC-32 of the bytes digested is the copy's.  Otherwise nothing happens.
        """
        late = self._late_for(digest, ahead=True)
        if late is not None and late.readable:
            late.expect(source, stat)

    def _late_for(self, digest: str | None, ahead: bool = False) -> LateDigests | None:
        """The late digests of ``digest`` when this writer defers it, else None (inline);
        ``ahead``: for a file announced (:meth:`expect`), where every digest of
        :data:`_AHEAD_DIGESTS` is deferred when another CPU may run the digest
        thread (on one, CRC-32C or XXH3 from the source would only add the
        thread's page faults and CRC-32 to the copy's time)."""
        if not self._late_digests or digest is None or digest not in _AHEAD_DIGESTS:
            return None
        if digest not in _THREADED_DIGESTS:  # worth it only on another CPU
            if not ahead:
                return None
            if self._spare_cpu is None:
                self._spare_cpu = bool(other_cpus())
            if not self._spare_cpu:
                return None
        late = self._late.get(digest)
        if late is None:
            late = self._late[digest] = LateDigests(digest, readable_fd(self._f))
        return late

    def _add_vsi(self, name: str, source: str, size: int | None, digest: str | None) -> MemberInfo:
        with VSIFile(source) as src:
            real = src.size()
            if size is not None and size != real:
                raise TacoIOError(f"{source}: expected {size} bytes, found {real}")
            if real <= BLOCK_SIZE:
                return self.add_bytes(name, src.read_exact(0, real, "sample data"), digest)

            def read(view: memoryview, offset: int) -> int:
                block = src.read_exact(offset, len(view), "sample data")
                view[: len(block)] = block
                return len(block)

            return self.add_chunks(name, real, self._read_ahead(read, real, source), digest)

    # -- TACO header -------------------------------------------------------------
    def add_taco_header(self) -> MemberInfo:
        """Write the ``TACO_HEADER`` member (empty entries) as the very first member."""
        if self._count or self._f.tell() != 0:
            raise TacoFormatError("TACO_HEADER must be the first member, at byte 0")
        self._header_index = 0
        info = self.add_bytes(HEADER_MEMBER, hdr.serialize_payload([]))
        assert info.data_offset == hdr.PAYLOAD_OFFSET
        return info

    def set_header_entries(self, entries: list[hdr.HeaderEntry]) -> None:
        """Fill the TACO_HEADER payload (and both its CRCs) before the directory is written."""
        if self._header_index is None:
            raise TacoFormatError("no TACO_HEADER member was written")
        payload = hdr.serialize_payload(entries)
        crc = crc32(payload)
        end = self._f.tell()
        self._f.seek(hdr.CRC_OFFSET)
        self._f.write(struct.pack("<I", crc))
        self._f.seek(hdr.PAYLOAD_OFFSET)
        self._f.write(payload)
        self._f.seek(end)
        # the header's entry is the first of the packed directory: patch its CRC-32
        central_end = self._central.tell()
        self._central.seek(_CD_CRC_OFFSET)
        self._central.write(struct.pack("<I", crc))
        self._central.seek(central_end)

    # -- finish ------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory and the end records."""
        if self._closed:
            return
        cd_offset = self._f.tell()
        cd_size = self._central.tell()
        self._central.seek(0)
        shutil.copyfileobj(self._central, self._f, LOCAL_BLOCK)
        self._central.close()
        self._f.write(zipfmt.pack_end_records(self._count, cd_size, cd_offset))
        self._f.flush()
        self._writeback.close()
        for late in self._late.values():
            late.close()
        self._closed = True
