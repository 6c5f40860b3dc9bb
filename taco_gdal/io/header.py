"""Read and update the TACO_HEADER of a container through GDAL's VSI layer.

An update is three writes (payload, then its CRC-32 in the local header, then
in the central directory) and cannot be atomic.  A process killed between them
leaves a file whose payload is complete (each write reaches the kernel whole)
but whose CRC fields disagree with it: ``unzip -t`` fails, while taco_gdal
still reads the (old or new, both valid) entries.  The state is recoverable:
running the update again, or :func:`repair_header` (``verify(...,
repair=True)``), rewrites both CRC fields from the payload on disk.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import (
    CRC_OFFSET,
    HEADER_NAME,
    HEADER_SIZE,
    PAYLOAD_OFFSET,
    HeaderEntry,
    PatchWrite,
    TacoHeader,
    parse_header,
    plan_update,
)
from taco_gdal.format.vsi import to_vsi
from taco_gdal.format.zip import CD_CRC_OFFSET, read_central_directory
from taco_gdal.io._faults import pause_point
from taco_gdal.io.vsi import VSIFile

__all__ = ["read_header", "repair_header", "update_header"]


def read_header(path: str) -> TacoHeader:
    """Read and decode the TACO_HEADER at byte 0 of ``path`` (local or remote).

    Example:
        >>> read_header("dataset.tacozip").entries
        (HeaderEntry(offset=..., length=...), HeaderEntry(offset=..., length=...))
    """
    vsi = to_vsi(path)
    with VSIFile(vsi) as f:
        return parse_header(f.read_at(0, HEADER_SIZE), vsi)


def update_header(path: str, entries: Sequence[HeaderEntry]) -> tuple[PatchWrite, ...]:
    """Replace the header entries of an existing TACO ZIP in place, with three writes.

    The header and the central directory are read and checked first; if either
    is wrong a :class:`~taco_gdal.errors.TacoFormatError` is raised and the file
    is left byte-identical.  Returns the writes that were applied.
    """
    vsi = to_vsi(path)
    with VSIFile(vsi, "rb") as f:
        current = f.read_at(0, HEADER_SIZE)
        parse_header(current, vsi)
        size = f.size()
        directory = read_central_directory(f.read_at, size, vsi)
    writes = plan_update(current, directory, entries, vsi)
    with VSIFile(vsi, "r+b") as f:
        for write in writes:
            f.write_at(write.offset, write.data)
            f.flush()
            pause_point()
    return writes


def repair_header(path: str) -> tuple[PatchWrite, ...]:
    """Make both CRC-32 fields of the TACO_HEADER match its payload again.

    Restores a consistent file after an interrupted :func:`update_header`; a
    consistent file is left untouched (no write).  Returns the writes made.

    Raises:
        TacoFormatError: the file has no TACO_HEADER, or its central directory
            has no single ``TACO_HEADER`` entry at offset 0.

    Example:
        >>> repair_header("dataset.tacozip")
        ()
    """
    vsi = to_vsi(path)
    with VSIFile(vsi, "rb") as f:
        current = f.read_at(0, HEADER_SIZE)
        parse_header(current, vsi)
        directory = read_central_directory(f.read_at, f.size(), vsi)
        matches = [
            pos
            for entry, pos in zip(directory.entries, directory.offsets, strict=True)
            if entry.name == HEADER_NAME and entry.lfh_offset == 0
        ]
        if len(matches) != 1:
            raise TacoFormatError(
                f"{vsi}: expected one central directory entry {HEADER_NAME.decode()} at local "
                f"header offset 0, found {len(matches)}"
            )
        cd_field = matches[0] + CD_CRC_OFFSET
        crc = struct.pack("<I", zlib.crc32(current[PAYLOAD_OFFSET:HEADER_SIZE]))
        writes = tuple(
            PatchWrite(offset, crc)
            for offset, stored in (
                (CRC_OFFSET, current[CRC_OFFSET : CRC_OFFSET + 4]),
                (cd_field, f.read_at(cd_field, 4)),
            )
            if stored != crc
        )
    if writes:
        with VSIFile(vsi, "r+b") as f:
            for write in writes:
                f.write_at(write.offset, write.data)
    return writes
