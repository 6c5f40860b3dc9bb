"""A mixed-CRS, multi-date dataset made from rasterio GeoTIFFs, for the STAC tests."""

from __future__ import annotations

from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.model import Taco, Tortilla
from tests.support.rasters import raster_folder


def make_mixed(root: Path, checksum: str | None = "sha256") -> Path:
    """Two EPSG:32630 and two EPSG:4326 rasters, each a different day, in a TACO ZIP."""
    samples = taco_gdal.samples_from_rasters(raster_folder(root))
    taco = Taco(
        Tortilla(samples), id="mixed", dataset_version="1.0.0", licenses=["CC-BY-4.0"],
        description="Mixed CRS and dates", providers=[{"name": "tests"}], tasks=["other"],
        keywords=["stac"],
    )  # fmt: skip
    return taco_gdal.create(taco, root / "mixed.tacozip", quiet=True, checksum=checksum)[0]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mixed(tmp_path_factory.mktemp("mixed"))
