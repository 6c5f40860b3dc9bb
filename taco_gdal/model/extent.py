"""Dataset extent: the value type and its computation from STAC/ISTAC columns (reference §3.4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoValidationError
from taco_gdal.model._levels import Level

__all__ = ["GLOBAL_BBOX", "Extent", "compute_extent", "extent_of_tables"]

GLOBAL_BBOX: Final = (-180.0, -90.0, 180.0, 90.0)

# (centroid column, time columns in priority order): STAC wins over ISTAC.
_SOURCES: Final = (
    ("stac:centroid", "stac:time_start", ("stac:time_middle", "stac:time_start", "stac:time_end")),
    (
        "istac:centroid",
        "istac:time_start",
        ("istac:time_middle", "istac:time_start", "istac:time_end"),
    ),
)


@dataclass(frozen=True)
class Extent:
    """Spatial ``[west, south, east, north]`` (WGS84) and temporal ``[start, end]`` (ISO 8601).

    Example:
        >>> Extent((0, 0, 1, 1), ("2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z")).temporal
        ('2023-01-01T00:00:00Z', '2023-02-01T00:00:00Z')
    """

    spatial: Sequence[float] = GLOBAL_BBOX
    temporal: Sequence[str] | None = None

    def __post_init__(self) -> None:
        bbox = [float(v) for v in self.spatial]
        if len(bbox) != 4:
            raise TacoValidationError(
                f"extent.spatial: expected [west, south, east, north], found {list(self.spatial)}"
            )
        west, south, east, north = bbox
        if not (-180 <= west <= 180 and -180 <= east <= 180):
            raise TacoValidationError(f"extent.spatial: longitudes must be in [-180, 180]: {bbox}")
        if not (-90 <= south <= north <= 90):
            raise TacoValidationError(
                f"extent.spatial: latitudes must satisfy -90 <= south <= north <= 90: {bbox}"
            )
        object.__setattr__(self, "spatial", tuple(bbox))
        if self.temporal is not None:
            object.__setattr__(self, "temporal", _check_temporal(self.temporal))

    @classmethod
    def from_value(cls, value: Extent | Mapping[str, Any]) -> Extent:
        """An Extent from itself or a ``{"spatial": ..., "temporal": ...}`` dict."""
        if isinstance(value, Extent):
            return value
        if isinstance(value, Mapping) and set(value) <= {"spatial", "temporal"}:
            return cls(value.get("spatial", GLOBAL_BBOX), value.get("temporal"))
        raise TacoValidationError(
            f"extent: expected an Extent or a dict with 'spatial' and 'temporal', found {value!r}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The COLLECTION.json form."""
        temporal = None if self.temporal is None else list(self.temporal)
        return {"spatial": list(self.spatial), "temporal": temporal}


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _check_temporal(temporal: Sequence[str]) -> tuple[str, str]:
    values = list(temporal)
    if len(values) != 2 or not all(isinstance(v, str) for v in values):
        raise TacoValidationError(f"extent.temporal: expected [start, end] strings, found {values}")
    try:
        start, end = (_parse_time(v) for v in values)
    except ValueError as exc:
        raise TacoValidationError(
            f"extent.temporal: expected ISO 8601 datetimes such as '2023-01-01T00:00:00Z', "
            f"found {values}: {exc}"
        ) from exc
    if start > end:
        raise TacoValidationError(f"extent.temporal: start is after end: {values}")
    return values[0], values[1]


def _spatial(centroids: pa.Array) -> tuple[float, float, float, float]:
    """Bounding box of WKB points; on both sides of lon 0 the side with the larger span wins."""
    valid = centroids.drop_null()
    if len(valid) == 0:
        return GLOBAL_BBOX
    import shapely  # here: only datasets with centroid columns need it

    points = shapely.from_wkb(np.asarray(valid.to_pylist(), dtype=object))
    lons, lats = shapely.get_x(points), shapely.get_y(points)
    south, north = float(lats.min()), float(lats.max())
    east_side, west_side = lons[lons >= 0], lons[lons < 0]
    side = east_side
    if east_side.size == 0 or (west_side.size and np.ptp(west_side) > np.ptp(east_side)):
        side = west_side
    return float(side.min()), south, float(side.max()), north


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _temporal(level: Level, columns: Sequence[str]) -> tuple[str, str] | None:
    for name in columns:
        data_type = level.types.get(name)
        if data_type is None or not pa.types.is_timestamp(data_type):
            continue
        values = level.column(name, data_type).drop_null()
        if len(values) == 0:
            continue
        bounds = pc.min_max(values)
        return _iso(bounds["min"].as_py()), _iso(bounds["max"].as_py())
    return None


def compute_extent(levels: list[Level]) -> Extent:
    """Extent from the first level (0, 1, ...) with centroid and start-time columns.

    Spatial: bounding box of the centroids (``stac:`` preferred over ``istac:``);
    temporal: min/max of the first non-empty of ``time_middle``, ``time_start``,
    ``time_end``.  Nothing found: the whole globe and no temporal extent.
    """
    for level in levels:
        for centroid, start, time_columns in _SOURCES:
            if centroid in level.types and start in level.types:
                spatial = _spatial(level.column(centroid, level.types[centroid]))
                return Extent(spatial, _temporal(level, time_columns))
    return Extent(GLOBAL_BBOX, None)


def extent_of_tables(tables: Sequence[pa.Table]) -> Extent:
    """:func:`compute_extent` over level tables, e.g. one part of a split dataset.

    Same rules: first level with a centroid and a start-time column (STAC before
    ISTAC); temporal from the first non-empty timestamp column in priority order.

    Example:
        >>> extent_of_tables([pa.table({"id": ["a"]})]).spatial
        (-180.0, -90.0, 180.0, 90.0)
    """
    for table in tables:
        names = set(table.column_names)
        for centroid, start, time_columns in _SOURCES:
            if centroid not in names or start not in names:
                continue
            temporal = None
            for name in time_columns:
                if name not in names or not pa.types.is_timestamp(table.schema.field(name).type):
                    continue
                values = table.column(name).drop_null()
                if len(values):
                    bounds = pc.min_max(values)
                    temporal = (_iso(bounds["min"].as_py()), _iso(bounds["max"].as_py()))
                    break
            return Extent(_spatial(table.column(centroid).combine_chunks()), temporal)
    return Extent(GLOBAL_BBOX, None)
