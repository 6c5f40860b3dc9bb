"""The benchmark dataset: ``count`` GeoTIFF samples in one TACO ZIP, written by taco_gdal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

PIXELS = 256
BANDS = 4


@dataclass(frozen=True)
class Dataset:
    """The written ZIP, its sample ids (also the member names under ``DATA/``), their sizes."""

    path: Path
    ids: tuple[str, ...]
    sizes: tuple[int, ...]


def _geotiff(path: Path, seed: int, compress: str) -> None:
    """256x256x4 uint16 12-bit noise, 128x128 tiles: 0.5 MB raw, ~0.4 MB with DEFLATE."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4096, (BANDS, PIXELS, PIXELS), dtype="uint16")
    profile = {
        "driver": "GTiff",
        "width": PIXELS,
        "height": PIXELS,
        "count": BANDS,
        "dtype": "uint16",
        "compress": compress,
        "tiled": True,
        "blockxsize": 128,
        "blockysize": 128,
        "crs": "EPSG:32630",
        "transform": from_origin(440000 + 2560 * seed, 4480000, 10, 10),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def build(folder: Path, count: int, compress: str = "none") -> Dataset:
    """Write ``count`` samples into ``folder/www/bench.tacozip``.

    Uncompressed by default: decoding then costs almost no CPU, so on a small
    machine the benchmark measures the requests, not the decompressor.
    """
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    samples = []
    for i in range(count):
        path = src / f"s{i:04d}.tif"
        _geotiff(path, i, compress)
        samples.append(Sample(f"s{i:04d}", path))
    taco = Taco(
        Tortilla(samples),
        id="remote_bench",
        dataset_version="1.0.0",
        description="taco_gdal remote-read benchmark",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal bench"}],
        tasks=["classification"],
    )
    (folder / "www").mkdir(exist_ok=True)
    out = create(taco, folder / "www" / "bench.tacozip", quiet=True)[0]
    ids = tuple(s.id for s in samples)
    sizes = tuple((src / f"{i}.tif").stat().st_size for i in ids)
    return Dataset(out, ids, sizes)
