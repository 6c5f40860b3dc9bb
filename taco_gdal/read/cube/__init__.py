"""TACO samples as lazy xarray datacubes (the ``xarray`` extra: xarray, dask, odc-geo).

``stack``: the view's samples as ``(sample, band, y, x)``; ``grid``: the samples
warped by GDAL onto one ``GeoBox`` as ``(time, band, y, x)``.  Both are built from
the Parquet metadata alone; pixels are read when the dask graph is computed.
"""

from __future__ import annotations

from taco_gdal.read.cube.stack import to_xarray

__all__ = ["to_xarray"]
