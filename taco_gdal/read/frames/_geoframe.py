"""How a level's Arrow rows become one-CRS (geo)pandas columns.

``geometry`` holds the EPSG:4326 footprints (geopandas wants one geometry column, one
CRS); every stored WKB column stays bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.format.names import CURRENT_ID, GDAL_VSI, INTERNAL_PREFIX
from taco_gdal.read._types import is_binary
from taco_gdal.read.frames._lazyarrow import LazyArrowArray
from taco_gdal.read.frames._lazystr import LazyStringArray, RowStrings, string_dtype
from taco_gdal.read.query.sql import VISIBLE_INTERNAL, is_hidden
from taco_gdal.read.spatial._lazygeom import LazyGeometryArray, RowGeometries
from taco_gdal.read.spatial.crs import WGS84, footprint_column

if TYPE_CHECKING:
    from taco_gdal.read.frames._direct import LazyColumn
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "FOOTPRINT",
    "arrow_frame",
    "footprints_for_rows",
    "footprints_of_rows",
    "hidden_internal",
    "visible",
]

FOOTPRINT: Final = "geometry"
"""Name of the active geometry column (EPSG:4326 footprints)."""


def footprints_for_rows(
    table: pa.Table, column: str, state: QueryState | None, level: int
) -> np.ndarray:
    """EPSG:4326 footprints of ``table``'s rows, from the level's cache when filled or when
    the rows are half the level or more; a few rows are computed alone."""
    from taco_gdal.read.spatial.filters import cached_footprints, footprints_of
    from taco_gdal.read.spatial.footprints import compute_footprints

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
    """Rows ``ids`` of the stored level; of the deferred columns only ``column`` is decoded."""
    taken = pa.array(ids, pa.int64())
    base = state.base
    if column not in base.pending(level):
        return base.table(level).take(taken)
    values = base.take(level, column, ids)
    return base.light(level).take(taken).append_column(column, values)


def hidden_internal(name: object) -> bool:
    """Whether :func:`visible` hides column ``name`` (``internal:current_id`` becomes the index)."""
    return (
        str(name).startswith(INTERNAL_PREFIX)
        and name not in VISIBLE_INTERNAL
        and name != CURRENT_ID
    )


def visible(frame: pd.DataFrame, internal: bool) -> pd.DataFrame:
    """``frame`` with ``internal:*`` hidden (unless ``internal``) and ids as the index."""
    if internal:
        return frame
    hidden = [c for c in frame.columns if hidden_internal(c)]
    out = frame.drop(columns=hidden)
    if CURRENT_ID in out.columns:
        out = out.set_index(CURRENT_ID)
    return out


def _binary_as_arrow(kind: pa.DataType) -> pd.ArrowDtype | None:
    """Keep WKB (binary) columns in Arrow: no million Python ``bytes`` objects up front."""
    return pd.ArrowDtype(kind) if is_binary(kind) else None


def _shown_positions(names: Sequence[str], index: pd.RangeIndex | None) -> list[int]:
    """Positions of the columns :func:`visible` keeps (and not ``index``'s column)."""
    return [
        i
        for i, name in enumerate(names)
        if not hidden_internal(name) and (index is None or name != CURRENT_ID)
    ]


def _row_range_index(table: pa.Table) -> pd.RangeIndex | None:
    """``internal:current_id`` as a ``RangeIndex`` when it is ``0..n-1``, not converted."""
    if table.column_names.count(CURRENT_ID) != 1:
        return None
    column = table.column(CURRENT_ID)
    if column.type != pa.int64() or column.null_count or column.num_chunks != 1:
        return None
    n = len(column)
    if n == 0 or not np.array_equal(column.chunk(0).to_numpy(), np.arange(n)):
        return None
    return pd.RangeIndex(n, name=CURRENT_ID)


def footprints_of_rows(
    table: pa.Table,
    column: str,
    state: QueryState | None,
    level: int,
    where: str,
    source: LazyColumn | None = None,
) -> RowGeometries:
    """The function a :class:`LazyGeometryArray` calls: footprints of some rows of ``table``
    (a bad value raises :class:`TacoFormatError` naming ``where``)."""

    def compute(rows: np.ndarray | None) -> np.ndarray:
        chosen = table if rows is None else table.take(pa.array(rows, pa.int64()))
        if source is not None and column not in chosen.column_names:
            chosen = chosen.append_column(column, source.compute(rows))
        try:
            return footprints_for_rows(chosen, column, state, level)
        except TacoQueryError as exc:
            raise TacoFormatError(f"{where}: {exc}") from exc

    return compute


def arrow_frame(
    table: pa.Table,
    state: QueryState | None,
    level: int,
    where: str = "",
    *,
    internal: bool = True,
    paths: RowStrings | None = None,
    lazy: Sequence[LazyColumn] = (),
) -> pd.DataFrame:
    """Arrow result -> a pandas DataFrame, or a GeoDataFrame when there is geometry.

    ``paths`` and ``lazy`` become lazy columns (``internal:gdal_vsi`` last, the others in
    their stored place); ``state`` and ``level`` locate the cached footprints.
    """
    table = table.drop_columns([c for c in table.column_names if is_hidden(c)])
    lazy = [c for c in lazy if not is_hidden(c.name)]
    extra = pa.schema([pa.field(c.name, c.type) for c in lazy])
    column = footprint_column(pa.unify_schemas([table.schema, extra]).empty_table())
    dtype = None if paths is None else string_dtype()
    if paths is not None and dtype is None:  # strings as Python objects: build them now
        table = table.append_column(GDAL_VSI, paths(None))
    index = None if internal else _row_range_index(table)
    shown = table if internal else table.select(_shown_positions(table.column_names, index))
    plain = shown.to_pandas(types_mapper=_binary_as_arrow)
    if index is not None:
        plain.index = index
    for deferred in lazy:
        if not internal and hidden_internal(deferred.name):
            continue
        values = LazyArrowArray.lazy(deferred.compute, table.num_rows, deferred.type)
        before = [plain.columns.get_loc(n) for n in deferred.before if n in plain.columns]
        place = before[0] if before else len(plain.columns)
        plain.insert(place, deferred.name, pd.Series(values, index=plain.index, copy=False))
    if paths is not None and dtype is not None:
        vsi = LazyStringArray.lazy(paths, table.num_rows, dtype)
        plain[GDAL_VSI] = pd.Series(vsi, index=plain.index, copy=False)
    if column is None:
        return visible(plain, internal)
    source = next((c for c in lazy if c.name == column), None)
    footprints = LazyGeometryArray(
        footprints_of_rows(table, column, state, level, where, source),
        table.num_rows,
        crs=WGS84,
    )
    name = FOOTPRINT if FOOTPRINT not in plain.columns else f"{FOOTPRINT}_4326"
    plain[name] = gpd.GeoSeries(footprints, index=plain.index)
    geo: pd.DataFrame = gpd.GeoDataFrame(
        visible(plain, internal), geometry=name, crs=WGS84, copy=False
    )
    return geo
