"""xarray's own entry point: ``xr.open_dataset(path, engine="taco")``.

Registered under ``xarray.backends``; gives the samples of a dataset as an
``xarray.Dataset`` with one ``(sample, band, y, x)`` variable per asset (the FILE
children of each FOLDER, by id; a flat dataset's samples are the variable
``pixels``).  Variables are xarray's lazily indexed arrays: selecting samples
reads only those samples; ``chunks=`` gives dask arrays instead, as with any
xarray backend.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import FILE, ID, TYPE
from taco_gdal.read.cube._deps import require
from taco_gdal.read.cube.reading import SampleBlock
from taco_gdal.read.cube.rows import cube_rows
from taco_gdal.read.cube.stack import whole_block, wrap
from taco_gdal.read.load import load

__all__ = ["TacoBackendEntrypoint", "assets_of"]

xr = require("xarray", "the xarray backend 'taco'")
_indexing = require("xarray.core.indexing", "the xarray backend 'taco'")

_SUFFIXES = (".tacozip", ".zip", ".tacocat", ".taco", ".tortilla")


class TacoBackendArray(xr.backends.BackendArray):  # type: ignore[misc,name-defined]
    """A :class:`SampleBlock` over every sample, indexed the way xarray's lazy arrays are."""

    def __init__(self, block: SampleBlock) -> None:
        self.block = block
        self.shape = block.shape
        self.dtype = block.dtype

    def __getitem__(self, key: Any) -> np.ndarray:
        return _indexing.explicit_indexing_adapter(  # type: ignore[no-any-return]
            key, self.shape, _indexing.IndexingSupport.OUTER_1VECTOR, self.block.__getitem__
        )


def assets_of(dataset: Any) -> list[str | None]:
    """The FILE child ids of the view's FOLDER samples, in first-seen order
    (``[None]`` for a flat dataset: its samples are the one variable)."""
    if dataset.max_depth < 1:
        return [None]
    children = dataset.to_arrow(1)
    files = children.filter(pc.equal(children.column(TYPE), FILE)).column(ID)
    return [str(v) for v in dict.fromkeys(files.to_pylist())]


def _variable(dataset: Any, asset: str | None, bands: Sequence[int] | None, dtype: Any) -> Any:
    rows = cube_rows(dataset, asset)
    block, band_numbers, nodata = whole_block(rows, bands, dtype)
    data = _indexing.LazilyIndexedArray(TacoBackendArray(block))
    return wrap(xr, data, rows, band_numbers, nodata, asset or "pixels")


def _rename(array: Any, asset: str, first: Any) -> Any:
    """Dimensions and per-sample grid coordinates of ``asset`` renamed when they
    differ from the first variable's, so variables of other shapes or CRSs coexist."""
    renames: dict[str, str] = {}
    for dim in ("band", "y", "x"):
        if array.sizes[dim] != first.sizes[dim] or (
            dim in array.coords and dim in first.coords
            and not np.array_equal(array[dim].values, first[dim].values)
        ):  # fmt: skip
            renames[dim] = f"{dim}_{asset}"
    for coord in ("crs", "transform", "spatial_ref"):
        if coord in array.coords and (
            coord not in first.coords or not array[coord].equals(first[coord])
        ):
            renames[coord] = f"{coord}_{asset}"
    return array.rename(renames) if renames else array


class TacoBackendEntrypoint(xr.backends.BackendEntrypoint):  # type: ignore[misc,name-defined]
    """``engine="taco"``: a TACO dataset as an ``xarray.Dataset``, one variable per asset.

    Example:
        >>> import xarray as xr
        >>> cube = xr.open_dataset("tiles.tacozip", engine=TacoBackendEntrypoint)
        >>> sorted(cube.data_vars), cube["b02"].dims
        (['b02', 'b03', 'b04'], ('sample', 'band', 'y', 'x'))
    """

    description = "TACO datasets (taco_gdal): one (sample, band, y, x) variable per asset"
    url = "https://github.com/taco-gdal/taco_gdal"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "assets", "bands", "dtype")

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        assets: Sequence[str] | None = None,
        bands: Sequence[int] | None = None,
        dtype: Any = None,
    ) -> Any:
        """Open ``filename_or_obj`` (a path, URL or :class:`~taco_gdal.TacoDataset`).

        Raises:
            TacoError: the dataset cannot be loaded or stacked (see ``to_xarray``).
        """
        dataset = filename_or_obj if hasattr(filename_or_obj, "to_arrow") else load(
            os.fspath(filename_or_obj)
        )  # fmt: skip
        dropped = {drop_variables} if isinstance(drop_variables, str) else set(drop_variables or ())
        names = list(assets) if assets is not None else assets_of(dataset)
        names = [n for n in names if (n or "pixels") not in dropped]
        if not names:
            raise TacoQueryError(
                f"{dataset.path}: open_dataset expected at least one asset, found none left "
                f"(assets={assets!r}, drop_variables={drop_variables!r})"
            )
        arrays = [_variable(dataset, name, bands, dtype) for name in names]
        first = arrays[0]
        arrays = [first] + [
            _rename(a, str(n), first) for a, n in zip(arrays[1:], names[1:], strict=True)
        ]
        return xr.merge(arrays, compat="override", join="exact", combine_attrs="override")

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """Whether ``filename_or_obj`` looks like a TACO container (by its name)."""
        try:
            name = os.fspath(filename_or_obj)
        except TypeError:
            return False
        return str(name).lower().endswith(_SUFFIXES)
