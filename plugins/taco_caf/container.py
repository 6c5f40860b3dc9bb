"""CAF archives as a taco_gdal container: every member is a FILE sample at level 0.

Opening costs one size request and, for an index under 64 KiB, one range read
from the end of the archive (footer and index together); a larger index takes
one more.  Everything goes through GDAL's VSI layer, so ``/vsicurl/`` and
``/vsis3/`` archives open the same way as local ones.  Sample paths are
``/vsisubfile/{start_byte}_{size},{archive}``.
"""

from __future__ import annotations

from typing import ClassVar, Final

import pyarrow as pa

from taco_caf.layout import (
    FOOTER_SIZE,
    CafFormatError,
    CafIndex,
    index_start,
    parse_footer,
    parse_index,
)
from taco_gdal.containers import (
    FILE,
    ID,
    OFFSET,
    SIZE,
    TYPE,
    OpenedContainer,
    Probe,
    VSIFile,
    VsiRule,
    derived_collection,
)

__all__ = ["LABEL", "SUFFIX", "CafContainer", "member_table", "read_index"]

SUFFIX: Final = ".caf"
LABEL: Final = "CAF archive"
_TAIL: Final = 64 * 1024
"""Bytes read from the end at once: the footer and, usually, the whole index."""


def read_index(path: str) -> CafIndex:
    """The index of the CAF archive at a GDAL path.

    Raises:
        CafFormatError: truncated footer, an index larger than the file, bad JSON.
        TacoIOError: the file cannot be opened or read.

    Example:
        >>> read_index("tiles.caf").names
        ('s000.tif', 's001.tif', 's002.tif')
    """
    with VSIFile(path) as f:
        size = f.size()
        tail_size = min(size, _TAIL)
        tail = f.read_exact(size - tail_size, tail_size, "CAF footer and index")
        index_size = parse_footer(tail[-FOOTER_SIZE:], size, path)
        start = index_start(size, index_size)
        if index_size + FOOTER_SIZE <= tail_size:
            data = tail[tail_size - FOOTER_SIZE - index_size : tail_size - FOOTER_SIZE]
        else:
            data = f.read_exact(start, index_size, "CAF index")
    return parse_index(data, start, f"{path}: CAF index (bytes {start}..{start + index_size})")


def member_table(index: CafIndex, where: str) -> pa.Table:
    """The level-0 table: ``id`` (member name), ``type``, ``internal:offset``/``size``.

    Raises:
        CafFormatError: the index lists no member (a dataset needs one sample).
    """
    if not index.members:
        raise CafFormatError(
            f"{where}: the CAF index lists no files; expected at least one member to "
            "become a sample"
        )
    n = len(index.members)
    return pa.table(
        {
            ID: pa.array(index.names, pa.string()),
            TYPE: pa.array([FILE] * n, pa.string()),
            OFFSET: pa.array([m.start for m in index.members], pa.int64()),
            SIZE: pa.array([m.size for m in index.members], pa.int64()),
        }
    )


class CafContainer(OpenedContainer):
    """A CAF archive (``*.caf``), recognised by its suffix (CAF has no magic number).

    Example:
        >>> ds = taco_gdal.load("tiles.caf")
        >>> ds.read(0)
        '/vsisubfile/0_622,.../tiles.caf'
    """

    format: ClassVar[str] = "caf"
    priority: ClassVar[int] = 50

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(SUFFIX)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        return False  # no magic number: content alone cannot say "CAF"

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> CafContainer:
        path = probe.path
        table = member_table(read_index(path), path)
        collection = derived_collection(table, path, LABEL)
        return cls(path, [table], collection, VsiRule("subfile", path), [f"{path}: CAF index"])
