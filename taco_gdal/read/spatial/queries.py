"""Query geometries of the spatial filters in EPSG:4326, and the warning when one misses."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import shapely

from taco_gdal.errors import TacoQueryError, TacoWarning
from taco_gdal.read.spatial.crs import WGS84, is_wgs84
from taco_gdal.read.spatial.footprints import Footprints
from taco_gdal.read.spatial.reproject import to_wgs84

__all__ = ["box_geometry", "check_box", "query_geometry", "warn_outside_extent"]


def check_box(box: Sequence[Any], crs: str) -> tuple[float, float, float, float]:
    """Validate a ``(minx, miny, maxx, maxy)`` box given in ``crs``.

    In EPSG:4326 ``minx > maxx`` crosses the antimeridian (STAC); elsewhere it is an error.

    Raises:
        TacoQueryError: not four finite numbers, ``miny > maxy``, or lon/lat out of range.

    Example:
        >>> check_box((-4, 40, -3, 41), "EPSG:4326")
        (-4.0, 40.0, -3.0, 41.0)
    """
    order = "expected (minx, miny, maxx, maxy)"
    try:
        minx, miny, maxx, maxy = (float(v) for v in box)
    except (TypeError, ValueError) as exc:
        raise TacoQueryError(f"filter_bbox: {order} as four numbers, got {box!r}") from exc
    shown = f"({minx:g}, {miny:g}, {maxx:g}, {maxy:g})"
    if not all(math.isfinite(v) for v in (minx, miny, maxx, maxy)):
        raise TacoQueryError(f"filter_bbox: {order} as finite numbers, got {shown}")
    if miny > maxy:
        raise TacoQueryError(
            f"filter_bbox: miny {miny:g} > maxy {maxy:g} in box {shown} ({crs}); {order}"
        )
    if is_wgs84(crs):
        if not (-90 <= miny <= 90 and -90 <= maxy <= 90):
            raise TacoQueryError(
                f"filter_bbox: latitudes must be in [-90, 90], box {shown} has miny={miny:g}, "
                f"maxy={maxy:g}; {order} in degrees (lon, lat), or pass crs= for another CRS"
            )
        if not (-180 <= minx <= 180 and -180 <= maxx <= 180):
            raise TacoQueryError(
                f"filter_bbox: longitudes must be in [-180, 180], box {shown} has minx={minx:g}, "
                f"maxx={maxx:g}; {order} in degrees (lon, lat), or pass crs= for another CRS"
            )
    elif minx > maxx:
        raise TacoQueryError(
            f"filter_bbox: minx {minx:g} > maxx {maxx:g} in box {shown} ({crs}); {order} "
            f"(only an {WGS84} box may cross the antimeridian with minx > maxx)"
        )
    return minx, miny, maxx, maxy


def query_geometry(geometry: Any, crs: str = WGS84, *, what: str = "filter_geometry") -> Any:
    """A query geometry in EPSG:4326 (densified, cut at the antimeridian).

    Raises:
        TacoQueryError: not a shapely geometry, empty, or a CRS pyproj rejects.

    Example:
        >>> import shapely
        >>> query_geometry(shapely.box(0, 0, 1, 1)).bounds
        (0.0, 0.0, 1.0, 1.0)
    """
    if not isinstance(geometry, shapely.Geometry):
        raise TacoQueryError(
            f"{what}: expected a shapely geometry, got {type(geometry).__name__} {geometry!r}"
        )
    if geometry.is_empty:
        raise TacoQueryError(f"{what}: expected a non-empty geometry, got {geometry.wkt}")
    moved = to_wgs84(np.array([geometry], dtype=object), crs, f"{what} geometry")[0]
    if not shapely.is_valid(moved):
        moved = shapely.make_valid(moved)
    return moved


def box_geometry(box: tuple[float, float, float, float], crs: str = WGS84) -> Any:
    """A checked box as a 4326 geometry; ``minx > maxx`` in 4326 gives two parts.

    Example:
        >>> len(shapely.get_parts(box_geometry((170, -10, -170, 10))))
        2
    """
    minx, miny, maxx, maxy = box
    if is_wgs84(crs):
        if minx <= maxx:
            return shapely.box(minx, miny, maxx, maxy)
        return shapely.MultiPolygon(
            [shapely.box(minx, miny, 180.0, maxy), shapely.box(-180.0, miny, maxx, maxy)]
        )
    return query_geometry(shapely.box(minx, miny, maxx, maxy), crs, what="filter_bbox")


def warn_outside_extent(footprints: Footprints, query: Any, call: str) -> None:
    """A :class:`TacoWarning` naming the dataset's extent when ``query`` misses it entirely.

    Example:
        >>> import pyarrow as pa, shapely, warnings
        >>> from taco_gdal.read.spatial.footprints import compute_footprints
        >>> t = pa.table({"stac:centroid": [shapely.to_wkb(shapely.Point(1, 1))]})
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_outside_extent(compute_footprints(t, "stac:centroid"),
        ...                         shapely.box(10, 10, 11, 11), "filter_bbox")
        >>> "extent (1, 1, 1, 1)" in str(caught[0].message)
        True
    """
    extent = footprints.extent
    if extent is None or footprints.candidates(query).any():
        return
    shown = ", ".join(f"{v:.4g}" for v in extent)
    warnings.warn(
        f"{call}: the query does not intersect the dataset's {footprints.column} extent "
        f"({shown}) in {WGS84} (lon/lat); check the axis order (minx, miny, maxx, maxy) and "
        "the crs= argument",
        TacoWarning,
        stacklevel=5,
    )
