"""Leakage between the splits of a dataset: footprints that meet, bytes that repeat.

Pairs come from a shapely ``STRtree`` over the EPSG:4326 footprints, so the work
grows with the number of neighbours, never with all pairs. Without a buffer, a
pair leaks when the footprints' interiors share area (each polygon shrunk by a
hair, so edges or corners that only touch do not leak). With a buffer, candidate
pairs come from query boxes widened by the buffer in degrees (wrapped across the
antimeridian) and are decided by their planar distance in an azimuthal
equidistant projection on the WGS84 ellipsoid centred on the pair's 5-degree
cell, which keeps distances near the centre true in metres at any latitude and
across the antimeridian.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import shapely

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CHECKSUM, CURRENT_ID, GEOMETRY_COLUMNS, ID
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import quote_ident
from taco_gdal.read.spatial.filters import footprints_of, geometry_column

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = [
    "SplitReport",
    "check_splits",
    "find_leaks",
    "leaking_pairs",
    "repeated_digests",
    "table_footprints",
    "table_leaks",
]

_CELL: Final = 5.0
"""Degrees of the cells that share one equidistant projection."""
_DENSIFY: Final = 0.05
"""Longest footprint edge, in degrees, before projecting (edges bend under projection)."""
_M_PER_DEG_LAT: Final = 110_574.0
"""Fewest metres in a degree of latitude (at the equator), so widened boxes miss nothing."""
_M_PER_DEG_LON: Final = 111_320.0
_HAIR: Final = 1e-9
"""Degrees (about 0.1 mm) by which polygons shrink before testing for shared area."""


@dataclass(frozen=True)
class SplitReport:
    """What :func:`check_splits` found.

    ``overlaps``: ``(id_a, id_b, split_a, split_b)`` for every pair of samples in
    different splits whose footprints share area (or come within ``buffer_m``).
    ``duplicates``: ``(digest, ids)`` for every stored digest held by samples of
    more than one split.
    """

    column: str
    buffer_m: float
    overlaps: tuple[tuple[str, str, str, str], ...]
    duplicates: tuple[tuple[str, tuple[str, ...]], ...]
    samples: int
    without_footprint: int
    digests_checked: bool

    @property
    def ok(self) -> bool:
        """True when no pair leaks and no digest repeats across splits."""
        return not self.overlaps and not self.duplicates

    def lines(self) -> list[str]:
        """One line per finding, with the ids."""
        near = f"come within {self.buffer_m:g} m" if self.buffer_m else "overlap"
        out = [f"{a} ({sa}) and {b} ({sb}): footprints {near}" for a, b, sa, sb in self.overlaps]
        out += [f"{d}: same bytes in {', '.join(ids)}" for d, ids in self.duplicates]
        return out


def _unordered(pairs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(2, k)`` index pairs in any order -> unique ``(i, j)`` with ``i < j``."""
    low, high = pairs.min(axis=0), pairs.max(axis=0)
    keys = np.unique(low[low < high] * n + high[low < high])
    return keys // n, keys % n


def _query_boxes(bounds: np.ndarray, buffer_m: float) -> np.ndarray:
    """Each footprint's bounds widened by ``buffer_m`` in degrees (never too little)."""
    dlat = buffer_m / _M_PER_DEG_LAT
    lat = np.minimum(np.maximum(np.abs(bounds[:, 1]), np.abs(bounds[:, 3])) + dlat, 90.0)
    cos = np.cos(np.radians(lat))
    with np.errstate(divide="ignore"):
        dlon = np.where(cos > 1e-6, buffer_m / (_M_PER_DEG_LON * cos), 360.0)
    dlon = np.minimum(dlon * 1.01, 360.0)
    return np.column_stack(
        [bounds[:, 0] - dlon, bounds[:, 1] - dlat, bounds[:, 2] + dlon, bounds[:, 3] + dlat]
    )


def _candidates(geoms: np.ndarray, buffer_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``i < j`` whose widened boxes meet, across the antimeridian too."""
    tree = shapely.STRtree(geoms)
    boxes = _query_boxes(shapely.bounds(geoms), buffer_m)
    found = [tree.query(shapely.box(*boxes.T))]
    for shift, rows in ((360.0, boxes[:, 0] < -180.0), (-360.0, boxes[:, 2] > 180.0)):
        if rows.any():
            moved = boxes[rows] + np.array([shift, 0.0, shift, 0.0])
            hits = tree.query(shapely.box(*moved.T))
            found.append(np.vstack([np.flatnonzero(rows)[hits[0]], hits[1]]))
    pairs = np.hstack(found)
    return _unordered(pairs, len(geoms))


def _sharing_area(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``i < j`` whose interiors meet: polygons shrunk by a hair still intersect.

    Shrinking each polygon once (not each pair) keeps edges and corners that
    only touch, and the rounding of reprojected shared edges, out of the answer;
    points and lines are compared as they are.
    """
    probe = geoms.copy()
    polygonal = np.isin(shapely.get_type_id(geoms), (3, 6))
    probe[polygonal] = shapely.buffer(geoms[polygonal], -_HAIR, join_style="mitre")
    pairs = shapely.STRtree(geoms).query(probe, predicate="intersects")
    return _unordered(pairs, len(geoms))


def _project(transformer: Any, xy: np.ndarray) -> np.ndarray:
    return np.column_stack(transformer.transform(xy[:, 0], xy[:, 1]))


def _within(geoms: np.ndarray, i: np.ndarray, j: np.ndarray, buffer_m: float) -> np.ndarray:
    """Pairs ``(i, j)`` within ``buffer_m`` metres, measured in a local equidistant projection.

    Pairs are grouped by the 5-degree cell of ``geoms[i]``'s first part (not its
    bounds, which an antimeridian-cut footprint stretches round the globe); each
    geometry a cell needs is densified and projected once.
    """
    import pyproj

    out = np.zeros(len(i), dtype=bool)
    first = shapely.bounds(shapely.get_geometry(geoms[i], 0))
    centre = np.column_stack([first[:, 0] + first[:, 2], first[:, 1] + first[:, 3]]) / 2
    cells = np.floor(centre / _CELL).astype(np.int64)
    _, cell_of = np.unique(cells, axis=0, return_inverse=True)
    cell_of = cell_of.reshape(-1)
    for cell in np.unique(cell_of):
        rows = np.flatnonzero(cell_of == cell)
        lon, lat = (cells[rows[0]] + 0.5) * _CELL
        aeqd = pyproj.Transformer.from_crs(
            "EPSG:4326",
            f"+proj=aeqd +lat_0={min(lat, 89.0)} +lon_0={lon} +datum=WGS84 +units=m",
            always_xy=True,
        )
        used, inverse = np.unique(np.concatenate([i[rows], j[rows]]), return_inverse=True)
        shapes = geoms[used]
        bounds = shapely.bounds(shapes)
        large = np.maximum(bounds[:, 2] - bounds[:, 0], bounds[:, 3] - bounds[:, 1]) > _DENSIFY
        shapes[large] = shapely.segmentize(shapes[large], _DENSIFY)
        flat = shapely.transform(shapes, functools.partial(_project, aeqd))
        pair = flat[inverse.reshape(-1)]
        out[rows] = shapely.dwithin(pair[: len(rows)], pair[len(rows) :], buffer_m)
    return out


def leaking_pairs(
    footprints: np.ndarray, groups: np.ndarray, buffer_m: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(i, j)``, ``i < j``, of footprints in different groups that leak.

    Args:
        footprints: EPSG:4326 shapely geometries (None: no footprint, never leaks).
        groups: the split of each footprint, as integer codes.
        buffer_m: 0 for shared area; otherwise footprints closer than this many metres.
    """
    placed = np.flatnonzero(~shapely.is_missing(footprints) & ~shapely.is_empty(footprints))
    empty = np.zeros(0, dtype=np.int64)
    if placed.size < 2:
        return empty, empty
    geoms = footprints[placed]
    i, j = _candidates(geoms, buffer_m) if buffer_m > 0 else _sharing_area(geoms)
    other = groups[placed[i]] != groups[placed[j]]
    i, j = i[other], j[other]
    if buffer_m > 0:
        near = _within(geoms, i, j, buffer_m)
        i, j = i[near], j[near]
    return placed[i], placed[j]


def repeated_digests(
    digests: Sequence[str | None], groups: np.ndarray
) -> list[tuple[str, list[int]]]:
    """``(digest, rows)`` for each digest held by rows of more than one group."""
    held: defaultdict[str, list[int]] = defaultdict(list)
    for row, digest in enumerate(digests):
        if digest is not None:
            held[digest].append(row)
    return [
        (digest, rows)
        for digest, rows in sorted(held.items())
        if len(rows) > 1 and len({int(groups[r]) for r in rows}) > 1
    ]


def find_leaks(
    ids: Sequence[str],
    splits: Sequence[Any],
    footprints: np.ndarray,
    digests: Sequence[str | None] | None,
    *,
    column: str = "split",
    buffer_m: float = 0.0,
    where: str = "",
) -> SplitReport:
    """The :class:`SplitReport` of samples given as arrays (see :func:`check_splits`)."""
    if not isinstance(buffer_m, int | float) or not math.isfinite(buffer_m) or buffer_m < 0:
        raise TacoQueryError(f"{where}: buffer_m must be a finite number >= 0, got {buffer_m!r}")
    names = [None if s is None else str(s) for s in splits]
    nulls = names.count(None)
    if nulls:
        raise TacoQueryError(
            f"{where}: expected a value of {column!r} for every sample, found {nulls} null(s) "
            f"of {len(names)}"
        )
    _, groups = np.unique(np.asarray(names, dtype=object), return_inverse=True)
    groups = groups.reshape(-1)
    i, j = leaking_pairs(footprints, groups, float(buffer_m))
    overlaps = sorted(
        (ids[a], ids[b], names[a], names[b]) for a, b in zip(i.tolist(), j.tolist(), strict=True)
    )
    repeated = repeated_digests(digests, groups) if digests is not None else []
    return SplitReport(
        column=column,
        buffer_m=float(buffer_m),
        overlaps=tuple((str(a), str(b), str(sa), str(sb)) for a, b, sa, sb in overlaps),
        duplicates=tuple((d, tuple(str(ids[r]) for r in rows)) for d, rows in repeated),
        samples=len(names),
        without_footprint=int(shapely.is_missing(footprints).sum()),
        digests_checked=digests is not None,
    )


def _view_table(ds: TacoDataset, columns: list[str]) -> pa.Table:
    state = ds.state
    if not state.steps:
        return pa.table({c: state.base.column(0, c) for c in columns})
    select = ", ".join(quote_ident(c) for c in columns)
    sql = f"SELECT {select} FROM {quote_ident(state.view)}"
    return _duck.fetch(state.base, state.steps, sql, what="check_splits()")


def check_splits(ds: TacoDataset, column: str = "split", buffer_m: float = 0) -> SplitReport:
    """Samples of the current view that leak between the splits of ``column``.

    Two samples in different splits leak when their EPSG:4326 footprints share
    area (``buffer_m=0``; footprints that only touch do not) or come within
    ``buffer_m`` metres, measured in a local azimuthal equidistant projection on
    the WGS84 ellipsoid; and when they hold the same stored digest
    (``taco_gdal:checksum``), where the dataset has one. Level 0 only.

    Args:
        ds: the dataset (filters apply: only the view's samples are compared).
        column: the level-0 column naming each sample's split.
        buffer_m: the distance in metres that still counts as leaking.

    Raises:
        TacoQueryError: no such column, a sample without a split, a negative
            buffer, or neither footprints nor digests to compare.

    Example:
        >>> report = taco_gdal.check_splits(ds, "split")
        >>> report.ok, report.samples
        (True, 4)
    """
    state = ds.state
    names = ds.columns
    if column not in names:
        raise TacoQueryError(
            f"{ds.path}: expected a split column {column!r} at level 0, found columns {names}"
        )
    has_geometry = any(c in names for c in GEOMETRY_COLUMNS)
    digests = CHECKSUM in names
    if not has_geometry and not digests:
        raise TacoQueryError(
            f"{ds.path}: check_splits compares footprints ({' / '.join(GEOMETRY_COLUMNS)}) "
            f"and digests ({CHECKSUM!r}), found neither at level 0 among {names}"
        )
    wanted = [CURRENT_ID, ID, column] + ([CHECKSUM] if digests else [])
    table = _view_table(ds, wanted)
    positions = table.column(CURRENT_ID).to_numpy()
    footprints = np.full(len(positions), None, dtype=object)
    if has_geometry:
        found = footprints_of(state, 0, geometry_column(state, 0, "auto"))
        footprints = found.take(positions)
    return find_leaks(
        table.column(ID).to_pylist(),
        table.column(column).to_pylist(),
        footprints,
        table.column(CHECKSUM).to_pylist() if digests else None,
        column=column,
        buffer_m=buffer_m,
        where=ds.path,
    )


def table_footprints(table: pa.Table, where: str = "") -> np.ndarray:
    """EPSG:4326 footprints of a level table's first WKB geometry column (None: none)."""
    from taco_gdal.read.spatial.footprints import compute_footprints

    geometry = next((c for c in GEOMETRY_COLUMNS if c in table.column_names), None)
    if geometry is None:
        return np.full(table.num_rows, None, dtype=object)
    return compute_footprints(table, geometry, where=where).geometries


def table_leaks(table: pa.Table, column: str, buffer_m: float = 0, where: str = "") -> SplitReport:
    """:func:`check_splits` over a level table in Arrow (footprints computed from its WKB)."""
    names = table.column_names
    return find_leaks(
        table.column(ID).to_pylist(),
        table.column(column).to_pylist(),
        table_footprints(table, where),
        table.column(CHECKSUM).to_pylist() if CHECKSUM in names else None,
        column=column,
        buffer_m=buffer_m,
        where=where,
    )
