"""``to_xarray(crs=..., resolution=..., bounds=... | like=GeoBox)``: samples warped by GDAL
onto one grid, grouped by time and mosaicked first-valid, as ``(time, band, y, x)``.

The grid is an odc-geo ``GeoBox`` (the cube carries odc-geo's ``spatial_ref``, ``y``
and ``x`` coordinates, so ``.odc`` and rioxarray read it like an odc-stac cube).
Each time slot is one ``gdal.Warp`` of its samples' GDAL paths into that grid,
under the read profile; the slot's samples are given to GDAL last-first, so where
several are valid the first one (earliest, then in view order) wins, and
nodata pixels (as declared in the files) never overwrite valid ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from taco_gdal.env import Env, config_options, thread_options
from taco_gdal.errors import TacoIOError, TacoQueryError, TacoSchemaError
from taco_gdal.read.cube._deps import require
from taco_gdal.read.cube.probe import native_pixel
from taco_gdal.read.cube.reading import block_bounds
from taco_gdal.read.cube.rows import CubeRows, cube_rows
from taco_gdal.read.cube.stack import MIN_BLOCK_SAMPLES, band_positions, samples_per_block

if TYPE_CHECKING:
    import xarray as xr

    from taco_gdal.read.dataset import TacoDataset

__all__ = ["GROUPBY", "WarpBlock", "grid_of", "group_slots", "to_grid"]

GROUPBY = ("time", "solar_day", None)
"""How samples share a time slot: the same timestamp, the same local solar day
(UTC time shifted by the centroid's longitude, as odc-stac's ``solar_day``), or
none (one slot per sample)."""
SLOT_BYTES = 64 * 1024 * 1024
"""Decoded bytes one dask task returns, at most, once it holds one time slot."""


def grid_of(
    rows: CubeRows,
    crs: Any = None,
    resolution: Any = None,
    bounds: Sequence[float] | None = None,
    like: Any = None,
) -> Any:
    """The target ``GeoBox``: ``like`` (a GeoBox, or anything with ``.geobox`` / ``.odc.geobox``),
    or ``crs`` + ``resolution`` + ``bounds`` (default: the samples' union, in ``crs``).

    Raises:
        TacoQueryError: neither ``like`` nor ``crs`` and ``resolution``.
    """
    geobox_mod = require("odc.geo.geobox")
    if like is not None:
        for candidate in (like, getattr(like, "geobox", None), _odc_geobox(like)):
            if isinstance(candidate, geobox_mod.GeoBox):
                return candidate
        raise TacoQueryError(
            f"{rows.where}: to_xarray(like=...) expected an odc-geo GeoBox (or an xarray "
            f"object with one), found {type(like).__name__}"
        )
    if crs is None or resolution is None:
        raise TacoQueryError(
            f"{rows.where}: a common grid expected like=GeoBox, or crs= and resolution= "
            f"(bounds= optional), found crs={crs!r}, resolution={resolution!r}"
        )
    if bounds is None:
        if any(c is None for c in rows.crs.tolist()):
            raise TacoSchemaError(
                f"{rows.where}: default bounds expected a CRS for every sample, found samples "
                "without one (pass bounds= or like=)"
            )
        bounds = _union_bounds(rows, crs)
    if len(bounds) != 4 or not (bounds[0] < bounds[2] and bounds[1] < bounds[3]):
        raise TacoQueryError(
            f"{rows.where}: bounds expected (minx, miny, maxx, maxy) with min < max, "
            f"found {tuple(bounds)!r}"
        )
    try:
        return geobox_mod.GeoBox.from_bbox(
            tuple(float(b) for b in bounds), crs, resolution=resolution
        )
    except (ValueError, TypeError) as exc:  # pyproj's CRSError is a ValueError
        raise TacoQueryError(
            f"{rows.where}: a common grid expected a CRS and resolution odc-geo accepts, found "
            f"crs={crs!r}, resolution={resolution!r}: {exc}"
        ) from exc


def _odc_geobox(obj: Any) -> Any:
    try:
        return obj.odc.geobox
    except (AttributeError, ValueError, TypeError):
        return None


def _union_bounds(rows: CubeRows, crs: Any) -> tuple[float, float, float, float]:
    """Bounds of every sample's corners in ``crs`` (one transformer per source CRS)."""
    from pyproj import CRS, Transformer
    from pyproj.exceptions import CRSError

    _, height, width = rows.shape
    t = rows.transforms
    cols = np.array([0, width, 0, width], dtype=float)
    lines = np.array([0, 0, height, height], dtype=float)
    xs = t[:, [0]] + t[:, [1]] * cols + t[:, [2]] * lines
    ys = t[:, [3]] + t[:, [4]] * cols + t[:, [5]] * lines
    out_x, out_y = np.empty_like(xs), np.empty_like(ys)
    codes = rows.crs.astype(str)
    try:
        target = CRS.from_user_input(crs.to_wkt() if hasattr(crs, "to_wkt") else crs)
        for source in np.unique(codes):
            mask = codes == source
            transformer = Transformer.from_crs(str(source), target, always_xy=True)
            out_x[mask], out_y[mask] = transformer.transform(xs[mask], ys[mask])
    except CRSError as exc:
        raise TacoQueryError(
            f"{rows.where}: default bounds expected CRSs pyproj knows, found crs={crs!r} "
            f"and sample CRSs {sorted(set(codes.tolist()))[:5]}: {exc}"
        ) from exc
    return float(out_x.min()), float(out_y.min()), float(out_x.max()), float(out_y.max())


def group_slots(rows: CubeRows, groupby: str | None) -> tuple[list[np.ndarray], np.ndarray]:
    """The samples of each time slot (positions, first-valid first) and each slot's time.

    Samples are ordered by time, then by view order; a slot's time is its first
    sample's.

    Raises:
        TacoQueryError: ``groupby`` is not one of :data:`GROUPBY`.
    """
    if groupby not in GROUPBY:
        raise TacoQueryError(
            f"{rows.where}: groupby expected one of {list(GROUPBY)}, found {groupby!r}"
        )
    order = np.lexsort((np.arange(len(rows)), rows.times))
    if groupby is None:
        return [order[k : k + 1] for k in range(len(order))], rows.times[order]
    if groupby == "time":
        keys = rows.times.astype("datetime64[ns]").astype(np.int64)
    else:
        shift = np.nan_to_num(rows.lon) * 240.0  # seconds of solar time per degree
        local = rows.times + (shift * 1e9).astype("timedelta64[ns]")
        keys = local.astype("datetime64[D]").astype(np.int64)
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    slots = np.split(order, starts[1:])
    return slots, rows.times[order[starts]]


@dataclass(frozen=True)
class WarpBlock:
    """Time slots of one dask task: each a ``gdal.Warp`` of its samples into the grid."""

    slots: tuple[tuple[str, ...], ...]
    crs_wkt: str
    geotransform: tuple[float, ...]
    width: int
    height: int
    bands: tuple[int, ...] | None
    band_count: int
    dtype: np.dtype[Any]
    nodata: float | None
    fill: float
    resampling: str
    options: Mapping[str, str | None]
    where: str

    @property
    def shape(self) -> tuple[int, int, int, int]:
        count = self.band_count if self.bands is None else len(self.bands)
        return (len(self.slots), count, self.height, self.width)

    @property
    def ndim(self) -> int:
        return 4

    def __getitem__(self, key: Any) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        first, rest = (key[0], key[1:]) if key else (slice(None), ())
        positions = np.arange(len(self.slots))[first]
        picked = np.atleast_1d(positions)
        out = np.empty((len(picked), *self.shape[1:]), dtype=self.dtype)
        for k, p in enumerate(picked):
            out[k] = self._warp(self.slots[int(p)])
        block = out[(slice(None), *rest)]
        return block[0] if np.ndim(positions) == 0 else block

    def _warp(self, paths: tuple[str, ...]) -> np.ndarray:
        gdal = require("osgeo.gdal", "a common-grid cube")
        gdal_array = require("osgeo.gdal_array", "a common-grid cube")
        x0, dx, _, y0, _, dy = self.geotransform
        bounds = (x0, y0 + dy * self.height, x0 + dx * self.width, y0)
        kind = gdal_array.NumericTypeCodeToGDALTypeCode(self.dtype)
        warp = gdal.WarpOptions(
            format="MEM",
            outputBounds=bounds,
            width=self.width,
            height=self.height,
            dstSRS=self.crs_wkt,
            srcNodata=self.nodata,
            dstNodata=self.fill,
            resampleAlg=self.resampling,
            outputType=kind,
            multithread=False,
        )
        with config_options(self.options), Env():
            try:
                result = gdal.Warp("", list(reversed(paths)), options=warp)
                array = None if result is None else result.ReadAsArray()
            except RuntimeError as exc:
                raise TacoIOError(
                    f"{self.where}: gdal.Warp of {paths[:3]}... failed: {exc}"
                ) from exc
        if array is None:
            raise TacoIOError(
                f"{self.where}: gdal.Warp of {paths[:3]}... failed: {gdal.GetLastErrorMsg()}"
            )
        array = array if array.ndim == 3 else array[np.newaxis]
        if self.bands is not None:
            array = array[list(self.bands)]
        return np.asarray(array, dtype=self.dtype)


def _slots_per_task(
    slot_bytes: int, chunks: Any, where: str, slots: int = 0, samples: int = 0
) -> int:
    """Time slots per dask task: ``chunks`` (an int or ``{"time": n}``), else as many as fit
    in :data:`SLOT_BYTES`, but few enough that every CPU gets two tasks where the samples
    allow it (a task still holds :data:`MIN_BLOCK_SAMPLES` samples on average).

    Example:
        >>> _slots_per_task(16_000_000, None, "here", slots=4, samples=64) <= 2
        True
    """
    if isinstance(chunks, Mapping):
        if set(chunks) - {"time"}:
            raise TacoQueryError(
                f"{where}: to_xarray(chunks=...) on a common grid expected only the 'time' "
                f"dimension (a slot is one chunk in band, y and x), found {sorted(chunks)}"
            )
        chunks = chunks.get("time")
    if chunks is not None:
        return samples_per_block(slot_bytes, 0, {"sample": chunks})
    by_bytes = max(1, SLOT_BYTES // max(slot_bytes, 1))
    spread = -(-slots // (2 * (os.cpu_count() or 1)))  # ceil
    enough = -(-MIN_BLOCK_SAMPLES * slots // max(samples, 1))
    return max(1, min(by_bytes, max(spread, enough)))


def _fill(kind: np.dtype[Any], nodata: float | None) -> float:
    if nodata is not None:
        return float(nodata)
    return float("nan") if kind.kind == "f" else 0.0


def to_grid(
    dataset: TacoDataset,
    asset: str | None = None,
    bands: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    crs: Any = None,
    resolution: Any = None,
    bounds: Sequence[float] | None = None,
    like: Any = None,
    groupby: str | None = "time",
    resampling: str = "nearest",
    chunks: int | Mapping[str, int] | None = None,
) -> xr.DataArray:
    """The view's samples warped onto one grid, ``(time, band, y, x)`` (lazy, dask).

    See :meth:`taco_gdal.TacoDataset.to_xarray`.
    """
    xrmod = require("xarray")
    da = require("dask.array")
    task_spec = require("dask._task_spec")
    getter = require("dask.array.core").getter
    rows = cube_rows(dataset, asset)
    box = grid_of(rows, crs, resolution, bounds, like)
    slots, times = group_slots(rows, groupby)
    native, nodata = native_pixel(rows)
    kind = np.dtype(dtype) if dtype is not None else native
    picked = band_positions(bands, rows.shape[0], rows.where)
    band_numbers = np.arange(1, rows.shape[0] + 1) if picked is None else np.asarray(picked) + 1
    height, width = box.shape.y, box.shape.x
    slot_bytes = len(band_numbers) * height * width * kind.itemsize
    per_task = _slots_per_task(slot_bytes, chunks, rows.where, len(slots), len(rows))
    fill = _fill(kind, nodata)
    options = thread_options()
    paths = rows.paths.astype(str)
    token = require("dask.base").tokenize(
        rows.where, paths, [s.tolist() for s in slots], box.crs.to_wkt(), tuple(box.affine),
        box.shape, picked, kind.str, resampling, per_task, sorted(options.items()),
    )  # fmt: skip
    name = f"taco-grid-{token}"
    bounds_list = block_bounds(len(slots), per_task)
    graph: dict[Any, Any] = {}
    for k, (start, stop) in enumerate(bounds_list):
        block = WarpBlock(
            slots=tuple(tuple(paths[s].tolist()) for s in slots[start:stop]),
            crs_wkt=box.crs.to_wkt(),
            geotransform=tuple(box.affine.to_gdal()),
            width=width,
            height=height,
            bands=picked,
            band_count=rows.shape[0],
            dtype=kind,
            nodata=nodata,
            fill=fill,
            resampling=resampling,
            options=options,
            where=rows.where,
        )
        key = (name, k, 0, 0, 0)
        index = (slice(0, stop - start), slice(None), slice(None), slice(None))
        graph[key] = task_spec.Task(
            key, getter, task_spec.DataNode(None, block), index, False, False
        )
    chunk_sizes = (tuple(b - a for a, b in bounds_list), (len(band_numbers),), (height,), (width,))
    data = da.Array(graph, name, chunks=chunk_sizes, dtype=kind,
                    meta=np.empty((0, 0, 0, 0), dtype=kind))  # fmt: skip
    coords: dict[str, Any] = {"time": ("time", times), "band": ("band", band_numbers)}
    coords.update(require("odc.geo.xr").xr_coords(box, crs_coord_name="spatial_ref"))
    attrs = {"source": rows.where, "nodata": fill, "_FillValue": fill, "groupby": str(groupby)}
    result: xr.DataArray = xrmod.DataArray(
        data, dims=("time", "band", "y", "x"), coords=coords, attrs=attrs, name=asset or "pixels"
    )
    return result
