"""A streaming STORE ZIP writer that measures what it writes.

Each member is copied in one pass with its CRC-32 (and digest) computed on the
way and patched into the local header, so readers see real sizes and CRCs
without data descriptors; offsets are measured, never predicted, and ZIP64
appears only when needed.
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
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from taco_gdal.errors import TacoError, TacoFormatError, TacoIOError
from taco_gdal.format import header as hdr
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.checksum import bytes_only, check_algorithm, crc32, digest_value
from taco_gdal.format.names import HEADER_MEMBER
from taco_gdal.io.vsi import VSIFile
from taco_gdal.write._copy import (
    BLOCK_SIZE,
    COPY_BLOCK,
    Block,
    Checksums,
    Reader,
    Writer,
    copy_blocks,
    pread_full,
    vsi_reader,
)

__all__ = ["BLOCK_SIZE", "LOCAL_BLOCK", "MemberInfo", "ZipWriter"]

LOCAL_BLOCK = 256 * 1024
"""Local members up to this size are read whole and written with their CRC known."""
_LFH_CRC_OFFSET = 14
_CD_CRC_OFFSET = 16
CENTRAL_IN_MEMORY = 4 * 1024 * 1024
"""Central directory bytes kept in memory; past that it is spooled to a temporary file."""
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
    """Starts write-back of the archive so far, every :data:`WRITEBACK_EVERY` bytes.

    So the final fsync does not write the whole archive while nothing else runs.
    A helper thread issues the advisory requests on its own descriptor; systems
    without the call skip them.
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
    digest: str | None = None
    """``"<algorithm>:<hex>"`` when the member was added with ``digest=``."""


class ZipWriter:
    """Append STORE members to a seekable binary file and finish with a central directory.

    Args:
        fileobj: a seekable binary file positioned at byte 0 (normally empty).
        mtime: timestamp written into every member (defaults to now).
        on_bytes: called with the number of bytes copied, for progress bars.
        check_names: refuse a member name given twice (False when the caller
            already checked, so no set of every name is kept).

    The central directory is kept packed and spooled to a temporary file past
    :data:`CENTRAL_IN_MEMORY` bytes.

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
    ) -> None:
        self._f = fileobj
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
        self._writeback = _WriteBack(fileobj)
        self._closed = False
        self._end: int | None = None
        """End of the last member, measured with ``tell()`` when it was finished."""

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
        digest: str | None = None,
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
        name = zipfmt.decode_name(lfh.name, lfh.flags)
        return MemberInfo(name, lfh_offset, data_offset, size, crc, digest)

    def add_bytes(
        self, name: str, data: bytes | memoryview, digest: str | None = None
    ) -> MemberInfo:
        """Append a member whose bytes are in memory; ``digest`` as in :meth:`add_file`."""
        crc = crc32(data)
        value = None if check_algorithm(digest) is None else digest_value(digest or "", data)
        lfh, lfh_offset = self._begin(name, len(data), crc)
        self._f.write(data)
        if self._on_bytes:
            self._on_bytes(len(data))
        return self._finish(lfh, lfh_offset, len(data), crc, value)

    def _writer(self, position: int, sparse: bool) -> Writer:
        """Write one member's blocks from ``position``; ``sparse`` makes zero blocks holes."""
        write, seek = self._f.write, self._f.seek
        on_bytes, writeback = self._on_bytes, self._writeback
        end = position

        def written(view: Block) -> None:
            nonlocal end
            n = len(view)
            if sparse and _all_zero(view):
                seek(n, os.SEEK_CUR)
            else:
                write(view)
            end += n
            writeback.written(end)
            if on_bytes is not None:
                on_bytes(n)

        return written

    def add_file(
        self, name: str, source: str, size: int | None = None, digest: str | None = None
    ) -> MemberInfo:
        """Append a member copied from a local path or any GDAL VSI path, in one pass.

        Args:
            name: member name.
            source: a local path or a GDAL path (``/vsicurl/``, ``/vsisubfile/``...).
            size: the size the caller expects; a source of another size is refused.
            digest: also compute this per-sample digest (``"crc32c"``, ``"xxh3"``,
                ``"sha256"``), returned in :attr:`MemberInfo.digest`.

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
            real = os.fstat(fd).st_size
            if size is not None and size != real:
                raise TacoIOError(f"{source}: expected {size} bytes, the file has {real}")
            read = pread_full(fd, source, fresh=bytes_only(digest))
            if real <= LOCAL_BLOCK:
                return self.add_bytes(name, read(memoryview(self._local)[:real], 0), digest)
            holes = os.fstat(fd).st_blocks * 512 < real  # fewer blocks than bytes: keep holes
            return self._copy(name, read, real, digest, COPY_BLOCK, holes)
        except OSError as exc:
            if isinstance(exc, TacoError):
                raise
            raise TacoIOError(f"cannot copy {source!r} into member {name!r}: {exc}") from exc
        finally:
            os.close(fd)

    def _copy(
        self,
        name: str,
        read: Reader,
        size: int,
        digest: str | None,
        block: int,
        sparse: bool,
    ) -> MemberInfo:
        sums = Checksums(digest, zip_crc=True)
        lfh, lfh_offset = self._begin(name, size)
        write = self._writer(lfh_offset + lfh.packed_size, sparse)
        copy_blocks(read, size, write, sums, block)
        return self._finish(lfh, lfh_offset, size, sums.crc, sums.stored())

    def _add_vsi(self, name: str, source: str, size: int | None, digest: str | None) -> MemberInfo:
        with VSIFile(source) as src:
            real = src.size()
            if size is not None and size != real:
                raise TacoIOError(f"{source}: expected {size} bytes, found {real}")
            if real <= BLOCK_SIZE:
                return self.add_bytes(name, src.read_exact(0, real, "sample data"), digest)
            return self._copy(name, vsi_reader(src), real, digest, BLOCK_SIZE, sparse=True)

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
        self._closed = True
