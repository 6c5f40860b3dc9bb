"""Level tables as the reader queries them: ids that are row positions.

:func:`prepare_levels` makes ``internal:current_id`` the row position and
``internal:parent_id`` the parent's row position, whatever wrote the file (ids missing
before tacotoolbox 0.21, TACOCAT ids local to each source ZIP, parents known only by
``internal:relative_path``); :class:`ChildIndex` finds a row's children in O(children).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from taco_gdal._memory import RELEASE_BYTES, release_memory
from taco_gdal.errors import TacoFormatError
from taco_gdal.format import vsi
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    CURRENT_ID,
    FOLDER,
    GDAL_VSI,
    GEOMETRY_COLUMNS,
    ID,
    PARENT_ID,
    RELATIVE_PATH,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.io.vsi import VSIFile, read_all
from taco_gdal.read._types import is_binary
from taco_gdal.read.opening._repair import parent_paths, repair_level_offsets
from taco_gdal.read.opening.containers._deferred import LoadedLevels
from taco_gdal.read.opening.containers._limits import check_schemas
from taco_gdal.read.opening.containers._parse import read_entries
from taco_gdal.read.opening.containers.base import Container, VsiRule
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import HIDDEN_PREFIX, quote_ident
from taco_gdal.read.query.state import LevelTables, QueryState, level_view

__all__ = [
    "ChildCounts",
    "ChildIndex",
    "add_point_columns",
    "child_counts",
    "child_index",
    "decode_points",
    "point_columns",
    "prepare_level",
    "prepare_levels",
    "prepare_tables",
    "prepared_state",
]

_WKB_POINT_SIZE = 21


def point_columns(column: str) -> tuple[str, str]:
    """Names of the decoded x/y helper columns of a point column."""
    return f"{HIDDEN_PREFIX}x:{column}", f"{HIDDEN_PREFIX}y:{column}"


def _ids(table: pa.Table, name: str, where: str) -> np.ndarray | None:
    if name not in table.column_names:
        return None
    column = table.column(name)
    if not pa.types.is_integer(column.type) or column.null_count:
        raise TacoFormatError(
            f"{where}: column {name!r} must hold integers without nulls, found type "
            f"{column.type} with {column.null_count} nulls"
        )
    return np.asarray(column.to_numpy(), dtype=np.int64)


def _set(table: pa.Table, name: str, values: np.ndarray) -> pa.Table:
    array = pa.array(values, type=pa.int64())
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, array)
    return table.append_column(name, array)


def _lookup(
    keys: Sequence[np.ndarray], wanted: Sequence[np.ndarray], what: str, where: str
) -> np.ndarray:
    """Row positions of ``wanted`` among ``keys`` (composite keys allowed)."""
    if len(keys) == 1:
        index: pd.Index = pd.Index(keys[0])
        query: pd.Index = pd.Index(wanted[0])
    else:
        index = pd.MultiIndex.from_arrays(list(keys))
        query = pd.MultiIndex.from_arrays(list(wanted))
    if not index.is_unique:
        raise TacoFormatError(f"{where}: the previous level has duplicate keys for {what}")
    positions = np.asarray(index.get_indexer(query), dtype=np.int64)
    if positions.size and positions.min() < 0:
        row = int(np.argmin(positions))
        raise TacoFormatError(
            f"{where}: row {row} has {what} {[k[row] for k in wanted]} that matches no row of "
            "the previous level"
        )
    return positions


ChildCounts = Callable[[int], np.ndarray]
"""Given a level, the number of children of each of its rows (read from ``__meta__`` files)."""


def _from_counts(table: pa.Table, counts: np.ndarray, where: str) -> np.ndarray:
    if int(counts.sum()) != table.num_rows:
        raise TacoFormatError(
            f"{where}: the __meta__ files of the previous level list {int(counts.sum())} "
            f"children, but this level has {table.num_rows} rows"
        )
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def _parent_positions(
    table: pa.Table,
    previous: pa.Table,
    previous_old: np.ndarray,
    where: str,
    child_counts: tuple[ChildCounts, int] | None = None,
) -> np.ndarray:
    stored = _ids(table, PARENT_ID, where)
    by_source = SOURCE_FILE in table.column_names and SOURCE_FILE in previous.column_names
    if stored is not None:
        if not by_source and np.array_equal(previous_old, np.arange(previous.num_rows)):
            if stored.size and (stored.min() < 0 or stored.max() >= previous.num_rows):
                bad = int(np.argmax((stored < 0) | (stored >= previous.num_rows)))
                raise TacoFormatError(
                    f"{where}: row {bad} has {PARENT_ID} {stored[bad]}, but the previous level "
                    f"has {previous.num_rows} rows"
                )
            return stored
        keys, wanted = [previous_old], [stored]
        what = PARENT_ID
    elif RELATIVE_PATH in table.column_names:
        keys, wanted = [_folder_paths(previous)], [parent_paths(table)]
        what = f"parent of {RELATIVE_PATH}"
    elif child_counts is not None:
        counter, parent_level = child_counts
        return _from_counts(table, counter(parent_level), where)
    else:
        raise TacoFormatError(
            f"{where}: cannot link rows to their parents: neither {PARENT_ID!r} nor "
            f"{RELATIVE_PATH!r} is present; the table has columns {table.column_names}"
        )
    if by_source:
        keys = [_as_objects(previous.column(SOURCE_FILE)), *keys]
        wanted = [_as_objects(table.column(SOURCE_FILE)), *wanted]
    return _lookup(keys, wanted, what, where)


def _folder_paths(table: pa.Table) -> np.ndarray:
    """Each row's path under DATA/ ending with '/', as its children's paths start."""
    name = RELATIVE_PATH if RELATIVE_PATH in table.column_names else ID
    paths = pc.utf8_rtrim(table.column(name).cast(pa.string()), characters="/")
    return _as_objects(pc.binary_join_element_wise(paths, "/", ""))


def _positions_within(groups: np.ndarray) -> np.ndarray:
    """Row position of each row among the rows of its group (``groupby().cumcount()``)."""
    return np.asarray(pd.Series(groups).groupby(groups, sort=False).cumcount(), dtype=np.int64)


def _as_objects(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)


def decode_points(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray] | None:
    """x and y of a WKB column that holds only little-endian 2D points (else None); chunk by
    chunk, so a polygon column is given up at its first value, never copied."""
    if not is_binary(column.type):
        return None
    xs, ys = [], []
    for chunk in column.chunks:
        decoded = _decode_chunk(chunk)
        if decoded is None:
            return None
        xs.append(decoded[0])
        ys.append(decoded[1])
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs), np.concatenate(ys)


def _decode_chunk(array: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    n = len(array)
    if n == 0:
        return np.empty(0), np.empty(0)
    offset_type = np.int64 if pa.types.is_large_binary(array.type) else np.int32
    offsets = np.frombuffer(array.buffers()[1], dtype=offset_type)[
        array.offset : array.offset + n + 1
    ]
    first = int(np.argmax(np.diff(offsets[: min(n, 64) + 1]) > 0))
    if offsets[first + 1] - offsets[first] not in (0, _WKB_POINT_SIZE):
        return None  # not points: given up before scanning (or copying) the column
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)
    if not np.all(np.diff(offsets)[_valid(array)] == _WKB_POINT_SIZE):
        return None
    if array.null_count == 0:
        start = int(offsets[0])
        records = data[start : start + n * _WKB_POINT_SIZE]
    else:
        starts = offsets[:-1][_valid(array)].astype(np.int64)
        records = data[starts[:, None] + np.arange(_WKB_POINT_SIZE)].reshape(-1)
    count = records.size // _WKB_POINT_SIZE

    def field(dtype: str, offset: int) -> np.ndarray:  # a strided (unaligned) view
        return np.ndarray((count,), dtype, records, offset, (_WKB_POINT_SIZE,))

    if not (np.all(field("u1", 0) == 1) and np.all(field("<u4", 1) == 1)):
        return None  # not little-endian, or not a 2D point
    x, y = field("<f8", 5).copy(), field("<f8", 13).copy()
    if array.null_count == 0:
        return x, y
    full_x, full_y = np.full(n, np.nan), np.full(n, np.nan)
    full_x[_valid(array)] = x
    full_y[_valid(array)] = y
    return full_x, full_y


def _valid(array: pa.Array) -> np.ndarray | slice:
    if array.null_count == 0:
        return slice(None)
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def add_point_columns(table: pa.Table) -> pa.Table:
    """``table`` with the x/y columns (:func:`point_columns`) of each 2D-point geometry column."""
    for name in GEOMETRY_COLUMNS:
        if name not in table.column_names:
            continue
        decoded = decode_points(table.column(name))
        if decoded is None:
            continue
        for helper, values in zip(point_columns(name), decoded, strict=True):
            table = table.append_column(helper, pa.array(values, type=pa.float64()))
    return table


def prepare_level(
    table: pa.Table,
    level: int,
    previous: tuple[pa.Table, np.ndarray] | None,
    where: str,
    child_counts: ChildCounts | None = None,
) -> tuple[pa.Table, np.ndarray]:
    """One level with row-position ids, and its stored ids; ``previous``: the previous level's
    two; ``child_counts`` links a level with neither ``parent_id`` nor ``relative_path``."""
    positions = np.arange(table.num_rows, dtype=np.int64)
    stored = _ids(table, CURRENT_ID, where)
    old = positions if stored is None else stored
    if stored is None and SOURCE_FILE in table.column_names:
        # Pre-0.21 TACOCAT: the parent_id of the next level is local to each source ZIP.
        old = _positions_within(_as_objects(table.column(SOURCE_FILE)))
    if level == 0 or previous is None:
        parents = positions
    else:
        counter = None if child_counts is None else (child_counts, level - 1)
        parents = _parent_positions(table, previous[0], previous[1], where, counter)
    return _set(_set(table, CURRENT_ID, positions), PARENT_ID, parents), old


def prepare_levels(
    levels: Sequence[pa.Table],
    sources: Sequence[str],
    child_counts: Callable[[Sequence[pa.Table], int], np.ndarray] | None = None,
) -> list[pa.Table]:
    """Every level of a container prepared with :func:`prepare_level`; ``child_counts``
    is given the levels prepared so far and the level whose children it counts.

    Raises:
        TacoFormatError: ids are not integers, or a parent cannot be found.
    """
    out: list[pa.Table] = []
    previous: tuple[pa.Table, np.ndarray] | None = None
    counts = None if child_counts is None else lambda k: child_counts(out, k)
    for level, (table, where) in enumerate(zip(levels, sources, strict=True)):
        prepared, old = prepare_level(table, level, previous, where, counts)
        out.append(prepared)
        previous = (prepared, old)
    return out


@dataclass(frozen=True)
class ChildIndex:
    """The rows of a level grouped by parent: ``rows(p)`` in O(children of p).

    ``order`` is ``None`` when the level is stored grouped by parent, as writers
    store it (no copy); otherwise the row positions stably sorted by parent.

    Example:
        >>> index = ChildIndex.build(np.array([0, 0, 1, 1, 1]), parents=3)
        >>> index.rows(1), index.rows(2)
        (array([2, 3, 4]), array([], dtype=int64))
    """

    offsets: np.ndarray
    order: np.ndarray | None

    @classmethod
    def build(cls, parent_ids: np.ndarray, parents: int) -> ChildIndex:
        """Index a level from its parent positions; ``parents``: rows of the previous level."""
        keys = np.asarray(parent_ids, dtype=np.int64)
        order: np.ndarray | None = None
        if keys.size > 1 and bool(np.any(keys[1:] < keys[:-1])):
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
        offsets = np.searchsorted(keys, np.arange(parents + 1, dtype=np.int64), side="left")
        return cls(offsets.astype(np.int64), order)

    def rows(self, parent: int) -> np.ndarray:
        """Row positions of the children of ``parent``, in stored order."""
        if not 0 <= parent < len(self.offsets) - 1:
            return np.empty(0, dtype=np.int64)
        start, stop = int(self.offsets[parent]), int(self.offsets[parent + 1])
        if self.order is None:
            return np.arange(start, stop, dtype=np.int64)
        return self.order[start:stop]


def child_index(table: pa.Table, parents: int) -> ChildIndex:
    """The :class:`ChildIndex` of a prepared level table (its ``internal:parent_id``)."""
    column = table.column(PARENT_ID)
    return ChildIndex.build(np.asarray(column.to_numpy(), dtype=np.int64), parents)


def child_counts(base: LevelTables, level: int) -> np.ndarray:
    """Children of every row of ``level``, counted from the ``__meta__`` files of its FOLDERs
    (for deeper levels with neither ``parent_id`` nor ``relative_path``)."""
    rows = _duck.fetch(
        base,
        (),
        f"SELECT {quote_ident(CURRENT_ID)}, {quote_ident(GDAL_VSI)} FROM "
        f"{quote_ident(level_view(level))} WHERE {quote_ident(TYPE)} = ?",
        [FOLDER],
        what=f"counting the children of level {level}",
    )
    counts = np.zeros(base.rows[level], dtype=np.int64)
    positions = rows.column(CURRENT_ID).to_pylist()
    paths = rows.column(GDAL_VSI).to_pylist()
    by_archive: dict[str, list[tuple[int, vsi.SubfilePath]]] = {}
    for position, path in zip(positions, paths, strict=True):
        if path.startswith(vsi.SUBFILE_PREFIX):
            span = vsi.parse_subfile(path)
            by_archive.setdefault(span.container, []).append((position, span))
        else:
            counts[position] = _rows_in(read_all(path), path)
    for archive, members in by_archive.items():
        entries = [HeaderEntry(span.offset, span.size) for _, span in members]
        labels = [f"__meta__ at bytes {e.offset}..{e.end}" for e in entries]
        with VSIFile(archive) as f:
            buffers = read_entries(f, entries, labels)
        for (position, _), buffer, label in zip(members, buffers, labels, strict=True):
            counts[position] = _rows_in(buffer, f"{archive}: {label}")
    return counts


def _rows_in(data: pa.Buffer | bytes, where: str) -> int:
    try:
        return int(pq.read_metadata(pa.BufferReader(data)).num_rows)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TacoFormatError(f"{where}: expected a __meta__ parquet file: {exc}") from exc


def prepare_tables(
    tables: Sequence[pa.Table], sources: Sequence[str], rule: VsiRule, where: str
) -> tuple[pa.Table, ...]:
    """:func:`prepare_levels`, counting children in ``__meta__`` files where nothing else links."""

    def counts(prepared: Sequence[pa.Table], k: int) -> np.ndarray:
        return child_counts(LevelTables(tuple(prepared), rule, where), k)

    return tuple(prepare_levels(tables, sources, counts))


def prepared_state(container: Container, sql_external_access: bool = False) -> QueryState:
    """The query state of a freshly opened container: offsets repaired, levels prepared
    (views built now when DuckDB may refuse a type, to fail at load)."""
    check_schemas(container.collection, f"{container.path}: COLLECTION")
    levels = repair_level_offsets(container.levels, container.vsi_rule, container.path)
    tables = prepare_tables(levels, container.sources, container.vsi_rule, container.path)
    loaded = LoadedLevels(tables, getattr(container, "deferred", ()))  # plugins may lack it
    base = LevelTables(loaded, container.vsi_rule, container.path, sql_external_access)
    if base.nbytes >= RELEASE_BYTES:
        release_memory()  # the decode's and the checks' freed buffers, before .data's
    if not all(_duck.keeps_arrow_types(base.schema(k)) for k in range(base.depth)):
        _duck.columns(base, (), "level0")
    return QueryState(base, container.collection, container.format)
