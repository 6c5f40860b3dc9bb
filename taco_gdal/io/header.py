"""Read and update the TACO_HEADER of a container through GDAL's VSI layer."""

from __future__ import annotations

from collections.abc import Sequence

from taco_gdal.format.header import (
    HEADER_SIZE,
    HeaderEntry,
    PatchWrite,
    TacoHeader,
    parse_header,
    plan_update,
)
from taco_gdal.format.vsi import to_vsi
from taco_gdal.format.zip import read_central_directory
from taco_gdal.io.vsi import VSIFile

__all__ = ["read_header", "update_header"]


def read_header(path: str) -> TacoHeader:
    """Read and decode the TACO_HEADER at byte 0 of ``path`` (local or remote).

    Example:
        >>> read_header("dataset.tacozip").entries  # doctest: +SKIP
        (HeaderEntry(offset=530, length=5827), HeaderEntry(offset=6402, length=3375))
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
    return writes
