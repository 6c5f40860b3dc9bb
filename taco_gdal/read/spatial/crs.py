"""Geometry columns: which one gives a level's footprints, and which CRS it is in."""

from __future__ import annotations

import functools
import json
from typing import Any, Final

import pyarrow as pa
from pyproj import CRS
from pyproj.exceptions import CRSError

from taco_gdal.errors import TacoQueryError, TacoValidationError
from taco_gdal.extensions._geo import wgs84_transformer
from taco_gdal.format.names import (
    GEOMETRY_COLUMNS,
    ISTAC_CENTROID,
    ISTAC_CRS,
    ISTAC_GEOMETRY,
    STAC_CENTROID,
)
from taco_gdal.read._types import is_binary
from taco_gdal.read.opening.containers._limits import loads_json

__all__ = [
    "LONLAT_POINTS",
    "WGS84",
    "column_crs",
    "footprint_column",
    "is_wgs84",
    "transformer_for",
]

WGS84: Final = "EPSG:4326"
LONLAT_POINTS: Final = (STAC_CENTROID, ISTAC_CENTROID)
"""Point columns the spec stores in EPSG:4326."""


@functools.lru_cache(maxsize=256)
def is_wgs84(crs: str) -> bool:
    text = crs.strip().upper()
    if text in ("EPSG:4326", "OGC:CRS84", "WGS84", "4326"):
        return True
    try:
        parsed = CRS.from_user_input(crs)
    except CRSError:
        return False
    return parsed.to_epsg() == 4326 or parsed.equals(CRS.from_epsg(4326), ignore_axis_order=True)


def _geoparquet_crs(table: pa.Table, column: str) -> str | None:
    metadata = table.schema.metadata or {}
    raw = metadata.get(b"geo")
    if raw is None:
        return None
    try:  # bounded like every untrusted JSON; unreadable GeoParquet metadata is ignored
        columns = loads_json(raw.decode("utf-8"), f"GeoParquet 'geo' metadata of {column}")
        columns = columns.get("columns", {})
    except (ValueError, AttributeError):  # TacoFormatError and UnicodeDecodeError included
        return None
    if not isinstance(columns, dict):
        return None
    spec = columns.get(column)
    if not isinstance(spec, dict):
        return None
    if "crs" not in spec:  # GeoParquet: a missing crs means OGC:CRS84
        return WGS84
    crs = spec["crs"]
    if crs is None:
        return None
    return crs if isinstance(crs, str) else json.dumps(crs)


def column_crs(
    table: pa.Table, column: str, field_crs: str | None = None
) -> tuple[str | None, str | None]:
    """Where the CRS of ``column`` comes from: ``(crs_column, fixed_crs)``.

    In order: a ``<prefix>:crs`` sibling column, EPSG:4326 for the centroid
    columns, GeoParquet ``geo`` metadata, then ``field_crs``; ``(None, None)``
    when nothing says.

    Example:
        >>> import pyarrow as pa
        >>> column_crs(pa.table({"istac:geometry": [b""], "istac:crs": ["EPSG:32630"]}),
        ...            "istac:geometry")
        ('istac:crs', None)
    """
    if column in LONLAT_POINTS:
        return None, WGS84
    prefix = column.rsplit(":", 1)[0] if ":" in column else None
    sibling = ISTAC_CRS if column == ISTAC_GEOMETRY else (f"{prefix}:crs" if prefix else None)
    if sibling is not None and sibling in table.column_names:
        return sibling, None
    geo = _geoparquet_crs(table, column)
    if geo is not None:
        return None, geo
    return None, field_crs


def transformer_for(crs: str, where: str) -> Any:
    """This thread's ``crs`` -> EPSG:4326 transformer; a :class:`TacoQueryError` if none."""
    try:
        return wgs84_transformer(crs)
    except TacoValidationError as exc:
        raise TacoQueryError(f"{where}: cannot reproject from {crs!r} to {WGS84}: {exc}") from exc


def footprint_column(table: pa.Table) -> str | None:
    """The stored WKB column whose footprints become the active geometry, if any.

    Example:
        >>> footprint_column(pa.table({"stac:centroid": pa.array([b""], pa.binary())}))
        'stac:centroid'
    """
    for name in GEOMETRY_COLUMNS:
        if name in table.column_names and is_binary(table.schema.field(name).type):
            return name
    return None
