"""Fixtures of the extension tests: tiny GeoTIFFs written with rasterio."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

WriteTiff = Callable[..., Path]


@pytest.fixture
def write_tiff(tmp_path: Path) -> WriteTiff:
    """``write_tiff(name, data, crs=..., nodata=...)``: a GeoTIFF of ``data`` (bands, y, x)."""

    def write(
        name: str,
        data: np.ndarray[Any, Any],
        crs: str | None = "EPSG:32633",
        nodata: float | None = None,
        origin: tuple[float, float] = (500_000.0, 5_000_000.0),
        pixel: float = 10.0,
    ) -> Path:
        path = tmp_path / name
        profile: dict[str, Any] = {
            "driver": "GTiff",
            "count": data.shape[0],
            "height": data.shape[1],
            "width": data.shape[2],
            "dtype": str(data.dtype),
            "transform": from_origin(*origin, pixel, pixel),
        }
        if crs is not None:
            profile["crs"] = crs
        if nodata is not None:
            profile["nodata"] = nodata
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(data)
        return path

    return write
