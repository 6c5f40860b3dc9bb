"""EPSG:4326 footprints of a level's geometry column, for CRS-correct spatial filters.

``istac:geometry`` is stored in each sample's own CRS, so rows are reprojected per
CRS group; per-row bounds are the pre-filter.  Polygons containing a pole are not
handled.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import shapely

from taco_gdal.errors import TacoQueryError
from taco_gdal.read._types import is_binary
from taco_gdal.read.spatial.bounds import PAD_LIMIT, Waiting, outer_bounds
from taco_gdal.read.spatial.crs import WGS84, column_crs, is_wgs84
from taco_gdal.read.spatial.reproject import Rings, fast_rings, to_wgs84_parts
from taco_gdal.read.spatial.wkb import WkbColumn

__all__ = [
    "Footprints",
    "compute_footprints",
]


@dataclass(frozen=True, eq=False)
class Footprints:
    """One EPSG:4326 footprint per row of a level (``None`` where the row has no geometry).

    ``bounds`` (xmin, ymin, xmax, ymax; NaN when missing) contains each footprint,
    padded for rows still ``waiting``.  ``stored`` is None for lon/lat points, which
    are made from ``bounds`` only for the rows asked for.
    """

    column: str
    bounds: np.ndarray
    stored: np.ndarray | None = None
    lazy: np.ndarray | None = None
    """Per row, its ring in ``rings`` (-1: none): polygons made from coordinates on demand."""
    rings: Rings | None = None
    waiting: np.ndarray | None = None
    """Per row, its ring among the ``sources`` rings (-1: none): reprojected on demand."""
    sources: tuple[Waiting, ...] = ()
    padded: np.ndarray | None = None
    """Rows whose ``bounds`` are padded (those waiting at first)."""

    @classmethod
    def of_points(cls, column: str, x: np.ndarray, y: np.ndarray) -> Footprints:
        """Footprints of lon/lat points (NaN = no point).

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
        """``(xmin, ymin, xmax, ymax)`` over all footprints (exact), or None when there is none."""
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
        """``bounds``, exact on the padded rows within :data:`PAD_LIMIT` of an extent edge."""
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
        return self._per_part(query, inside=False)

    def inside(self, query: Any) -> np.ndarray:
        """Rows whose bounds lie inside the bounds of a part of ``query`` (a bool mask)."""
        return self._per_part(query, inside=True)

    def _per_part(self, query: Any, inside: bool) -> np.ndarray:
        mask = np.zeros(len(self), dtype=bool)
        x0, y0, x1, y1 = self.bounds.T
        for part in shapely.get_parts(query):
            qx0, qy0, qx1, qy1 = shapely.bounds(part)
            with np.errstate(invalid="ignore"):
                if inside:
                    mask |= (x0 >= qx0) & (x1 <= qx1) & (y0 >= qy0) & (y1 <= qy1)
                else:
                    mask |= (x0 <= qx1) & (x1 >= qx0) & (y0 <= qy1) & (y1 >= qy0)
        return mask

    def _decide_by_vertices(self, query: Any, rows: np.ndarray, hits: np.ndarray) -> np.ndarray:
        """Of ``rows``, those still to test: waiting rows with a vertex in ``query`` are hits."""
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
        """Of ``rows``, those still to test: waiting rows whose box is inside ``query`` are hits,
        those whose box misses it are out."""
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

        Bounds decide what they can; only the remaining rows' footprints are made
        and tested exactly.

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
    """True when every part of ``query`` is the axis-aligned box of its own bounds."""
    parts = shapely.get_parts(query)
    if parts.size == 0:
        return False
    boxes = shapely.box(*np.asarray(shapely.bounds(parts)).T)
    return bool(np.all(shapely.get_type_id(parts) == 3) and np.all(shapely.equals(parts, boxes)))


def compute_footprints(
    table: pa.Table, column: str, *, field_crs: str | None = None, where: str = ""
) -> Footprints:
    """EPSG:4326 footprints of ``table[column]`` (WKB), reprojected per row's CRS.

    A column with no CRS anywhere is taken as EPSG:4326 when its coordinates fit.
    Projected simple polygons are reprojected only when :meth:`Footprints.take`
    asks for them.

    Raises:
        TacoQueryError: invalid WKB, an unknown CRS, or no CRS and not lon/lat.

    Example:
        >>> import pyarrow as pa, shapely
        >>> t = pa.table({"istac:geometry": [shapely.to_wkb(shapely.box(5e5, 0, 5.1e5, 1e4))],
        ...               "istac:crs": ["EPSG:32630"]})
        >>> [round(v, 2) for v in compute_footprints(t, "istac:geometry").geometries[0].bounds]
        [-3.0, 0.0, -2.91, 0.09]
    """
    where = f"{where}: {column}" if where else column
    values = table.column(column)
    if pa.types.is_null(values.type):
        values = values.cast(pa.binary())
    if not is_binary(values.type):
        raise TacoQueryError(
            f"{where}: expected WKB geometries (binary), found a column of {values.type}"
        )
    wkb = WkbColumn.of(values)
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
    """``(rows, crs, where)`` per CRS of ``column``."""
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

    def __init__(self, column: str, wkb: WkbColumn, decoded: np.ndarray, where: str) -> None:
        size = len(wkb.simple)
        self.column, self.wkb, self.decoded, self.where = column, wkb, decoded, where
        self.out = np.full(size, None, dtype=object)
        self.bounds = np.full((size, 4), np.nan, dtype=np.float64)
        self.waiting = np.full(size, -1, dtype=np.int64)
        self.sources: list[Waiting] = []
        self.fast_parts: list[tuple[np.ndarray, Rings]] = []
        self.slow_parts: list[tuple[np.ndarray, Rings]] = []

    def add(self, rows: np.ndarray, crs: str, label: str) -> None:
        """Footprints (or outer bounds and waiting rings) of ``rows``, stored in ``crs``."""
        simple = self.wkb.simple[rows]
        fast, slow = rows[simple], rows[~simple]
        source = Rings(*self.wkb.rings(fast)) if fast.size else None
        if source is not None and not is_wgs84(crs):
            fast, source = self._wait(fast, source, crs, label)
        if source is not None:
            rings, kept = fast_rings(source.coords, source.starts, crs, label)
            del source
            if rings is not None:
                self.fast_parts.append((fast[kept], rings))
            rest = fast[~kept]
            if rest.size:
                self.decoded[rest] = self.wkb.decode(rest, self.where, self.column)
                slow = np.concatenate([slow, rest])
        if slow.size == 0:
            return
        moved, halved, slow_rings = to_wgs84_parts(self.decoded[slow], crs, label)
        self.decoded[slow] = None
        self.out[slow] = moved
        if slow_rings is not None:
            self.slow_parts.append((slow[halved], slow_rings))

    def _wait(
        self, fast: np.ndarray, source: Rings, crs: str, label: str
    ) -> tuple[np.ndarray, Rings | None]:
        """Keep padded vertex bounds of the rings that can wait; return the others."""
        outer, wait = outer_bounds(source.coords, source.starts, crs, label)
        held = source if wait.all() else source.subset(wait)
        if held is not None:
            first = sum(len(s.rings) for s in self.sources)
            self.waiting[fast[wait]] = first + np.arange(len(held))
            self.bounds[fast[wait]] = outer[wait]
            self.sources.append(Waiting(crs, label, held, first))
        return fast[~wait], None if wait.all() else source.subset(~wait)

    def finish(self) -> Footprints:
        """The footprints of every group added."""
        out, bounds = self.out, self.bounds
        present = np.flatnonzero(~shapely.is_missing(out))
        bounds[present] = shapely.bounds(out[present])
        parts = self.fast_parts + self.slow_parts
        waiting = self.waiting if self.sources else None
        padded = None if waiting is None else waiting >= 0
        lazy, joined = None, None
        if parts:
            lazy = np.full(len(out), -1, dtype=np.int64)
            held = 0
            for owners, part in parts:
                lazy[owners] = held + np.arange(len(part))
                held += len(part)
            joined = parts[0][1] if len(parts) == 1 else Rings.join([p for _, p in parts])
            made = lazy >= 0
            bounds[made] = joined.bounds()[lazy[made]]
        sources = tuple(self.sources)
        return Footprints(self.column, bounds, out, lazy, joined, waiting, sources, padded)


def _all_bounds(wkb: WkbColumn, decoded: np.ndarray) -> np.ndarray:
    """``(n, 4)`` bounds of every row as stored (simple rows from their coordinates)."""
    bounds = np.asarray(shapely.bounds(decoded), dtype=np.float64)
    fast = np.flatnonzero(wkb.simple)
    if fast.size:
        bounds[fast] = Rings(*wkb.rings(fast)).bounds()
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
