"""Attribute columns as the values vector formats hold: text, numbers, booleans and times.

OGR formats have no list, binary or nested fields (it would store Python's ``repr``), so
:func:`vector_frame` writes WKB as WKT, arrays and objects as JSON, times as ISO 8601.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import shapely

if TYPE_CHECKING:
    import geopandas as gpd

__all__ = ["is_plain_type", "vector_frame", "vector_value"]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dt.datetime | dt.date | pd.Timestamp):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    raise TypeError(f"expected a JSON-encodable value, found {type(value).__name__}")


def _wkt(value: bytes) -> str:
    """WKT of WKB ``value``; bytes that are not WKB become hexadecimal text."""
    try:
        return str(shapely.to_wkt(shapely.from_wkb(value), rounding_precision=-1))
    except shapely.errors.GEOSException:
        return value.hex()


def vector_value(value: Any) -> Any:
    """One attribute value as a vector format stores it (None and scalars unchanged).

    Example:
        >>> import numpy as np, shapely
        >>> vector_value(np.array([4, 64, 64])), vector_value(shapely.Point(1, 2).wkb)
        ('[4, 64, 64]', 'POINT (1 2)')
    """
    if value is None or (np.ndim(value) == 0 and not isinstance(value, dict) and pd.isna(value)):
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return _wkt(bytes(value))
    if isinstance(value, shapely.Geometry):
        return str(shapely.to_wkt(value, rounding_precision=-1))
    if isinstance(value, np.ndarray | list | tuple | dict):
        return json.dumps(value, default=_json_default)
    if isinstance(value, dt.datetime | dt.date | pd.Timestamp):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    return value


def is_plain_type(data_type: pa.DataType) -> bool:
    """True for an Arrow type every OGR vector format holds as it is (text, numbers, times).

    Example:
        >>> is_plain_type(pa.binary()), is_plain_type(pa.timestamp("us"))
        (False, True)
    """
    return bool(
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_integer(data_type)
        or pa.types.is_floating(data_type)
        or pa.types.is_boolean(data_type)
        or pa.types.is_timestamp(data_type)
        or pa.types.is_date(data_type)
    )


def _needs_text(column: pd.Series) -> bool:
    if isinstance(column.dtype, pd.ArrowDtype):
        return not is_plain_type(column.dtype.pyarrow_dtype)
    if column.dtype == object or isinstance(column.dtype, pd.CategoricalDtype):
        return True
    return str(column.dtype) == "geometry"


def _is_time(column: pd.Series) -> bool:
    if isinstance(column.dtype, pd.ArrowDtype):
        return bool(pa.types.is_temporal(column.dtype.pyarrow_dtype))
    return bool(pd.api.types.is_datetime64_any_dtype(column.dtype))


def vector_frame(frame: gpd.GeoDataFrame, *, times_as_text: bool = False) -> gpd.GeoDataFrame:
    """A plain GeoDataFrame copy of ``frame`` that every OGR vector format writes faithfully.

    Other geometry, WKB, array, list, dict or Python time columns become text (WKT,
    JSON, ISO 8601); ``times_as_text`` makes datetime columns text too (for ``json``).

    Example:
        >>> import geopandas as gpd, numpy as np, shapely
        >>> f = gpd.GeoDataFrame({"shape": [np.array([1, 2])], "c": [shapely.Point(0, 0).wkb]},
        ...                      geometry=[shapely.Point(0, 0)], crs="EPSG:4326")
        >>> vector_frame(f)[["shape", "c"]].iloc[0].tolist()
        ['[1, 2]', 'POINT (0 0)']
    """
    import geopandas as gpd

    active = frame.geometry.name
    columns: dict[Any, Any] = {}
    for name in frame.columns:
        column = frame[name]
        if name == active:
            continue
        if _needs_text(column) or (times_as_text and _is_time(column)):
            values = column.astype(object).to_numpy()
            columns[name] = pd.Series(
                [vector_value(v) for v in values], index=frame.index, dtype=object
            )
        else:
            columns[name] = pd.Series(column, index=frame.index)
    plain = gpd.GeoDataFrame(
        pd.DataFrame(columns, index=frame.index), geometry=frame.geometry.to_numpy(), crs=frame.crs
    )
    return plain if active == plain.geometry.name else plain.rename_geometry(active)
