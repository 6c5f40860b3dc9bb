"""A streaming STORE ZIP writer that measures what it writes.

Members are appended one after another; each member's bytes are copied in large
blocks with the CRC-32 computed on the way, then the CRC is patched into the
local header (no data descriptors, so every reader sees real sizes and CRCs in
the local header, as libzip writes them).  The offset of every member's data is
*measured* (``tell()`` after its local header), never predicted.  ZIP64 records
appear only when a size, an offset or the member count needs them.

Three copy paths, one memory bound (one 4 MiB buffer per writer):

* a member up to 4 MiB is read whole, its CRC computed, then header and data
  are written (no patch);
* a larger local file without holes moves inside the kernel
  (``copy_file_range``, as ``cp`` does) while a second thread reads the same
  file and computes its CRC;
* anything else (remote VSI paths, sparse files) is copied block by block;
  blocks of zeros become holes in the archive.

A TACO ZIP starts with the ``TACO_HEADER`` member: call :meth:`ZipWriter.add_taco_header`
first, and :meth:`ZipWriter.set_header_entries` once the metadata offsets are known.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import struct
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from taco_gdal.errors import TacoError, TacoFormatError, TacoIOError
from taco_gdal.format import header as hdr
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.names import HEADER_MEMBER
from taco_gdal.io.vsi import VSIFile

__all__ = ["BLOCK_SIZE", "MemberInfo", "ZipWriter"]

BLOCK_SIZE = 4 * 1024 * 1024
_LFH_CRC_OFFSET = 14
_HOLE_MIN = 64 * 1024


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


def _dense(fd: int, size: int) -> bool:
    """True when a file has (about) as many allocated blocks as bytes: no holes to keep."""
    return os.fstat(fd).st_blocks * 512 >= size


def _file_crc(fd: int, size: int, view: memoryview) -> int:
    """CRC-32 of the first ``size`` bytes of ``fd``, read with ``pread`` into ``view``."""
    crc, offset = 0, 0
    while offset < size:
        n = os.preadv(fd, [view[: min(len(view), size - offset)]], offset)
        if n == 0:
            raise TacoIOError(f"file ended {size - offset} bytes early while computing its CRC")
        crc = zlib.crc32(view[:n], crc)
        offset += n
    return crc


_COPY_CHUNK = 64 * 1024 * 1024
_NO_KERNEL_COPY = frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP})


def _copy_range(src: int, dst: int, size: int, start: int, on_bytes: Progress | None) -> int:
    """``copy_file_range`` of ``size`` bytes to offset ``start``; bytes copied before a refusal."""
    copied = 0
    while copied < size:
        try:
            n = os.copy_file_range(
                src, dst, min(_COPY_CHUNK, size - copied), copied, start + copied
            )
        except OSError as exc:
            if exc.errno in _NO_KERNEL_COPY:
                return copied
            raise
        if n == 0:
            raise TacoIOError(f"source ended {size - copied} bytes early while copying")
        copied += n
        if on_bytes:
            on_bytes(n)
    return copied


class ZipWriter:
    """Append STORE members to a seekable binary file and finish with a central directory.

    Args:
        fileobj: a seekable binary file positioned at byte 0 (normally empty).
        mtime: timestamp written into every member (defaults to now).
        on_bytes: called with the number of bytes copied, for progress bars.

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
        self, fileobj: BinaryIO, mtime: float | None = None, on_bytes: Progress | None = None
    ) -> None:
        self._f = fileobj
        self._dos = zipfmt.dos_datetime(mtime)
        self._on_bytes = on_bytes
        self._central: list[zipfmt.CentralDirectoryEntry] = []
        self._names: set[str] = set()
        self._members: list[MemberInfo] = []
        self._header_index: int | None = None
        self._buffer = bytearray(BLOCK_SIZE)
        self._closed = False

    @property
    def members(self) -> list[MemberInfo]:
        return list(self._members)

    @property
    def position(self) -> int:
        return self._f.tell()

    # -- members ---------------------------------------------------------------
    def _begin(self, name: str, size: int, crc: int = 0) -> tuple[zipfmt.LocalFileHeader, int]:
        if self._closed:
            raise TacoError("ZipWriter is closed")
        if name in self._names:
            raise TacoFormatError(f"duplicate ZIP member name {name!r}")
        self._names.add(name)
        lfh = zipfmt.LocalFileHeader.for_member(name, size, crc, *self._dos)
        lfh_offset = self._f.tell()
        self._f.write(lfh.pack())
        return lfh, lfh_offset

    def _finish(
        self, lfh: zipfmt.LocalFileHeader, lfh_offset: int, size: int, crc: int
    ) -> MemberInfo:
        data_offset = lfh_offset + lfh.packed_size
        end = self._f.tell()
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
        self._central.append(zipfmt.CentralDirectoryEntry.for_member(lfh, size, lfh_offset))
        info = MemberInfo(
            zipfmt.decode_name(lfh.name, lfh.flags), lfh_offset, data_offset, size, crc
        )
        self._members.append(info)
        return info

    def add_bytes(self, name: str, data: bytes | memoryview) -> MemberInfo:
        """Append a member whose bytes are in memory (metadata, small files)."""
        crc = zlib.crc32(data)
        lfh, lfh_offset = self._begin(name, len(data), crc)
        self._f.write(data)
        if self._on_bytes:
            self._on_bytes(len(data))
        return self._finish(lfh, lfh_offset, len(data), crc)

    def add_chunks(self, name: str, size: int, chunks: Iterable[bytes | memoryview]) -> MemberInfo:
        """Append a member of known ``size`` from an iterable of byte blocks.

        The CRC-32 is computed while copying and patched into the local header
        afterwards.  Blocks of zeros are skipped with a seek, so a sparse source
        gives a sparse archive (the file is extended by whatever follows).
        """
        lfh, lfh_offset = self._begin(name, size)
        crc = 0
        write, seek = self._f.write, self._f.seek
        for chunk in chunks:
            n = len(chunk)
            crc = zlib.crc32(chunk, crc)
            if _all_zero(chunk):
                seek(n, os.SEEK_CUR)
            else:
                write(chunk)
            if self._on_bytes:
                self._on_bytes(n)
        return self._finish(lfh, lfh_offset, size, crc)

    def add_file(self, name: str, source: str, size: int | None = None) -> MemberInfo:
        """Append a member copied from a local path or any GDAL VSI path, block by block.

        Example:
            >>> w.add_file("DATA/a.tif", "/data/a.tif")  # doctest: +SKIP
        """
        if source.startswith("/vsi"):
            return self._add_vsi(name, source, size)
        try:
            with open(source, "rb", buffering=0) as src:
                real = os.fstat(src.fileno()).st_size
                if size is not None and size != real:
                    raise TacoIOError(f"{source}: expected {size} bytes, the file has {real}")
                if real <= BLOCK_SIZE:
                    return self._add_small(name, src.readinto, real, source)
                if _dense(src.fileno(), real):
                    return self._add_kernel_copy(name, src.fileno(), real, source)
                return self.add_chunks(name, real, self._blocks(src.readinto, real, source))
        except OSError as exc:
            if isinstance(exc, TacoError):
                raise
            raise TacoIOError(f"cannot copy {source!r} into member {name!r}: {exc}") from exc

    def _add_kernel_copy(self, name: str, src: int, size: int, source: str) -> MemberInfo:
        """Copy a local file with ``copy_file_range`` while another thread computes its CRC.

        The bytes move inside the kernel (as ``cp`` does); the CRC-32 is computed
        from the same file, block by block, concurrently.  If the kernel cannot
        copy between these files, the block copy takes over.
        """
        lfh, lfh_offset = self._begin(name, size)
        self._f.flush()
        start = lfh_offset + lfh.packed_size
        with ThreadPoolExecutor(1, thread_name_prefix="taco-crc") as pool:
            crc_job = pool.submit(_file_crc, src, size, memoryview(self._buffer))
            copied = _copy_range(src, self._f.fileno(), size, start, self._on_bytes)
            crc = crc_job.result()
        self._f.seek(start + copied)
        if copied < size:  # the kernel refused: move the rest through user space
            view = memoryview(self._buffer)
            for offset in range(copied, size, BLOCK_SIZE):
                n = os.preadv(src, [view[: min(BLOCK_SIZE, size - offset)]], offset)
                if n == 0:
                    raise TacoIOError(f"{source}: file ended {size - offset} bytes early")
                self._f.write(view[:n])
        return self._finish(lfh, lfh_offset, size, crc)

    def _add_small(
        self, name: str, readinto: Callable[[memoryview], int | None], size: int, source: str
    ) -> MemberInfo:
        """A member that fits one block: read it, then write header and data (no patch)."""
        view = memoryview(self._buffer)[:size]
        got = 0
        while got < size:
            n = readinto(view[got:]) or 0
            if n == 0:
                raise TacoIOError(f"{source}: file ended {size - got} bytes early while copying")
            got += n
        return self.add_bytes(name, view)

    def _blocks(
        self, readinto: Callable[[memoryview], int | None], size: int, source: str
    ) -> Iterable[memoryview]:
        view = memoryview(self._buffer)
        remaining = size
        while remaining:
            n = readinto(view[: min(remaining, BLOCK_SIZE)]) or 0
            if n == 0:
                raise TacoIOError(f"{source}: file ended {remaining} bytes early while copying")
            remaining -= n
            yield view[:n]

    def _add_vsi(self, name: str, source: str, size: int | None) -> MemberInfo:
        with VSIFile(source) as src:
            real = src.size()
            if size is not None and size != real:
                raise TacoIOError(f"{source}: expected {size} bytes, found {real}")
            if real <= BLOCK_SIZE:
                return self.add_bytes(name, src.read_exact(0, real, "sample data"))

            def chunks() -> Iterable[bytes]:
                offset = 0
                while offset < real:
                    block = src.read_exact(offset, min(BLOCK_SIZE, real - offset), "sample data")
                    offset += len(block)
                    yield block

            return self.add_chunks(name, real, chunks())

    # -- TACO header -------------------------------------------------------------
    def add_taco_header(self) -> MemberInfo:
        """Write the ``TACO_HEADER`` member (empty entries) as the very first member."""
        if self._members or self._f.tell() != 0:
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
        crc = zlib.crc32(payload)
        end = self._f.tell()
        self._f.seek(hdr.CRC_OFFSET)
        self._f.write(struct.pack("<I", crc))
        self._f.seek(hdr.PAYLOAD_OFFSET)
        self._f.write(payload)
        self._f.seek(end)
        old = self._central[self._header_index]
        self._central[self._header_index] = zipfmt.CentralDirectoryEntry(
            name=old.name,
            crc32=crc,
            size=old.size,
            lfh_offset=old.lfh_offset,
            dos_time=old.dos_time,
            dos_date=old.dos_date,
            version_needed=old.version_needed,
        )

    # -- finish ------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory and the end records."""
        if self._closed:
            return
        cd_offset = self._f.tell()
        cd = b"".join(entry.pack() for entry in self._central)
        self._f.write(cd)
        self._f.write(zipfmt.pack_end_records(len(self._central), len(cd), cd_offset))
        self._f.flush()
        self._closed = True
