"""TACO ZIP (``.tacozip`` / ``.zip``): opened from its TACO_HEADER alone.

Two reads whatever the archive's size: the TACO_HEADER (shared with detection),
then one range over the adjacent level parquet files and COLLECTION.json.  The
central directory is never read.
"""

from __future__ import annotations

from typing import ClassVar

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HEADER_NAME, HEADER_SIZE, NAME_OFFSET, parse_header
from taco_gdal.format.names import COLLECTION_FILE, ZIP_SUFFIXES, level_member
from taco_gdal.format.zip import LFH_SIGNATURE
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read.opening.containers._limits import check_ranges
from taco_gdal.read.opening.containers._parse import (
    parse_metadata_deferring,
    read_entries,
    stream_bytes,
)
from taco_gdal.read.opening.containers.base import OpenedContainer, Probe, VsiRule

__all__ = ["ZipContainer"]


def _looks_like_taco_zip(head: bytes) -> bool:
    return (
        len(head) >= NAME_OFFSET + len(HEADER_NAME)
        and int.from_bytes(head[:4], "little") == LFH_SIGNATURE
        and head[NAME_OFFSET : NAME_OFFSET + len(HEADER_NAME)] == HEADER_NAME
    )


def _check_start(head: bytes, path: str) -> None:
    """Signature and first member name, checked even when the file is shorter than a header."""
    if len(head) >= 4 and int.from_bytes(head[:4], "little") != LFH_SIGNATURE:
        raise TacoFormatError(
            f"{path}: not a TACO ZIP: expected a local file header signature at byte 0, "
            f"found {head[:4]!r}"
        )
    name = head[NAME_OFFSET : NAME_OFFSET + len(HEADER_NAME)]
    if len(name) == len(HEADER_NAME) and name != HEADER_NAME:
        raise TacoFormatError(
            f"{path}: not a TACO ZIP: expected the first member to be {HEADER_NAME.decode()}, "
            f"found {name!r} at byte {NAME_OFFSET}"
        )


class ZipContainer(OpenedContainer):
    """A TACO ZIP archive.

    Example:
        >>> from taco_gdal.read.opening.containers.base import Probe
        >>> zc = ZipContainer.open(Probe("dataset.tacozip", "dataset.tacozip"))
        >>> zc.vsi_rule
        VsiRule(kind='subfile', root='dataset.tacozip')
    """

    format: ClassVar[str] = "zip"
    priority: ClassVar[int] = 20

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(ZIP_SUFFIXES)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        return _looks_like_taco_zip(probe.head())

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> ZipContainer:
        path = probe.path
        with VSIFile(path) as f:
            head = probe.head()
            if len(head) < HEADER_SIZE:
                head = f.read_at(0, HEADER_SIZE)
            _check_start(head, path)
            header = parse_header(head, path)
            entries = [e for e in header.entries if e.length > 0]
            if len(entries) < 2:
                raise TacoFormatError(
                    f"{path}: TACO_HEADER must list level0.parquet and {COLLECTION_FILE} "
                    f"(at least 2 non-empty entries), found {len(entries)}"
                )
            labels = [f"{level_member(i)} (TACO_HEADER entry {i})" for i in range(len(entries))]
            labels[-1] = f"{COLLECTION_FILE} (TACO_HEADER entry {len(entries) - 1})"
            buffers = read_entries(f, entries, labels, stream_from=stream_bytes())
            size = f.size()
            levels, collection, sources, deferred = parse_metadata_deferring(buffers, labels, path)
        for table, source in zip(levels, sources, strict=True):
            check_ranges(table, size, source, path)
        return cls(path, levels, collection, VsiRule("subfile", path), sources, deferred)
