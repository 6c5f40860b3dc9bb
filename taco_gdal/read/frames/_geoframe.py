"""How a level's Arrow rows become one-CRS (geo)pandas columns.

A GeoDataFrame that geopandas can use has ONE active geometry column with one
CRS.  TACO levels may store several WKB columns (``istac:geometry`` in each
row's own CRS, ``stac:centroid`` / ``istac:centroid`` in EPSG:4326), so:

* the active column ``geometry`` holds the EPSG:4326 footprint of the first of
  ``istac:geometry``, ``stac:centroid``, ``istac:centroid`` (the footprints the
  spatial filters use, reprojected and cut at the antimeridian);
* every stored WKB column stays as it is stored, as plain bytes (decode with
  ``shapely.from_wkb``; ``istac:geometry`` is in the CRS its row's
  ``istac:crs`` names), so ``to_file`` sees a single geometry column;
* ``internal:*`` columns are hidden unless asked for, except
  ``internal:gdal_vsi`` (the sample's GDAL path) and ``internal:source_file``
  (which TACOCAT part a row lives in); ``internal:current_id`` becomes the
  frame's index, so ``read()`` still finds a FOLDER's children.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.format.names import CURRENT_ID, GDAL_VSI, GEOMETRY_COLUMNS, SOURCE_FILE
from taco_gdal.read._types import is_binary

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "FOOTPRINT",
    "VISIBLE_INTERNAL",
    "footprint_column",
    "footprints_for_rows",
    "hidden_internal",
    "visible",
]

FOOTPRINT: Final = "geometry"
"""Name of the active geometry column (EPSG:4326 footprints)."""
VISIBLE_INTERNAL: Final = (GDAL_VSI, SOURCE_FILE)
_INTERNAL: Final = "internal:"


def footprint_column(table: pa.Table) -> str | None:
    """The stored WKB column whose footprints become the active geometry, if any.

    Example:
        >>> footprint_column(pa.table({"stac:centroid": pa.array([b""], pa.binary())}))
        'stac:centroid'
    """
    for name in GEOMETRY_COLUMNS:
        if name in table.column_names:
            kind = table.schema.field(name).type
            if is_binary(kind):
                return name
    return None


def footprints_for_rows(
    table: pa.Table, column: str, state: QueryState | None, level: int
) -> np.ndarray:
    """EPSG:4326 footprints of ``table``'s rows, from the dataset's cache when it helps.

    Rows that carry ids take their footprints from the level's cache when a
    filter already filled it, or fill it when they are at least half of the
    level; a few rows of a level not yet filtered are computed alone, so a
    small frame never costs the whole level.

    Example:
        >>> table = tiles.to_arrow(0)
        >>> footprints_for_rows(table, "istac:geometry", tiles.state, 0)[0]
        <POLYGON ((-3.2 40.584, -3.084 40.584, -3.084 40.64, -3.2 40.64, -3.2 40.584))>
    """
    from taco_gdal.read.spatial._filter import cached_footprints, footprints_of
    from taco_gdal.read.spatial._footprints import compute_footprints

    if (
        state is not None
        and CURRENT_ID in table.column_names
        and level <= state.max_depth
        and column in state.base.schema(level).names
        and table.column(CURRENT_ID).null_count == 0
    ):
        ids = np.asarray(table.column(CURRENT_ID).to_numpy(zero_copy_only=False), dtype=np.int64)
        size = state.base.rows[level]
        cached = cached_footprints(state, level, column)
        if cached is None and 2 * len(ids) >= size:
            cached = footprints_of(state, level, column)
        if ids.size == 0 or (ids.min() >= 0 and ids.max() < size):
            if cached is not None:
                return cached.take(ids)
            return compute_footprints(_level_rows(state, level, ids, column), column).geometries
    return compute_footprints(table, column).geometries


def _level_rows(state: QueryState, level: int, ids: np.ndarray, column: str) -> pa.Table:
    """Rows ``ids`` of the stored level (its CRS columns too); of the columns still deferred,
    only ``column`` is decoded."""
    taken = pa.array(ids, pa.int64())
    base = state.base
    if column not in base.pending(level):
        return base.table(level).take(taken)
    values = base.take(level, column, ids)
    return base.light(level).take(taken).append_column(column, values)


def hidden_internal(name: object) -> bool:
    """Whether :func:`visible` hides column ``name`` (``internal:current_id`` becomes the index).

    Example:
        >>> hidden_internal("internal:offset"), hidden_internal("internal:gdal_vsi")
        (True, False)
    """
    return str(name).startswith(_INTERNAL) and name not in VISIBLE_INTERNAL and name != CURRENT_ID


def visible(frame: pd.DataFrame, internal: bool) -> pd.DataFrame:
    """``frame`` with ``internal:*`` hidden (unless ``internal``) and ids as the index.

    Example:
        >>> f = pd.DataFrame({"id": ["a"], "internal:offset": [1], "internal:current_id": [7]})
        >>> shown = visible(f, internal=False)
        >>> list(shown.columns), shown.index.name, int(shown.index[0])
        (['id'], 'internal:current_id', 7)
    """
    if internal:
        return frame
    hidden = [c for c in frame.columns if hidden_internal(c)]
    out = frame.drop(columns=hidden)
    if CURRENT_ID in out.columns:
        out = out.set_index(CURRENT_ID)
    return out
