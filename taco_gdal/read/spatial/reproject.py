"""Reprojection of footprints to EPSG:4326.

Edges that bend more than :data:`STRAIGHT_TOLERANCE` are densified, footprints
crossing the antimeridian are cut there, and a large group is reprojected by two
threads (pyproj releases the GIL).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import shapely

from taco_gdal.errors import TacoQueryError
from taco_gdal.extensions._geo import wgs84_transformer
from taco_gdal.read.spatial.antimeridian import crossing_rows, fix_antimeridian
from taco_gdal.read.spatial.crs import WGS84, is_wgs84, transformer_for
from taco_gdal.read.spatial.wkb import concat_ranges

__all__ = [
    "EDGE_SEGMENTS",
    "PARALLEL_POINTS",
    "STRAIGHT_TOLERANCE",
    "Rings",
    "bent_rows",
    "fast_rings",
    "in_halves",
    "reproject_worker",
    "run_bounds",
    "to_wgs84",
    "to_wgs84_parts",
    "transform_coords",
    "transform_xy",
]

EDGE_SEGMENTS: Final = 8
"""Segments per edge (of the geometry's bounding box) added before reprojecting."""
STRAIGHT_TOLERANCE: Final = 1e-5
"""Degrees (about 1 m) a reprojected footprint may be off the exact curve of its edges."""


def _densify(geoms: np.ndarray) -> np.ndarray:
    bounds = shapely.bounds(geoms)
    span = np.fmax(bounds[:, 2] - bounds[:, 0], bounds[:, 3] - bounds[:, 1])
    lines = ~shapely.is_empty(geoms) & (span > 0)
    out = geoms.copy()
    if lines.any():
        out[lines] = shapely.segmentize(geoms[lines], span[lines] / EDGE_SEGMENTS)
    return out


PARALLEL_POINTS: Final = 20_000
"""From this many points on, two threads reproject a half each (pyproj releases the GIL)."""
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def reproject_worker() -> ThreadPoolExecutor:
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


def in_halves(transformer: Any, crs: str, count: int, step: Callable[[Any, slice], Any]) -> None:
    """``step(transformer, rows)`` over rows ``[0, count)``, in two threads when large."""
    mine = wgs84_transformer(crs) if transformer is None else transformer
    if count < PARALLEL_POINTS:
        step(mine, slice(0, count))
        return
    half = count // 2
    other = reproject_worker().submit(lambda: step(wgs84_transformer(crs), slice(half, count)))
    step(mine, slice(0, half))
    other.result()


def _check_finite(finite: bool, crs: str, where: str) -> None:
    if not finite:
        raise TacoQueryError(
            f"{where}: a vertex in {crs} has no finite {WGS84} position (outside the CRS's "
            "area of use?)"
        )


def transform_coords(transformer: Any, coords: np.ndarray, crs: str, where: str) -> np.ndarray:
    """``(n, 2)`` lon/lat of ``(n, 2)`` coordinates in ``crs``."""
    out = np.empty((len(coords), 2), dtype=np.float64)

    def step(used: Any, rows: slice) -> None:
        out[rows, 0], out[rows, 1] = used.transform(coords[rows, 0], coords[rows, 1])

    in_halves(transformer, crs, len(coords), step)
    _check_finite(bool(np.isfinite(out).all()), crs, where)
    return out


def transform_xy(transformer: Any, x: np.ndarray, y: np.ndarray, crs: str, where: str) -> None:
    """Contiguous float64 ``x`` and ``y`` in ``crs`` become lon and lat, in place."""
    in_halves(
        transformer, crs, len(x), lambda used, rows: used.transform(x[rows], y[rows], inplace=True)
    )
    _check_finite(bool(np.isfinite(x).all() and np.isfinite(y).all()), crs, where)


def bent_rows(moved: np.ndarray, mids: np.ndarray, index: np.ndarray, count: int) -> np.ndarray:
    """Per geometry: are edges split once at their midpoints still off by more than allowed?

    Halving an edge leaves a quarter of the midpoint's offset from the chord.
    """
    same = index[1:] == index[:-1]
    chord = ((moved[:-1] + moved[1:]) / 2.0)[same]
    gap = np.abs(mids - chord).max(axis=1) / 4.0
    gap[np.abs(moved[1:, 0] - moved[:-1, 0])[same] > 180.0] = 0.0  # crossers: cut later
    worst = np.zeros(count, dtype=np.float64)
    np.maximum.at(worst, index[1:][same], gap)
    bent: np.ndarray = worst > STRAIGHT_TOLERANCE
    return bent


def run_bounds(x: np.ndarray, y: np.ndarray, head: np.ndarray) -> np.ndarray:
    """``(runs, 4)`` xmin, ymin, xmax, ymax of the runs of ``x``, ``y`` starting at ``head``."""
    return np.column_stack(
        [
            np.minimum.reduceat(x, head),
            np.minimum.reduceat(y, head),
            np.maximum.reduceat(x, head),
            np.maximum.reduceat(y, head),
        ]
    )


@dataclass(frozen=True, eq=False)
class Rings:
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

    def pick(self, which: np.ndarray) -> Rings:
        """The rings numbered ``which``, in that order (coordinates copied)."""
        first, lengths = self.starts[which], self.starts[which + 1] - self.starts[which]
        before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        picked = np.repeat(first - before, lengths) + np.arange(int(lengths.sum()))
        ring_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return Rings(self.coords[picked], ring_offsets)

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
        return run_bounds(self.coords[:, 0], self.coords[:, 1], self.starts[:-1])

    def subset(self, keep: np.ndarray) -> Rings | None:
        """The rings where ``keep`` is True, in order (None when none is)."""
        return self.pick(np.flatnonzero(keep)) if keep.any() else None

    @staticmethod
    def join(parts: list[Rings]) -> Rings:
        """One ``Rings`` of several, in order."""
        offsets = np.cumsum([0] + [len(p.coords) for p in parts[:-1]])
        starts = [p.starts[:-1] + o for p, o in zip(parts, offsets, strict=True)]
        total = sum(len(p.coords) for p in parts)
        return Rings(
            np.concatenate([p.coords for p in parts]),
            np.concatenate([*starts, [total]]).astype(np.int64),
        )


def _reproject(
    geoms: np.ndarray, transformer: Any, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray, Rings | None]:
    """Reproject, densifying only geometries whose edges bend in lon/lat.

    Returns the geometries (None where ``halved``: one-ring polygons kept as
    vertices and midpoints), the ``halved`` mask, and those geometries' rings.
    """
    coords, index = shapely.get_coordinates(geoms, return_index=True)
    same = index[1:] == index[:-1]
    mids = ((coords[:-1] + coords[1:]) / 2.0)[same]
    both = transform_coords(transformer, np.concatenate([coords, mids]), crs, where)
    moved, moved_mids = both[: len(coords)], both[len(coords) :]
    bent = bent_rows(moved, moved_mids, index, len(geoms))
    crossing = crossing_rows(moved[:, 0], index)
    one_ring = (shapely.get_type_id(geoms) == 3) & (shapely.get_num_interior_rings(geoms) == 0)
    halved = one_ring & ~bent & (shapely.get_num_coordinates(geoms) > 3)
    halved[crossing] = False
    out = geoms.copy()
    plain = ~halved & ~bent  # points, lines, straight enough multi-part shapes
    if plain.any():
        out[plain] = shapely.set_coordinates(geoms[plain], moved[plain[index]])
    out[halved] = None
    owners, starts = np.unique(index, return_index=True)  # per geometry with coordinates
    rings = _interleave(moved, moved_mids, np.append(starts, len(index)), halved[owners])
    if bent.any():
        rows = np.flatnonzero(bent)
        dense = _densify(geoms[rows])
        dense_coords, dense_index = shapely.get_coordinates(dense, return_index=True)
        dense_moved = transform_coords(transformer, dense_coords, crs, where)
        out[rows] = shapely.set_coordinates(dense, dense_moved)
        crossing = np.union1d(
            crossing[~np.isin(crossing, rows)],
            rows[crossing_rows(dense_moved[:, 0], dense_index)],
        )
    fix_antimeridian(out, crossing)
    return out, halved, rings


def to_wgs84_parts(
    geoms: np.ndarray, crs: str, where: str
) -> tuple[np.ndarray, np.ndarray, Rings | None]:
    """:func:`to_wgs84` that leaves straight-enough polygons as rings (see :func:`_reproject`)."""
    out = np.array(geoms, dtype=object)
    halved = np.zeros(len(out), dtype=bool)
    present = np.flatnonzero(~shapely.is_missing(out))
    if present.size == 0:
        return out, halved, None
    if is_wgs84(crs):
        fix_antimeridian(out, np.empty(0, dtype=np.int64))
        return out, halved, None
    transformer = transformer_for(crs, where)
    moved, part_halved, rings = _reproject(out[present], transformer, crs, where)
    out[present] = moved
    halved[present[part_halved]] = True
    return out, halved, rings


def to_wgs84(geoms: np.ndarray, crs: str, where: str = "") -> np.ndarray:
    """Shapely geometries in ``crs`` -> EPSG:4326, densified, cut at the antimeridian.

    Raises:
        TacoQueryError: an unknown ``crs``, or a coordinate without a finite 4326 position.

    Example:
        >>> import numpy as np, shapely
        >>> box = np.array([shapely.box(500000, 0, 510000, 10000)])
        >>> [round(v, 3) for v in to_wgs84(box, "EPSG:32630")[0].bounds]
        [-3.0, 0.0, -2.91, 0.09]
    """
    out, halved, rings = to_wgs84_parts(geoms, crs, where)
    if rings is not None:
        out[halved] = rings.polygons(np.arange(len(rings)))
    return out


def fast_rings(
    coords: np.ndarray, starts: np.ndarray, crs: str, where: str
) -> tuple[Rings | None, np.ndarray]:
    """4326 rings of simple polygons that need no shapely work, and which ones they are.

    :func:`_reproject`'s decisions on coordinates only; the others (``False``
    in the mask) are left to the shapely path.
    """
    count = len(starts) - 1
    if is_wgs84(crs):
        rings = Rings(coords, starts)
        bounds = rings.bounds()
        keep = (bounds[:, 0] >= -180.0) & (bounds[:, 2] <= 180.0)
        kept = rings if keep.all() else rings.subset(keep)
        return kept, keep
    transformer = transformer_for(crs, where)
    lengths = np.diff(starts)
    index = np.repeat(np.arange(count), lengths)
    same = np.ones(len(coords) - 1, dtype=bool) if len(coords) else np.ones(0, dtype=bool)
    same[starts[1:-1] - 1] = False
    mids = ((coords[:-1] + coords[1:]) / 2.0)[same]
    closing = starts[1:] - 1  # equal to the first vertex, byte for byte: not reprojected
    body = np.ones(len(coords), dtype=bool)
    body[closing] = False
    both = transform_coords(transformer, np.concatenate([coords[body], mids]), crs, where)
    moved = np.empty_like(coords)
    moved[body] = both[: len(coords) - count]
    moved[closing] = moved[starts[:-1]]
    moved_mids = both[len(coords) - count :]
    del both
    keep = ~bent_rows(moved, moved_mids, index, count)
    keep[crossing_rows(moved[:, 0], index)] = False
    return _interleave(moved, moved_mids, starts, keep), keep


def _interleave(
    moved: np.ndarray,
    mids: np.ndarray,
    starts: np.ndarray,
    keep: np.ndarray,
) -> Rings | None:
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
        return Rings(ring.reshape(-1, 2), steps)
    out_starts = np.concatenate([[0], np.cumsum(2 * kept - 1)]).astype(np.int64)
    on_vertex = np.repeat(keep, lengths)
    on_mid = np.repeat(keep, lengths - 1)
    total = int(out_starts[-1])
    coords = np.empty((total, 2), dtype=np.float64)
    vertex_at = np.repeat(out_starts[:-1], kept) + 2 * concat_ranges(kept)
    coords[vertex_at] = moved[on_vertex]
    coords[vertex_at[_not_last(kept)] + 1] = mids[on_mid]
    return Rings(coords, out_starts)


def _not_last(lengths: np.ndarray) -> np.ndarray:
    """Positions (into the concatenated runs) of every element but the last of each run."""
    mask = np.ones(int(lengths.sum()), dtype=bool)
    mask[np.cumsum(lengths) - 1] = False
    return np.flatnonzero(mask)
