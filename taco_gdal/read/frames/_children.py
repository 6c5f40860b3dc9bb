"""The children of one FOLDER row, in O(its children): no scan of the level, no ``__meta__`` read.

Paths come from :func:`~taco_gdal.read.query.sql.gdal_vsi_arrow` (cheaper than a query).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from taco_gdal.format.names import CURRENT_ID, GDAL_VSI
from taco_gdal.read.query import _duck
from taco_gdal.read.query.prepared import ChildIndex, child_index
from taco_gdal.read.query.sql import gdal_vsi_arrow, not_padding_mask, quote_ident

if TYPE_CHECKING:
    from taco_gdal.read.opening.containers.base import VsiRule
    from taco_gdal.read.query.state import LevelTables, QueryState

__all__ = ["child_rows", "children_table", "rows_table", "survivors", "with_paths"]

_LOCK = threading.Lock()
_INDEXES: weakref.WeakKeyDictionary[LevelTables, dict[int, ChildIndex]] = (
    weakref.WeakKeyDictionary()
)
_SURVIVORS: weakref.WeakKeyDictionary[LevelTables, dict[str, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _index(base: LevelTables, level: int) -> ChildIndex:
    with _LOCK:
        known = _INDEXES.setdefault(base, {})
        index = known.get(level)
    if index is None:  # built outside the lock; two threads may both build it, once each
        index = child_index(base.light(level), base.rows[level - 1])
        with _LOCK:
            known[level] = index
    return index


def survivors(state: QueryState, level: int, view: str) -> np.ndarray:
    """Sorted positions (``internal:current_id``) of the rows of filtered ``view``, cached."""
    base = state.base
    with _LOCK:
        known = _SURVIVORS.setdefault(base, {})
        found = known.get(view)
    if found is not None:
        return found
    table = _duck.fetch(
        base,
        state.steps,
        f"SELECT {quote_ident(CURRENT_ID)} FROM {quote_ident(view)}",
        what=f"finding the level-{level} rows that survive the filters",
    )
    positions = np.unique(np.asarray(table.column(0).to_numpy(), dtype=np.int64))
    with _LOCK:
        known[view] = positions
    return positions


def _kept(rows: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """``rows`` that are in the sorted array ``alive`` (binary search)."""
    if not alive.size or not rows.size:
        return rows[:0]
    at = np.minimum(np.searchsorted(alive, rows), alive.size - 1)
    kept: np.ndarray = rows[alive[at] == rows]
    return kept


def child_rows(state: QueryState, level: int, parent: int) -> np.ndarray:
    """Positions in ``level`` of the children of row ``parent`` that survive ``state`` (stored
    order, padding included)."""
    rows = _index(state.base, level).rows(parent)
    view = state.views.get(level)
    if view is not None:
        rows = _kept(rows, survivors(state, level, view))
    return rows


def children_table(state: QueryState, level: int, parent: int, *, what: str) -> pa.Table:
    """The children of row ``parent`` of level ``level - 1`` that survive ``state``, as Arrow
    with the ``level<k>`` view's columns."""
    rows = child_rows(state, level, parent)
    return rows_table(state, level, rows, f"{what}: level {level} of {state.path}")


def rows_table(state: QueryState, level: int, rows: np.ndarray, where: str) -> pa.Table:
    """Rows ``rows`` of ``level`` with their GDAL paths (last), padding dropped."""
    taken = state.base.table(level).take(pa.array(rows, pa.int64()))
    return with_paths(state.base.rule, taken, where).filter(not_padding_mask(taken))


def with_paths(rule: VsiRule, table: pa.Table, where: str) -> pa.Table:
    """``table`` with its ``internal:gdal_vsi`` computed by ``rule``, as the last column."""
    paths = gdal_vsi_arrow(rule, table, where)
    if GDAL_VSI in table.column_names:
        table = table.drop_columns([GDAL_VSI])
    return table.append_column(GDAL_VSI, paths)
