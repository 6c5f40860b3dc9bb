"""Datasets for the torch tests, written with rasterio and taco_gdal.create.

* :func:`write_grid`: ``n`` FILE samples (tiled uint16 GeoTIFFs of random
  pixels), on a lon/lat grid of 0.1 degree steps, with ``label`` (int),
  ``split`` (train/val/test), ``stac:time_start`` and a WKB ``stac:centroid``;
  optionally a ``taco_gdal:checksum`` column computed here.
* :func:`write_tiles`: FOLDER samples, each with FILEs ``b0``/``b1``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import shapely

from taco_gdal.format.names import CHECKSUM
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from tests.support.blob import geotiff_bytes

SPLITS = ("train", "val", "test")
COLUMNS = 20
STEP = 0.1
START = datetime(2024, 3, 1, 9, 30)


@dataclass(frozen=True)
class Written:
    path: Path
    truth: dict[str, np.ndarray]
    lonlat: dict[str, tuple[float, float]]


def _taco(tortilla: Tortilla, name: str) -> Taco:
    return Taco(
        tortilla,
        id=name,
        dataset_version="1.0.0",
        description=f"torch test dataset {name}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )


def lonlat_of(i: int) -> tuple[float, float]:
    """Position of sample ``i`` on the grid (20 columns, 0.1 degree apart)."""
    return (10.0 + STEP * (i % COLUMNS) + STEP / 2, 40.0 + STEP * (i // COLUMNS) + STEP / 2)


def write_grid(
    folder: Path,
    n: int,
    pixels: int = 64,
    bands: int = 2,
    checksum: bool = False,
    algorithm: str | None = None,
) -> Written:
    """A flat dataset of ``n`` GeoTIFF samples on a lon/lat grid.

    ``checksum``: a sha256 ``taco_gdal:checksum`` column computed here;
    ``algorithm``: the writer's own ``create(..., checksum=algorithm)``.
    """
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    truth: dict[str, np.ndarray] = {}
    where: dict[str, tuple[float, float]] = {}
    samples = []
    for i in range(n):
        data, array = geotiff_bytes(1000 + i, pixels=pixels, bands=bands)
        path = src / f"g{i:04d}.tif"
        path.write_bytes(data)
        sample_id = f"g{i:04d}"
        truth[sample_id] = array
        lon, lat = lonlat_of(i)
        where[sample_id] = (lon, lat)
        metadata: dict[str, object] = {
            "label": i % 7,
            "split": SPLITS[i % 3],
            "stac:time_start": START + timedelta(hours=i),
            "stac:centroid": shapely.Point(lon, lat).wkb,
        }
        if checksum:
            metadata[CHECKSUM] = "sha256:" + hashlib.sha256(data).hexdigest()
        samples.append(Sample(sample_id, path, **metadata))
    target = folder / "grid.tacozip"
    written = create(_taco(Tortilla(samples), "grid"), target, quiet=True, checksum=algorithm)
    return Written(written[0], truth, where)


def write_tiles(folder: Path, n: int, pixels: int = 32) -> Written:
    """``n`` FOLDER samples ``tile000..`` with FILE children ``b0``, ``b1``."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    truth: dict[str, np.ndarray] = {}
    tiles = []
    for t in range(n):
        children = []
        for b, band in enumerate(("b0", "b1")):
            data, array = geotiff_bytes(5000 + 10 * t + b, pixels=pixels, bands=1)
            path = src / f"t{t}_{band}.tif"
            path.write_bytes(data)
            truth[f"tile{t:03d}/{band}"] = array
            children.append(Sample(band, path, band_index=b))
        tiles.append(Sample(f"tile{t:03d}", Tortilla(children), label=t % 2))
    target = folder / "tiles.tacozip"
    return Written(create(_taco(Tortilla(tiles), "tiles"), target, quiet=True)[0], truth, {})
