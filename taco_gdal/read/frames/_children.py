"""The children of one FOLDER row, in O(its children): no scan of the level, no ``__meta__`` read.

:func:`children_table` takes the rows of level ``k`` whose
``internal:parent_id`` is the FOLDER's position from a
:class:`~taco_gdal.read.query.prepared.ChildIndex` (built once per level and load),
keeps those that survive the filters active at level ``k`` (the surviving
positions are computed once per filtered view, then looked up with a binary
search) and gives them their GDAL paths with
:func:`~taco_gdal.read.query.sql.gdal_vsi_arrow`, the Arrow twin of the SQL
expression that builds ``internal:gdal_vsi`` (a DuckDB query per call would
cost more than the rows: registering a small table, running a query on it and
unregistering it).

The level tables already hold every child (``__meta__`` files repeat them;
misplaced level-1+ offsets are repaired at load), so navigation reads nothing.

Both caches hang off the :class:`~taco_gdal.read.query.state.LevelTables` object (weak
keys): every dataset derived from one load shares them, and they go with it.
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
    from taco_gdal.read.query.state import LevelTables, QueryState

__all__ = ["child_rows", "children_table", "survivors"]

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
    """Sorted positions (``internal:current_id``) of the rows of filtered ``view`` at ``level``.

    Evaluated once per view (view names are unique) and kept with the level tables.
    """
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
    """``rows`` that are in the sorted array ``alive`` (binary search: O(len(rows) log n))."""
    if not alive.size or not rows.size:
        return rows[:0]
    at = np.minimum(np.searchsorted(alive, rows), alive.size - 1)
    kept: np.ndarray = rows[alive[at] == rows]
    return kept


def child_rows(state: QueryState, level: int, parent: int) -> np.ndarray:
    """Positions in level ``level`` of the children of row ``parent`` that survive ``state``.

    Stored order; padding rows included (frames and tables drop them).

    Example:
        >>> child_rows(tiles._state, 1, 1).tolist()
        [3, 4, 5]
    """
    rows = _index(state.base, level).rows(parent)
    view = state.views.get(level)
    if view is not None:
        rows = _kept(rows, survivors(state, level, view))
    return rows


def children_table(state: QueryState, level: int, parent: int, *, what: str) -> pa.Table:
    """The children of row ``parent`` of level ``level - 1`` that survive ``state``, as Arrow.

    Columns as in the ``level<k>`` view: the stored columns (padding rows
    dropped), ``internal:gdal_vsi`` last; the reader's helper columns are kept
    (``to_frame`` drops them).

    Args:
        state: the dataset's query state.
        level: the children's level (1 .. max depth).
        parent: the FOLDER's row position at ``level - 1``.
        what: names the operation in error messages.

    Example:
        >>> children_table(tiles._state, 1, 0, what="read(0)").num_rows  # b02, b03, b04
        3
    """
    base = state.base
    rows = child_rows(state, level, parent)
    taken = base.table(level).take(pa.array(rows, pa.int64()))
    where = f"{what}: level {level} of {state.path}"
    paths = gdal_vsi_arrow(base.rule, taken, where)
    if GDAL_VSI in taken.column_names:
        taken = taken.drop_columns([GDAL_VSI])
    return taken.append_column(GDAL_VSI, paths).filter(not_padding_mask(taken))
