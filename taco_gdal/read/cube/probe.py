"""The pixel type and nodata of a cube: from the metadata, else a sample's header (one read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from osgeo import gdal, gdal_array

from taco_gdal.env import Env
from taco_gdal.errors import TacoIOError

if TYPE_CHECKING:
    from taco_gdal.read.cube.rows import CubeRows

__all__ = ["native_pixel", "probe_raster"]


def native_pixel(rows: CubeRows) -> tuple[np.dtype[Any], float | None]:
    """``(dtype, nodata)`` of a cube: from the ``taco_gdal:data_type`` / ``taco_gdal:nodata``
    columns when every sample has them (no read), else from the first sample's header."""
    if rows.pixel is not None:
        return rows.pixel
    return probe_raster(str(rows.paths[0]), rows.where)


def probe_raster(path: str, where: str) -> tuple[np.dtype[Any], float | None]:
    """``(dtype, nodata)`` of band 1 of the raster at ``path``.

    The TACO metadata states each sample's shape and grid but not its pixel
    type, so a cube over a dataset without taco_gdal's pixel-type columns, built
    without ``dtype=``, opens its first sample's header (under the read profile:
    one request for a remote sample).

    Raises:
        TacoIOError: GDAL cannot open the sample.

    Example:
        >>> probe_raster("src/s000.tif", "here")
        (dtype('uint8'), None)
    """
    with Env():
        try:
            dataset = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_READONLY)
        except RuntimeError as exc:
            raise TacoIOError(f"{where}: cannot open sample {path!r}: {exc}") from exc
        if dataset is None:
            raise TacoIOError(f"{where}: cannot open sample {path!r}: {gdal.GetLastErrorMsg()}")
        band = dataset.GetRasterBand(1)
        kind = np.dtype(gdal_array.GDALTypeCodeToNumericTypeCode(band.DataType))
        nodata = band.GetNoDataValue()
    return kind, nodata
