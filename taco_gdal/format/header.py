"""The TACO_HEADER: 157 bytes at offset 0 of every TACO ZIP.

A ZIP local file header named ``TACO_HEADER`` whose 116-byte STORE payload holds
up to seven ``(offset, length)`` pairs pointing at the level parquets and,
last, ``COLLECTION.json``. Layout, checks and the three-write in-place update
follow the TACO_HEADER specification (``shared/spec/000_*.txt``).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from taco_gdal.errors import TacoFormatError
from taco_gdal.format import zip as zipfmt

__all__ = [
    "CRC_OFFSET",
    "HEADER_NAME",
    "HEADER_SIZE",
    "MAX_ENTRIES",
    "PAYLOAD_OFFSET",
    "PAYLOAD_SIZE",
    "HeaderEntry",
    "TacoHeader",
    "parse_header",
    "serialize_header",
    "serialize_payload",
]

HEADER_NAME: Final = b"TACO_HEADER"
HEADER_SIZE: Final = 157
PAYLOAD_SIZE: Final = 116
PAYLOAD_OFFSET: Final = 41
CRC_OFFSET: Final = 14
NAME_OFFSET: Final = 30
MAX_ENTRIES: Final = 7
_VERSION_NEEDED: Final = 20
_ENTRY = struct.Struct("<QQ")
_U64_MAX: Final = 2**64 - 1


@dataclass(frozen=True, slots=True)
class HeaderEntry:
    """One ``(offset, length)`` pair of the header: a byte range in the same file."""

    offset: int
    length: int

    def __post_init__(self) -> None:
        for name, value in (("offset", self.offset), ("length", self.length)):
            if not 0 <= value <= _U64_MAX:
                raise TacoFormatError(
                    f"TACO_HEADER entry {name} must be an unsigned 64-bit integer, got {value}"
                )

    @property
    def end(self) -> int:
        """First byte after the range."""
        return self.offset + self.length


@dataclass(frozen=True, slots=True)
class TacoHeader:
    """The decoded TACO_HEADER: its valid entries and the DOS timestamp of its LFH."""

    entries: tuple[HeaderEntry, ...]
    dos_time: int = 0
    dos_date: int = 0

    def __post_init__(self) -> None:
        if len(self.entries) > MAX_ENTRIES:
            raise TacoFormatError(
                f"TACO_HEADER holds at most {MAX_ENTRIES} entries, got {len(self.entries)}"
            )

    @property
    def count(self) -> int:
        return len(self.entries)


def serialize_payload(entries: Sequence[HeaderEntry]) -> bytes:
    """The 116-byte payload: count, 3 zero bytes, 7 fixed slots (unused slots zero)."""
    if len(entries) > MAX_ENTRIES:
        raise TacoFormatError(
            f"TACO_HEADER holds at most {MAX_ENTRIES} entries, got {len(entries)}"
        )
    slots = list(entries) + [HeaderEntry(0, 0)] * (MAX_ENTRIES - len(entries))
    body = b"".join(_ENTRY.pack(e.offset, e.length) for e in slots)
    return bytes([len(entries), 0, 0, 0]) + body


def serialize_header(header: TacoHeader) -> bytes:
    """Encode a header as the 157 bytes that start a TACO ZIP."""
    payload = serialize_payload(header.entries)
    lfh = zipfmt.LocalFileHeader(
        name=HEADER_NAME,
        crc32=zlib.crc32(payload),
        compressed_size=PAYLOAD_SIZE,
        uncompressed_size=PAYLOAD_SIZE,
        version_needed=_VERSION_NEEDED,
        dos_time=header.dos_time,
        dos_date=header.dos_date,
    )
    out = lfh.pack() + payload
    assert len(out) == HEADER_SIZE
    return out


def parse_header(buffer: bytes | bytearray | memoryview, where: str = "buffer") -> TacoHeader:
    """Decode the first 157 bytes of ``buffer`` as a TACO_HEADER; ``where`` names it in errors.

    Raises:
        TacoFormatError: too short, wrong signature, another name, or a count above 7.
    """
    data = bytes(buffer[:HEADER_SIZE])
    if len(data) < HEADER_SIZE:
        raise TacoFormatError(
            f"{where}: a TACO_HEADER needs {HEADER_SIZE} bytes, only {len(data)} available"
        )
    signature = int.from_bytes(data[0:4], "little")
    if signature != zipfmt.LFH_SIGNATURE:
        raise TacoFormatError(
            f"{where}: not a TACO ZIP: expected local file header signature "
            f"0x{zipfmt.LFH_SIGNATURE:08x} at byte 0, found 0x{signature:08x}"
        )
    lfh = zipfmt.LocalFileHeader.unpack(data, where)
    name = lfh.name
    if name != HEADER_NAME:
        raise TacoFormatError(
            f"{where}: not a TACO ZIP: expected member name {HEADER_NAME!r} at byte "
            f"{NAME_OFFSET}, found {name!r}"
        )
    payload = data[PAYLOAD_OFFSET:]
    count = payload[0]
    if count > MAX_ENTRIES:
        raise TacoFormatError(
            f"{where}: TACO_HEADER count must be 0..{MAX_ENTRIES}, found {count} at byte "
            f"{PAYLOAD_OFFSET}"
        )
    entries = tuple(HeaderEntry(*_ENTRY.unpack_from(payload, 4 + 16 * i)) for i in range(count))
    return TacoHeader(entries=entries, dos_time=lfh.dos_time, dos_date=lfh.dos_date)


@dataclass(frozen=True, slots=True)
class PatchWrite:
    """One in-place write: ``data`` goes at byte ``offset`` of the file."""

    offset: int
    data: bytes


def header_directory_entry(
    directory: zipfmt.CentralDirectory, where: str
) -> tuple[zipfmt.CentralDirectoryEntry, int]:
    """The one central directory entry of the TACO_HEADER, and the file offset of its record."""
    matches = [
        (entry, pos)
        for entry, pos in zip(directory.entries, directory.offsets, strict=True)
        if entry.name == HEADER_NAME and entry.lfh_offset == 0
    ]
    if len(matches) != 1:
        raise TacoFormatError(
            f"{where}: expected exactly one central directory entry named "
            f"{HEADER_NAME.decode()} at local header offset 0, found {len(matches)}"
        )
    return matches[0]


def plan_update(
    current: bytes, directory: zipfmt.CentralDirectory, entries: Sequence[HeaderEntry], where: str
) -> tuple[PatchWrite, PatchWrite, PatchWrite]:
    """The three writes that replace the header entries of an existing TACO ZIP.

    The payload, its CRC-32 in the local header and in the central directory entry.
    Everything is validated first, so applying the plan never half-updates a file.

    Raises:
        TacoFormatError: ``current`` is not a TACO_HEADER, or the central
            directory has no ``TACO_HEADER`` entry pointing at byte 0.
    """
    parse_header(current, where)
    entry, cd_pos = header_directory_entry(directory, where)
    if entry.size != PAYLOAD_SIZE or entry.method != 0:
        raise TacoFormatError(
            f"{where}: TACO_HEADER central directory entry must be STORE with {PAYLOAD_SIZE} "
            f"bytes, found method {entry.method} and size {entry.size}"
        )
    payload = serialize_payload(entries)
    crc = struct.pack("<I", zlib.crc32(payload))
    return (
        PatchWrite(PAYLOAD_OFFSET, payload),
        PatchWrite(CRC_OFFSET, crc),
        PatchWrite(cd_pos + zipfmt.CD_CRC_OFFSET, crc),
    )
