"""Dataset extent: the value type and its computation from STAC/ISTAC columns (reference §3.4).

The spatial extent contains every row's footprint (see :mod:`taco_gdal.model._bounds`),
not only the centroids the reference writer uses, and crosses the antimeridian
(``west > east``) when that is the shorter way round.  A dataset with no footprint
has no spatial extent: COLLECTION.json's ``extent`` then has no ``spatial`` key
(``{"temporal": ...}``).  The reference writer puts the whole globe there instead;
tacoreader 2.4.21 reads either (it looks the key up with ``in`` / ``.get``), while a
``null`` value would break its HTML view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoValidationError
from taco_gdal.model._bounds import covering_arc, footprint_box
from taco_gdal.model._levels import Level

__all__ = ["Extent", "box_contains", "compute_extent", "extent_of_tables", "union_boxes"]

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

    ``west > east`` is a box that crosses the antimeridian.  ``spatial`` None: no
    footprint is known (written without a ``spatial`` key).

    Example:
        >>> Extent((0, 0, 1, 1), ("2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z")).temporal
        ('2023-01-01T00:00:00Z', '2023-02-01T00:00:00Z')
    """

    spatial: Sequence[float] | None = None
    temporal: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if self.temporal is not None:
            object.__setattr__(self, "temporal", _check_temporal(self.temporal))
        if self.spatial is None:
            return
        try:
            bbox = [float(v) for v in self.spatial]
        except (TypeError, ValueError) as exc:
            raise TacoValidationError(
                f"extent.spatial: expected [west, south, east, north] numbers, "
                f"found {self.spatial!r}"
            ) from exc
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

    @classmethod
    def from_value(cls, value: Extent | Mapping[str, Any]) -> Extent:
        """An Extent from itself or a ``{"spatial": ..., "temporal": ...}`` dict."""
        if isinstance(value, Extent):
            return value
        if isinstance(value, Mapping) and set(value) <= {"spatial", "temporal"}:
            return cls(value.get("spatial"), value.get("temporal"))
        raise TacoValidationError(
            f"extent: expected an Extent or a dict with 'spatial' and 'temporal', found {value!r}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The COLLECTION.json form (no ``spatial`` key when no footprint is known).

        Example:
            >>> Extent(None, None).to_dict()
            {'temporal': None}
        """
        temporal = None if self.temporal is None else list(self.temporal)
        if self.spatial is None:
            return {"temporal": temporal}
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


def _arc(west: float, east: float) -> float:
    """Degrees of longitude from ``west`` eastwards to ``east`` (360 for the whole circle)."""
    if west == -180 and east == 180:
        return 360.0
    return (east - west) % 360.0


def box_contains(outer: Sequence[float], inner: Sequence[float], eps: float = 1e-9) -> bool:
    """Whether box ``outer`` contains box ``inner`` (either may cross the antimeridian).

    Example:
        >>> box_contains((170, -10, -170, 10), (175, 0, -175, 1))
        True
        >>> box_contains((-2, 0, 2, 1), (0.07, 0, 2.01, 1))
        False
    """
    ow, os_, oe, on = (float(v) for v in outer)
    iw, is_, ie, in_ = (float(v) for v in inner)
    if is_ < os_ - eps or in_ > on + eps:
        return False
    width = _arc(ow, oe)
    if width >= 360.0:
        return True
    start = (iw - ow) % 360.0
    if start > 360.0 - eps:  # the same longitude on either side of the wrap
        start = 0.0
    return start + _arc(iw, ie) <= width + eps


def union_boxes(
    boxes: Sequence[Sequence[float] | None],
) -> tuple[float, float, float, float] | None:
    """The smallest box containing every box (any may cross the antimeridian); None if none.

    For merging the extents of parts (TACOCAT, TACOLLECTION, ``concat``): a min/max of
    the corners is wrong as soon as one box crosses the antimeridian.

    Example:
        >>> union_boxes([(170, 0, 175, 1), (-178, -1, -170, 0), None])
        (170.0, -1.0, -170.0, 1.0)
        >>> union_boxes([(-2, 40, -1, 41), (1, 40, 2.01, 41)])
        (-2.0, 40.0, 2.01, 41.0)
    """
    import numpy as np

    given = [tuple(float(v) for v in box) for box in boxes if box is not None]
    if not given:
        return None
    west, south, east, north = (np.asarray(values) for values in zip(*given, strict=True))
    arc_west, arc_east = covering_arc(west, east)
    return arc_west, float(south.min()), arc_east, float(north.max())


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _temporal(column: Callable[[str], Any], names: Sequence[str]) -> tuple[str, str] | None:
    """Min and max of the first of ``names`` holding a non-null timestamp."""
    for name in names:
        values = column(name)
        if values is None or not pa.types.is_timestamp(values.type):
            continue
        values = values.drop_null()
        if len(values):
            bounds = pc.min_max(values)
            try:
                return _iso(bounds["min"].as_py()), _iso(bounds["max"].as_py())
            except (OverflowError, ValueError) as error:  # int64 times past year 9999
                raw = pc.min_max(values.cast(pa.int64()))
                raise TacoValidationError(
                    f"column {name!r}: expected times within years 1-9999, found "
                    f"{raw['min']}..{raw['max']} {values.type.unit} from 1970"
                ) from error
    return None


def compute_extent(levels: list[Level]) -> Extent:
    """Extent from the first level (0, 1, ...) with centroid and start-time columns.

    Spatial: the smallest box containing every row's footprint at that level
    (centroids, raster grids, ``istac:geometry``); temporal: min/max of the first
    non-empty of ``time_middle``, ``time_start``, ``time_end`` (``stac:`` before
    ``istac:``).  Nothing found: no spatial and no temporal extent.

    Raises:
        TacoValidationError: a geometry that is not WKB, or a point outside WGS84's range.
    """
    for level in levels:
        for centroid, start, time_columns in _SOURCES:
            if centroid in level.types and start in level.types:

                def column(name: str, level: Level = level) -> pa.Array | None:
                    kind = level.types.get(name)
                    return None if kind is None else level.column(name, kind)

                return Extent(footprint_box(column), _temporal(column, time_columns))
    return Extent(None, None)


def extent_of_tables(tables: Sequence[pa.Table], *, footprints: bool = True) -> Extent:
    """:func:`compute_extent` over level tables, e.g. one part of a split dataset.

    Same rules: first level with a centroid and a start-time column (STAC before
    ISTAC); temporal from the first non-empty timestamp column in priority order.
    ``footprints=False`` boxes the centroids alone: what the specification asks an
    extent to contain (``validate`` checks that, so reference-written files pass).

    Raises:
        TacoValidationError: a geometry that is not WKB, or a point outside WGS84's range.

    Example:
        >>> extent_of_tables([pa.table({"id": ["a"]})]).to_dict()
        {'temporal': None}
    """
    for table in tables:
        names = set(table.column_names)
        for centroid, start, time_columns in _SOURCES:
            if centroid not in names or start not in names:
                continue

            def times(name: str, table: pa.Table = table) -> pa.ChunkedArray | None:
                return table.column(name) if name in table.column_names else None

            def column(name: str, table: pa.Table = table) -> pa.Array | None:
                if name not in table.column_names or not (footprints or name.endswith("centroid")):
                    return None
                return table.column(name).combine_chunks()

            return Extent(footprint_box(column), _temporal(times, time_columns))
    return Extent(None, None)
