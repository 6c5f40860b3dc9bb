"""ISTAC.from_raster, STAC.from_raster and samples_from_rasters on real GeoTIFFs."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import rasterio
import shapely
from rasterio.transform import from_origin

from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.extensions import ISTAC, STAC
from taco_gdal.extensions._geo import to_microseconds
from taco_gdal.format.names import DATA_TYPE, NODATA
from taco_gdal.rasters import samples_from_rasters
from tests.support.scenes import SCENES, truth_footprint, write_scene, write_scenes


def _plain_raster(path: Path, crs: str | None = "EPSG:4326") -> Path:
    profile = {"driver": "GTiff", "width": 4, "height": 4, "count": 1, "dtype": "uint8"}
    profile |= {"transform": from_origin(10, 50, 0.1, 0.1)}
    if crs is not None:
        profile |= {"crs": crs}
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.ones((1, 4, 4), np.uint8))
    return path


@pytest.mark.parametrize("scene", [SCENES[0], SCENES[6], SCENES[11], SCENES[16]], ids=str)
def test_istac_from_raster_reads_footprint_crs_centroid_and_tagged_time(
    tmp_path: Path, scene: object
) -> None:
    path = write_scene(tmp_path, scene)  # type: ignore[arg-type]
    ext = ISTAC.from_raster(path)
    assert ext.crs == scene.crs  # type: ignore[attr-defined]
    size = 8 * scene.pixel  # type: ignore[attr-defined]
    west, north = scene.west, scene.north  # type: ignore[attr-defined]
    assert shapely.from_wkb(ext.geometry).equals(
        shapely.box(west, north - size, west + size, north)
    )
    assert ext.time_start == to_microseconds(scene.time, "t")  # type: ignore[attr-defined]
    centroid = shapely.from_wkb(ext.centroid)
    assert truth_footprint(scene).buffer(1e-9).contains(centroid)  # type: ignore[arg-type]


def test_stac_from_raster_reads_the_time_tag_and_a_given_time_wins(tmp_path: Path) -> None:
    path = write_scene(tmp_path, SCENES[6])  # IMD ACQUISITIONDATETIME
    assert STAC.from_raster(path).time_start == to_microseconds(SCENES[6].time, "t")
    given = datetime(2020, 2, 2)
    assert STAC.from_raster(path, time_start=given).time_start == to_microseconds(given, "t")
    assert ISTAC.from_raster(path, time=given).time_start == to_microseconds(given, "t")


def test_from_raster_without_time_names_the_tags(tmp_path: Path) -> None:
    path = _plain_raster(tmp_path / "untagged.tif")
    for call in (lambda: STAC.from_raster(path), lambda: ISTAC.from_raster(path)):
        with pytest.raises(TacoValidationError, match=r"TIFFTAG_DATETIME.*untagged\.tif"):
            call()
    tags = "IMAGERY:ACQUISITIONDATETIME / IMD:ACQUISITIONDATETIME / TIFFTAG_DATETIME"
    with pytest.raises(TacoValidationError, match=rf"--time\) or tag the raster with {tags}"):
        samples_from_rasters(tmp_path)  # each tag named once, with its domain


def test_from_raster_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TacoValidationError, match="no CRS"):
        ISTAC.from_raster(_plain_raster(tmp_path / "nocrs.tif", crs=None), time=0)
    with pytest.raises(TacoIOError, match=r"missing\.tif"):
        ISTAC.from_raster(tmp_path / "missing.tif", time=0)
    bad = _plain_raster(tmp_path / "baddate.tif")
    with rasterio.open(bad, "r+") as dst:
        dst.update_tags(TIFFTAG_DATETIME="15/03/2024")
    with pytest.raises(TacoValidationError, match="15/03/2024"):
        STAC.from_raster(bad)


def test_samples_from_rasters_folder_glob_and_list(tmp_path: Path) -> None:
    paths = write_scenes(tmp_path / "scenes")
    samples = samples_from_rasters(tmp_path / "scenes")
    assert [s.id for s in samples] == sorted(s.stem for s in SCENES)
    first = samples[0]
    assert {"stac:crs", "stac:centroid", "istac:geometry", "istac:crs"} <= set(first.fields)
    globbed = samples_from_rasters(str(tmp_path / "scenes" / "utm3*.tif"))
    assert len(globbed) == 11
    listed = samples_from_rasters([paths[0], paths[0]], time=datetime(2021, 1, 1))
    assert [s.id for s in listed] == ["utm30_0", "utm30_0_2"]
    assert listed[0]["stac:time_start"] == datetime(2021, 1, 1)


def test_samples_from_rasters_empty_folder_errs(tmp_path: Path) -> None:
    with pytest.raises(TacoValidationError, match=r"found none in folder .* '\*\.tif'"):
        samples_from_rasters(tmp_path)


def test_samples_from_rasters_records_band_1_type_and_nodata_as_rasterio_reads_them(
    tmp_path: Path,
) -> None:
    plain = _plain_raster(tmp_path / "a_plain.tif")  # uint8, no nodata
    for name, dtype, nodata in (("b_int16", "int16", -1), ("c_float", "float32", float("nan"))):
        profile = {"driver": "GTiff", "width": 4, "height": 4, "count": 2, "dtype": dtype}
        profile |= {"crs": "EPSG:4326", "transform": from_origin(10, 50, 0.1, 0.1)}
        with rasterio.open(tmp_path / f"{name}.tif", "w", nodata=nodata, **profile) as dst:
            dst.write(np.zeros((2, 4, 4), dtype))
    samples = samples_from_rasters(tmp_path, time=datetime(2021, 1, 1))
    assert [s.id for s in samples] == ["a_plain", "b_int16", "c_float"]
    for sample, path in zip(samples, [plain, tmp_path / "b_int16.tif", tmp_path / "c_float.tif"],
                            strict=True):  # fmt: skip
        with rasterio.open(path) as src:
            assert sample[DATA_TYPE] == src.dtypes[0]
            np.testing.assert_equal(sample[NODATA], src.nodata)
