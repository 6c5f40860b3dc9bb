"""Every FOLDER's ``__meta__`` must hold exactly its children's rows of the next level."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.format.names import (
    CHECKSUM,
    CURRENT_ID,
    GDAL_VSI,
    PARENT_ID,
    RELATIVE_PATH,
    SOURCE_FILE,
)
from taco_gdal.io.arrowbuf import owned_reader
from taco_gdal.verify import codes
from taco_gdal.verify._rows import Collector, Row

__all__ = ["check_meta_tables"]

_NOT_COMPARED = frozenset({CURRENT_ID, PARENT_ID, RELATIVE_PATH, SOURCE_FILE, GDAL_VSI, CHECKSUM})
"""Columns the consolidated tables add or renumber; everything else must be equal."""


def _children(table: pa.Table) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = defaultdict(list)
    if PARENT_ID not in table.column_names:
        return groups
    for position, parent in enumerate(table.column(PARENT_ID).to_pylist()):
        if isinstance(parent, int):
            groups[parent].append(position)
    return groups


def _parse(data: bytes) -> pa.Table | None:
    try:
        return pq.ParquetFile(owned_reader(data)).read()
    except (pa.ArrowException, OSError, ValueError):
        return None


def check_meta_tables(
    rows: Sequence[Row],
    levels: Sequence[pa.Table],
    read_member: Callable[[str], bytes | None],
    out: Collector,
) -> None:
    """Compare each FOLDER row's ``__meta__`` with its children.

    ``read_member`` returns ``None`` for an absent member, which the row checks report.
    """
    children = [_children(table) for table in levels]
    for row in rows:
        if not row.is_folder or row.level + 1 >= len(levels):
            continue
        data = read_member(row.member)
        if data is None:
            continue
        meta = _parse(data)
        if meta is None:
            out.add(
                codes.META_MISMATCH, "__meta__ is not a parquet file", member=row.member, row=row
            )
            continue
        table = levels[row.level + 1]
        positions = children[row.level + 1].get(row.index, [])
        if meta.num_rows != len(positions):
            out.add(
                codes.META_MISMATCH,
                f"__meta__ has {meta.num_rows} rows, level{row.level + 1} has "
                f"{len(positions)} children of this FOLDER",
                member=row.member,
                row=row,
                expected=len(positions),
                found=meta.num_rows,
            )
            continue
        mine = table.take(pa.array(positions, pa.int64()))
        for name in meta.column_names:
            if name in _NOT_COMPARED or name not in mine.column_names:
                continue
            if meta.column(name).to_pylist() != mine.column(name).to_pylist():
                out.add(
                    codes.META_MISMATCH,
                    f"column {name!r} of __meta__ differs from the consolidated level"
                    f"{row.level + 1} rows",
                    member=row.member,
                    row=row,
                )
