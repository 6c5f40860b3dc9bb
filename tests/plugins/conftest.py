"""Fixtures for the container plugins (taco_caf, taco_taridx): tiny real GeoTIFFs."""

from __future__ import annotations

from pathlib import Path

import pytest
import rasterio

from taco_gdal.io.vsi import read_all
from tests.support.datasets import make_geotiff


@pytest.fixture
def geotiffs(tmp_path: Path) -> list[Path]:
    """Three 16x16 single-band GeoTIFFs with distinct pixels, made with rasterio."""
    folder = tmp_path / "src"
    folder.mkdir()
    paths = [folder / f"img{i}.tif" for i in range(3)]
    for index, path in enumerate(paths):
        make_geotiff(path, index)
    return paths


def assert_same_raster(gdal_path: str, source: Path) -> None:
    """The bytes behind ``gdal_path`` are ``source``'s, and rasterio reads the same pixels."""
    assert read_all(gdal_path) == source.read_bytes()
    with rasterio.open(gdal_path) as got, rasterio.open(source) as want:
        assert got.crs == want.crs and got.transform == want.transform
        assert (got.read() == want.read()).all()
