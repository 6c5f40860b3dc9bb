"""Footprints in EPSG:4326 for CRS-correct spatial filters (pure functions, no DuckDB).

The spec stores ``istac:geometry`` in each sample's own CRS (``istac:crs``
beside it), so a lon/lat box cannot be compared with the stored coordinates.
This module turns a level's geometry column into one 4326 footprint per row:

* rows are grouped by CRS (``pyarrow`` dictionary encoding), so each CRS costs
  one pyproj call over all its coordinates;
* a straight edge in UTM is a curve in lon/lat: edges are split at their
  midpoints, and polygons whose halves still bend more than
  :data:`STRAIGHT_TOLERANCE` are densified (``shapely.segmentize``,
  :data:`EDGE_SEGMENTS` segments per edge of the bounding box);
* a footprint that crosses the antimeridian (a jump of more than 180 degrees
  between consecutive vertices after reprojection, or longitudes past 180) is
  cut at 180 into a MultiPolygon whose parts lie in [-180, 180];
* simple polygons in a projected CRS first cost only their vertices: the
  bounds of the reprojected vertices, padded by the largest bulge an edge of
  that length can have there (the projection's second derivatives measured
  on a grid over the group, times :data:`PAD_SAFETY`), contain the curved
  outline; the full footprint is made when a filter's exact test or a frame
  asks for that row (:meth:`Footprints.take`);
* ``bounds`` (xmin, ymin, xmax, ymax per row) is the cheap pre-filter:
  :meth:`Footprints.matches` drops rows whose bounds miss the query's, keeps
  rows whose bounds lie inside a query box, and tests the exact geometry
  only on the rest.

Query geometries (a box, or any shapely geometry) go through the same path
(:func:`query_geometry`), so both sides are compared in EPSG:4326.  Polygons
that contain a pole are not handled (no EO footprint in the spec's use cases
does).
"""

from __future__ import annotations

import functools
import json
import math
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError

from taco_gdal.errors import TacoQueryError, TacoValidationError, TacoWarning
from taco_gdal.extensions._geo import wgs84_transformer
from taco_gdal.format.names import ISTAC_CENTROID, ISTAC_CRS, ISTAC_GEOMETRY, STAC_CENTROID

__all__ = [
    "EDGE_SEGMENTS",
    "LONLAT_POINTS",
    "WGS84",
    "Footprints",
    "check_box",
    "column_crs",
    "compute_footprints",
    "query_geometry",
    "to_wgs84",
    "warn_outside_extent",
]

WGS84: Final = "EPSG:4326"
EDGE_SEGMENTS: Final = 8
"""Segments per edge (of the geometry's bounding box) added before reprojecting."""
STRAIGHT_TOLERANCE: Final = 1e-5
"""Degrees (about 1 m) a reprojected footprint may be off the exact curve of its edges."""

_WORLD: Final = (-180.0, -90.0, 180.0, 90.0)
LONLAT_POINTS: Final = (STAC_CENTROID, ISTAC_CENTROID)
"""Point columns the spec stores in EPSG:4326."""


@functools.lru_cache(maxsize=256)
def _is_wgs84(crs: str) -> bool:
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
    try:
        columns = json.loads(raw).get("columns", {})
    except (ValueError, AttributeError):
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

    In order: ``istac:crs`` for ``istac:geometry`` (or ``<prefix>:crs`` for
    ``<prefix>:<name>``), EPSG:4326 for ``stac:centroid`` / ``istac:centroid``,
    the GeoParquet ``geo`` metadata of the table, then ``field_crs`` (a CRS
    the caller found, e.g. in ``taco:field_schema``).  ``(None, None)`` when
    nothing says.

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


def _densify(geoms: np.ndarray) -> np.ndarray:
    bounds = shapely.bounds(geoms)
    span = np.fmax(bounds[:, 2] - bounds[:, 0], bounds[:, 3] - bounds[:, 1])
    lines = ~shapely.is_empty(geoms) & (span > 0)
    out = geoms.copy()
    if lines.any():
        out[lines] = shapely.segmentize(geoms[lines], span[lines] / EDGE_SEGMENTS)
    return out


def _crossing_rows(lon: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Geometry indices with a jump of more than 180 degrees between consecutive vertices."""
    if lon.size < 2:
        return np.empty(0, dtype=np.int64)
    jump = (np.abs(np.diff(lon)) > 180.0) & (index[1:] == index[:-1])
    return np.unique(index[1:][jump])


def _shift_east(coords: np.ndarray) -> np.ndarray:
    shifted = coords.copy()
    shifted[:, 0] = np.where(shifted[:, 0] < 0, shifted[:, 0] + 360.0, shifted[:, 0])
    return shifted


def _cut_at_antimeridian(geom: Any) -> Any:
    """A geometry with longitudes in [-180, 540) cut at 180 (and 540) into parts in [-180, 180]."""
    parts = []
    for shift, box in ((0.0, _WORLD), (-360.0, (180.0, -90.0, 540.0, 90.0))):
        piece = shapely.intersection(geom, shapely.box(*box))
        if not piece.is_empty:
            parts.append(shapely.transform(piece, lambda c, s=shift: c + np.array([s, 0.0])))
    return shapely.union_all(parts) if len(parts) > 1 else parts[0] if parts else geom


def _fix_antimeridian(geoms: np.ndarray, crossing: np.ndarray) -> None:
    for i in crossing:
        geoms[i] = _cut_at_antimeridian(shapely.transform(geoms[i], _shift_east))
    bounds = shapely.bounds(geoms)
    outside = np.flatnonzero((bounds[:, 0] < -180.0) | (bounds[:, 2] > 180.0))
    for i in outside:  # stored in 4326 past 180 (179 .. 181) or before -180 (-181 .. -179)
        geom = geoms[i]
        if bounds[i, 0] < -180.0:
            geom = shapely.transform(geom, lambda c: c + np.array([360.0, 0.0]))
        geoms[i] = _cut_at_antimeridian(geom)


PARALLEL_POINTS: Final = 20_000
"""From this many points on, two threads reproject a half each (pyproj releases the GIL)."""

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The process's one reprojection helper thread (its transformers live as long as it)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="taco-reproject")
        return _POOL


def _forget_worker_after_fork() -> None:
    """A forked child has no helper thread (and maybe a held lock): it starts its own."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_worker_after_fork)


def _in_halves(transformer: Any, crs: str, count: int, step: Callable[[Any, slice], Any]) -> None:
    """``step(transformer, rows)`` over rows ``[0, count)``, in two halves at once when large.

    From :data:`PARALLEL_POINTS` on, the second half runs on the process's
    helper thread with that thread's own transformer (:func:`wgs84_transformer`
    keeps one per thread, so the helper builds it once per CRS): the same
    numbers, in about half the time on two cores.
    """
    mine = wgs84_transformer(crs) if transformer is None else transformer
    if count < PARALLEL_POINTS:
        step(mine, slice(0, count))
        return
    half = count // 2
    other = _worker().submit(lambda: step(wgs84_transformer(crs), slice(half, count)))
    step(mine, slice(0, half))
    other.result()


def _check_finite(finite: bool, crs: str, where: str) -> None:
    if not finite:
        raise TacoQueryError(
            f"{where}: a vertex in {crs} has no finite {WGS84} position (outside the CRS's "
            "area of use?)"
        )


def _transform(transformer: Any, coords: np.ndarray, crs: str, where: str) -> np.ndarray:
    """``(n, 2)`` lon/lat of ``(n, 2)`` coordinates in ``crs`` (see :func:`_in_halves`)."""
    out = np.empty((len(coords), 2), dtype=np.float64)

    def step(used: Any, rows: slice) -> None:
        out[rows, 0], out[rows, 1] = used.transform(coords[rows, 0], coords[rows, 1])

    _in_halves(transformer, crs, len(coords), step)
    _check_finite(bool(np.isfinite(out).all()), crs, where)
    return out


def _transform_xy(transformer: Any, x: np.ndarray, y: np.ndarray, crs: str, where: str) -> None:
    """Contiguous float64 ``x`` and ``y`` in ``crs`` become lon and lat, in place."""
    _in_halves(
        transformer, crs, len(x), lambda used, rows: used.transform(x[rows], y[rows], inplace=True)
    )
    _check_finite(bool(np.isfinite(x).all() and np.isfinite(y).all()), crs, where)


def _bent(moved: np.ndarray, mids: np.ndarray, index: np.ndarray, count: int) -> np.ndarray:
    """Per geometry: are edges split once at their midpoints still off by more than allowed?

    A smooth curve's distance to its chord scales with the square of the chord's
    length, so halving an edge leaves a quarter of the midpoint's offset.
    """
    same = index[1:] == index[:-1]
    chord = ((moved[:-1] + moved[1:]) / 2.0)[same]
    gap = np.abs(mids - chord).max(axis=1) / 4.0
    gap[np.abs(moved[1:, 0] - moved[:-1, 0])[same] > 180.0] = 0.0  # crossers: cut later
    worst = np.zeros(count, dtype=np.float64)
    np.maximum.at(worst, index[1:][same], gap)
    bent: np.ndarray = worst > STRAIGHT_TOLERANCE
    return bent


@dataclass(frozen=True, eq=False)
class _Rings:
    """One-ring polygons kept as coordinates; shapely objects are made on demand."""

    coords: np.ndarray
    starts: np.ndarray
    """``len(rings) + 1`` offsets into ``coords``."""

    def __len__(self) -> int:
        return len(self.starts) - 1

    def polygons(self, which: np.ndarray) -> np.ndarray:
        """Shapely polygons of ring numbers ``which``."""
        if len(which) == len(self) and (np.bincount(which, minlength=len(self)) == 1).all():
            every = self._build(self.coords, self.starts)  # all rings: no copy of coordinates
            picked_all: np.ndarray = every[which]
            return picked_all
        part = self.pick(which)
        return self._build(part.coords, part.starts)

    def pick(self, which: np.ndarray) -> _Rings:
        """The rings numbered ``which``, in that order (coordinates copied)."""
        first, lengths = self.starts[which], self.starts[which + 1] - self.starts[which]
        before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        picked = np.repeat(first - before, lengths) + np.arange(int(lengths.sum()))
        ring_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return _Rings(self.coords[picked], ring_offsets)

    @staticmethod
    def _build(coords: np.ndarray, ring_offsets: np.ndarray) -> np.ndarray:
        built: np.ndarray = shapely.from_ragged_array(  # one C call for all polygons
            shapely.GeometryType.POLYGON,
            coords,
            (ring_offsets, np.arange(len(ring_offsets), dtype=np.int64)),
        )
        return built

    def bounds(self) -> np.ndarray:
        """``(rings, 4)`` xmin, ymin, xmax, ymax."""
        head = self.starts[:-1]
        x, y = self.coords[:, 0], self.coords[:, 1]
        return np.column_stack(
            [
                np.minimum.reduceat(x, head),
                np.minimum.reduceat(y, head),
                np.maximum.reduceat(x, head),
                np.maximum.reduceat(y, head),
            ]
        )

    def subset(self, keep: np.ndarray) -> _Rings | None:
        """The rings where ``keep`` is True, in order (None when none is)."""
        if not keep.any():
            return None
        lengths = np.diff(self.starts)[keep]
        picked = np.repeat(self.starts[:-1][keep], lengths) + _ramp(lengths)
        return _Rings(
            self.coords[picked], np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        )

    @staticmethod
    def join(parts: list[_Rings]) -> _Rings:
        """One ``_Rings`` of several, in order."""
        offsets = np.cumsum([0] + [len(p.coords) for p in parts[:-1]])
        starts = [p.starts[:-1] + o for p, o in zip(parts, offsets, strict=True)]
        total = sum(len(p.coords) for p in parts)
        return _Rings(
            np.concatenate([p.coords for p in parts]),
            np.concatenate([*starts, [total]]).astype(np.int64),
        )


def _with_midpoints(
    moved: np.ndarray, mids: np.ndarray, index: np.ndarray, keep: np.ndarray
) -> _Rings:
    """Rings of the ``keep`` geometries (one ring each): vertices and edge midpoints."""
    same_all = index[1:] == index[:-1]
    on_vertex = keep[index]
    on_mid = keep[index[1:][same_all]]
    vertices, owner = moved[on_vertex], index[on_vertex]
    halves = mids[on_mid]
    same = owner[1:] == owner[:-1]
    before = np.concatenate([[0], np.cumsum(same)])
    vertex_at = np.arange(len(vertices)) + before
    mid_at = vertex_at[:-1][same] + 1
    coords = np.empty((len(vertices) + len(halves), 2), dtype=np.float64)
    coords[vertex_at], coords[mid_at] = vertices, halves
    ring_of = np.empty(len(coords), dtype=np.int64)
    _, compact = np.unique(owner, return_inverse=True)
    ring_of[vertex_at], ring_of[mid_at] = compact, compact[:-1][same]
    counts = np.bincount(ring_of, minlength=int(compact.max()) + 1 if len(compact) else 0)
    return _Rings(coords, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))


def _reproject(
    geoms: np.ndarray, transformer: Any, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray, _Rings | None]:
    """Reproject, densifying only geometries whose edges bend in lon/lat.

    Vertices and edge midpoints go through pyproj together.  A one-ring
    polygon whose edges, split once at their midpoints, stay within
    :data:`STRAIGHT_TOLERANCE` degrees of the true curve keeps those points
    (a 10 km UTM tile); any other bent geometry is densified
    (:data:`EDGE_SEGMENTS` per edge) and reprojected again.

    Returns the reprojected geometries (None where ``halved``), the ``halved``
    mask, and those geometries' rings (polygons made on demand).
    """
    coords, index = shapely.get_coordinates(geoms, return_index=True)
    same = index[1:] == index[:-1]
    mids = ((coords[:-1] + coords[1:]) / 2.0)[same]
    both = _transform(transformer, np.concatenate([coords, mids]), crs, where)
    moved, moved_mids = both[: len(coords)], both[len(coords) :]
    bent = _bent(moved, moved_mids, index, len(geoms))
    crossing = _crossing_rows(moved[:, 0], index)
    one_ring = (shapely.get_type_id(geoms) == 3) & (shapely.get_num_interior_rings(geoms) == 0)
    halved = one_ring & ~bent & (shapely.get_num_coordinates(geoms) > 3)
    halved[crossing] = False
    out = geoms.copy()
    plain = ~halved & ~bent  # points, lines, straight enough multi-part shapes
    if plain.any():
        out[plain] = shapely.set_coordinates(geoms[plain], moved[plain[index]])
    out[halved] = None
    rings = _with_midpoints(moved, moved_mids, index, halved) if halved.any() else None
    if bent.any():
        rows = np.flatnonzero(bent)
        dense = _densify(geoms[rows])
        dense_coords, dense_index = shapely.get_coordinates(dense, return_index=True)
        dense_moved = _transform(transformer, dense_coords, crs, where)
        out[rows] = shapely.set_coordinates(dense, dense_moved)
        crossing = np.union1d(
            crossing[~np.isin(crossing, rows)],
            rows[_crossing_rows(dense_moved[:, 0], dense_index)],
        )
    _fix_antimeridian(out, crossing)
    return out, halved, rings


def _transformer(crs: str, where: str) -> Any:
    """This thread's ``crs`` -> EPSG:4326 transformer; a :class:`TacoQueryError` if none."""
    try:
        return wgs84_transformer(crs)
    except TacoValidationError as exc:
        raise TacoQueryError(f"{where}: cannot reproject from {crs!r} to {WGS84}: {exc}") from exc


PAD_SAFETY: Final = 4.0
"""Factor on the measured curvature of a projection when padding vertex-only bounds."""
PAD_LIMIT: Final = 1e-2
"""Degrees: a ring whose pad would be larger (and larger than :data:`PAD_SHARE` of its
extent) is reprojected in full at once instead."""
PAD_SHARE: Final = 0.1
"""A pad up to this share of a ring's extent in degrees keeps its bounds a useful pre-filter."""
_PAD_FLOOR: Final = 1e-9
"""Degrees added to every pad (rounding of the reprojected vertices)."""
_CURVE_GRID: Final = 17
"""Nodes per side of the grid on which :func:`_curvature` measures a large CRS group."""
_CURVE_GRID_SMALL: Final = 9
"""The same for a group of fewer than :data:`_SMALL_GROUP` rings (a 9-point stencil per node)."""
_SMALL_GROUP: Final = 50_000
_STENCIL: Final = np.array(
    [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=float
)


def _curvature(
    transformer: Any, box: tuple[float, float, float, float], step: float, size: int
) -> np.ndarray:
    """``(2, size, size)``: per grid node over ``box``, the largest second derivative of lon, lat.

    Second differences with step ``step`` (source units) at the nodes of a
    ``size`` by ``size`` grid over ``box``; per node the Hessian's
    spectral norm (the largest second derivative along a unit direction), in
    degrees per source unit squared.  Infinite at a node without finite 4326
    positions or where the stencil wraps at 180 degrees (a jump of 360 is no
    curvature, but rings there are then reprojected in full).
    """
    if not step > 0.0:
        return np.zeros((2, size, size))
    x0, y0, x1, y1 = box
    gx, gy = np.meshgrid(np.linspace(x0, x1, size), np.linspace(y0, y1, size))
    x = gx.reshape(-1, 1) + step * _STENCIL[:, 0]
    y = gy.reshape(-1, 1) + step * _STENCIL[:, 1]
    moved = transformer.transform(x.ravel(), y.ravel())
    norms = np.full((2, size, size), np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        for k, values in enumerate(moved):
            v = np.asarray(values, dtype=np.float64).reshape(-1, len(_STENCIL))
            xx = v[:, 1] - 2.0 * v[:, 0] + v[:, 2]
            yy = v[:, 3] - 2.0 * v[:, 0] + v[:, 4]
            xy = (v[:, 5] - v[:, 6] - v[:, 7] + v[:, 8]) / 4.0
            norm = (np.abs(xx + yy) / 2.0 + np.hypot((xx - yy) / 2.0, xy)) / step**2
            norms[k] = np.where(
                np.isfinite(norm) & (np.abs(v - v[:, :1]) < 180.0).all(axis=1), norm, np.inf
            ).reshape(size, size)
    return norms


def _curvature_grid(
    transformer: Any, box: tuple[float, float, float, float], longest: np.ndarray
) -> np.ndarray:
    """:func:`_curvature` over a CRS group's ``box``, with a step fit for its edges."""
    size = _CURVE_GRID if len(longest) >= _SMALL_GROUP else _CURVE_GRID_SMALL
    x0, y0, x1, y1 = box
    cell = max(x1 - x0, y1 - y0) / (size - 1)
    step = min(float(longest.max()) if len(longest) else 0.0, cell)
    return _curvature(transformer, box, step, size)


def _ring_curvature(
    norms: np.ndarray,
    box: tuple[float, float, float, float],
    first: np.ndarray,
    longest: np.ndarray,
    edges: np.ndarray,
    spacing: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per ring, a bound on the second derivative of lon and of lat over the ring.

    ``norms`` (:func:`_curvature`) covers the group's ``box``, cut into
    cells.  Every point of a ring is at most half its perimeter (``edges *
    longest / 2``) from its ``first`` vertex, and the interpolation cells of
    its vertices reach ``spacing`` further: a ring reaching ``r`` cells
    takes the largest value on the nodes of the ``2r + 1`` cells square
    around its first vertex's cell.  Times :data:`PAD_SAFETY`.
    """
    cells = norms.shape[1] - 1
    x0, y0, x1, y1 = box
    cell_x, cell_y = (x1 - x0) / cells, (y1 - y0) / cells
    col = np.zeros(len(first), dtype=np.int64)
    row = np.zeros(len(first), dtype=np.int64)
    if cell_x > 0:
        col = np.clip(((first[:, 0] - x0) // cell_x).astype(np.int64), 0, cells - 1)
    if cell_y > 0:
        row = np.clip(((first[:, 1] - y0) // cell_y).astype(np.int64), 0, cells - 1)
    smallest = min(c for c in (cell_x, cell_y, math.inf) if c > 0)
    with np.errstate(invalid="ignore"):
        reach = np.ceil((edges * longest / 2.0 + spacing) / smallest)
    far = np.clip(np.nan_to_num(reach, nan=cells), 0, cells).astype(np.int64)
    level = np.maximum(  # per cell, its four nodes
        np.maximum(norms[:, :-1, :-1], norms[:, 1:, :-1]),
        np.maximum(norms[:, :-1, 1:], norms[:, 1:, 1:]),
    )
    levels = [level]
    for _ in range(int(far.max(initial=0))):  # level r: over the (2r + 1)^2 cells around
        level = _grow(level)
        levels.append(level)
    stacked = np.stack(levels)  # (levels, 2, cells, cells)
    return PAD_SAFETY * stacked[far, 0, row, col], PAD_SAFETY * stacked[far, 1, row, col]


def _grow(level: np.ndarray) -> np.ndarray:
    """``(2, c, c)`` -> per cell, the largest value over it and its 8 neighbours."""
    out = level.copy()
    np.maximum(out[:, 1:], level[:, :-1], out=out[:, 1:])
    np.maximum(out[:, :-1], level[:, 1:], out=out[:, :-1])
    rows = out.copy()
    np.maximum(out[:, :, 1:], rows[:, :, :-1], out=out[:, :, 1:])
    np.maximum(out[:, :, :-1], rows[:, :, 1:], out=out[:, :, :-1])
    return out


def _longest_edges(coords: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per ring (``starts`` offsets into ``coords``), the length of its longest edge."""
    if len(starts) < 2:
        return np.zeros(0)
    step = np.diff(coords, axis=0)
    squared = step[:, 0] ** 2 + step[:, 1] ** 2
    squared[starts[1:-1] - 1] = 0.0  # from one ring's last vertex to the next ring's first
    longest: np.ndarray = np.sqrt(np.maximum.reduceat(squared, starts[:-1]))
    return longest


def _outer_bounds(
    coords: np.ndarray, starts: np.ndarray, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """4326 bounds containing each ring's reprojected outline, from its vertices only.

    An edge straight in ``crs`` is a curve in lon/lat that leaves the chord
    between its reprojected ends by at most ``K * L**2 / 8``, ``L`` the
    edge's length and ``K`` the largest second derivative of the projection
    along it.  ``K`` is measured once per CRS group on a grid
    (:func:`_ring_curvature`, times :data:`PAD_SAFETY`), so a ring costs its
    vertices, not its vertices and edge midpoints, and the bounds of its
    vertices padded by that margin contain its outline.  Many vertices are
    interpolated on a reprojected grid (:func:`_lonlat_in_place`), whose
    error at a vertex is at most ``K * (sx**2 + sy**2) / 8`` for cells of
    ``sx`` by ``sy``, added to the pad.

    Returns ``(bounds, wait)``: ``wait`` is False for rings to reproject in
    full at once: a pad over :data:`PAD_LIMIT` and over :data:`PAD_SHARE` of
    the ring's extent, or vertices more than 180 degrees apart in longitude
    (perhaps across the antimeridian).
    """
    transformer = _transformer(crs, where)
    lengths = np.diff(starts)
    first = coords[starts[:-1]]
    vertices = _Vertices.of(coords, starts)
    x, y = vertices.x.reshape(-1), vertices.y.reshape(-1)
    box = (float(x.min()), float(y.min()), float(x.max()), float(y.max()))
    norms = _curvature_grid(transformer, box, vertices.longest)
    spacing = _grid_spacing(norms, box, len(x))
    curve_x, curve_y = _ring_curvature(
        norms, box, first, vertices.longest, lengths - 1, max(spacing, default=0.0)
    )
    cells = _lonlat_in_place(transformer, x, y, box, spacing, crs, where)
    bounds = vertices.bounds()
    with np.errstate(invalid="ignore"):  # inf * 0 for a ring of one repeated point
        # an edge's bulge, and the interpolation's error at a vertex (bilinear on a cell)
        reach = vertices.longest**2 / 8.0 + (cells[0] ** 2 + cells[1] ** 2) / 8.0
        pad_x, pad_y = reach * curve_x + _PAD_FLOOR, reach * curve_y + _PAD_FLOOR
        span = np.maximum(bounds[:, 2] - bounds[:, 0], bounds[:, 3] - bounds[:, 1])
        wait = np.maximum(pad_x, pad_y) <= np.maximum(PAD_LIMIT, PAD_SHARE * span)
        wait &= bounds[:, 2] - bounds[:, 0] <= 180.0
    bounds[:, 0] -= pad_x
    bounds[:, 1] -= pad_y
    bounds[:, 2] += pad_x
    bounds[:, 3] += pad_y
    return bounds, wait


@dataclass(frozen=True, eq=False)
class _Vertices:
    """The vertices of closed rings but their closing ones, as contiguous ``x`` and ``y``.

    Rings of one size are ``(rings, size - 1)`` arrays (per-ring work goes by
    column); others are flat, with ``starts`` into them.  ``longest`` is each
    ring's longest edge.  ``x`` and ``y`` become lon and lat in place.
    """

    x: np.ndarray
    y: np.ndarray
    longest: np.ndarray
    starts: np.ndarray | None

    @classmethod
    def of(cls, coords: np.ndarray, starts: np.ndarray) -> _Vertices:
        """The vertices of the rings ``starts`` delimits in ``coords``."""
        lengths = np.diff(starts)
        if len(lengths) and (lengths == lengths[0]).all():  # one size: columns, no indices
            ring = coords.reshape(len(lengths), int(lengths[0]), 2)
            x = np.ascontiguousarray(ring[:, :-1, 0])  # the closing vertex repeats the first
            y = np.ascontiguousarray(ring[:, :-1, 1])
            longest = (x[:, 0] - x[:, -1]) ** 2 + (y[:, 0] - y[:, -1]) ** 2  # the closing edge
            step = np.diff(x, axis=1) ** 2 + np.diff(y, axis=1) ** 2
            for k in range(step.shape[1]):
                np.maximum(longest, step[:, k], out=longest)
            return cls(x, y, np.sqrt(longest), None)
        body = np.ones(len(coords), dtype=bool)
        body[starts[1:] - 1] = False
        kept = np.concatenate([[0], np.cumsum(lengths - 1)]).astype(np.int64)
        return cls(coords[body, 0], coords[body, 1], _longest_edges(coords, starts), kept)

    def bounds(self) -> np.ndarray:
        """``(rings, 4)`` xmin, ymin, xmax, ymax of the (reprojected) vertices."""
        if self.starts is not None:
            head = self.starts[:-1]
            return np.column_stack(
                [
                    np.minimum.reduceat(self.x, head),
                    np.minimum.reduceat(self.y, head),
                    np.maximum.reduceat(self.x, head),
                    np.maximum.reduceat(self.y, head),
                ]
            )
        bounds = np.empty((len(self.x), 4), dtype=np.float64)
        for column, (values, reduce) in enumerate(
            ((self.x, np.minimum), (self.y, np.minimum), (self.x, np.maximum), (self.y, np.maximum))
        ):
            out = values[:, 0].copy()
            for k in range(1, values.shape[1]):
                reduce(out, values[:, k], out=out)
            bounds[:, column] = out
        return bounds


INTERPOLATE_POINTS: Final = 2_000
"""From this many vertices in a CRS group on, vertices may be interpolated on a reprojected grid."""
GRID_PAD: Final = 1e-3
"""Degrees (about 100 m) the interpolation may add to a ring's pad (bounds only)."""
_NODES_PER_POINT: Final = 0.25
"""The grid is used when it has at most this many nodes per vertex."""
_MAX_CELLS: Final = 2048
"""Cells per side of the grid, at most."""


def _grid_spacing(
    norms: np.ndarray, box: tuple[float, float, float, float], count: int
) -> tuple[float, ...]:
    """Cell size ``(sx, sy)`` of the interpolation grid for ``count`` vertices, or ``()``.

    Cells are as large as keeps the interpolation's error bound, with the
    group's largest curvature, within :data:`GRID_PAD`; no grid (``()``)
    for fewer than :data:`INTERPOLATE_POINTS` vertices, a grid of more than
    :data:`_NODES_PER_POINT` nodes per vertex, or a curvature not measured.
    """
    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    curve = PAD_SAFETY * float(norms.max()) if norms.size else math.inf
    if count < INTERPOLATE_POINTS or not (width > 0.0 and height > 0.0 and curve < math.inf):
        return ()
    side = math.sqrt(4.0 * GRID_PAD / curve) if curve > 0.0 else max(width, height)
    side = max(side, width / _MAX_CELLS, height / _MAX_CELLS)
    nx, ny = max(1, math.ceil(width / side)), max(1, math.ceil(height / side))
    if (nx + 1) * (ny + 1) > _NODES_PER_POINT * count:
        return ()
    return width / nx, height / ny


@dataclass(frozen=True)
class _Grid:
    """Bilinear coefficients of lon and lat per cell of a regular grid in a source CRS."""

    x0: float
    y0: float
    sx: float
    sy: float
    nx: int
    ny: int
    coefficients: np.ndarray
    """``(8, ny * nx)``: per cell, ``a, b, c, d`` of lon then of lat, the value at
    ``(u, v)`` in the cell (both in [0, 1]) being ``a + b u + (c + d u) v``."""

    def interpolate(self, x: np.ndarray, y: np.ndarray) -> None:
        """Contiguous ``x`` and ``y`` inside the grid become lon and lat, in place."""
        u = x - self.x0
        u *= 1.0 / self.sx
        v = y - self.y0
        v *= 1.0 / self.sy
        column = np.minimum(u.astype(np.intp), self.nx - 1)
        row = np.minimum(v.astype(np.intp), self.ny - 1)
        u -= column
        v -= row
        row *= self.nx
        row += column
        del column
        for k, out in ((0, x), (4, y)):
            a, b, c, d = (self.coefficients[k + i].take(row) for i in range(4))
            d *= u
            d += c
            d *= v
            b *= u
            np.add(a, b, out=out)
            out += d


def _lonlat_in_place(
    transformer: Any,
    x: np.ndarray,
    y: np.ndarray,
    box: tuple[float, float, float, float],
    spacing: tuple[float, ...],
    crs: str,
    where: str,
) -> tuple[float, float]:
    """Contiguous 1-D ``x``, ``y`` in ``crs`` (inside ``box``) become lon and lat, in place.

    With a grid ``spacing`` (:func:`_grid_spacing`), pyproj reprojects only
    the grid's nodes and vertices are interpolated bilinearly on its cells,
    as GDAL's approximate transformer does; the caller pads bounds by the
    interpolation's error, so these values serve bounds only (footprints are
    reprojected exactly).  Without one, or when a node falls outside the
    CRS's area of use or the grid crosses the antimeridian, pyproj
    reprojects every vertex.

    Returns the cell size ``(sx, sy)`` used, ``(0, 0)`` when pyproj
    reprojected every vertex.
    """
    if not spacing:
        _transform_xy(transformer, x, y, crs, where)
        return 0.0, 0.0
    x0, y0, x1, y1 = box
    sx, sy = spacing
    nx, ny = max(1, round((x1 - x0) / sx)), max(1, round((y1 - y0) / sy))
    gx, gy = np.meshgrid(np.linspace(x0, x1, nx + 1), np.linspace(y0, y1, ny + 1))
    node_x, node_y = np.ascontiguousarray(gx.ravel()), np.ascontiguousarray(gy.ravel())
    with np.errstate(invalid="ignore"):
        transformer.transform(node_x, node_y, inplace=True)
        lon, lat = node_x.reshape(ny + 1, nx + 1), node_y.reshape(ny + 1, nx + 1)
        usable = np.isfinite(lon).all() and np.isfinite(lat).all()
        usable = usable and np.abs(np.diff(lon, axis=1)).max(initial=0.0) < 90.0
        usable = usable and np.abs(np.diff(lon, axis=0)).max(initial=0.0) < 90.0
    if not usable:
        _transform_xy(transformer, x, y, crs, where)
        return 0.0, 0.0
    coefficients = np.empty((8, ny, nx), dtype=np.float64)  # lon's four, then lat's
    for k, values in enumerate((lon, lat)):
        low_left, low_right = values[:-1, :-1], values[:-1, 1:]
        up_left, up_right = values[1:, :-1], values[1:, 1:]
        coefficients[4 * k] = low_left
        coefficients[4 * k + 1] = low_right - low_left
        coefficients[4 * k + 2] = up_left - low_left
        coefficients[4 * k + 3] = up_right - up_left - low_right + low_left
    sx, sy = (x1 - x0) / nx, (y1 - y0) / ny
    grid = _Grid(x0, y0, sx, sy, nx, ny, coefficients.reshape(8, -1))
    if len(x) >= PARALLEL_POINTS:
        half = len(x) // 2
        other = _worker().submit(grid.interpolate, x[half:], y[half:])
        grid.interpolate(x[:half], y[:half])
        other.result()
    else:
        grid.interpolate(x, y)
    return sx, sy


@dataclass(frozen=True, eq=False)
class _Waiting:
    """Simple polygons of one CRS not reprojected yet: only their outer bounds are known.

    :meth:`Footprints.take` reprojects the rings it is asked for exactly as
    :func:`compute_footprints` would have at once: vertices and edge
    midpoints (:func:`_fast_rings`), or the shapely path (:func:`to_wgs84`)
    for rings that bend or cross the antimeridian.
    """

    crs: str
    where: str
    rings: _Rings
    """Source coordinates."""
    first: int
    """The number of this group's first ring among all waiting rings of its footprints."""

    def touches(self, which: np.ndarray, query: Any) -> np.ndarray:
        """Per ring numbered ``which``: has it a vertex in the (prepared) ``query``?

        The vertices are reprojected exactly (pyproj): a vertex lies on the
        footprint's outline, so such a ring's footprint meets ``query``.
        """
        part = self.rings.pick(which)
        body = np.ones(len(part.coords), dtype=bool)
        body[part.starts[1:] - 1] = False  # the closing vertex repeats the first
        x = np.ascontiguousarray(part.coords[body, 0])
        y = np.ascontiguousarray(part.coords[body, 1])
        _transform_xy(_transformer(self.crs, self.where), x, y, self.crs, self.where)
        inside = shapely.intersects_xy(query, x, y)
        head = part.starts[:-1] - np.arange(len(which))  # offsets without the closing vertices
        touched: np.ndarray = np.logical_or.reduceat(inside, head)
        return touched

    def reproject(self, which: np.ndarray) -> np.ndarray:
        """4326 polygons of rings numbered ``which`` (in this group)."""
        part = self.rings.pick(which)
        out = np.empty(len(which), dtype=object)
        rings, kept = _fast_rings(part.coords, part.starts, self.crs, self.where)
        if rings is not None:
            out[kept] = rings.polygons(np.arange(len(rings)))
        rest = part.subset(~kept)
        if rest is not None:
            out[~kept] = to_wgs84(rest.polygons(np.arange(len(rest))), self.crs, self.where)
        return out


def _to_wgs84_parts(
    geoms: np.ndarray, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray, _Rings | None]:
    """:func:`to_wgs84` that leaves straight-enough polygons as rings (see :func:`_reproject`)."""
    out = np.array(geoms, dtype=object)
    halved = np.zeros(len(out), dtype=bool)
    present = np.flatnonzero(~shapely.is_missing(out))
    if present.size == 0:
        return out, halved, None
    if _is_wgs84(crs):
        _fix_antimeridian(out, np.empty(0, dtype=np.int64))
        return out, halved, None
    transformer = _transformer(crs, where)
    moved, part_halved, rings = _reproject(out[present], transformer, crs, where)
    out[present] = moved
    halved[present[part_halved]] = True
    return out, halved, rings


def to_wgs84(geoms: np.ndarray, crs: str, where: str = "") -> np.ndarray:
    """Shapely geometries in ``crs`` -> EPSG:4326, densified, cut at the antimeridian.

    One pyproj call for all coordinates.  ``None`` entries stay ``None``.

    Raises:
        TacoQueryError: pyproj cannot interpret ``crs``, or a coordinate has no
            finite 4326 position (``where`` names the column).

    Example:
        >>> import numpy as np, shapely
        >>> box = np.array([shapely.box(500000, 0, 510000, 10000)])
        >>> [round(v, 3) for v in to_wgs84(box, "EPSG:32630")[0].bounds]
        [-3.0, 0.0, -2.91, 0.09]
    """
    out = np.array(geoms, dtype=object)
    present = np.flatnonzero(~shapely.is_missing(out))
    if present.size == 0:
        return out
    if _is_wgs84(crs):
        _fix_antimeridian(out, np.empty(0, dtype=np.int64))
        return out
    transformer = _transformer(crs, where)
    moved, halved, rings = _reproject(out[present], transformer, crs, where)
    if rings is not None:
        moved[halved] = rings.polygons(np.arange(len(rings)))
    out[present] = moved
    return out


@dataclass(frozen=True, eq=False)
class Footprints:
    """One EPSG:4326 footprint per row of a level (``None`` where the row has no geometry).

    ``bounds`` is an ``(n, 4)`` float array (xmin, ymin, xmax, ymax; NaN for
    missing rows), the pre-filter of :meth:`matches`: it contains each
    footprint, exactly except for rows still ``waiting`` (reprojected from
    their vertices only, padded by at most :data:`PAD_LIMIT` degrees).
    ``stored`` holds the shapely footprints; for lon/lat points it is None
    and points are made from ``bounds`` only for the rows asked for
    (:meth:`take`), so a level of centroids never becomes a million shapely
    objects.
    """

    column: str
    bounds: np.ndarray
    stored: np.ndarray | None = None
    lazy: np.ndarray | None = None
    """Per row, its ring in ``rings`` (-1: none): polygons made from coordinates on demand."""
    rings: _Rings | None = None
    waiting: np.ndarray | None = None
    """Per row, its ring among the ``sources`` rings (-1: none): reprojected on demand."""
    sources: tuple[_Waiting, ...] = ()
    padded: np.ndarray | None = None
    """Rows whose ``bounds`` are padded (those waiting at first)."""

    @classmethod
    def of_points(cls, column: str, x: np.ndarray, y: np.ndarray) -> Footprints:
        """Footprints of lon/lat points given as coordinate arrays (NaN = no point).

        Example:
            >>> import numpy as np
            >>> Footprints.of_points("stac:centroid", np.array([1.0]), np.array([2.0])).extent
            (1.0, 2.0, 1.0, 2.0)
        """
        xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        return cls(column, np.column_stack([xs, ys, xs, ys]))

    def __len__(self) -> int:
        return len(self.bounds)

    @property
    def geometries(self) -> np.ndarray:
        """Every footprint as a shapely geometry (or None)."""
        return self.take(np.arange(len(self)))

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The footprints of row positions ``rows`` (shapely geometries or None)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.stored is not None:
            out: np.ndarray = self.stored[rows]
        else:
            b = self.bounds[rows]
            out = np.full(len(b), None, dtype=object)
            present = np.isfinite(b[:, 0]) & np.isfinite(b[:, 1])
            out[present] = shapely.points(b[present, 0], b[present, 1])
        if self.lazy is not None and self.rings is not None and len(rows):
            ring = self.lazy[rows]
            made = ring >= 0
            if made.any():
                built = self.rings.polygons(ring[made])
                out[made] = built
                if self.stored is not None:  # keep them: the next filter reuses them
                    self.stored[rows[made]] = built
                    self.lazy[rows[made]] = -1
                    if not (self.lazy >= 0).any():  # every ring is a polygon now
                        object.__setattr__(self, "rings", None)
        if self.waiting is not None and len(rows):
            number = self.waiting[rows]
            wait = number >= 0
            if wait.any():
                reprojected = self._reproject(number[wait])
                out[wait] = reprojected
                if self.stored is not None:  # kept, as above
                    self.stored[rows[wait]] = reprojected
                    self.waiting[rows[wait]] = -1
        return out

    def _reproject(self, numbers: np.ndarray) -> np.ndarray:
        """4326 polygons of waiting rings ``numbers`` (numbered over all ``sources``)."""
        out = np.empty(len(numbers), dtype=object)
        for source in self.sources:
            mine = (numbers >= source.first) & (numbers < source.first + len(source.rings))
            if mine.any():
                out[mine] = source.reproject(numbers[mine] - source.first)
        return out

    @functools.cached_property
    def extent(self) -> tuple[float, float, float, float] | None:
        """``(xmin, ymin, xmax, ymax)`` over all footprints, or None when there is none.

        Exact: the few padded rows (``waiting`` at first) that could hold an
        edge of the extent are reprojected for it.
        """
        b = self.bounds
        if not np.isfinite(b).any():
            return None
        if self.padded is not None:
            b = self._exact_edges()
        return (
            float(np.nanmin(b[:, 0])),
            float(np.nanmin(b[:, 1])),
            float(np.nanmax(b[:, 2])),
            float(np.nanmax(b[:, 3])),
        )

    def _exact_edges(self) -> np.ndarray:
        """``bounds``, exact on the padded rows that could hold an edge of the extent.

        A padded bound is at most :data:`PAD_LIMIT` beyond the exact one, so a
        row whose padded bound is further than that inside the padded extent
        cannot hold the exact extent's edge.
        """
        b = self.bounds.copy()
        padded = self.padded
        if padded is None:
            return b
        near = np.zeros(len(b), dtype=bool)
        with np.errstate(invalid="ignore"):
            for column in (0, 1):
                near |= b[:, column] <= np.nanmin(b[:, column]) + PAD_LIMIT
            for column in (2, 3):
                near |= b[:, column] >= np.nanmax(b[:, column]) - PAD_LIMIT
        rows = np.flatnonzero(near & padded)
        if rows.size:
            b[rows] = shapely.bounds(self.take(rows))
        return b

    def candidates(self, query: Any) -> np.ndarray:
        """Rows whose bounds meet the bounds of a part of ``query`` (a bool mask)."""
        mask = np.zeros(len(self), dtype=bool)
        b = self.bounds
        for part in shapely.get_parts(query):
            qx0, qy0, qx1, qy1 = shapely.bounds(part)
            with np.errstate(invalid="ignore"):
                mask |= (b[:, 0] <= qx1) & (b[:, 2] >= qx0) & (b[:, 1] <= qy1) & (b[:, 3] >= qy0)
        return mask

    def inside(self, query: Any) -> np.ndarray:
        """Rows whose bounds lie inside the bounds of a part of ``query`` (a bool mask)."""
        mask = np.zeros(len(self), dtype=bool)
        b = self.bounds
        for part in shapely.get_parts(query):
            qx0, qy0, qx1, qy1 = shapely.bounds(part)
            with np.errstate(invalid="ignore"):
                mask |= (b[:, 0] >= qx0) & (b[:, 2] <= qx1) & (b[:, 1] >= qy0) & (b[:, 3] <= qy1)
        return mask

    def _decide_by_vertices(self, query: Any, rows: np.ndarray, hits: np.ndarray) -> np.ndarray:
        """Of ``rows``, those still to test exactly: waiting rows with a vertex in ``query`` are
        hits (4 pyproj points for a tile instead of its whole outline)."""
        if self.waiting is None:
            return rows
        number = self.waiting[rows]
        touched = np.zeros(len(rows), dtype=bool)
        for source in self.sources:
            mine = np.flatnonzero(
                (number >= source.first) & (number < source.first + len(source.rings))
            )
            if mine.size:
                touched[mine] = source.touches(number[mine] - source.first, query)
        hits[rows[touched]] = True
        return rows[~touched]

    def _decide_by_bounds(self, query: Any, rows: np.ndarray, hits: np.ndarray) -> np.ndarray:
        """Of ``rows``, those still to test exactly: waiting rows whose bounds box lies
        inside the (prepared) ``query`` are hits, those whose box misses it are out."""
        waiting = self.waiting is not None and self.waiting[rows] >= 0
        if not np.any(waiting):
            return rows
        which = rows[waiting]
        boxes = shapely.box(*self.bounds[which].T)
        inside = shapely.contains(query, boxes)
        hits[which[inside]] = True
        undecided = ~inside & shapely.intersects(query, boxes)
        return np.sort(np.concatenate([rows[~waiting], which[undecided]]))

    def matches(self, query: Any) -> np.ndarray:
        """Row positions whose footprint intersects ``query`` (a 4326 shapely geometry).

        Rows whose bounds miss ``query``'s are out; when ``query`` is made of
        axis-aligned boxes, rows whose bounds lie inside one are in (a
        footprint lies inside its bounds); for another shape, rows still
        waiting are decided by their bounds' box when it lies inside
        ``query`` or misses it; a waiting row with a vertex (reprojected
        exactly) in ``query`` is in.  Only the others are tested exactly, and
        only their footprints are made (or reprojected).

        Example:
            >>> import numpy as np, pyarrow as pa, shapely
            >>> t = pa.table({"stac:centroid": [shapely.to_wkb(shapely.Point(1, 1))]})
            >>> compute_footprints(t, "stac:centroid").matches(shapely.box(0, 0, 2, 2))
            array([0])
        """
        meet = self.candidates(query)
        hits = np.zeros(len(self), dtype=bool)
        boxes = meet.any() and _rectangles(query)
        if boxes:
            hits = meet & self.inside(query)
            meet &= ~hits
        rows = np.flatnonzero(meet)
        if rows.size:
            shapely.prepare(query)
            if not boxes and self.waiting is not None:
                rows = self._decide_by_bounds(query, rows, hits)
            rows = self._decide_by_vertices(query, rows, hits)
            if rows.size:
                hits[rows[shapely.intersects(self.take(rows), query)]] = True
        found: np.ndarray = np.flatnonzero(hits)
        return found


def _rectangles(query: Any) -> bool:
    """True when every part of ``query`` is the axis-aligned box of its own bounds.

    Example:
        >>> _rectangles(shapely.box(0, 0, 1, 1)), _rectangles(shapely.Point(0, 0).buffer(1))
        (True, False)
    """
    parts = shapely.get_parts(query)
    if parts.size == 0:
        return False
    boxes = shapely.box(*np.asarray(shapely.bounds(parts)).T)
    return bool(np.all(shapely.get_type_id(parts) == 3) and np.all(shapely.equals(parts, boxes)))


_WKB_HEADER: Final = 13
"""Bytes before the coordinates of a one-ring WKB polygon (order, type, rings, points)."""


@dataclass(frozen=True, eq=False)
class _WkbColumn:
    """A WKB column's raw bytes, with the rows that are simple polygons found by numpy.

    A *simple* row is a little-endian 2D WKB Polygon of one closed ring of at
    least four points: its coordinates are read straight from the Arrow
    buffer, so such rows never become shapely objects before reprojection.
    Any other row (points, multi-part, holes, Z, big-endian, EWKB, nulls,
    invalid bytes) goes through ``shapely.from_wkb`` as before.
    """

    array: pa.Array
    data: np.ndarray
    start: np.ndarray
    points: np.ndarray
    simple: np.ndarray

    @classmethod
    def of(cls, column: pa.ChunkedArray | pa.Array) -> _WkbColumn:
        """Parse the headers of every row of ``column`` (binary or large binary)."""
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        n = len(array)
        _, offsets_buf, data_buf = array.buffers()
        wide = pa.types.is_large_binary(array.type)
        offsets = np.frombuffer(offsets_buf, dtype=np.int64 if wide else np.int32)
        offsets = offsets[array.offset : array.offset + n + 1].astype(np.int64)
        data = (
            np.frombuffer(data_buf, dtype=np.uint8)
            if data_buf is not None
            else np.empty(0, dtype=np.uint8)
        )
        start, length = offsets[:-1], np.diff(offsets)
        valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        simple = valid & (length >= _WKB_HEADER + 16 * 4)
        head = start[simple]
        points = np.zeros(n, dtype=np.int64)
        if head.size:
            order = data[head]
            kind, rings, count = (_uint32(data, head + at) for at in (1, 5, 9))
            ok = (order == 1) & (kind == 3) & (rings == 1) & (count >= 4)
            ok &= length[simple] == _WKB_HEADER + 16 * count
            first = np.where(ok, head + _WKB_HEADER, 0)  # 0: rows already refused
            last = np.where(ok, first + 16 * (count - 1), 0)
            for k in range(16):  # the ring is closed, byte for byte (else shapely decides)
                ok &= data[first + k] == data[last + k]
            points[np.flatnonzero(simple)] = np.where(ok, count, 0)
            simple[np.flatnonzero(simple)] = ok
        return cls(array, data, start, points, simple)

    def rings(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(coords, starts)`` of simple rows: ``(m, 2)`` floats and ``len(rows) + 1`` offsets."""
        counts = self.points[rows]
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        coords = np.empty((int(starts[-1]), 2), dtype=np.float64)
        first = self.start[rows] + _WKB_HEADER
        residue = first % 8
        for r in np.unique(residue):  # doubles are read through an aligned view per residue
            pick = np.flatnonzero(residue == r)
            usable = (len(self.data) - int(r)) // 8 * 8
            doubles = self.data[int(r) : int(r) + usable].view("<f8")
            size = 2 * counts[pick]
            target = np.repeat(2 * starts[pick], size) + _ramp(size)
            source = np.repeat((first[pick] - r) // 8, size) + _ramp(size)
            coords.reshape(-1)[target] = doubles[source]
        return coords, starts

    def decode(self, rows: np.ndarray, where: str, column: str) -> np.ndarray:
        """Shapely geometries of rows ``rows`` (None for nulls)."""
        values = np.asarray(
            self.array.take(pa.array(rows, pa.int64())).to_numpy(zero_copy_only=False),
            dtype=object,
        )
        try:
            return np.asarray(shapely.from_wkb(values, on_invalid="raise"), dtype=object)
        except shapely.errors.GEOSException as exc:
            raise TacoQueryError(f"{where}: column {column!r} holds invalid WKB: {exc}") from exc


def _uint32(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Little-endian uint32 at byte positions ``at`` of ``data``."""
    value: np.ndarray = data[at].astype(np.int64)
    for k in (1, 2, 3):
        value |= data[at + k].astype(np.int64) << (8 * k)
    return value


def _ramp(sizes: np.ndarray) -> np.ndarray:
    """``0 .. size - 1`` for each of ``sizes``, concatenated."""
    total = int(sizes.sum())
    before = np.repeat(np.cumsum(sizes) - sizes, sizes)
    ramp: np.ndarray = np.arange(total, dtype=np.int64) - before
    return ramp


def _fast_rings(
    coords: np.ndarray, starts: np.ndarray, crs: str, where: str
) -> tuple[_Rings | None, np.ndarray]:
    """4326 rings of simple polygons that need no shapely work, and which ones they are.

    The same decisions as :func:`_reproject` on coordinates only: a polygon
    whose edges, split at their midpoints, stay within
    :data:`STRAIGHT_TOLERANCE` of the curve and that does not cross the
    antimeridian keeps its vertices and midpoints (in EPSG:4326: its
    vertices, when they lie within [-180, 180]).  The others (``False`` in
    the mask) are left to the shapely path.
    """
    count = len(starts) - 1
    if _is_wgs84(crs):
        rings = _Rings(coords, starts)
        bounds = rings.bounds()
        keep = (bounds[:, 0] >= -180.0) & (bounds[:, 2] <= 180.0)
        kept = rings if keep.all() else rings.subset(keep)
        return kept, keep
    transformer = _transformer(crs, where)
    lengths = np.diff(starts)
    index = np.repeat(np.arange(count), lengths)
    same = np.ones(len(coords) - 1, dtype=bool) if len(coords) else np.ones(0, dtype=bool)
    same[starts[1:-1] - 1] = False
    mids = ((coords[:-1] + coords[1:]) / 2.0)[same]
    closing = starts[1:] - 1  # equal to the first vertex, byte for byte: not reprojected
    body = np.ones(len(coords), dtype=bool)
    body[closing] = False
    both = _transform(transformer, np.concatenate([coords[body], mids]), crs, where)
    moved = np.empty_like(coords)
    moved[body] = both[: len(coords) - count]
    moved[closing] = moved[starts[:-1]]
    moved_mids = both[len(coords) - count :]
    del both
    keep = ~_bent(moved, moved_mids, index, count)
    keep[_crossing_rows(moved[:, 0], index)] = False
    return _interleave(moved, moved_mids, starts, keep), keep


def _interleave(
    moved: np.ndarray,
    mids: np.ndarray,
    starts: np.ndarray,
    keep: np.ndarray,
) -> _Rings | None:
    """Rings of the ``keep`` polygons: vertex, midpoint, vertex, ... (``2k - 1`` points)."""
    if not keep.any():
        return None
    lengths = np.diff(starts)
    kept = lengths[keep]
    if len(lengths) and (lengths == lengths[0]).all():  # one ring size: reshape, no indices
        size = int(lengths[0])
        total = len(kept) * (2 * size - 1)
        flat = np.empty((total, 2), dtype=np.float64)
        ring = flat.reshape(len(kept), 2 * size - 1, 2)
        ring[:, ::2] = moved.reshape(-1, size, 2)[keep]
        ring[:, 1::2] = mids.reshape(-1, size - 1, 2)[keep]
        steps = np.arange(len(kept) + 1, dtype=np.int64) * (2 * size - 1)
        return _Rings(ring.reshape(-1, 2), steps)
    out_starts = np.concatenate([[0], np.cumsum(2 * kept - 1)]).astype(np.int64)
    on_vertex = np.repeat(keep, lengths)
    on_mid = np.repeat(keep, lengths - 1)
    total = int(out_starts[-1])
    coords = np.empty((total, 2), dtype=np.float64)
    vertex_at = np.repeat(out_starts[:-1], kept) + 2 * _ramp(kept)
    coords[vertex_at] = moved[on_vertex]
    coords[vertex_at[_not_last(kept)] + 1] = mids[on_mid]
    return _Rings(coords, out_starts)


def _not_last(lengths: np.ndarray) -> np.ndarray:
    """Positions (into the concatenated runs) of every element but the last of each run."""
    mask = np.ones(int(lengths.sum()), dtype=bool)
    mask[np.cumsum(lengths) - 1] = False
    return np.flatnonzero(mask)


def compute_footprints(
    table: pa.Table, column: str, *, field_crs: str | None = None, where: str = ""
) -> Footprints:
    """EPSG:4326 footprints of ``table[column]`` (WKB), reprojected per row's CRS.

    The CRS comes from :func:`column_crs`; rows of one CRS are reprojected
    together.  A column with no CRS anywhere is taken as EPSG:4326 when its
    coordinates fit in [-180, 180] x [-90, 90].

    Simple polygons (one ring, little-endian 2D WKB) are read from the Arrow
    buffer with numpy.  Those in a CRS other than 4326 get bounds from their
    reprojected vertices only, padded by the projection's measured curvature
    (:func:`_outer_bounds`), and wait in their own CRS until
    :meth:`Footprints.take` asks for them (a filter's exact test, a frame);
    4326 ones stay coordinates until then; only the other rows become
    shapely objects here.

    Raises:
        TacoQueryError: invalid WKB, an unknown CRS, or a column without a CRS
            whose coordinates are not lon/lat (the message names the column).

    Example:
        >>> import pyarrow as pa, shapely
        >>> t = pa.table({"istac:geometry": [shapely.to_wkb(shapely.box(5e5, 0, 5.1e5, 1e4))],
        ...               "istac:crs": ["EPSG:32630"]})
        >>> [round(v, 2) for v in compute_footprints(t, "istac:geometry").geometries[0].bounds]
        [-3.0, 0.0, -2.91, 0.09]
    """
    where = f"{where}: {column}" if where else column
    wkb = _WkbColumn.of(table.column(column))
    other = np.flatnonzero(~wkb.simple)
    decoded = np.full(len(wkb.simple), None, dtype=object)
    decoded[other] = wkb.decode(other, where, column)  # invalid WKB fails here, as before
    builder = _Builder(column, wkb, decoded, where)
    for rows, crs, label in _crs_groups(table, column, field_crs, builder):
        if rows.size:
            builder.add(rows, crs, label)
    return builder.finish()


def _crs_groups(
    table: pa.Table, column: str, field_crs: str | None, builder: _Builder
) -> list[tuple[np.ndarray, str, str]]:
    """``(rows, crs, where)`` per CRS of ``column`` (see :func:`compute_footprints`)."""
    size, where = len(builder.out), builder.where
    crs_column, fixed = column_crs(table, column, field_crs)
    if crs_column is None:
        if fixed is None:
            fixed = _assume_lonlat(_all_bounds(builder.wkb, builder.decoded), column, where)
        return [(np.arange(size), fixed, where)]
    encoded = pc.dictionary_encode(table.column(crs_column)).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    valid = ~np.asarray(encoded.indices.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return [
        (np.flatnonzero(valid & (codes == code)), str(crs), f"{where} ({crs_column}={crs!r})")
        for code, crs in enumerate(encoded.dictionary.to_pylist())
    ]


class _Builder:
    """The footprints of one column, built one CRS group at a time."""

    def __init__(self, column: str, wkb: _WkbColumn, decoded: np.ndarray, where: str) -> None:
        size = len(wkb.simple)
        self.column, self.wkb, self.decoded, self.where = column, wkb, decoded, where
        self.out = np.full(size, None, dtype=object)
        self.bounds = np.full((size, 4), np.nan, dtype=np.float64)
        self.waiting = np.full(size, -1, dtype=np.int64)
        self.sources: list[_Waiting] = []
        self.fast_parts: list[tuple[np.ndarray, _Rings]] = []
        self.slow_parts: list[tuple[np.ndarray, _Rings]] = []

    def add(self, rows: np.ndarray, crs: str, label: str) -> None:
        """Footprints (or outer bounds and waiting rings) of ``rows``, stored in ``crs``."""
        simple = self.wkb.simple[rows]
        fast, slow = rows[simple], rows[~simple]
        source = _Rings(*self.wkb.rings(fast)) if fast.size else None
        if source is not None and not _is_wgs84(crs):
            fast, source = self._wait(fast, source, crs, label)
        if source is not None:
            rings, kept = _fast_rings(source.coords, source.starts, crs, label)
            del source
            if rings is not None:
                self.fast_parts.append((fast[kept], rings))
            rest = fast[~kept]
            if rest.size:
                self.decoded[rest] = self.wkb.decode(rest, self.where, self.column)
                slow = np.concatenate([slow, rest])
        if slow.size == 0:
            return
        moved, halved, slow_rings = _to_wgs84_parts(self.decoded[slow], crs, label)
        self.decoded[slow] = None
        self.out[slow] = moved
        if slow_rings is not None:
            self.slow_parts.append((slow[halved], slow_rings))

    def _wait(
        self, fast: np.ndarray, source: _Rings, crs: str, label: str
    ) -> tuple[np.ndarray, _Rings | None]:
        """Keep padded vertex bounds of the rings that can wait; return the others."""
        outer, wait = _outer_bounds(source.coords, source.starts, crs, label)
        held = source if wait.all() else source.subset(wait)
        if held is not None:
            first = sum(len(s.rings) for s in self.sources)
            self.waiting[fast[wait]] = first + np.arange(len(held))
            self.bounds[fast[wait]] = outer[wait]
            self.sources.append(_Waiting(crs, label, held, first))
        return fast[~wait], None if wait.all() else source.subset(~wait)

    def finish(self) -> Footprints:
        """The footprints of every group added."""
        out, bounds = self.out, self.bounds
        present = np.flatnonzero(~shapely.is_missing(out))
        bounds[present] = shapely.bounds(out[present])
        parts = self.fast_parts + self.slow_parts
        waiting = self.waiting if self.sources else None
        if not parts:
            if waiting is None:
                return Footprints(self.column, bounds, out)
            return Footprints(
                self.column, bounds, out, None, None, waiting, tuple(self.sources), _padded(waiting)
            )
        lazy = np.full(len(out), -1, dtype=np.int64)
        held = 0
        for owners, part in parts:
            lazy[owners] = held + np.arange(len(part))
            held += len(part)
        joined = parts[0][1] if len(parts) == 1 else _Rings.join([p for _, p in parts])
        made = lazy >= 0
        bounds[made] = joined.bounds()[lazy[made]]
        return Footprints(
            self.column, bounds, out, lazy, joined, waiting, tuple(self.sources), _padded(waiting)
        )


def _padded(waiting: np.ndarray | None) -> np.ndarray | None:
    return None if waiting is None else waiting >= 0


def _all_bounds(wkb: _WkbColumn, decoded: np.ndarray) -> np.ndarray:
    """``(n, 4)`` bounds of every row as stored (simple rows from their coordinates)."""
    bounds = np.asarray(shapely.bounds(decoded), dtype=np.float64)
    fast = np.flatnonzero(wkb.simple)
    if fast.size:
        bounds[fast] = _Rings(*wkb.rings(fast)).bounds()
    return bounds


def _assume_lonlat(bounds: np.ndarray, column: str, where: str) -> str:
    if np.isfinite(bounds).any():
        xmin, ymin = np.nanmin(bounds[:, 0]), np.nanmin(bounds[:, 1])
        xmax, ymax = np.nanmax(bounds[:, 2]), np.nanmax(bounds[:, 3])
        if xmin < -180 or xmax > 180 or ymin < -90 or ymax > 90:
            raise TacoQueryError(
                f"{where}: expected a CRS for column {column!r} (a CRS column, GeoParquet "
                f"metadata) or lon/lat coordinates, found no CRS and coordinates spanning "
                f"({xmin:g}, {ymin:g}, {xmax:g}, {ymax:g})"
            )
    return WGS84


def check_box(box: Sequence[Any], crs: str) -> tuple[float, float, float, float]:
    """Validate a ``(minx, miny, maxx, maxy)`` box given in ``crs``.

    In EPSG:4326 ``minx > maxx`` is a box crossing the antimeridian (the STAC
    convention); in any other CRS it is an error.

    Raises:
        TacoQueryError: not four finite numbers, ``miny > maxy``, latitudes
            outside [-90, 90] or longitudes outside [-180, 180] (EPSG:4326);
            the message shows the box and the expected order.

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
    if _is_wgs84(crs):
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

    A 4326 box whose ``minx > maxx`` should be passed to :func:`box_geometry`.

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
    if _is_wgs84(crs):
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
        stacklevel=4,
    )
