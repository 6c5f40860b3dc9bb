"""The tables a container stores: level tables and ``__meta__`` tables, columns in order.

Stored order (reference writer): ``id``, ``type``, user and extension columns,
then the ``internal:`` columns. The source ``path`` column is never stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.format.names import (
    CHECKSUM,
    CURRENT_ID,
    FILE,
    FOLDER,
    ID,
    INTERNAL_COLUMN_ORDER,
    INTERNAL_PREFIX,
    OFFSET,
    PARENT_ID,
    PATH,
    RELATIVE_PATH,
    SIZE,
    TYPE,
)
from taco_gdal.model._arrow import from_numpy, int64_values, string_array, string_scalar
from taco_gdal.model._levels import relative_paths

__all__ = [
    "Rebuilt",
    "local_columns",
    "rebuild_columns",
    "stored_level",
    "with_checksums",
    "with_offsets",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def local_columns(names: Sequence[str]) -> list[str]:
    """Columns of a ``__meta__`` table: id, type and the user columns of the children."""
    rest = [n for n in names if n not in (ID, TYPE, PATH) and not n.startswith(INTERNAL_PREFIX)]
    return [ID, TYPE, *rest]


def _ordered(names: Sequence[str]) -> list[str]:
    internal = [n for n in INTERNAL_COLUMN_ORDER if n in names]
    other = [n for n in names if n.startswith(INTERNAL_PREFIX) and n not in INTERNAL_COLUMN_ORDER]
    return [*local_columns(names), *internal, *other]


def with_checksums(table: pa.Table, checksums: Sequence[str | None] | pa.Array | None) -> pa.Table:
    """``table`` with its ``taco_gdal:checksum`` column set to ``checksums`` (None: unchanged)."""
    if checksums is None:
        return table
    if CHECKSUM in table.column_names:
        table = table.drop_columns([CHECKSUM])
    column = checksums if isinstance(checksums, pa.Array) else string_array(checksums)
    return table.append_column(CHECKSUM, column)


def with_offsets(
    table: pa.Table,
    offsets: IntArray,
    sizes: IntArray,
    checksums: Sequence[str | None] | pa.Array | None = None,
    copy: bool = True,
) -> pa.Table:
    """``table`` plus offsets, sizes and ``checksums``; ``copy=False`` shares the arrays."""
    extra = with_checksums(table, checksums)
    as_int64 = np.array if copy else np.asarray
    extra = extra.append_column(OFFSET, from_numpy(as_int64(offsets, dtype=np.int64)))
    extra = extra.append_column(SIZE, from_numpy(as_int64(sizes, dtype=np.int64)))
    return extra.select(_ordered(extra.column_names))


def stored_level(table: pa.Table) -> pa.Table:
    """A package level table as stored: ``path`` dropped, columns in stored order."""
    return table.select(_ordered([n for n in table.column_names if n != PATH]))


_CHECK_ROWS = 65_536
"""Rows compared at once when deciding whether a column can be rebuilt."""


@dataclass(frozen=True)
class Rebuilt:
    """Columns of a stored level rebuilt a slice at a time instead of held whole.

    The values are those :func:`~taco_gdal.model._levels.build_tables` made, so the
    level Parquet has the same bytes.
    """

    schema: pa.Schema
    """The stored schema, every column (the Parquet writer's)."""
    columns: frozenset[str]
    folder: BoolArray
    parent_paths: pa.Array | None
    """Relative paths of the level above (level 0: the ids and ``/``)."""

    def complete(self, part: pa.Table, start: int) -> pa.Table:
        """The stored rows ``start .. start + len(part)`` from ``part`` (those rows, compact)."""
        n = part.num_rows
        folder = from_numpy(self.folder[start : start + n])
        made: dict[str, pa.Array] = {}
        if TYPE in self.columns:
            made[TYPE] = pc.if_else(folder, string_scalar(FOLDER), string_scalar(FILE))
        if CURRENT_ID in self.columns:
            made[CURRENT_ID] = from_numpy(np.arange(start, start + n, dtype=np.int64))
        if RELATIVE_PATH in self.columns:
            made[RELATIVE_PATH] = self._paths(part, folder)
        arrays = [made[f.name] if f.name in made else part.column(f.name) for f in self.schema]
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _paths(self, part: pa.Table, folder: pa.Array) -> pa.Array:
        parents = from_numpy(int64_values(part.column(PARENT_ID)))
        ids = part.column(ID).combine_chunks()
        return relative_paths(ids, folder, self.parent_paths, parents)


def _equal(made: pa.Array, stored: pa.ChunkedArray | pa.Array) -> bool:
    same = pc.equal(made, stored)
    return same.null_count == 0 and bool(pc.all(same).as_py())


def _rebuildable(table: pa.Table, name: str, rebuilt: Rebuilt) -> bool:
    """True if ``name`` is stored exactly as :meth:`Rebuilt.complete` makes it."""
    field = table.schema.field(name)
    wanted = pa.int64() if name == CURRENT_ID else pa.string()
    if field.type != wanted or field.metadata:
        return False
    probe = Rebuilt(rebuilt.schema, frozenset({name}), rebuilt.folder, rebuilt.parent_paths)
    for start in range(0, table.num_rows, _CHECK_ROWS):
        part = table.slice(start, _CHECK_ROWS)
        made = probe.complete(part, start).column(name)
        if not _equal(made.combine_chunks(), part.column(name)):
            return False
    return True


def rebuild_columns(
    table: pa.Table, folder: BoolArray, parent_paths: pa.Array | None
) -> tuple[pa.Table, Rebuilt]:
    """``table`` without the columns :class:`Rebuilt` can make again, and what makes them.

    Only columns equal row for row are dropped (tables read back by export keep any
    that differ).
    """
    rebuilt = Rebuilt(table.schema, frozenset(), folder, parent_paths)
    candidates = [TYPE, CURRENT_ID]
    if parent_paths is not None:
        candidates.append(RELATIVE_PATH)
    if PARENT_ID not in table.column_names or ID not in table.column_names:
        candidates = [c for c in candidates if c != RELATIVE_PATH]
    names = frozenset(
        c for c in candidates if c in table.column_names and _rebuildable(table, c, rebuilt)
    )
    rebuilt = Rebuilt(table.schema, names, folder, parent_paths)
    return table.drop_columns(sorted(names)), rebuilt
