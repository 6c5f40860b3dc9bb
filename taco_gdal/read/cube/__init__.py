"""TACO samples as lazy xarray datacubes (the ``xarray`` extra: xarray, dask, odc-geo).

``stack``: the view's samples as ``(sample, band, y, x)``; ``grid``: the samples
warped by GDAL onto one ``GeoBox`` as ``(time, band, y, x)``.  Both are built from
the Parquet metadata alone; pixels are read when the dask graph is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.cube import grid, stack

if TYPE_CHECKING:
    import xarray as xr

    from taco_gdal.read.dataset import TacoDataset

__all__ = ["to_xarray"]

_GRID = ("crs", "resolution", "bounds", "like", "groupby", "resampling")


def to_xarray(
    dataset: TacoDataset,
    asset: str | None = None,
    bands: Sequence[int] | None = None,
    chunks: int | dict[str, int] | None = None,
    dtype: Any = None,
    *,
    coords: Sequence[str] = (),
    **grid_options: Any,
) -> xr.DataArray:
    """The current view's samples as a lazy xarray DataArray (dask-backed).

    Without grid options: ``(sample, band, y, x)``, one sample per index along
    ``sample``, every sample of one shape (:func:`taco_gdal.read.cube.stack.to_xarray`).
    With ``crs`` and ``resolution`` (``bounds`` optional) or ``like=GeoBox``:
    ``(time, band, y, x)`` on that grid, warped by GDAL, grouped by
    ``groupby`` (``"time"``, ``"solar_day"`` or ``None``) and mosaicked
    first-valid (:func:`taco_gdal.read.cube.grid.to_grid`).

    Raises:
        TacoDependencyError: xarray, dask or odc-geo is missing (says how to install them).
        TacoSchemaError: samples of different shapes (names the groups), or no STAC columns.
        TacoNavigationError: a sample has no FILE child ``asset``.
        TacoQueryError: an unknown option, column or band.
    """
    unknown = set(grid_options) - set(_GRID)
    if unknown:
        raise TacoQueryError(
            f"{dataset.path}: to_xarray() expected options among {list(_GRID)} besides "
            f"asset, bands, chunks, dtype and coords, found {sorted(unknown)}"
        )
    if grid_options:
        if coords:
            raise TacoQueryError(
                f"{dataset.path}: coords=... labels samples, expected it without a common "
                f"grid (whose slots mix samples), found coords={list(coords)}"
            )
        return grid.to_grid(dataset, asset, bands, dtype, chunks=chunks, **grid_options)
    return stack.to_xarray(dataset, asset, bands, chunks, dtype, coords)
