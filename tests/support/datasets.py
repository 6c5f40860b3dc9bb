"""Shared dataset factory: small real GeoTIFFs, a Taco built with the model, written to disk.

Used by the writer, reader and conformance suites; keep the shapes stable.

Shapes (``n`` level-0 samples, default 3):

* ``flat``:    ``s000 .. s{n-1}``, FILE GeoTIFFs.
* ``2level``:  ``tile000 ..`` FOLDERs, each with FILEs ``b02``, ``b03``, ``b04``.
* ``3level``:  ``scene000 ..`` FOLDERs, each with FILE ``label`` and FOLDERs
  ``before`` / ``after``, each with FILEs ``rgb``, ``nir``.
* ``padded``:  ``tile000 ..`` FOLDERs, each with FILEs ``b02 .. b04`` padded to 4
  (``__TACOPAD__0``, a zero-byte sample).

Every FILE is a 16x16 uint8 single-band GeoTIFF in EPSG:4326 with distinct
pixels; rows carry ``cloud_cover`` (double), ``split`` (string) and
``stac:crs``, ``stac:geotransform``, ``stac:tensor_shape``,
``stac:time_start`` (timestamp), ``stac:centroid`` (WKB point) so the model
computes a real extent.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np
import rasterio
import shapely
from rasterio.transform import from_origin

from taco_gdal.model import Sample, Taco, Tortilla

Shape = Literal["flat", "2level", "3level", "padded"]
Container = Literal["zip", "folder", "tacocat"]
SHAPES: tuple[Shape, ...] = ("flat", "2level", "3level", "padded")

PIXELS = 16
PIXEL_SIZE = 0.001
START = datetime(2023, 1, 1, 12, 0, 0)
SPLITS = ("train", "validation", "test")


def make_geotiff(path: Path, index: int) -> dict[str, Any]:
    """Write a 16x16 GeoTIFF whose pixels depend on ``index``; return its stac: metadata."""
    west, north = -3.70 + 0.05 * index, 40.40 + 0.02 * index
    transform = from_origin(west, north, PIXEL_SIZE, PIXEL_SIZE)
    rng = np.random.default_rng(index)
    data = rng.integers(0, 255, size=(1, PIXELS, PIXELS), dtype=np.uint8)
    profile = {
        "driver": "GTiff",
        "width": PIXELS,
        "height": PIXELS,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:4326",
        "transform": transform,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)
    half = PIXELS * PIXEL_SIZE / 2
    return {
        "stac:crs": "EPSG:4326",
        "stac:geotransform": list(transform.to_gdal()),
        "stac:tensor_shape": [1, PIXELS, PIXELS],
        "stac:time_start": START + timedelta(days=index),
        "stac:centroid": shapely.Point(west + half, north - half).wkb,
    }


class _Files:
    """Creates the GeoTIFFs of one dataset under ``root`` with increasing indexes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        root.mkdir(parents=True, exist_ok=True)

    def sample(self, sample_id: str, **extra: Any) -> Sample:
        index = self.count
        self.count += 1
        path = self.root / f"src{index:05d}.tif"
        metadata = make_geotiff(path, index)
        metadata.update(cloud_cover=float(index % 100), split=SPLITS[index % 3], **extra)
        return Sample(sample_id, path, **metadata)


def _tree(files: _Files, shape: Shape, n: int) -> Tortilla:
    if shape == "flat":
        return Tortilla([files.sample(f"s{i:03d}") for i in range(n)])
    if shape in ("2level", "padded"):
        pad = 4 if shape == "padded" else None
        return Tortilla(
            [
                Sample(
                    f"tile{i:03d}",
                    Tortilla([files.sample(b) for b in ("b02", "b03", "b04")], pad_to=pad),
                    split=SPLITS[i % 3],
                )
                for i in range(n)
            ]
        )
    scenes = []
    for i in range(n):
        children = [files.sample("label")]
        for moment in ("before", "after"):
            bands = Tortilla([files.sample("rgb"), files.sample("nir")])
            children.append(Sample(moment, bands))
        mixed = Tortilla(children, strict_schema=False)
        scenes.append(Sample(f"scene{i:03d}", mixed, split=SPLITS[i % 3]))
    return Tortilla(scenes)


def make_taco(tmp_path: Path, shape: Shape, n: int = 3, dataset_id: str | None = None) -> Taco:
    """A Taco of ``shape`` with ``n`` level-0 samples; GeoTIFFs go under ``tmp_path/src_<shape>``.

    Example:
        >>> taco = make_taco(tmp_path, "2level")  # doctest: +SKIP
    """
    files = _Files(tmp_path / f"src_{shape}")
    return Taco(
        _tree(files, shape, n),
        id=dataset_id or f"test_{shape}",
        dataset_version="1.0.0",
        description=f"taco_gdal test dataset, shape {shape}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
        title=f"Test {shape}",
        keywords=["test", shape],
    )


def write_dataset(tmp_path: Path, shape: Shape, container: Container, n: int = 3) -> Path:
    """Write a ``shape`` dataset as ``container`` under ``tmp_path/<shape>_<container>/``.

    Returns the path a reader opens: the ``.tacozip`` (zip), the dataset folder
    (folder), or the ``.tacocat`` folder next to two or more ``.tacozip`` parts
    (tacocat; the split puts at most two level-0 samples in one part).
    """
    from taco_gdal.write import create

    out = tmp_path / f"{shape}_{container}"
    out.mkdir(parents=True, exist_ok=True)
    taco = make_taco(out, shape, n=max(n, 3) if container == "tacocat" else n)
    if container == "zip":
        return create(taco, out / f"{shape}.tacozip", quiet=True)[0]
    if container == "folder":
        return create(taco, out / shape, quiet=True)[0]
    per_root = taco.tortilla.samples[0].size
    create(taco, out / f"{shape}.tacozip", split_size=2 * per_root, quiet=True)
    return out / ".tacocat"
