"""The benchmark datasets: GeoTIFF samples of a few sizes, each size in its own TACO ZIP."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

BANDS = 4


@dataclass(frozen=True)
class Dataset:
    """A written ZIP, its pixel size and the mean size of its samples."""

    path: Path
    pixels: int
    count: int
    mean_bytes: float


def _geotiff(path: Path, seed: int, pixels: int) -> None:
    """``pixels`` x ``pixels`` x 4 uint16 12-bit noise, uncompressed, 128x128 tiles."""
    data = np.random.default_rng(seed).integers(0, 4096, (BANDS, pixels, pixels), dtype="uint16")
    profile = {
        "driver": "GTiff",
        "width": pixels,
        "height": pixels,
        "count": BANDS,
        "dtype": "uint16",
        "tiled": True,
        "blockxsize": 128,
        "blockysize": 128,
        "crs": "EPSG:32630",
        "transform": from_origin(440000 + 10 * pixels * seed, 4480000, 10, 10),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def build(folder: Path, count: int, pixels: int) -> Dataset:
    """Write ``count`` samples of ``pixels`` side into ``folder/www/loader_<pixels>.tacozip``."""
    src = folder / f"src{pixels}"
    src.mkdir(parents=True, exist_ok=True)
    samples = []
    for i in range(count):
        path = src / f"s{i:04d}.tif"
        _geotiff(path, i, pixels)
        samples.append(Sample(f"s{i:04d}", path, label=i % 10))
    taco = Taco(
        Tortilla(samples),
        id=f"loader_bench_{pixels}",
        dataset_version="1.0.0",
        description="taco_gdal DataLoader benchmark",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal bench"}],
        tasks=["classification"],
    )
    (folder / "www").mkdir(exist_ok=True)
    out = create(taco, folder / "www" / f"loader_{pixels}.tacozip", quiet=True)[0]
    sizes = [p.stat().st_size for p in sorted(src.glob("*.tif"))]
    return Dataset(out, pixels, count, sum(sizes) / len(sizes))
