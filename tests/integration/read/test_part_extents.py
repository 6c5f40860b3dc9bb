"""Extents merged over parts (TACOLLECTION, TACOCAT, concat) across the antimeridian (issue 44)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal import Sample, Taco, Tortilla, create
from taco_gdal.rasters import samples_from_rasters
from taco_gdal.write.tacollection import create_tacollection


def _geotiff(path: Path, west: float, north: float) -> Path:
    profile = {
        "driver": "GTiff", "width": 8, "height": 8, "count": 1, "dtype": "uint8",
        "crs": "EPSG:4326", "transform": from_origin(west, north, 0.01, 0.01),
    }  # fmt: skip
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.full((1, 8, 8), 7, dtype=np.uint8))
        dst.update_tags(TIFFTAG_DATETIME="2024:01:01 00:00:00")
    return path


def _part(root: Path, name: str, samples: list[Sample]) -> Path:
    taco = Taco(
        Tortilla(samples), id="pacific", dataset_version="1", description="part",
        licenses=["other"], providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    return create(taco, root / f"{name}.tacozip", quiet=True)[0]


@pytest.fixture(scope="module")
def pacific(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two parts: one just west of the antimeridian (179.5E), one just east (179.9W)."""
    root = tmp_path_factory.mktemp("pacific")
    (root / "east").mkdir()
    (root / "west").mkdir()
    _geotiff(root / "east" / "a.tif", 179.5, -16.0)
    _geotiff(root / "west" / "b.tif", -179.9, -16.5)
    return [
        _part(root, "east", samples_from_rasters(root / "east")),
        _part(root, "west", samples_from_rasters(root / "west")),
    ]


def _crosses(box: list[float]) -> None:
    west, south, east, north = box
    assert west == pytest.approx(179.5) and east == pytest.approx(-179.82)
    assert south == pytest.approx(-16.58) and north == pytest.approx(-16.0)


def test_tacollection_extent_crosses_the_antimeridian(pacific: list[Path], tmp_path: Path) -> None:
    target = create_tacollection(pacific, tmp_path / "out")
    _crosses(json.loads(target.read_text())["extent"]["spatial"])


def test_concat_extent_crosses_the_antimeridian(pacific: list[Path]) -> None:
    _crosses(taco_gdal.load([str(p) for p in pacific]).extent["spatial"])


def test_no_made_up_globe_when_no_part_has_a_box(tmp_path: Path) -> None:
    parts = []
    for name in ("a", "b"):
        blob = tmp_path / f"{name}.bin"
        blob.write_bytes(b"not a raster")
        parts.append(_part(tmp_path, name, [Sample(name, blob)]))
    collections = [taco_gdal.load(p).extent or {} for p in parts]
    assert all(not c.get("spatial") for c in collections)
    merged = json.loads(create_tacollection(parts, tmp_path / "out").read_text())["extent"]
    assert "spatial" not in merged
    assert "spatial" not in (taco_gdal.load([str(p) for p in parts]).extent or {})
