"""GeoTIFFs for the CLI and index tests, made with rasterio: two CRSs, tagged times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

SIZE = 20
"""Pixels per side."""

UTM_ORIGIN = (440_000.0, 4_475_000.0)
"""Upper-left corner of the UTM rasters (EPSG:32630, near Madrid)."""
UTM_PIXEL = 30.0
LONLAT_ORIGIN = (-3.70, 40.45)
LONLAT_PIXEL = 0.0005


def write_raster(path: Path, crs: str, west: float, north: float, pixel: float, day: int) -> None:
    """A 1-band uint8 GeoTIFF (non-zero pixels) tagged with an acquisition time."""
    data = (np.arange(SIZE * SIZE, dtype=np.uint16).reshape(1, SIZE, SIZE) % 200 + 20).astype(
        np.uint8
    )
    profile = {
        "driver": "GTiff",
        "width": SIZE,
        "height": SIZE,
        "count": 1,
        "dtype": "uint8",
        "crs": crs,
        "transform": from_origin(west, north, pixel, pixel),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)
        dst.update_tags(TIFFTAG_DATETIME=f"2023:03:{day:02d} 10:00:00")


def raster_folder(root: Path, utm: int = 2, lonlat: int = 2) -> Path:
    """``root/rasters``: ``utm`` tiles in EPSG:32630 in a row, ``lonlat`` in EPSG:4326."""
    folder = root / "rasters"
    folder.mkdir(parents=True, exist_ok=True)
    x0, y0 = UTM_ORIGIN
    for i in range(utm):
        write_raster(
            folder / f"utm_{i}.tif", "EPSG:32630", x0 + i * SIZE * UTM_PIXEL, y0, UTM_PIXEL, 1 + i
        )
    lon, lat = LONLAT_ORIGIN
    for i in range(lonlat):
        write_raster(
            folder / f"geo_{i}.tif",
            "EPSG:4326",
            lon + i * SIZE * LONLAT_PIXEL,
            lat,
            LONLAT_PIXEL,
            10 + i,
        )
    return folder
