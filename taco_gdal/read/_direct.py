"""The rows of a level no filter touched, straight from its Arrow table.

``ds.data`` on a freshly loaded dataset asks DuckDB for ``SELECT * FROM
level0``: the level table with padding hidden and ``internal:gdal_vsi``
appended.  For a million rows that copy costs more than everything else
``.data`` does, and the answer is already in memory.  :func:`level_rows`
builds the same table in Arrow (the GDAL path column computed once per
loaded level and kept), and says ``None`` when it cannot promise the same
schema as DuckDB's, so the caller asks DuckDB as before.

Example:
    >>> rows = level_rows(ds.state, 0)
    >>> rows.num_rows, rows.column_names[-1]
    (4, 'internal:gdal_vsi')
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.format.names import CURRENT_ID, GDAL_VSI
from taco_gdal.read import _duck
from taco_gdal.read.query import gdal_vsi_arrow, not_padding_mask, quote_ident
from taco_gdal.read.state import LevelTables, QueryState, RowSet, level_view

__all__ = ["filtered_rows", "level_rows"]

_cache: weakref.WeakKeyDictionary[LevelTables, dict[int, _Level | None]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


@dataclass(frozen=True)
class _Level:
    every: pa.Table
    """Every stored row (padding too), ``internal:gdal_vsi`` last: positions index it."""
    shown: pa.Table
    """The rows ``level<k>`` shows (padding hidden)."""
    positions: np.ndarray
    """The stored positions of ``shown``'s rows (sorted)."""


def level_rows(state: QueryState, level: int) -> pa.Table | None:
    """``SELECT * FROM level<k>`` without DuckDB, or ``None`` when it must be asked.

    The result is built once per loaded level (datasets derived from one load
    share it) and is immutable, so every caller gets the same table.
    """
    rows = _level(state, level)
    return None if rows is None else rows.shown


def filtered_rows(state: QueryState) -> pa.Table | None:
    """The current level-0 view's rows when only filters made it, or ``None``.

    Filters remove rows and change nothing else, so DuckDB is asked only for
    the surviving row positions (one integer column, in the view's order) and
    the rows are taken from the level table in memory.
    """
    if state.view == level_view(0):
        return level_rows(state, 0)
    if not state.only_filters:
        return None
    rows = _level(state, 0)
    if rows is None:
        return None
    decided = [step.rows for step in state.steps]
    if all(step.level == 0 for step in state.steps) and all(r is not None for r in decided):
        return rows.every.take(pa.array(_intersection(rows, decided), pa.int64()))
    kept = _duck.fetch(
        state.base,
        state.steps,
        f"SELECT {quote_ident(CURRENT_ID)} FROM {quote_ident(state.view)}",
        what=".data",
    ).column(0)
    return rows.every.take(kept)


def _intersection(rows: _Level, decided: list[RowSet | None]) -> np.ndarray:
    """Sorted stored positions kept by every row set and shown by the level (O(rows) flags)."""
    sets = sorted((r.positions() for r in decided if r is not None), key=len)
    kept = sets[0] if sets else rows.positions
    flags = np.zeros(rows.every.num_rows, dtype=bool)
    for other in [*sets[1:], rows.positions]:
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
    table = base.tables[level]
    vsi = gdal_vsi_arrow(base.rule, table, where=f"{base.where}: level {level}")
    if GDAL_VSI in table.column_names:
        table = table.drop_columns([GDAL_VSI])
    table = table.append_column(GDAL_VSI, vsi)
    expected = _duck.fetch(
        base,
        (),
        f"SELECT * FROM {quote_ident(level_view(level))} LIMIT 0",
        what=f"schema of level {level}",
    ).schema
    if not table.schema.equals(expected, check_metadata=False):
        return None  # a type DuckDB converts differently: let DuckDB answer
    every = pa.Table.from_arrays(table.columns, schema=expected)
    keep = not_padding_mask(every)
    if pc.all(keep).as_py():
        return _Level(every, every, np.arange(every.num_rows, dtype=np.int64))
    mask = pc.fill_null(keep, False).to_numpy(zero_copy_only=False)
    return _Level(every, every.filter(keep), np.flatnonzero(mask))
