"""A dataset as other ecosystems' objects: STAC Items, Croissant JSON-LD, xarray cubes.

Functions of a :class:`~taco_gdal.read.dataset.TacoDataset`, bound as its methods
(``ds.to_stac()``...). Each imports its bridge, and so its extra (``stac``,
``croissant``, ``xarray``), only when called: ``load()`` never pays for them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.interop.stac import Href

__all__ = ["to_croissant", "to_stac", "to_stac_collection", "to_stac_geoparquet", "to_xarray"]


def to_stac(dataset: TacoDataset, level: int = 0, href: Href = "gdal") -> Any:
    """The current view as a ``pystac.ItemCollection``: one Item per sample at ``level``.

    See :mod:`taco_gdal.read.interop.stac`; ``href="url"`` gives container URLs with
    the byte range in ``archive:start`` / ``archive:end``.  Needs the ``stac`` extra.

    Example:
        >>> items = ds.filter_datetime("2024-03-01/2024-03-15").to_stac()
        >>> [i.id for i in items], items[0].assets["data"].href
        (['s000', 's001'], '/vsisubfile/..._...,.../dataset.tacozip')
    """
    from taco_gdal.read.interop.stac import to_item_collection

    return to_item_collection(dataset.state, level, href)


def to_stac_collection(dataset: TacoDataset) -> Any:
    """COLLECTION.json as a ``pystac.Collection``.

    Example:
        >>> ds.to_stac_collection().id
        'dataset'
    """
    from taco_gdal.read.interop.stac import stac_collection

    return stac_collection(dataset.state)


def to_stac_geoparquet(dataset: TacoDataset, path: str | os.PathLike[str], level: int = 0) -> Path:
    """Write the current view's Items as stac-geoparquet (bounded memory); the path.

    Example:
        >>> ds.to_stac_geoparquet("items.parquet").name
        'items.parquet'
    """
    from taco_gdal.read.interop.stac_files import write_stac

    return write_stac(dataset.state, path, level, kind=".parquet")[0]


def to_croissant(dataset: TacoDataset, relative_to: str | None = None) -> dict[str, Any]:
    """Croissant 1.1 JSON-LD of the container and its level tables (``read.interop``).

    Example:
        >>> [r["@id"] for r in tiles.to_croissant()["recordSet"]]
        ['level0', 'level1']
    """
    from taco_gdal.read.interop.croissant import to_croissant as build

    return build(dataset, relative_to)


def to_xarray(
    dataset: TacoDataset,
    asset: str | None = None,
    bands: Sequence[int] | None = None,
    chunks: int | dict[str, int] | None = None,
    dtype: Any = None,
    **options: Any,
) -> Any:
    """The current view's samples as a lazy ``xarray.DataArray`` (the ``xarray`` extra).

    Without a grid: ``(sample, band, y, x)`` with coordinates ``id``, ``time``,
    ``crs``, ``transform``, ``centroid_lon``/``centroid_lat`` and the columns in
    ``coords=[...]``. With ``crs``/``resolution``/``bounds`` or ``like=GeoBox``:
    ``(time, band, y, x)``, warped by GDAL. Nothing is read until compute: the
    pixel type and nodata come from the ``taco_gdal:data_type`` / ``taco_gdal:nodata``
    columns ``samples_from_rasters`` writes (without them and ``dtype=``, the first
    sample's header gives them).
    Details and errors: :func:`taco_gdal.read.cube.to_xarray`.

    Example:
        >>> cube = ds.to_xarray(coords=["cloud_cover"])
        >>> cube.dims, cube.shape
        (('sample', 'band', 'y', 'x'), (4, 1, 16, 16))
    """
    from taco_gdal.read.cube import to_xarray as build

    return build(dataset, asset, bands, chunks, dtype, **options)
