"""``TacoDataset.to_xarray()``: the view's samples as one lazy ``(sample, band, y, x)`` array.

The cube is built from the Parquet metadata alone: shapes, grids, times and
centroids come from the STAC columns, and the dask graph holds one task per
block of samples, each task a :class:`~taco_gdal.read.cube.reading.SampleBlock`
that reads its samples with the read profile when computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from taco_gdal.env import thread_options
from taco_gdal.errors import TacoQueryError
from taco_gdal.io import pinning
from taco_gdal.read.cube._deps import require
from taco_gdal.read.cube.geobox import geobox_of, grid_coords
from taco_gdal.read.cube.probe import native_pixel
from taco_gdal.read.cube.reading import SampleBlock, block_bounds, read_threads
from taco_gdal.read.cube.rows import CubeRows, cube_rows

if TYPE_CHECKING:
    import xarray as xr

    from taco_gdal.read.dataset import TacoDataset

__all__ = [
    "BLOCK_BYTES",
    "MIN_BLOCK_SAMPLES",
    "samples_per_block",
    "stack_rows",
    "to_xarray",
    "whole_block",
    "wrap",
]

MIN_BLOCK_SAMPLES = 16
"""Samples per dask task, at least (by default): a task per sample makes graphs that
swamp the scheduler long before the reads cost anything."""
BLOCK_BYTES = 64 * 1024 * 1024
"""Decoded bytes one task returns, at most, once it holds :data:`MIN_BLOCK_SAMPLES`."""

MAX_BLOCK_SAMPLES = 1024
"""Samples per dask task, at most (by default), so small samples still spread over workers."""
TRANSFORM = np.dtype(
    [(n, "f8") for n in ("x_origin", "x_res", "x_skew", "y_origin", "y_skew", "y_res")]
)
"""The ``transform`` coordinate's type: one GDAL geotransform per sample, as six named
numbers (a record array copies as one block, where tuples would be copied one by one)."""

Chunks = int | Mapping[str, int] | None


def samples_per_block(sample_bytes: int, count: int, chunks: Chunks = None) -> int:
    """Samples per dask task: ``chunks`` when given, else as many as fit in
    :data:`BLOCK_BYTES` (up to :data:`MAX_BLOCK_SAMPLES`), never fewer than
    :data:`MIN_BLOCK_SAMPLES`.

    Example:
        >>> samples_per_block(3 * 64 * 64 * 2, 100_000), samples_per_block(10**8, 100)
        (1024, 16)
        >>> samples_per_block(100, 100, chunks={"sample": 4})
        4
    """
    if isinstance(chunks, Mapping):
        unknown = set(chunks) - {"sample"}
        if unknown:
            raise TacoQueryError(
                f"to_xarray(chunks=...) expected only the 'sample' dimension (a sample is "
                f"always one chunk in band, y and x), found {sorted(unknown)}"
            )
        chunks = chunks.get("sample")
    if chunks is not None:
        if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
            raise TacoQueryError(
                f"to_xarray(chunks=...) expected a number of samples >= 1, found {chunks!r}"
            )
        return chunks
    return max(MIN_BLOCK_SAMPLES, min(MAX_BLOCK_SAMPLES, BLOCK_BYTES // max(sample_bytes, 1)))


def _pins(containers: Sequence[str]) -> dict[str, pinning.Pin]:
    """Pins the loader recorded for ``containers`` (no request)."""
    found: dict[str, pinning.Pin] = {}
    for container in containers:
        pin = pinning.pins.get(container)
        if pin is not None:
            found[container] = pin
    return found


def band_positions(bands: Sequence[int] | None, count: int, where: str) -> tuple[int, ...] | None:
    if bands is None:
        return None
    chosen = tuple(int(b) for b in bands)
    if not chosen or any(not 1 <= b <= count for b in chosen):
        raise TacoQueryError(
            f"{where}: bands expected band numbers in 1..{count} (1-based, as rasterio), "
            f"found {list(bands)}"
        )
    return tuple(b - 1 for b in chosen)


def whole_block(
    rows: CubeRows, bands: Sequence[int] | None = None, dtype: Any = None
) -> tuple[SampleBlock, np.ndarray, float | None]:
    """One :class:`SampleBlock` over every sample of ``rows``, the band numbers it
    holds and the declared nodata (from the metadata's pixel-type columns; without
    them, the first sample's header is read when ``dtype`` is ``None``)."""
    count, height, width = rows.shape
    picked = band_positions(bands, count, rows.where)
    band_numbers = np.arange(1, count + 1) if picked is None else np.asarray(picked) + 1
    native, nodata = (None, None)
    if dtype is None or rows.pixel is not None:
        native, nodata = native_pixel(rows)
    kind = np.dtype(dtype if dtype is not None else native)
    shape = (len(rows), len(band_numbers), height, width)
    block = SampleBlock(
        paths=tuple(rows.paths.tolist()),
        sizes=tuple(rows.sizes.tolist()),
        shape=shape,
        dtype=kind,
        bands=picked,
        options=thread_options(),
        pins=_pins(rows.containers),
        threads=read_threads(int(np.prod(shape[1:])) * kind.itemsize),
        where=rows.where,
    )
    return block, band_numbers, nodata


def stack_rows(
    rows: CubeRows,
    *,
    bands: Sequence[int] | None = None,
    chunks: Chunks = None,
    dtype: Any = None,
    name: str | None = None,
) -> xr.DataArray:
    """The lazy ``(sample, band, y, x)`` DataArray over ``rows`` (see :func:`to_xarray`)."""
    xr = require("xarray")
    da = require("dask.array")
    whole, band_numbers, nodata = whole_block(rows, bands, dtype)
    shape = whole.shape[1:]
    sample_bytes = int(np.prod(shape)) * whole.dtype.itemsize
    per_block = samples_per_block(sample_bytes, len(rows), chunks)
    token = require("dask.base").tokenize(
        rows.where, rows.paths, rows.sizes, whole.bands, whole.dtype.str, per_block,
        sorted(whole.options.items()),
    )  # fmt: skip
    array_name = f"taco-stack-{token}"
    graph: dict[Any, Any] = {}
    getter = require("dask.array.core").getter
    task_spec = require("dask._task_spec")
    bounds = block_bounds(len(rows), per_block)
    for k, (start, stop) in enumerate(bounds):
        block = replace(
            whole,
            paths=whole.paths[start:stop],
            sizes=whole.sizes[start:stop],
            shape=(stop - start, *shape),
        )
        key = (array_name, k, 0, 0, 0)
        index = (slice(0, stop - start), slice(None), slice(None), slice(None))
        graph[key] = task_spec.Task(
            key, getter, task_spec.DataNode(None, block), index, False, False
        )
    block_chunks = (tuple(b - a for a, b in bounds), *((n,) for n in shape))
    data = da.Array(graph, array_name, chunks=block_chunks, dtype=whole.dtype,
                    meta=np.empty((0, 0, 0, 0), dtype=whole.dtype))  # fmt: skip
    return wrap(xr, data, rows, band_numbers, nodata, name)


def wrap(
    xrmod: Any, data: Any, rows: CubeRows, bands: np.ndarray, nodata: float | None, name: str | None
) -> xr.DataArray:
    """``data`` as a DataArray with coordinates from the metadata (x/y and the CRS as
    rioxarray and odc-geo read them when every sample shares one grid)."""
    transforms = np.ascontiguousarray(rows.transforms).view(TRANSFORM).reshape(-1)
    coords: dict[str, Any] = {
        "id": ("sample", rows.ids),
        "time": ("sample", rows.times),
        "crs": ("sample", rows.crs),
        "transform": ("sample", transforms),
        "centroid_lon": ("sample", rows.lon),
        "centroid_lat": ("sample", rows.lat),
        "band": ("band", bands),
    }
    coords.update({k: ("sample", v) for k, v in rows.coords.items()})
    attrs: dict[str, Any] = {"source": rows.where}
    if nodata is not None:
        attrs["nodata"] = nodata
        attrs["_FillValue"] = nodata
    dims = ("sample", "band", "y", "x")
    array: xr.DataArray = xrmod.DataArray(data, dims=dims, coords=coords, attrs=attrs, name=name)
    if rows.one_grid() and rows.crs[0] is not None:
        box = geobox_of(str(rows.crs[0]), rows.transforms[0], rows.shape[1], rows.shape[2])
        array = array.assign_coords(grid_coords(box))
    return array


def to_xarray(
    dataset: TacoDataset,
    asset: str | None = None,
    bands: Sequence[int] | None = None,
    chunks: Chunks = None,
    dtype: Any = None,
    coords: Sequence[str] = (),
) -> xr.DataArray:
    """The current view's samples as a lazy ``(sample, band, y, x)`` DataArray.

    See :meth:`taco_gdal.TacoDataset.to_xarray`.
    """
    rows = cube_rows(dataset, asset, coords)
    return stack_rows(rows, bands=bands, chunks=chunks, dtype=dtype, name=asset or "pixels")
