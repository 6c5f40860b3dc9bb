"""The dataset extent contains every footprint: at Greenwich, at the antimeridian, on both.

Rasters are real GeoTIFFs made with rasterio, described by ``samples_from_rasters``
(STAC grid and ISTAC geometry), written with ``create`` and read back from
COLLECTION.json; ``validate`` passes on each.  A dataset with no footprint has no
spatial extent, and both taco_gdal and the reference reader load it.
"""

from __future__ import annotations

import struct
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal import Sample, Taco, Tortilla, samples_from_rasters
from taco_gdal.errors import TacoError
from taco_gdal.model.extent import box_contains, extent_of_tables
from taco_gdal.write import create

PIXELS = 10
COLLECTION: dict[str, Any] = {
    "id": "extent_test",
    "dataset_version": "1.0.0",
    "description": "rasters placed to test the extent",
    "licenses": ["CC0-1.0"],
    "providers": [{"name": "taco_gdal tests"}],
    "tasks": ["other"],
}


def _rasters(root: Path, spans: list[tuple[float, float]]) -> Path:
    """One EPSG:4326 GeoTIFF per ``(west, east)`` span, 40..41 N."""
    folder = root / "rasters"
    folder.mkdir(parents=True)
    for i, (west, east) in enumerate(spans):
        width = (east - west) % 360 or 360.0
        profile = {
            "driver": "GTiff",
            "width": PIXELS,
            "height": PIXELS,
            "count": 1,
            "dtype": "uint8",
            "crs": "EPSG:4326",
            "transform": from_origin(west, 41.0, width / PIXELS, 1.0 / PIXELS),
        }
        with rasterio.open(folder / f"r{i}.tif", "w", **profile) as dst:
            dst.write(np.full((1, PIXELS, PIXELS), i + 1, dtype=np.uint8))
    return folder


def _written(tmp_path: Path, spans: list[tuple[float, float]]) -> Path:
    samples = samples_from_rasters(_rasters(tmp_path, spans), time=datetime(2024, 1, 1))
    return create(Taco(Tortilla(samples), **COLLECTION), tmp_path / "d.tacozip", quiet=True)[0]


def _spatial(path: Path) -> list[float]:
    report = taco_gdal.validate(path)
    assert report.ok, str(report)
    spatial: list[float] = taco_gdal.load(path).collection["extent"]["spatial"]
    return spatial


def test_footprints_across_greenwich(tmp_path: Path) -> None:
    spatial = _spatial(_written(tmp_path, [(-2.0, -1.0), (-0.3, 0.31), (1.01, 2.01)]))
    assert spatial == pytest.approx([-2.0, 40.0, 2.01, 41.0])


def test_exported_subset_across_greenwich(tmp_path: Path) -> None:
    path = _written(tmp_path, [(-2.0, -1.0), (-0.3, -0.2), (0.21, 0.31), (1.01, 2.01)])
    subset = taco_gdal.load(path).filter_bbox(-0.35, 40.2, 0.35, 40.8)
    assert sorted(subset.data["id"]) == ["r1", "r2"]
    exported = taco_gdal.export(subset, tmp_path / "subset.tacozip", quiet=True)
    assert _spatial(exported) == pytest.approx([-0.3, 40.0, 0.31, 41.0])


def test_footprints_across_the_antimeridian(tmp_path: Path) -> None:
    # the middle raster itself runs from 179.5 to 180.5 (-179.5)
    spatial = _spatial(_written(tmp_path, [(178.0, 179.5), (179.5, -179.5), (-179.5, -178.0)]))
    assert spatial == pytest.approx([178.0, 40.0, -178.0, 41.0])


def test_footprints_at_greenwich_and_the_antimeridian(tmp_path: Path) -> None:
    spans = [(-1.0, 1.0), (170.0, 175.0), (179.0, -179.0)]
    spatial = _spatial(_written(tmp_path, spans))
    # the shortest arc covering all: from -1 eastwards across 180 to -179 (182 degrees)
    assert spatial == pytest.approx([-1.0, 40.0, -179.0, 41.0])
    for west, east in spans:
        assert box_contains(spatial, (west, 40.0, east, 41.0))


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore:fetch_arrow_table:DeprecationWarning")
def test_no_footprint_no_spatial_extent(tmp_path: Path) -> None:
    import tacoreader

    blob = tmp_path / "a.bin"
    blob.write_bytes(b"abc")
    taco = Taco(Tortilla([Sample("a", blob)]), **COLLECTION)
    path = create(taco, tmp_path / "plain.tacozip", quiet=True)[0]
    ds = taco_gdal.load(path)
    assert ds.collection["extent"] == {"temporal": None}
    assert taco_gdal.validate(path).ok
    assert "dataset" in repr(ds).lower() and "extent_test" in ds._repr_html_()
    reference = tacoreader.load(str(path))  # the reference reader, its views and reprs
    assert reference.extent == {"temporal": None}
    assert "extent_test" in repr(reference) and "extent_test" in reference._repr_html_()


def test_unparseable_wkb_is_a_taco_error() -> None:
    unknown_type = b"\x01" + struct.pack("<I", 312) + b"\x00" * 16
    table = pa.table(
        {
            "id": ["a"],
            "stac:centroid": pa.array([unknown_type], pa.binary()),
            "stac:time_start": pa.array([datetime(2024, 1, 1)], pa.timestamp("us")),
        }
    )
    with pytest.raises(TacoError, match="stac:centroid"):
        extent_of_tables([table])


def test_projected_footprints_are_boxed_in_wgs84(tmp_path: Path) -> None:
    from tests.support.rasters import raster_folder

    samples = samples_from_rasters(raster_folder(tmp_path))  # EPSG:32630 and EPSG:4326
    path = create(Taco(Tortilla(samples), **COLLECTION), tmp_path / "utm.tacozip", quiet=True)[0]
    west, south, east, north = _spatial(path)
    assert -3.72 < west < east < -3.6 and 40.3 < south < north < 40.46
