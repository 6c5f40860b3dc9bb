"""Datasets for the request-budget tests, written with taco_gdal's own writer.

* :func:`write_tiles`: ``tiles`` FOLDER samples, each with FILEs ``b0``/``b1``:
  real tiled GeoTIFFs of ~0.5 MB (random pixels), as a ZIP or a FOLDER.
* :func:`write_catalog`: a TACOCAT of ``parts`` ZIPs, two small level-0 FILEs in each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from tests.support.blob import geotiff_bytes

BANDS = ("b0", "b1")


def _taco(tortilla: Tortilla, name: str) -> Taco:
    return Taco(
        tortilla,
        id=name,
        dataset_version="1.0.0",
        description=f"remote budget test dataset {name}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )


def write_tiles(
    folder: Path, fmt: Literal["zip", "folder"], tiles: int = 3, pixels: int = 256
) -> tuple[Path, dict[tuple[str, str], np.ndarray]]:
    """The dataset path and the pixels of every ``(tile, band)`` FILE."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    truth: dict[tuple[str, str], np.ndarray] = {}
    samples = []
    for t in range(tiles):
        children = []
        for b, band in enumerate(BANDS):
            data, pixels_array = geotiff_bytes(100 * t + b, pixels=pixels)
            path = src / f"t{t}_{band}.tif"
            path.write_bytes(data)
            truth[(f"tile{t}", band)] = pixels_array
            children.append(Sample(band, path))
        samples.append(Sample(f"tile{t}", Tortilla(children)))
    taco = _taco(Tortilla(samples), f"tiles_{fmt}")
    target = folder / ("tiles.tacozip" if fmt == "zip" else "tiles")
    return create(taco, target, quiet=True)[0], truth


def write_catalog(folder: Path, parts: int = 50) -> tuple[Path, dict[str, np.ndarray]]:
    """A TACOCAT of ``parts`` ZIPs (``s000``+``s001`` in the first, ...).

    Returns the ``.tacocat`` folder and the pixels of every sample id.
    """
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    samples = []
    truth: dict[str, np.ndarray] = {}
    for i in range(2 * parts):
        data, pixels = geotiff_bytes(i, pixels=32, bands=1)
        path = src / f"s{i}.tif"
        path.write_bytes(data)
        truth[f"s{i:03d}"] = pixels
        samples.append(Sample(f"s{i:03d}", path))
    taco = _taco(Tortilla(samples), "catalog")
    out = folder / "cat"
    out.mkdir()
    create(taco, out / "cat.tacozip", split_size=2 * samples[0].size, quiet=True)
    written = sorted(out.glob("*.tacozip"))
    assert len(written) == parts, f"expected {parts} parts, the writer made {len(written)}"
    return out / ".tacocat", truth
