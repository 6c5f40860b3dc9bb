"""Grids as odc-geo ``GeoBox`` values, so cubes interoperate with odc-stac's and rioxarray."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taco_gdal.read.cube._deps import require

__all__ = ["geobox_of", "grid_coords"]


def geobox_of(crs: str, geotransform: Sequence[float], rows: int, cols: int) -> Any:
    """The ``GeoBox`` of a ``rows`` x ``cols`` raster with a GDAL ``geotransform``.

    Example:
        >>> box = geobox_of("EPSG:32630", (400000, 10, 0, 4480000, 0, -10), 8, 8)
        >>> box.shape, box.crs.epsg
        (Shape2d(x=8, y=8), 32630)
    """
    geom = require("odc.geo.geobox")
    affine = require("affine")
    transform = affine.Affine.from_gdal(*(float(v) for v in geotransform))
    return geom.GeoBox((int(rows), int(cols)), transform, crs)


def grid_coords(box: Any) -> dict[str, Any]:
    """``y``, ``x`` and ``spatial_ref`` coordinates of ``box`` (as rioxarray and ``.odc`` read)."""
    return dict(require("odc.geo.xr").xr_coords(box, crs_coord_name="spatial_ref"))
