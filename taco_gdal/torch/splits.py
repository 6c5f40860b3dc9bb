"""Split a SampleDataset by a column or by geographic blocks (neighbours stay together).

Splits share the parent's resolved rows (no container read, no SQL); whole
lon/lat cells go to one split, reproducibly for a ``seed``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from taco_gdal.errors import TacoLeakageWarning, TacoQueryError
from taco_gdal.format.names import CHECKSUM, GEOMETRY_COLUMNS, ISTAC_CRS, ISTAC_GEOMETRY

if TYPE_CHECKING:
    from taco_gdal.torch.dataset import SampleDataset

__all__ = [
    "DEFAULT_FRACTIONS",
    "block_ids",
    "lonlat_centroids",
    "split_by_blocks",
    "split_by_column",
]

DEFAULT_FRACTIONS: Final = {"train": 0.8, "val": 0.1, "test": 0.1}
_LONLAT: Final = "EPSG:4326"


def split_by_column(dataset: SampleDataset, column: str = "split") -> dict[str, SampleDataset]:
    """One dataset per value of ``column`` (TacoQueryError if missing or with nulls).

    Warns (:class:`~taco_gdal.errors.TacoLeakageWarning`) when samples of different
    splits overlap or share a stored digest, as ``taco_gdal.check_splits`` finds them.

    Example:
        >>> from taco_gdal.torch import SampleDataset
        >>> parts = split_by_column(SampleDataset(ds))
        >>> {name: len(part) for name, part in sorted(parts.items())}
        {'test': 1, 'train': 2, 'validation': 1}
    """
    values = dataset.rows.column(column).to_pylist()
    nulls = sum(v is None for v in values)
    if nulls:
        raise TacoQueryError(
            f"{dataset.rows.where}: expected a value of {column!r} for every sample, found "
            f"{nulls} null(s) of {len(values)}"
        )
    from taco_gdal.read.leakage import table_leaks

    table = dataset.rows.levels[0].table
    if CHECKSUM in table.column_names or any(c in table.column_names for c in GEOMETRY_COLUMNS):
        report = table_leaks(table, column, where=dataset.rows.where)
        if not report.ok:
            warnings.warn(
                TacoLeakageWarning(
                    f"{dataset.rows.where}: the splits of {column!r} leak: "
                    f"{len(report.overlaps)} overlapping pair(s), {len(report.duplicates)} "
                    f"digest(s) in more than one split; first: {report.lines()[0]} "
                    "(taco_gdal.check_splits lists them all)"
                ),
                stacklevel=2,
            )
    array = np.asarray([str(v) for v in values], dtype=object)
    return {
        str(name): dataset.subset(np.flatnonzero(array == name))
        for name in sorted(set(array.tolist()))
    }


def _geometry_column(dataset: SampleDataset, geometry_col: str) -> str:
    names = dataset.rows.levels[0].table.column_names
    if geometry_col != "auto":
        dataset.rows.column(geometry_col)  # raises if missing
        return geometry_col
    for name in GEOMETRY_COLUMNS:
        if name in names:
            return name
    raise TacoQueryError(
        f"{dataset.rows.where}: geographic blocks need a WKB footprint or centroid column, "
        f"expected one of {list(GEOMETRY_COLUMNS)}, found none"
    )


def lonlat_centroids(dataset: SampleDataset, geometry_col: str = "auto") -> np.ndarray:
    """``(n, 2)`` lon/lat of each footprint centroid (``istac:geometry`` reprojected).

    Raises:
        TacoQueryError: no geometry column, or a sample without geometry.
    """
    import shapely

    name = _geometry_column(dataset, geometry_col)
    wkb = dataset.rows.column(name).to_pylist()
    missing = [i for i, v in enumerate(wkb) if v is None]
    if missing:
        raise TacoQueryError(
            f"{dataset.rows.where}: expected a geometry in {name!r} for every sample, found "
            f"{len(missing)} null(s) (first at position {missing[0]})"
        )
    centroids = shapely.centroid(shapely.from_wkb(np.asarray(wkb, dtype=object)))
    xy = np.column_stack([shapely.get_x(centroids), shapely.get_y(centroids)])
    table = dataset.rows.levels[0].table
    if name != ISTAC_GEOMETRY or ISTAC_CRS not in table.column_names:
        return xy
    crs = np.asarray([str(c) for c in table.column(ISTAC_CRS).to_pylist()], dtype=object)
    import pyproj

    for code in set(crs.tolist()):
        if code in (_LONLAT, "None"):
            continue
        rows = crs == code
        to_lonlat = pyproj.Transformer.from_crs(code, _LONLAT, always_xy=True)
        xy[rows, 0], xy[rows, 1] = to_lonlat.transform(xy[rows, 0], xy[rows, 1])
    return xy


def block_ids(lonlat: np.ndarray, block_size: float) -> np.ndarray:
    """The grid cell of each point: ``(n, 2)`` integer column and row of ``block_size`` degrees.

    Example:
        >>> block_ids(np.array([[0.4, 0.4], [0.6, 0.4], [1.2, -0.1]]), 1.0).tolist()
        [[0, 0], [0, 0], [1, -1]]
    """
    if block_size <= 0:
        raise TacoQueryError(f"block_size must be > 0 degrees, got {block_size}")
    return np.floor(np.asarray(lonlat, dtype=float) / block_size).astype(np.int64)


def _assign(counts: np.ndarray, fractions: Mapping[str, float], seed: int) -> np.ndarray:
    """Split index of each block: blocks in seeded random order, each to the neediest split."""
    names = list(fractions)
    share = np.asarray([fractions[n] for n in names], dtype=float)
    target = share / share.sum() * counts.sum()
    filled = np.zeros(len(names))
    assigned = np.empty(len(counts), dtype=np.int64)
    for block in np.random.default_rng(seed).permutation(len(counts)):
        need = (target - filled) / np.maximum(target, 1e-12)
        pick = int(np.argmax(need))
        assigned[block] = pick
        filled[pick] += counts[block]
    return assigned


def split_by_blocks(
    dataset: SampleDataset,
    block_size: float = 1.0,
    fractions: Mapping[str, float] = DEFAULT_FRACTIONS,
    *,
    seed: int = 0,
    geometry_col: str = "auto",
    buffer_m: float | None = None,
) -> dict[str, SampleDataset]:
    """Split by geographic cells of ``block_size`` degrees, whole cells to one split.

    With ``buffer_m``, samples that would leak are dropped: for each pair of samples
    in different splits whose footprints share area (``buffer_m=0``) or come within
    ``buffer_m`` metres, or that hold the same stored digest, the sample of the split
    with the larger share goes (so val and test keep theirs), unless the pair is
    already broken. The output then passes ``taco_gdal.check_splits`` with that buffer.

    Args:
        dataset: the dataset to split.
        block_size: cell size in degrees of longitude and latitude.
        fractions: wanted share of samples per split (normalised, met as closely
            as whole cells allow).
        seed: the seed of the cell order (same seed, same split).
        geometry_col: footprint or centroid column (``"auto"``: the first present).
        buffer_m: drop samples closer than this many metres to another split
            (``None``: keep every sample, cells alone decide).

    Raises:
        TacoQueryError: no usable geometry, a bad ``block_size`` or bad fractions.

    Example:
        >>> from taco_gdal.torch import SampleDataset
        >>> parts = split_by_blocks(SampleDataset(ds), block_size=0.05, seed=7)  # 0.05 degrees
        >>> {k: len(v) for k, v in parts.items()}
        {'train': 2, 'val': 1, 'test': 1}
    """
    if not fractions or any(v < 0 for v in fractions.values()) or sum(fractions.values()) <= 0:
        raise TacoQueryError(
            f"fractions must be non-negative with a positive sum, got {dict(fractions)}"
        )
    cells = block_ids(lonlat_centroids(dataset, geometry_col), block_size)
    _, block_of, counts = np.unique(cells, axis=0, return_inverse=True, return_counts=True)
    split_of_block = _assign(counts, fractions, seed)
    split_of_sample = split_of_block[block_of.reshape(-1)]
    if buffer_m is not None:
        split_of_sample = _drop_leaks(dataset, split_of_sample, fractions, buffer_m)
    return {
        name: dataset.subset(np.flatnonzero(split_of_sample == k))
        for k, name in enumerate(fractions)
    }


def _drop_leaks(
    dataset: SampleDataset,
    split_of: np.ndarray,
    fractions: Mapping[str, float],
    buffer_m: float,
) -> np.ndarray:
    """``split_of`` with -1 for the samples dropped so that no pair of splits leaks."""
    from taco_gdal.read.leakage import leaking_pairs, repeated_digests, table_footprints

    table = dataset.rows.levels[0].table
    first, second = leaking_pairs(table_footprints(table, dataset.rows.where), split_of, buffer_m)
    pairs = list(zip(first.tolist(), second.tolist(), strict=True))
    if CHECKSUM in table.column_names:
        for _, rows in repeated_digests(table.column(CHECKSUM).to_pylist(), split_of):
            pairs += [(a, b) for a in rows for b in rows if a < b and split_of[a] != split_of[b]]
    share = np.asarray(list(fractions.values()), dtype=float)
    out = split_of.copy()
    for a, b in sorted(pairs):
        if out[a] < 0 or out[b] < 0:
            continue
        bigger = a if (share[split_of[a]], split_of[a]) >= (share[split_of[b]], split_of[b]) else b
        out[bigger] = -1
    return out
