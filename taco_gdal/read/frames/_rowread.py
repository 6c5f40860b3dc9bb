"""``TacoDataset.read(key)`` from one Arrow row, without building the whole level-0 frame.

``ds.read(i).read(j).read(k)`` used to turn every level-0 row into pandas to look
at one of them. Here the row is found in the Arrow rows ``.data`` would show
(same positions, same first match of an id), and only that row's type, id,
``internal:current_id`` and GDAL path are read. Whatever this cannot answer
exactly as ``.data.read(key)`` would (a key out of range or unknown, a view
without the columns navigation needs, a row of an unexpected type) is left to
that call, so errors keep their one wording.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.format.names import CURRENT_ID, FILE, FOLDER, GDAL_VSI, ID, TYPE
from taco_gdal.read.frames.dataframe import TacoDataFrame, child_frame

if TYPE_CHECKING:
    from taco_gdal.read.frames._direct import DirectRows
    from taco_gdal.read.query.state import QueryState

__all__ = ["read_row"]


def _single(table: pa.Table, name: str) -> pa.ChunkedArray | None:
    at = table.schema.get_field_index(name)  # -1: absent or more than one
    return None if at < 0 else table.column(at)


def _position(table: pa.Table, key: object) -> int | None:
    """The row ``key`` names (as ``row_position`` finds it), or None to let the frame answer."""
    count = table.num_rows
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        position = int(key)
        return position % count if -count <= position < count else None
    ids = _single(table, ID)
    if not isinstance(key, str) or ids is None or not pa.types.is_string(ids.type):
        return None
    found = pc.index(ids, key).as_py()
    return None if found is None or found < 0 else int(found)


def read_row(state: QueryState, rows: DirectRows, key: object) -> str | TacoDataFrame | None:
    """What ``.data.read(key)`` returns, or None when only the frame can say it.

    Args:
        state: the dataset's query state (the children's frame needs it).
        rows: the current level-0 rows, as ``.data`` would show them.
        key: a position (negative: from the end) or an id.
    """
    table = rows.table
    kinds, parents = _single(table, TYPE), _single(table, CURRENT_ID)
    stored_paths = _single(table, GDAL_VSI)
    if kinds is None or parents is None or (rows.paths is None and stored_paths is None):
        return None
    position = _position(table, key)
    if position is None:
        return None
    kind = kinds[position].as_py()
    if kind == FILE:
        if rows.paths is not None:
            path: Any = rows.paths(np.array([position], dtype=np.int64))[0].as_py()
        else:
            path = stored_paths[position].as_py() if stored_paths is not None else None
        return None if path is None else str(path)
    parent = parents[position].as_py()
    if kind != FOLDER or state.max_depth < 1 or parent is None:
        return None
    ids = _single(table, ID)
    sample = ids[position].as_py() if ids is not None else None
    return child_frame(state, 1, int(parent), internal=False, what=f"read({str(sample)!r})")
