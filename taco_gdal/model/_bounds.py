"""The WGS84 box that contains every row's footprint, across longitude 0 and the antimeridian.

A row's footprint is the set of WGS84 points known for it: its centroid, the
corners, edge midpoints and centre of its raster grid (``stac:crs`` +
``stac:geotransform`` + ``stac:tensor_shape``) and the vertices of its
``istac:geometry`` (in ``istac:crs``, WGS84 when that column is absent).  Each
row becomes a longitude interval (one whose points span more than 180 degrees
is taken to cross the antimeridian); the dataset's
box is the shortest arc of the circle that covers every interval, found as
the complement of the widest gap between them.  ``west > east`` then means the
box crosses the antimeridian, as in STAC.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoValidationError

__all__ = ["Column", "covering_arc", "footprint_box"]

Column = Callable[[str], "pa.Array | None"]
"""The values of a column of the level (None: the level has no such column)."""

_GRID: Final = ((0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, 1.0))
_GRID_REST: Final = ((0.5, 1.0), (0.0, 1.0), (0.0, 0.5), (0.5, 0.5))
_GRID_POINTS: Final = np.array(_GRID + _GRID_REST)
"""Fractions (column, row) of the raster sampled: corners, edge midpoints, centre."""

Points = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(row index, longitude, latitude) of every known point."""


def _wkb_geometries(values: pa.Array, column: str) -> tuple[np.ndarray, Any]:
    """Rows and shapely geometries of the non-null WKB values of ``column``."""
    import shapely  # here: only datasets with geometry columns need it

    rows = np.flatnonzero(~np.asarray(values.is_null().to_numpy(zero_copy_only=False)))
    blobs = np.asarray(values.drop_null().to_pylist(), dtype=object)
    try:
        return rows, shapely.from_wkb(blobs)
    except (shapely.errors.ShapelyError, ValueError, TypeError) as exc:
        raise TacoValidationError(
            f"{column}: expected WKB geometries, found a value GEOS cannot parse: {exc}"
        ) from exc


def _geometry_points(values: pa.Array, column: str, crs: pa.Array | None = None) -> Points:
    """Every vertex of every geometry, in WGS84: transformed from ``crs`` where one is given."""
    import shapely

    rows, geometries = _wkb_geometries(values, column)
    coords, index = shapely.get_coordinates(geometries, return_index=True)
    rows = rows[index]
    lon, lat = coords[:, 0].copy(), coords[:, 1].copy()
    if crs is None:
        return rows, lon, lat
    from taco_gdal.extensions._geo import wgs84_transformer

    names = np.asarray(crs.to_pylist(), dtype=object)[rows]
    for name in {str(n) for n in names if n}:
        if name in ("EPSG:4326", "OGC:CRS84"):
            continue
        mask = names == name
        lon[mask], lat[mask] = wgs84_transformer(name).transform(lon[mask], lat[mask])
    return rows, lon, lat


def _grid_points(crs: pa.Array, transform: pa.Array, shape: pa.Array) -> Points:
    """Sampled points of every row's raster grid, in WGS84 (rows with a null value left out)."""
    from taco_gdal.extensions._geo import wgs84_transformer

    crs_values = crs.to_pylist()
    transforms, shapes = transform.to_pylist(), shape.to_pylist()
    out: list[Points] = []
    by_crs: dict[str, list[int]] = {}
    for row, (name, gt, dims) in enumerate(zip(crs_values, transforms, shapes, strict=True)):
        if name and gt and len(gt) == 6 and dims and len(dims) >= 2:
            by_crs.setdefault(str(name), []).append(row)
    for name, rows in by_crs.items():
        try:
            gt = np.asarray([transforms[r] for r in rows], dtype=np.float64)
            dims = np.asarray([shapes[r][-2:] for r in rows], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TacoValidationError(
                f"stac:geotransform / stac:tensor_shape: expected 6 and at least 2 numbers per "
                f"row, found a null inside one of them: {exc}"
            ) from exc
        if gt.shape != (len(rows), 6) or dims.shape != (len(rows), 2):
            raise TacoValidationError(
                f"stac:geotransform / stac:tensor_shape: expected 6 and at least 2 numbers per "
                f"row, found values nested as arrays of shape {gt.shape} and {dims.shape}"
            )
        cols = _GRID_POINTS[:, 0] * dims[:, 1:2]
        lines = _GRID_POINTS[:, 1] * dims[:, 0:1]
        x = gt[:, 0:1] + gt[:, 1:2] * cols + gt[:, 2:3] * lines
        y = gt[:, 3:4] + gt[:, 4:5] * cols + gt[:, 5:6] * lines
        lon, lat = wgs84_transformer(name).transform(x.ravel(), y.ravel())
        index = np.repeat(np.asarray(rows), len(_GRID_POINTS))
        out.append((index, np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)))
    return _concat(out)


def _concat(parts: list[Points]) -> Points:
    if not parts:
        empty = np.empty(0)
        return empty.astype(np.int64), empty, empty
    index, lon, lat = (np.concatenate(values) for values in zip(*parts, strict=True))
    return index.astype(np.int64), lon, lat


def _row_intervals(points: Points) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """Per-row ``(west, east)`` longitudes and the latitude range of all the points."""
    index, lon, lat = points
    finite = np.isfinite(lon) & np.isfinite(lat)
    index, lon, lat = index[finite], lon[finite], lat[finite]
    if lon.size == 0:
        return None
    if lat.min() < -90 or lat.max() > 90:
        raise TacoValidationError(
            f"footprints: expected WGS84 latitudes in [-90, 90], found {lat.min()}..{lat.max()}"
        )
    # a grid that runs past 180 (west 170, 12 degrees wide) crosses the antimeridian
    lon = np.where(np.abs(lon) > 180, (lon + 180) % 360 - 180, lon)
    rows, slot = np.unique(index, return_inverse=True)
    low, high = np.full(rows.size, np.inf), np.full(rows.size, -np.inf)
    np.minimum.at(low, slot, lon)
    np.maximum.at(high, slot, lon)
    east_low = np.full(rows.size, np.inf)  # smallest longitude >= 0 of each row
    west_high = np.full(rows.size, -np.inf)  # largest longitude < 0 of each row
    np.minimum.at(east_low, slot, np.where(lon >= 0, lon, np.inf))
    np.maximum.at(west_high, slot, np.where(lon < 0, lon, -np.inf))
    crossing = high - low > 180
    west = np.where(crossing, east_low, low)
    east = np.where(crossing, west_high, high)
    return west, east, float(lat.min()), float(lat.max())


def covering_arc(west: np.ndarray, east: np.ndarray) -> tuple[float, float]:
    """The shortest ``(west, east)`` arc covering every interval (``west > east``: crossing).

    Example:
        >>> covering_arc(np.array([-2.0, 1.0]), np.array([-1.0, 2.01]))
        (-2.0, 2.01)
        >>> covering_arc(np.array([179.0]), np.array([-179.0]))
        (179.0, -179.0)
    """
    crossing = west > east
    starts = np.concatenate([west[~crossing], west[crossing], np.full(crossing.sum(), -180.0)])
    ends = np.concatenate([east[~crossing], np.full(crossing.sum(), 180.0), east[crossing]])
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    gaps = starts[1:] - ends[:-1]  # gap before interval i + 1 (negative: overlap)
    wrap = starts[0] + 360.0 - ends[-1]  # the gap across the antimeridian
    if gaps.size and gaps.max() > max(wrap, 0.0):
        widest = int(np.argmax(gaps))
        return float(starts[widest + 1]), float(ends[widest])
    if wrap <= 0 and not (gaps > 0).any():
        return -180.0, 180.0
    return float(starts[0]), float(ends[-1])


def footprint_box(column: Column) -> tuple[float, float, float, float] | None:
    """``(west, south, east, north)`` containing every row's footprint; None if no row has one.

    Raises:
        TacoValidationError: a geometry that is not WKB, or a latitude outside [-90, 90].

    Example:
        >>> import shapely
        >>> wkb = pa.array([shapely.Point(-2, 40).wkb, shapely.Point(2.01, 41).wkb])
        >>> footprint_box({"stac:centroid": wkb}.get)
        (-2.0, 40.0, 2.01, 41.0)
    """
    parts: list[Points] = []
    for name in ("stac:centroid", "istac:centroid"):
        values = column(name)
        if values is not None:
            parts.append(_geometry_points(values, name))
    geometry = column("istac:geometry")
    if geometry is not None:
        parts.append(_geometry_points(geometry, "istac:geometry", column("istac:crs")))
    grid = [column(name) for name in ("stac:crs", "stac:geotransform", "stac:tensor_shape")]
    if all(values is not None for values in grid):
        crs, transform, shape = grid
        assert crs is not None and transform is not None and shape is not None
        parts.append(_grid_points(crs, transform, shape))
    found = _row_intervals(_concat(parts))
    if found is None:
        return None
    west, east, south, north = found
    arc_west, arc_east = covering_arc(west, east)
    return arc_west, south, arc_east, north
