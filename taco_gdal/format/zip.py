"""ZIP records for STORE archives, with ZIP64 only where a value needs it.

Local file headers, central directory entries, EOCD and the ZIP64 EOCD record and
locator: each packs to and unpacks from bytes, with no I/O. ZIP64 fields appear
only for values that overflow 32 bits, as libzip writes them.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from taco_gdal.errors import TacoFormatError

__all__ = [
    "CD_SIGNATURE",
    "EOCD_SIGNATURE",
    "LFH_SIGNATURE",
    "ZIP64_EOCD_SIGNATURE",
    "ZIP64_LIMIT",
    "ZIP64_LOCATOR_SIGNATURE",
    "CentralDirectory",
    "CentralDirectoryEntry",
    "EndOfCentralDirectory",
    "LocalFileHeader",
    "Zip64EndOfCentralDirectory",
    "Zip64Locator",
    "dos_datetime",
    "read_central_directory",
]

LFH_SIGNATURE: Final = 0x04034B50
CD_SIGNATURE: Final = 0x02014B50
EOCD_SIGNATURE: Final = 0x06054B50
ZIP64_EOCD_SIGNATURE: Final = 0x06064B50
ZIP64_LOCATOR_SIGNATURE: Final = 0x07064B50
ZIP64_LIMIT: Final = 0xFFFFFFFF
"""A 32-bit field holding this value means 'see the ZIP64 extra field'."""
ZIP64_COUNT_LIMIT: Final = 0xFFFF
ZIP64_EXTRA_ID: Final = 0x0001
UTF8_FLAG: Final = 0x0800
VERSION_DEFAULT: Final = 20
VERSION_ZIP64: Final = 45
VERSION_MADE_BY: Final = (3 << 8) | 45  # UNIX, spec 4.5
EXTERNAL_ATTR_FILE: Final = 0o100644 << 16

_LFH = struct.Struct("<IHHHHHIIIHH")  # 30 bytes
_CD = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
_EOCD = struct.Struct("<IHHHHIIH")  # 22 bytes
_Z64_EOCD = struct.Struct("<IQHHIIQQQQ")  # 56 bytes
_Z64_LOC = struct.Struct("<IIQI")  # 20 bytes
LFH_SIZE: Final = _LFH.size
CD_ENTRY_SIZE: Final = _CD.size
EOCD_SIZE: Final = _EOCD.size
ZIP64_EOCD_SIZE: Final = _Z64_EOCD.size
ZIP64_LOCATOR_SIZE: Final = _Z64_LOC.size
CD_CRC_OFFSET: Final = 16
"""Offset of the CRC-32 field inside a central directory entry."""


def dos_datetime(timestamp: float | None = None) -> tuple[int, int]:
    """``(dos_time, dos_date)`` of a POSIX timestamp in local time (ZIP convention)."""
    t = time.localtime(time.time() if timestamp is None else timestamp)
    year = min(max(t.tm_year, 1980), 2107)
    dos_time = (t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2)
    dos_date = ((year - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday
    return dos_time, dos_date


def _record(layout: struct.Struct, signature: int, buffer: bytes, what: str, where: str) -> Any:
    """The fields of a fixed-size record at the start of ``buffer``, its length and signature
    checked."""
    if len(buffer) < layout.size:
        raise TacoFormatError(f"{where}: {what} needs {layout.size} bytes, found {len(buffer)}")
    fields = layout.unpack_from(buffer)
    if fields[0] != signature:
        raise TacoFormatError(
            f"{where}: expected {what} signature 0x{signature:08x}, found 0x{fields[0]:08x}"
        )
    return fields


def _zip64_extra(values: list[int]) -> bytes:
    if not values:
        return b""
    return struct.pack(f"<HH{len(values)}Q", ZIP64_EXTRA_ID, 8 * len(values), *values)


def _iter_extra(extra: bytes) -> dict[int, bytes]:
    fields: dict[int, bytes] = {}
    pos = 0
    while pos + 4 <= len(extra):
        header_id, size = struct.unpack_from("<HH", extra, pos)
        fields[header_id] = extra[pos + 4 : pos + 4 + size]
        pos += 4 + size
    return fields


def decode_name(name: bytes, flags: int) -> str:
    """Member name as text: UTF-8 when flagged (or valid), else code page 437."""
    if flags & UTF8_FLAG:
        try:
            return name.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TacoFormatError(
                f"member name {name[:200]!r} is flagged UTF-8 but is not valid UTF-8: {exc}"
            ) from exc
    try:
        return name.decode("ascii")
    except UnicodeDecodeError:
        return name.decode("cp437")


@dataclass(frozen=True, slots=True)
class LocalFileHeader:
    """A local file header.  ``pack()`` gives ``30 + len(name) + len(extra)`` bytes."""

    name: bytes
    crc32: int
    compressed_size: int
    uncompressed_size: int
    version_needed: int = VERSION_DEFAULT
    flags: int = 0
    method: int = 0
    dos_time: int = 0
    dos_date: int = 0
    extra: bytes = b""

    @classmethod
    def for_member(
        cls, name: str, size: int, crc32: int, dos_time: int = 0, dos_date: int = 0
    ) -> LocalFileHeader:
        """STORE header of a member of ``size`` bytes; ZIP64 extra only if size needs it."""
        raw = name.encode("utf-8")
        big = size >= ZIP64_LIMIT
        return cls(
            name=raw,
            crc32=crc32,
            compressed_size=ZIP64_LIMIT if big else size,
            uncompressed_size=ZIP64_LIMIT if big else size,
            version_needed=VERSION_ZIP64 if big else VERSION_DEFAULT,
            flags=0 if raw.isascii() else UTF8_FLAG,
            dos_time=dos_time,
            dos_date=dos_date,
            extra=_zip64_extra([size, size]) if big else b"",
        )

    @property
    def packed_size(self) -> int:
        return LFH_SIZE + len(self.name) + len(self.extra)

    def pack(self) -> bytes:
        return (
            _LFH.pack(
                LFH_SIGNATURE,
                self.version_needed,
                self.flags,
                self.method,
                self.dos_time,
                self.dos_date,
                self.crc32,
                self.compressed_size,
                self.uncompressed_size,
                len(self.name),
                len(self.extra),
            )
            + self.name
            + self.extra
        )

    @classmethod
    def unpack(cls, buffer: bytes, where: str = "buffer") -> LocalFileHeader:
        (_sig, version, flags, method, t, d, crc, csize, usize, nlen, xlen) = _record(
            _LFH, LFH_SIGNATURE, buffer, "local file header", where
        )
        end = LFH_SIZE + nlen + xlen
        if len(buffer) < end:
            raise TacoFormatError(
                f"{where}: local file header declares {nlen + xlen} bytes of name and extra, "
                f"only {len(buffer) - LFH_SIZE} available"
            )
        name = bytes(buffer[LFH_SIZE : LFH_SIZE + nlen])
        extra = bytes(buffer[LFH_SIZE + nlen : end])
        return cls(name, crc, csize, usize, version, flags, method, t, d, extra)

    @property
    def size(self) -> int:
        """Real member size, reading the ZIP64 extra field when present."""
        if self.uncompressed_size != ZIP64_LIMIT:
            return self.uncompressed_size
        z64 = _iter_extra(self.extra).get(ZIP64_EXTRA_ID, b"")
        return int(struct.unpack_from("<Q", z64)[0]) if len(z64) >= 8 else ZIP64_LIMIT


@dataclass(frozen=True, slots=True)
class CentralDirectoryEntry:
    """One central directory file header, with ZIP64 values already resolved.

    ``size`` and ``lfh_offset`` are the real 64-bit values; ``pack()`` writes
    0xFFFFFFFF and a ZIP64 extra field only for those that need it.
    """

    name: bytes
    crc32: int
    size: int
    lfh_offset: int
    flags: int = 0
    method: int = 0
    dos_time: int = 0
    dos_date: int = 0
    version_made_by: int = VERSION_MADE_BY
    version_needed: int = VERSION_DEFAULT
    external_attr: int = EXTERNAL_ATTR_FILE
    compressed_size: int | None = None
    other_extra: bytes = b""
    comment: bytes = b""

    @classmethod
    def for_member(
        cls,
        header: LocalFileHeader,
        size: int,
        lfh_offset: int,
    ) -> CentralDirectoryEntry:
        """Central directory entry matching a local header written at ``lfh_offset``."""
        needs64 = size >= ZIP64_LIMIT or lfh_offset >= ZIP64_LIMIT
        return cls(
            name=header.name,
            crc32=header.crc32,
            size=size,
            lfh_offset=lfh_offset,
            flags=header.flags,
            method=header.method,
            dos_time=header.dos_time,
            dos_date=header.dos_date,
            version_needed=VERSION_ZIP64 if needs64 else header.version_needed,
        )

    @property
    def text_name(self) -> str:
        return decode_name(self.name, self.flags)

    @property
    def real_compressed_size(self) -> int:
        return self.size if self.compressed_size is None else self.compressed_size

    def _extra(self) -> bytes:
        values: list[int] = []
        if self.size >= ZIP64_LIMIT:
            values += [self.size, self.real_compressed_size]
        if self.lfh_offset >= ZIP64_LIMIT:
            values.append(self.lfh_offset)
        return _zip64_extra(values) + self.other_extra

    @property
    def packed_size(self) -> int:
        return CD_ENTRY_SIZE + len(self.name) + len(self._extra()) + len(self.comment)

    def pack(self) -> bytes:
        big = self.size >= ZIP64_LIMIT
        extra = self._extra()
        return (
            _CD.pack(
                CD_SIGNATURE,
                self.version_made_by,
                self.version_needed,
                self.flags,
                self.method,
                self.dos_time,
                self.dos_date,
                self.crc32,
                ZIP64_LIMIT if big else self.real_compressed_size,
                ZIP64_LIMIT if big else self.size,
                len(self.name),
                len(extra),
                len(self.comment),
                0,
                0,
                self.external_attr,
                min(self.lfh_offset, ZIP64_LIMIT),
            )
            + self.name
            + extra
            + self.comment
        )

    @classmethod
    def unpack_from(
        cls, buffer: bytes, pos: int, where: str = "central directory"
    ) -> tuple[CentralDirectoryEntry, int]:
        """Decode the entry at ``buffer[pos:]``; return it and the position after it."""
        if len(buffer) - pos < CD_ENTRY_SIZE:
            raise TacoFormatError(
                f"{where}: truncated central directory: entry at byte {pos} needs "
                f"{CD_ENTRY_SIZE} bytes, only {len(buffer) - pos} left"
            )
        (sig, made, needed, flags, method, t, d, crc, csize, usize, nlen, xlen, clen,
         _disk, _iattr, attr, at) = _CD.unpack_from(buffer, pos)  # fmt: skip
        if sig != CD_SIGNATURE:
            raise TacoFormatError(
                f"{where}: expected central directory signature 0x{CD_SIGNATURE:08x} at byte "
                f"{pos}, found 0x{sig:08x}"
            )
        start = pos + CD_ENTRY_SIZE
        end = start + nlen + xlen + clen
        if end > len(buffer):
            raise TacoFormatError(
                f"{where}: truncated central directory: entry at byte {pos} declares "
                f"{nlen + xlen + clen} bytes of name/extra/comment, only {len(buffer) - start} left"
            )
        name = bytes(buffer[start : start + nlen])
        extra = bytes(buffer[start + nlen : start + nlen + xlen])
        fields = _iter_extra(extra)
        z64 = fields.pop(ZIP64_EXTRA_ID, b"")
        values = list(struct.unpack_from(f"<{len(z64) // 8}Q", z64)) if z64 else []
        if usize == ZIP64_LIMIT and values:
            usize = values.pop(0)
        if csize == ZIP64_LIMIT and values:
            csize = values.pop(0)
        if at == ZIP64_LIMIT and values:
            at = values.pop(0)
        other = b"".join(struct.pack("<HH", k, len(v)) + v for k, v in fields.items())
        comment = bytes(buffer[start + nlen + xlen : end])
        csize = None if csize == usize else csize
        entry = cls(
            name, crc, usize, at, flags, method, t, d, made, needed, attr, csize, other, comment
        )
        return entry, end


@dataclass(frozen=True, slots=True)
class EndOfCentralDirectory:
    """The classic EOCD record (22 bytes + comment)."""

    entries: int
    cd_size: int
    cd_offset: int
    comment: bytes = b""

    @property
    def needs_zip64(self) -> bool:
        return (
            self.entries >= ZIP64_COUNT_LIMIT
            or self.cd_size >= ZIP64_LIMIT
            or self.cd_offset >= ZIP64_LIMIT
        )

    def pack(self) -> bytes:
        count = min(self.entries, ZIP64_COUNT_LIMIT)
        return (
            _EOCD.pack(
                EOCD_SIGNATURE,
                0,
                0,
                count,
                count,
                min(self.cd_size, ZIP64_LIMIT),
                min(self.cd_offset, ZIP64_LIMIT),
                len(self.comment),
            )
            + self.comment
        )

    @classmethod
    def unpack(cls, buffer: bytes, where: str = "buffer") -> EndOfCentralDirectory:
        _sig, _d, _dcd, _n_disk, n_total, cd_size, cd_offset, clen = _record(
            _EOCD, EOCD_SIGNATURE, buffer, "EOCD", where
        )
        return cls(n_total, cd_size, cd_offset, bytes(buffer[EOCD_SIZE : EOCD_SIZE + clen]))


@dataclass(frozen=True, slots=True)
class Zip64EndOfCentralDirectory:
    """The ZIP64 end of central directory record (56 bytes, no extensible data)."""

    entries: int
    cd_size: int
    cd_offset: int
    version_made_by: int = VERSION_MADE_BY
    version_needed: int = VERSION_ZIP64

    def pack(self) -> bytes:
        return _Z64_EOCD.pack(
            ZIP64_EOCD_SIGNATURE,
            ZIP64_EOCD_SIZE - 12,
            self.version_made_by,
            self.version_needed,
            0,
            0,
            self.entries,
            self.entries,
            self.cd_size,
            self.cd_offset,
        )

    @classmethod
    def unpack(cls, buffer: bytes, where: str = "buffer") -> Zip64EndOfCentralDirectory:
        _sig, _sz, made_by, needed, _d, _dcd, _n_disk, n_total, cd_size, cd_off = _record(
            _Z64_EOCD, ZIP64_EOCD_SIGNATURE, buffer, "ZIP64 EOCD", where
        )
        return cls(n_total, cd_size, cd_off, made_by, needed)


@dataclass(frozen=True, slots=True)
class Zip64Locator:
    """The ZIP64 EOCD locator (20 bytes) that sits right before the EOCD."""

    zip64_eocd_offset: int

    def pack(self) -> bytes:
        return _Z64_LOC.pack(ZIP64_LOCATOR_SIGNATURE, 0, self.zip64_eocd_offset, 1)

    @classmethod
    def unpack(cls, buffer: bytes, where: str = "buffer") -> Zip64Locator:
        _sig, _disk, offset, _total = _record(
            _Z64_LOC, ZIP64_LOCATOR_SIGNATURE, buffer, "ZIP64 locator", where
        )
        return cls(offset)


def pack_end_records(entries: int, cd_size: int, cd_offset: int) -> bytes:
    """Bytes that follow the central directory: [ZIP64 EOCD + locator] + EOCD."""
    eocd = EndOfCentralDirectory(entries, cd_size, cd_offset)
    if not eocd.needs_zip64:
        return eocd.pack()
    z64_offset = cd_offset + cd_size
    return (
        Zip64EndOfCentralDirectory(entries, cd_size, cd_offset).pack()
        + Zip64Locator(z64_offset).pack()
        + eocd.pack()
    )


ReadAt = Callable[[int, int], bytes]
"""``read_at(offset, size) -> bytes``: a byte-range reader (may return fewer bytes at EOF)."""

_MAX_TAIL: Final = EOCD_SIZE + 0xFFFF + ZIP64_LOCATOR_SIZE


@dataclass(frozen=True, slots=True)
class CentralDirectory:
    """A parsed central directory, with where it and its end records live."""

    entries: list[CentralDirectoryEntry]
    cd_offset: int
    cd_size: int
    eocd_offset: int
    zip64_eocd_offset: int | None = None
    offsets: list[int] = field(default_factory=list)
    """Absolute file offset of each entry's record (for in-place patches)."""

    def by_name(self) -> dict[str, CentralDirectoryEntry]:
        return {e.text_name: e for e in self.entries}


def _find_eocd(read_at: ReadAt, file_size: int, where: str) -> tuple[int, bytes]:
    tail_len = min(file_size, _MAX_TAIL)
    tail = read_at(file_size - tail_len, tail_len)
    sig = struct.pack("<I", EOCD_SIGNATURE)
    pos = tail.rfind(sig)
    while pos >= 0:
        if pos + EOCD_SIZE <= len(tail):
            (clen,) = struct.unpack_from("<H", tail, pos + 20)
            if pos + EOCD_SIZE + clen == len(tail):
                return file_size - tail_len + pos, tail
        pos = tail.rfind(sig, 0, pos)
    raise TacoFormatError(
        f"{where}: no end of central directory record in the last {tail_len} bytes "
        f"of a {file_size}-byte file: not a ZIP archive, or truncated"
    )


def read_central_directory(
    read_at: ReadAt, file_size: int, where: str = "archive"
) -> CentralDirectory:
    """Locate (EOCD, ZIP64 EOCD when present) and parse the whole central directory."""
    eocd_offset, tail = _find_eocd(read_at, file_size, where)
    tail_start = file_size - len(tail)
    eocd = EndOfCentralDirectory.unpack(tail[eocd_offset - tail_start :], where)
    entries, cd_size, cd_offset = eocd.entries, eocd.cd_size, eocd.cd_offset
    z64_offset: int | None = None
    loc_pos = eocd_offset - ZIP64_LOCATOR_SIZE
    if loc_pos >= 0 and read_at(loc_pos, 4) == struct.pack("<I", ZIP64_LOCATOR_SIGNATURE):
        locator = Zip64Locator.unpack(read_at(loc_pos, ZIP64_LOCATOR_SIZE), where)
        z64_offset = locator.zip64_eocd_offset
        z64 = Zip64EndOfCentralDirectory.unpack(read_at(z64_offset, ZIP64_EOCD_SIZE), where)
        entries, cd_size, cd_offset = z64.entries, z64.cd_size, z64.cd_offset
    cd_end_limit = z64_offset if z64_offset is not None else eocd_offset
    if cd_offset + cd_size > cd_end_limit:
        raise TacoFormatError(
            f"{where}: truncated central directory: it claims bytes {cd_offset}.."
            f"{cd_offset + cd_size} but the end records start at byte {cd_end_limit}"
        )
    raw = read_at(cd_offset, cd_size)
    if len(raw) < cd_size:
        raise TacoFormatError(
            f"{where}: truncated central directory: expected {cd_size} bytes at offset "
            f"{cd_offset}, read {len(raw)}"
        )
    parsed: list[CentralDirectoryEntry] = []
    positions: list[int] = []
    pos = 0
    for index in range(entries):
        try:
            entry, nxt = CentralDirectoryEntry.unpack_from(raw, pos, where)
        except TacoFormatError as exc:
            raise TacoFormatError(
                f"{exc} (entry {index} of {entries} declared by the end record)"
            ) from None
        parsed.append(entry)
        positions.append(cd_offset + pos)
        pos = nxt
    return CentralDirectory(parsed, cd_offset, cd_size, eocd_offset, z64_offset, positions)
