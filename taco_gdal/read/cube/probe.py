"""The pixel type and nodata of a sample, from its header (one small read)."""

from __future__ import annotations

from typing import Any

import numpy as np
from osgeo import gdal, gdal_array

from taco_gdal.env import Env
from taco_gdal.errors import TacoIOError

__all__ = ["probe_raster"]


def probe_raster(path: str, where: str) -> tuple[np.dtype[Any], float | None]:
    """``(dtype, nodata)`` of band 1 of the raster at ``path``.

    The metadata states each sample's shape and grid but not its pixel type,
    so a cube built without ``dtype=`` opens its first sample's header (under the
    read profile: one request for a remote sample).

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
