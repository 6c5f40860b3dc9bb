"""CRS-correct ``filter_bbox`` / ``filter_geometry``: footprints once per dataset, then row sets.

Footprints are cached with the dataset's level tables; matching rows enter the
query as a plain-values :class:`~taco_gdal.read.query.state.RowSet` step, so the
state still pickles and DuckDB never needs its spatial extension.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, GEOMETRY_COLUMNS
from taco_gdal.read._types import is_binary
from taco_gdal.read.query import _duck
from taco_gdal.read.query.filters import apply_predicate, apply_row_set
from taco_gdal.read.query.prepared import decode_points
from taco_gdal.read.query.sql import is_hidden
from taco_gdal.read.query.state import LevelTables, QueryState, RowSet, new_view_name
from taco_gdal.read.spatial.crs import LONLAT_POINTS, WGS84
from taco_gdal.read.spatial.footprints import Footprints, compute_footprints
from taco_gdal.read.spatial.queries import (
    box_geometry,
    check_box,
    query_geometry,
    warn_outside_extent,
)

__all__ = [
    "cached_footprints",
    "filter_box",
    "filter_shape",
    "footprints_of",
    "geometry_column",
]

_CACHE: weakref.WeakKeyDictionary[LevelTables, dict[tuple[int, str], Footprints]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def _new_lock_after_fork() -> None:
    """A fork may happen while another thread holds the lock."""
    global _LOCK
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_after_fork)


def geometry_column(state: QueryState, level: int, requested: str) -> str:
    """The stored WKB column a spatial filter uses at ``level`` (``"auto"``: the first found).

    Raises:
        TacoQueryError: no such column, or not WKB (binary).

    Example:
        >>> geometry_column(tiles.state, 0, "auto")  # tiles.tacozip: ISTAC footprints
        'istac:geometry'
        >>> geometry_column(ds.state, 0, "auto")  # dataset.tacozip: STAC only
        'stac:centroid'
    """
    schema = state.base.schema(level)
    viewed = dict(_duck.columns(state.base, state.steps, state.relation(level)))
    names = [c for c in viewed if c in schema.names]
    visible = [c for c in viewed if not is_hidden(c)]
    if requested == "auto":
        found = next((c for c in GEOMETRY_COLUMNS if c in names), None)
        if found is None:
            raise TacoQueryError(
                f"{state.path}: expected footprints at level {level} (a WKB column "
                f"{' / '.join(GEOMETRY_COLUMNS)}), found none among {visible}. Spatial "
                "filters need them: write the samples with taco_gdal.samples_from_rasters() "
                "(it reads each raster's STAC and ISTAC metadata), or add the STAC extension "
                "(stac:crs, stac:geotransform, stac:tensor_shape give stac:centroid) or the "
                "ISTAC extension (istac:geometry) to the samples; a WKB column of another "
                "name is used with geometry_col='<name>'"
            )
        requested = found
    elif requested not in names:
        raise TacoQueryError(
            f"{state.path}: geometry column {requested!r} not found at level {level}; the level "
            f"has columns {visible}"
        )
    kind = schema.field(requested).type
    if not is_binary(kind) and not pa.types.is_null(kind):
        raise TacoQueryError(
            f"{state.path}: geometry column {requested!r} at level {level} has type "
            f"{viewed[requested]}, expected WKB (BLOB)"
        )
    return requested


def cached_footprints(state: QueryState, level: int, column: str) -> Footprints | None:
    """The level's footprints if a spatial filter (or a large frame) already computed them."""
    with _LOCK:
        return _CACHE.get(state.base, {}).get((level, column))


def footprints_of(state: QueryState, level: int, column: str) -> Footprints:
    """The level's EPSG:4326 footprints of ``column``, computed once per loaded dataset.

    Example:
        >>> footprints_of(tiles.state, 0, "istac:geometry").extent
        (-3.2, 40.584, -2.78..., 40.76)
    """
    base = state.base
    cached = cached_footprints(state, level, column)
    if cached is not None:
        return cached
    points = None
    if column in LONLAT_POINTS and column in base.schema(level).names:
        points = decode_points(base.column(level, column))  # lon/lat points: no shapely per row
    if points is not None:
        computed = Footprints.of_points(column, *points)
    else:
        table = base.table(level)
        computed = compute_footprints(table, column, where=f"{state.path} level {level}")
    with _LOCK:
        return _CACHE.setdefault(base, {}).setdefault((level, column), computed)


def _level(state: QueryState, level: object) -> int:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TacoQueryError(f"level must be an int, got {type(level).__name__} {level!r}")
    if not 0 <= level <= state.max_depth:
        raise TacoQueryError(f"level must be 0..{state.max_depth} for {state.path}, got {level}")
    return level


def _apply_query(
    state: QueryState, level: int, column: str, query: Any, call: str, text: str
) -> QueryState:
    """Keep the rows of ``level`` whose ``column`` footprint meets the 4326 ``query``."""
    footprints = footprints_of(state, level, column)
    rows = footprints.matches(query)
    if rows.size == 0:  # only then can the query miss the whole extent
        warn_outside_extent(footprints, query, call)
    relation = state.relation(level)
    if CURRENT_ID not in dict(_duck.columns(state.base, state.steps, relation)):
        raise TacoQueryError(
            f"{state.path}: a spatial filter finds rows by {CURRENT_ID!r}, which the current "
            "view dropped (keep it in sql() queries)"
        )
    view = new_view_name()
    if len(footprints) == 0:
        return apply_predicate(state, level, view, "FALSE", {}, text)
    return apply_row_set(state, level, view, RowSet.of(np.sort(rows)), text)


def filter_box(
    state: QueryState,
    box: tuple[Any, Any, Any, Any],
    geometry_col: str,
    level: int,
    crs: str = WGS84,
) -> QueryState:
    """See :meth:`TacoDataset.filter_bbox`."""
    checked = check_box(box, crs)
    level = _level(state, level)
    column = geometry_column(state, level, geometry_col)
    query = box_geometry(checked, crs)
    shown = ", ".join(f"{v:.6g}" for v in checked)
    where = "" if crs == WGS84 else f", crs={crs!r}"
    text = f"filter_bbox({shown}{where}, {column!r}, level={level})"
    return _apply_query(state, level, column, query, f"filter_bbox{tuple(checked)}", text)


def filter_shape(
    state: QueryState, geometry: Any, geometry_col: str, level: int, crs: str = WGS84
) -> QueryState:
    """See :meth:`TacoDataset.filter_geometry`."""
    query = query_geometry(geometry, crs)
    level = _level(state, level)
    column = geometry_column(state, level, geometry_col)
    kind = getattr(geometry, "geom_type", type(geometry).__name__)
    bounds = ", ".join(f"{v:.6g}" for v in query.bounds)
    where = "" if crs == WGS84 else f", crs={crs!r}"
    text = f"filter_geometry({kind} within ({bounds}){where}, {column!r}, level={level})"
    return _apply_query(state, level, column, query, "filter_geometry", text)
