"""Bounds of reprojected footprints from their vertices alone.

The bounds are padded by the curvature of the projection, so that they contain
the curved outline, which is computed only for the rows a filter or frame needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import shapely
from numpy.lib.stride_tricks import sliding_window_view

from taco_gdal.read.spatial.crs import transformer_for
from taco_gdal.read.spatial.reproject import (
    Rings,
    fast_rings,
    in_halves,
    run_bounds,
    to_wgs84,
    transform_xy,
)

__all__ = [
    "GRID_PAD",
    "INTERPOLATE_POINTS",
    "PAD_LIMIT",
    "PAD_SAFETY",
    "PAD_SHARE",
    "Waiting",
    "outer_bounds",
]

PAD_SAFETY: Final = 4.0
"""Factor on the measured curvature of a projection when padding vertex-only bounds."""
PAD_LIMIT: Final = 1e-2
"""Degrees: a larger pad (also over :data:`PAD_SHARE`) makes a ring reprojected at once."""
PAD_SHARE: Final = 0.1
"""A pad up to this share of a ring's extent in degrees keeps its bounds a useful pre-filter."""
_PAD_FLOOR: Final = 1e-9
"""Degrees added to every pad (rounding of the reprojected vertices)."""
_CURVE_GRID: Final = 17
"""Nodes per side of the grid on which :func:`_curvature` measures a large CRS group."""
_CURVE_GRID_SMALL: Final = 9
"""The same for a group of fewer than :data:`_SMALL_GROUP` rings."""
_SMALL_GROUP: Final = 50_000
_STENCIL: Final = np.array(
    [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=float
)


def _curvature(
    transformer: Any, box: tuple[float, float, float, float], step: float, size: int
) -> np.ndarray:
    """``(2, size, size)``: per grid node, the Hessian's spectral norm of lon and lat.

    Infinite where a position is not finite or the stencil wraps at 180 degrees.
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


def _ring_curvature(
    norms: np.ndarray,
    box: tuple[float, float, float, float],
    first: np.ndarray,
    longest: np.ndarray,
    edges: np.ndarray,
    spacing: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per ring, the largest ``norms`` near its first vertex, times :data:`PAD_SAFETY`."""
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
        edged = np.pad(level, ((0, 0), (1, 1), (1, 1)), mode="edge")
        level = sliding_window_view(edged, (3, 3), axis=(1, 2)).max(axis=(-2, -1))
        levels.append(level)
    stacked = np.stack(levels)  # (levels, 2, cells, cells)
    return PAD_SAFETY * stacked[far, 0, row, col], PAD_SAFETY * stacked[far, 1, row, col]


def _longest_edges(coords: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per ring (``starts`` offsets into ``coords``), the length of its longest edge."""
    if len(starts) < 2:
        return np.zeros(0)
    step = np.diff(coords, axis=0)
    squared = step[:, 0] ** 2 + step[:, 1] ** 2
    squared[starts[1:-1] - 1] = 0.0  # from one ring's last vertex to the next ring's first
    longest: np.ndarray = np.sqrt(np.maximum.reduceat(squared, starts[:-1]))
    return longest


def outer_bounds(
    coords: np.ndarray, starts: np.ndarray, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """4326 bounds containing each ring's reprojected outline, from its vertices only.

    A straight edge of length ``L`` leaves its reprojected chord by at most
    ``K * L**2 / 8``, ``K`` the projection's largest second derivative (measured
    once per CRS group); vertex bounds padded by that, plus the interpolation
    error of :func:`_lonlat_in_place`, contain the outline.

    Returns ``(bounds, wait)``: ``wait`` is False for rings to reproject at once
    (pad over :data:`PAD_LIMIT` and :data:`PAD_SHARE` of the extent, or vertices
    more than 180 degrees apart in longitude).
    """
    transformer = transformer_for(crs, where)
    lengths = np.diff(starts)
    first = coords[starts[:-1]]
    vertices = _Vertices.of(coords, starts)
    x, y = vertices.x.reshape(-1), vertices.y.reshape(-1)
    box = (float(x.min()), float(y.min()), float(x.max()), float(y.max()))
    size = _CURVE_GRID if len(vertices.longest) >= _SMALL_GROUP else _CURVE_GRID_SMALL
    cell = max(box[2] - box[0], box[3] - box[1]) / (size - 1)
    step = min(float(vertices.longest.max()) if len(vertices.longest) else 0.0, cell)
    norms = _curvature(transformer, box, step, size)
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
    """Ring vertices without the closing ones, as contiguous ``x`` and ``y`` (2-D if one size)."""

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
            return run_bounds(self.x, self.y, self.starts[:-1])
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
    """Cell size ``(sx, sy)`` keeping the interpolation error within :data:`GRID_PAD`, or ``()``."""
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
    """``(8, ny * nx)``: per cell ``a, b, c, d`` of lon, then lat: ``a + b u + (c + d u) v``."""

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
    """``x``, ``y`` in ``crs`` become lon and lat in place, interpolated on a grid if ``spacing``.

    Returns the cell size used, ``(0, 0)`` when every vertex was reprojected.
    """
    if not spacing:
        transform_xy(transformer, x, y, crs, where)
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
        transform_xy(transformer, x, y, crs, where)
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
    in_halves(transformer, crs, len(x), lambda _used, rows: grid.interpolate(x[rows], y[rows]))
    return sx, sy


@dataclass(frozen=True, eq=False)
class Waiting:
    """Simple polygons of one CRS not reprojected yet: only their outer bounds are known."""

    crs: str
    where: str
    rings: Rings
    """Source coordinates."""
    first: int
    """The number of this group's first ring among all waiting rings of its footprints."""

    def touches(self, which: np.ndarray, query: Any) -> np.ndarray:
        """Per ring numbered ``which``: has it a vertex (on its outline) in ``query``?"""
        part = self.rings.pick(which)
        body = np.ones(len(part.coords), dtype=bool)
        body[part.starts[1:] - 1] = False  # the closing vertex repeats the first
        x = np.ascontiguousarray(part.coords[body, 0])
        y = np.ascontiguousarray(part.coords[body, 1])
        transform_xy(transformer_for(self.crs, self.where), x, y, self.crs, self.where)
        inside = shapely.intersects_xy(query, x, y)
        head = part.starts[:-1] - np.arange(len(which))  # offsets without the closing vertices
        touched: np.ndarray = np.logical_or.reduceat(inside, head)
        return touched

    def reproject(self, which: np.ndarray) -> np.ndarray:
        """4326 polygons of rings numbered ``which`` (in this group)."""
        part = self.rings.pick(which)
        out = np.empty(len(which), dtype=object)
        rings, kept = fast_rings(part.coords, part.starts, self.crs, self.where)
        if rings is not None:
            out[kept] = rings.polygons(np.arange(len(rings)))
        rest = part.subset(~kept)
        if rest is not None:
            out[~kept] = to_wgs84(rest.polygons(np.arange(len(rest))), self.crs, self.where)
        return out
