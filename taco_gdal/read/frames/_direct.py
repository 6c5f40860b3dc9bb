"""The rows of a level only filters touched, straight from its Arrow table.

Cheaper than DuckDB's copy of ``SELECT * FROM level0``; :func:`level_rows` says ``None``
when it cannot promise DuckDB's schema, and the caller asks DuckDB.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.format.names import CURRENT_ID, GDAL_VSI
from taco_gdal.read.frames._lazyarrow import RowArrays
from taco_gdal.read.frames._lazystr import RowStrings
from taco_gdal.read.opening.containers._deferred import LoadedLevels
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import gdal_vsi_arrow, not_padding_mask, quote_ident
from taco_gdal.read.query.state import LevelTables, QueryState, RowSet, level_view

__all__ = ["DirectRows", "LazyColumn", "filtered_batches", "filtered_rows", "level_rows"]

_cache: weakref.WeakKeyDictionary[LevelTables, dict[int, _Level | None]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


@dataclass(frozen=True)
class LazyColumn:
    """A deferred column a frame computes for the rows it shows, placed before ``before``."""

    name: str
    type: pa.DataType
    before: tuple[str, ...]
    compute: RowArrays


@dataclass(frozen=True)
class DirectRows:
    """Rows of a level taken from memory: the stored columns, their GDAL paths, lazy columns."""

    table: pa.Table
    paths: RowStrings | None
    lazy: tuple[LazyColumn, ...] = ()

    def to_table(self) -> pa.Table:
        """The rows with every column computed, ``internal:gdal_vsi`` last: what DuckDB answers."""
        return self._complete(self.table, None)

    def to_tables(self, batch: int) -> Iterator[pa.Table]:
        """:meth:`to_table` ``batch`` rows at a time: lazy columns and GDAL paths are
        computed for each batch alone, so memory follows the batch, not the level."""
        count = self.table.num_rows
        for first in range(0, count, batch):
            rows = np.arange(first, min(first + batch, count))
            yield self._complete(self.table.slice(first, batch), rows)

    def _complete(self, table: pa.Table, rows: np.ndarray | None) -> pa.Table:
        for column in self.lazy:
            position = next(
                (table.column_names.index(n) for n in column.before if n in table.column_names),
                table.num_columns,
            )
            table = table.add_column(position, column.name, column.compute(rows))
        return table if self.paths is None else table.append_column(GDAL_VSI, self.paths(rows))


@dataclass(frozen=True)
class _Level:
    every: pa.Table
    """Every stored row (padding too); ``internal:gdal_vsi`` (last) only when stored."""
    shown: np.ndarray
    """Sorted stored positions of the rows ``level<k>`` shows."""
    rule: VsiRule
    where: str
    deferred: tuple[tuple[str, pa.DataType, tuple[str, ...]], ...] = ()
    """Columns left in the file: name, type and the stored columns after it."""
    levels: LoadedLevels | None = None
    level: int = 0

    def rows(self, positions: np.ndarray | None) -> DirectRows:
        """The rows at these stored positions (``None``: the rows the level shows)."""
        stored = self.shown if positions is None else positions
        whole = positions is None and len(stored) == self.every.num_rows
        table = self.every if whole else self.every.take(pa.array(stored, pa.int64()))
        shown = table.drop_columns([GDAL_VSI]) if GDAL_VSI in table.column_names else table
        lazy = tuple(
            LazyColumn(name, kind, before, self._deferred(name, None if whole else stored))
            for name, kind, before in self.deferred
        )
        return DirectRows(shown, self._paths(table), lazy)

    def _deferred(self, name: str, stored: np.ndarray | None) -> RowArrays:
        levels, level = self.levels, self.level
        assert levels is not None

        def values(rows: np.ndarray | None) -> pa.Array | pa.ChunkedArray:
            if rows is None and stored is None:
                return levels.column(level, name)  # decoded on the first call, once
            chosen = stored if rows is None else rows if stored is None else stored[rows]
            assert chosen is not None
            return levels.take(level, name, chosen)

        return values

    def _paths(self, table: pa.Table) -> RowStrings:
        rule, where = self.rule, self.where

        def paths(rows: np.ndarray | None) -> pa.Array:
            chosen = table if rows is None else table.take(pa.array(rows, pa.int64()))
            return gdal_vsi_arrow(rule, chosen, where=where).cast(pa.string())

        return paths


def level_rows(state: QueryState, level: int) -> DirectRows | None:
    """``SELECT * FROM level<k>`` without DuckDB (prepared once per load), or ``None``."""
    rows = _level(state, level)
    return None if rows is None else rows.rows(None)


def filtered_rows(state: QueryState) -> DirectRows | None:
    """The current level-0 view's rows when only filters made it (DuckDB asked at most for
    the surviving positions), or ``None``."""
    found = _filtered(state)
    return None if found is None else found[0].rows(found[1])


def filtered_batches(state: QueryState, batch: int) -> Iterator[pa.Table] | None:
    """:func:`filtered_rows` as tables of ``batch`` rows, each taken from the loaded level
    on its own (no copy of the whole view), or ``None``."""
    found = _filtered(state)
    if found is None:
        return None
    rows, kept = found
    if kept is None and len(rows.shown) == rows.every.num_rows:
        return rows.rows(None).to_tables(batch)
    positions = rows.shown if kept is None else kept
    return (
        rows.rows(positions[first : first + batch]).to_table()
        for first in range(0, len(positions), batch)
    )


def _filtered(state: QueryState) -> tuple[_Level, np.ndarray | None] | None:
    """The loaded level 0 and the stored positions the view keeps (``None``: what the level
    shows), when only filters made the view."""
    if state.view == level_view(0):
        rows = _level(state, 0)
        return None if rows is None else (rows, None)
    if not state.only_filters:
        return None
    rows = _level(state, 0)
    if rows is None:
        return None
    decided = [step.rows for step in state.steps]
    if all(step.level == 0 for step in state.steps) and all(r is not None for r in decided):
        return rows, _intersection(rows, decided)
    kept = _duck.fetch(
        state.base,
        state.steps,
        f"SELECT {quote_ident(CURRENT_ID)} FROM {quote_ident(state.view)}",
        what=".data",
    ).column(0)
    return rows, kept.to_numpy()


def _intersection(rows: _Level, decided: list[RowSet | None]) -> np.ndarray:
    """Sorted stored positions kept by every row set and shown by the level."""
    sets = sorted((r.positions() for r in decided if r is not None), key=len)
    kept = sets[0] if sets else rows.shown
    flags = np.zeros(rows.every.num_rows, dtype=bool)
    for other in [*sets[1:], rows.shown]:
        flags[:] = False
        flags[other] = True
        kept = kept[flags[kept]]
    return kept


def _level(state: QueryState, level: int) -> _Level | None:
    base = state.base
    with _lock:
        known = _cache.setdefault(base, {})
        if level in known:
            return known[level]
    built = _build(state, level)
    with _lock:
        return _cache.setdefault(base, {}).setdefault(level, built)


def _build(state: QueryState, level: int) -> _Level | None:
    base = state.base
    schema = base.schema(level)  # deferred columns included, none decoded
    fields = [pa.field(f.name, f.type) for f in schema if f.name != GDAL_VSI]
    with_paths = pa.schema(fields).append(pa.field(GDAL_VSI, pa.string()))
    if _duck.keeps_arrow_types(pa.schema(fields)):
        expected = with_paths  # what DuckDB would answer, known without asking it
    else:
        expected = _duck.fetch(
            base,
            (),
            f"SELECT * FROM {quote_ident(level_view(level))} LIMIT 0",
            what=f"schema of level {level}",
        ).schema
    if not with_paths.equals(expected, check_metadata=False):
        return None  # a type DuckDB converts differently: let DuckDB answer
    table = base.light(level)  # after any query above, which decodes every column
    pending = base.pending(level)
    names = [f.name for f in fields if f.name not in pending]
    every = pa.Table.from_arrays(
        [table.column(name) for name in names], schema=pa.schema([expected.field(n) for n in names])
    )
    if base.rule.kind == "stored":  # the paths are a column of the table: keep it, last
        every = every.append_column(GDAL_VSI, table.column(GDAL_VSI))
    order = [f.name for f in fields]
    deferred = tuple(
        (name, schema.field(name).type, tuple(order[order.index(name) + 1 :])) for name in pending
    )
    keep = not_padding_mask(every)
    if pc.all(keep).as_py():
        shown = np.arange(every.num_rows, dtype=np.int64)
    else:
        shown = np.flatnonzero(pc.fill_null(keep, False).to_numpy(zero_copy_only=False))
    where = f"{base.where}: level {level}"
    return _Level(every, shown, base.rule, where, deferred, base.loaded_levels, level)
