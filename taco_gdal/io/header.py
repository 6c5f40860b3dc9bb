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

import operator
import struct
import zlib
from collections.abc import Iterable

from taco_gdal.errors import TacoError, TacoFormatError
from taco_gdal.format.header import (
    CRC_OFFSET,
    HEADER_SIZE,
    PAYLOAD_OFFSET,
    HeaderEntry,
    PatchWrite,
    TacoHeader,
    header_directory_entry,
    parse_header,
    plan_update,
)
from taco_gdal.format.vsi import to_vsi
from taco_gdal.format.zip import CD_CRC_OFFSET, read_central_directory
from taco_gdal.io._faults import pause_point
from taco_gdal.io.vsi import VSIFile

__all__ = ["header_entries", "read_header", "repair_header", "update_header"]


def read_header(path: str) -> TacoHeader:
    """Read and decode the TACO_HEADER at byte 0 of ``path`` (local or remote).

    Example:
        >>> read_header("dataset.tacozip").entries
        (HeaderEntry(offset=..., length=...), HeaderEntry(offset=..., length=...))
    """
    vsi = to_vsi(path)
    with VSIFile(vsi) as f:
        return parse_header(f.read_at(0, HEADER_SIZE), vsi)


def _entry(item: object, index: int, where: str) -> HeaderEntry:
    """``item`` as a HeaderEntry: itself, or an ``(offset, length)`` pair of integers."""
    if isinstance(item, HeaderEntry):
        return item
    expected = "expected a HeaderEntry or an (offset, length) pair of integers"
    pair = tuple(item) if isinstance(item, Iterable) and not isinstance(item, str | bytes) else ()
    try:
        if len(pair) != 2:
            raise ValueError(f"{len(pair)} values")
        entry = HeaderEntry(operator.index(pair[0]), operator.index(pair[1]))
    except TacoError as exc:
        raise TacoFormatError(f"{where}: entry {index} {item!r}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise TacoFormatError(f"{where}: entry {index}: {expected}, found {item!r}") from exc
    return entry


def header_entries(entries: object, where: str) -> tuple[HeaderEntry, ...]:
    """HeaderEntry values, or ``(offset, length)`` pairs (what tacozip takes), as HeaderEntries.

    Raises:
        TacoFormatError: ``entries`` is not a sequence of those, naming the entry.

    Example:
        >>> header_entries([(100, 20), HeaderEntry(120, 5)], "x.tacozip")
        (HeaderEntry(offset=100, length=20), HeaderEntry(offset=120, length=5))
    """
    if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        raise TacoFormatError(
            f"{where}: expected a sequence of HeaderEntry or (offset, length) pairs, "
            f"found {entries!r}"
        )
    return tuple(_entry(item, index, where) for index, item in enumerate(entries))


def update_header(
    path: str, entries: Iterable[HeaderEntry | tuple[int, int]]
) -> tuple[PatchWrite, ...]:
    """Replace the header entries of an existing TACO ZIP in place, with three writes.

    ``entries`` are :class:`~taco_gdal.format.header.HeaderEntry` values or plain
    ``(offset, length)`` pairs, as tacozip takes them.  The entries, the header and
    the central directory are checked first; if any is wrong a
    :class:`~taco_gdal.errors.TacoFormatError` is raised and the file is left
    byte-identical.  Returns the writes that were applied.

    Example:
        >>> update_header("dataset.tacozip", [(1024, 2048), (3072, 512)])
        (PatchWrite(offset=41, data=...), PatchWrite(offset=14, data=...), ...)
    """
    vsi = to_vsi(path)
    wanted = header_entries(entries, vsi)
    with VSIFile(vsi, "rb") as f:
        current = f.read_at(0, HEADER_SIZE)
        parse_header(current, vsi)
        directory = read_central_directory(f.read_at, f.size(), vsi)
    return _apply(vsi, plan_update(current, directory, wanted, vsi))


def _apply(vsi: str, writes: tuple[PatchWrite, ...]) -> tuple[PatchWrite, ...]:
    """Make ``writes`` one after the other, each handed to the system before the next."""
    if writes:
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
        cd_field = header_directory_entry(directory, vsi)[1] + CD_CRC_OFFSET
        crc = struct.pack("<I", zlib.crc32(current[PAYLOAD_OFFSET:HEADER_SIZE]))
        writes = tuple(
            PatchWrite(offset, crc)
            for offset, stored in (
                (CRC_OFFSET, current[CRC_OFFSET : CRC_OFFSET + 4]),
                (cd_field, f.read_at(cd_field, 4)),
            )
            if stored != crc
        )
    return _apply(vsi, writes)
