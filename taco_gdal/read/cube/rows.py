"""The samples of a cube, from the Parquet metadata alone: paths, sizes, grids, times.

Everything is column-wise (Arrow to NumPy): a cube of 100k samples creates no
Python object per sample except the ids and CRS strings its coordinates hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoNavigationError, TacoQueryError, TacoSchemaError
from taco_gdal.format.names import (
    CURRENT_ID,
    DATA_TYPE,
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    NODATA,
    PARENT_ID,
    SIZE,
    TYPE,
)

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["CubeRows", "cube_rows"]

_TIMES = ("stac:time_start", "istac:time_start", "stac:time_middle", "istac:time_middle")
_CRS = ("stac:crs", "istac:crs")
_CENTROIDS = ("stac:centroid", "istac:centroid")
SHAPE = "stac:tensor_shape"
GEOTRANSFORM = "stac:geotransform"


@dataclass(frozen=True)
class CubeRows:
    """One cube's samples, in view order, as NumPy columns.

    ``shape`` is ``(bands, rows, cols)`` shared by every sample; ``transforms`` is
    ``(n, 6)`` GDAL geotransforms; ``coords`` holds the user's extra columns;
    ``pixel`` is ``(dtype, nodata)`` when the metadata states every sample's type.
    """

    where: str
    ids: np.ndarray
    paths: np.ndarray
    sizes: np.ndarray
    crs: np.ndarray
    transforms: np.ndarray
    shape: tuple[int, int, int]
    times: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    coords: dict[str, np.ndarray]
    containers: tuple[str, ...] = ()
    pixel: tuple[np.dtype[Any], float | None] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def one_grid(self) -> bool:
        """Whether every sample has the same CRS and geotransform (a time series of one tile)."""
        if not len(self):
            return False
        return bool(
            (self.crs == self.crs[0]).all() and (self.transforms == self.transforms[0]).all()
        )


def _first(table: pa.Table, names: Sequence[str]) -> str | None:
    return next((n for n in names if n in table.column_names), None)


def _asset_rows(dataset: TacoDataset, asset: str) -> pa.Table:
    """The FILE child ``asset`` of every level-0 FOLDER of the view, with the parent's
    columns where the child has none."""
    if dataset.max_depth < 1:
        raise TacoNavigationError(
            f"{dataset.path}: asset={asset!r} expected FOLDER samples with FILE children, "
            "found a flat dataset (leave asset=None)"
        )
    parents = dataset.to_arrow(0)
    children = dataset.to_arrow(1)
    mask = pc.and_(pc.equal(children.column(ID), asset), pc.equal(children.column(TYPE), FILE))
    chosen = children.filter(mask)
    parent_pos = np.asarray(parents.column(CURRENT_ID).to_numpy(), dtype=np.int64)
    child_parent = np.asarray(chosen.column(PARENT_ID).to_numpy(), dtype=np.int64)
    order = np.argsort(child_parent, kind="stable")
    found = np.searchsorted(child_parent[order], parent_pos).clip(0, max(len(order) - 1, 0))
    hits = (
        child_parent[order][found] == parent_pos
        if len(order)
        else np.zeros(len(parent_pos), dtype=bool)
    )
    if not hits.all():
        missing = parents.column(ID).take(pa.array(np.flatnonzero(~hits))).to_pylist()
        raise TacoNavigationError(
            f"{dataset.path}: asset={asset!r} expected a FILE child {asset!r} in every sample, "
            f"found none in {len(missing)} of them: {missing[:5]}"
        )
    table = chosen.take(pa.array(order[found]))
    table = table.set_column(table.schema.get_field_index(ID), ID, parents.column(ID))
    for name in parents.column_names:
        if name not in table.column_names:
            table = table.append_column(name, parents.column(name))
    return table


def _check_lists(table: pa.Table, name: str, size: int, what: str, where: str) -> None:
    """Every row of list column ``name`` holds ``size`` non-null values (names the first bad)."""
    column = table.column(name)
    lengths = pc.list_value_length(column).fill_null(-1).to_numpy(zero_copy_only=False)
    nulls = pc.list_flatten(column).null_count
    bad = np.flatnonzero(lengths != size)
    if len(bad) or nulls:
        first = int(bad[0]) if len(bad) else None
        found = f"{column[first].as_py()!r} at sample {table.column(ID)[first].as_py()!r}"
        raise TacoSchemaError(
            f"{where}: {name!r} expected {what} per sample, found "
            + (found if first is not None else f"{nulls} null value(s)")
        )


def _shape(table: pa.Table, where: str) -> tuple[int, int, int]:
    if SHAPE not in table.column_names or GEOTRANSFORM not in table.column_names:
        raise TacoSchemaError(
            f"{where}: to_xarray() expected the STAC columns {SHAPE!r} and {GEOTRANSFORM!r} "
            f"(taco_gdal.extensions.STAC), found {table.column_names}"
        )
    _check_lists(table, SHAPE, 3, "[bands, rows, cols]", where)
    _check_lists(table, GEOTRANSFORM, 6, "a GDAL geotransform of 6 numbers", where)
    flat = pc.list_flatten(table.column(SHAPE)).to_numpy(zero_copy_only=False)
    shapes = np.asarray(flat, dtype=np.int64).reshape(-1, 3)
    if len(shapes) and (shapes == shapes[0]).all():  # the usual case: no sort needed
        bands, rows, cols = (int(v) for v in shapes[0])
        return bands, rows, cols
    groups, inverse, counts = np.unique(shapes, axis=0, return_inverse=True, return_counts=True)
    if len(groups) > 1:
        ids = table.column(ID)
        parts = []
        for k, group in enumerate(groups):
            first = ids.take(pa.array(np.flatnonzero(inverse.ravel() == k)[:3])).to_pylist()
            parts.append(
                f"{list(map(int, group))}: {int(counts[k])} samples ({', '.join(first)}...)"
            )
        raise TacoSchemaError(
            f"{where}: to_xarray() stacks samples of one shape, expected one "
            f"[bands, rows, cols], found {len(groups)} groups: {'; '.join(parts)}. Stack each "
            f'group apart, e.g. ds.sql(\'SELECT * FROM data WHERE "{SHAPE}" = '
            f"{list(map(int, groups[0]))}').to_xarray()"
        )
    if not len(groups):
        raise TacoQueryError(f"{where}: to_xarray() expected at least one sample, found none")
    bands, rows, cols = (int(v) for v in groups[0])
    return bands, rows, cols


def _pixel(table: pa.Table, where: str) -> tuple[np.dtype[Any], float | None] | None:
    """``(dtype, nodata)`` from the ``taco_gdal:data_type`` / ``taco_gdal:nodata`` columns:
    the type every sample's values fit (``np.result_type``) and the first sample's nodata,
    as a read of its header gives; None when a sample has no type (its header is read)."""
    if DATA_TYPE not in table.column_names or table.column(DATA_TYPE).null_count:
        return None
    names = pc.unique(table.column(DATA_TYPE)).to_pylist()
    try:
        kinds = [np.dtype(name) for name in names]
    except TypeError:
        kinds = []
    if not kinds or any(k.kind not in "iufc" for k in kinds):
        raise TacoSchemaError(
            f"{where}: {DATA_TYPE!r} expected NumPy pixel type names such as 'uint16', "
            f"found {names[:5]}"
        )
    first = table.column(NODATA)[0].as_py() if NODATA in table.column_names else None
    return np.result_type(*kinds), None if first is None else float(first)


def _containers(paths: pa.ChunkedArray) -> tuple[str, ...]:
    """The distinct containers of ``paths`` (a ``/vsisubfile/`` prefix stripped in Arrow,
    so a container of 100k samples costs one lookup, not 100k)."""
    from taco_gdal.io import pinning

    stripped = pc.replace_substring_regex(paths, r"^/vsisubfile/[0-9]+_[0-9]+,", "")
    return tuple(sorted({pinning.container_of(str(p)) for p in pc.unique(stripped).to_pylist()}))


def _text(column: pa.ChunkedArray) -> np.ndarray:
    """Strings as fixed-width NumPy text when short (copied as one block, not per item)."""
    values = np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
    if not len(values):
        return values.astype(str)
    longest = pc.max(pc.utf8_length(column)).as_py()
    if longest is None or longest > 64 or column.null_count:
        return values
    return values.astype(f"<U{max(int(longest), 1)}")


def _centroids(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    import shapely

    name = _first(table, _CENTROIDS)
    if name is None:
        nan = np.full(table.num_rows, np.nan)
        return nan, nan.copy()
    points = shapely.from_wkb(np.asarray(table.column(name).to_numpy(zero_copy_only=False)))
    return shapely.get_x(points), shapely.get_y(points)


def _column(table: pa.Table, name: str, where: str) -> np.ndarray:
    if name not in table.column_names:
        raise TacoQueryError(
            f"{where}: coords expected metadata columns, found no column {name!r} among "
            f"{table.column_names}"
        )
    column = table.column(name)
    if pa.types.is_nested(column.type) or pa.types.is_binary(column.type):
        raise TacoQueryError(
            f"{where}: coords expected scalar columns, found {name!r} of type {column.type}"
        )
    return np.asarray(column.to_numpy(zero_copy_only=False))


def cube_rows(
    dataset: TacoDataset, asset: str | None = None, coords: Sequence[str] = ()
) -> CubeRows:
    """The view's samples (or each sample's FILE child ``asset``) as a :class:`CubeRows`.

    Raises:
        TacoSchemaError: no STAC grid columns, or samples of different shapes
            (the message names each shape group).
        TacoNavigationError: a sample has no FILE child ``asset``.
        TacoQueryError: an unknown or non-scalar column in ``coords``.
    """
    where = dataset.path
    table = dataset.to_arrow(0) if asset is None else _asset_rows(dataset, asset)
    if asset is None and FOLDER in pc.unique(table.column(TYPE)).to_pylist():
        raise TacoNavigationError(
            f"{where}: to_xarray() expected FILE samples at level 0, found FOLDERs: pick a "
            "child with asset='<child id>'"
        )
    shape = _shape(table, where)
    transforms = np.asarray(
        pc.list_flatten(table.column(GEOTRANSFORM)).to_numpy(zero_copy_only=False), dtype=float
    ).reshape(-1, 6)
    crs_name = _first(table, _CRS)
    crs = (
        _text(table.column(crs_name))
        if crs_name is not None
        else np.full(table.num_rows, None, dtype=object)
    )
    time_name = _first(table, _TIMES)
    times = (
        np.asarray(table.column(time_name).cast(pa.timestamp("ns")).to_numpy(zero_copy_only=False))
        if time_name is not None
        else np.full(table.num_rows, np.datetime64("NaT", "ns"))
    )
    sizes = (
        np.asarray(table.column(SIZE).fill_null(-1).to_numpy(), dtype=np.int64)
        if SIZE in table.column_names
        else np.full(table.num_rows, -1, dtype=np.int64)
    )
    lon, lat = _centroids(table)
    return CubeRows(
        where=where,
        ids=_text(table.column(ID)),
        paths=np.asarray(table.column(GDAL_VSI).to_numpy(zero_copy_only=False), dtype=object),
        sizes=sizes,
        crs=crs,
        transforms=transforms,
        shape=shape,
        times=times,
        lon=np.asarray(lon, dtype=float),
        lat=np.asarray(lat, dtype=float),
        coords={name: _column(table, name, where) for name in coords},
        containers=_containers(table.column(GDAL_VSI)),
        pixel=_pixel(table, where),
    )
