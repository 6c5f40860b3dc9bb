"""Rasters for statistics tests: two uint16 bands, distributions differing per sample.

``write_stats_dataset`` writes ``n`` GeoTIFFs (reused between calls under one root)
and a ZIP dataset over them with the given ``GeotiffStats``.  Mixed nodata: every
third raster declares none, the others mask a varying share of pixels, and raster
4 has a second band without any valid pixel.  Rows carry ``region`` (north, south,
east in turn) and ``cloud_cover`` (9 * index) to filter on.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from taco_gdal.errors import TacoWarning
from taco_gdal.extensions import GeotiffStats, Scaling
from taco_gdal.model import Sample, Taco, Tortilla

SIZE = 48
REGIONS = ("north", "south", "east")
EMPTY_BAND_SAMPLE = 4


def write_raster(path: Path, index: int) -> None:
    """Raster ``index``: a gamma band and a normal band, both uint16, nodata 0 or none."""
    rng = np.random.default_rng(index)
    scale = 100 * (1 + index % 5)
    data = np.stack(
        [
            rng.gamma(2.0, scale, (SIZE, SIZE)),
            rng.normal(3000 + 400 * index, 50 + 20 * index, (SIZE, SIZE)),
        ]
    ).clip(1, 60000)
    data = data.astype(np.uint16)
    nodata = None if index % 3 == 0 else 0
    if nodata is not None:
        data[:, rng.random((SIZE, SIZE)) < 0.05 * (index % 7)] = 0
        if index == EMPTY_BAND_SAMPLE:
            data[1] = 0
    profile = {
        "driver": "GTiff",
        "width": SIZE,
        "height": SIZE,
        "count": 2,
        "dtype": "uint16",
        "crs": "EPSG:4326",
        "transform": from_origin(-3.7 + 0.1 * index, 40.4, 0.001, 0.001),
        "nodata": nodata,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def write_stats_dataset(
    root: Path, name: str, extension: GeotiffStats, n: int = 12, scaling: Scaling | None = None
) -> Path:
    """A ``.tacozip`` of ``n`` rasters under ``root``, each extended with ``extension``."""
    from taco_gdal.write import create

    samples = []
    for i in range(n):
        path = root / f"r{i:02d}.tif"
        if not path.exists():
            write_raster(path, i)
        sample = Sample(f"r{i:02d}", str(path), region=REGIONS[i % 3], cloud_cover=float(9 * i))
        sample.extend_with({"stac:tensor_shape": [2, SIZE, SIZE]})  # tacoreader's weights
        if scaling is not None:
            sample.extend_with(scaling)
        empty = i == EMPTY_BAND_SAMPLE
        with (
            pytest.warns(TacoWarning, match="no valid pixels")
            if empty
            else contextlib.nullcontext()
        ):
            samples.append(sample.extend_with(extension))
    taco = Taco(
        Tortilla(samples),
        id=name,
        dataset_version="1.0.0",
        description="statistics test rasters",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["regression"],
    )
    return create(taco, root / f"{name}.tacozip", quiet=True)[0]


def valid_pixels(root: Path, ids: list[str], band: int) -> np.ndarray:
    """The valid (unmasked) pixels of 0-based ``band`` of the rasters ``ids``, as float64."""
    values = []
    for sample_id in ids:
        with rasterio.open(root / f"{sample_id}.tif") as src:
            values.append(src.read(band + 1, masked=True).compressed().astype(np.float64))
    return np.concatenate(values)
