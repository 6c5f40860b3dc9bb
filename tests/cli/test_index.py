"""taco_gdal.index and ``taco index``: GDAL/OGR tools and pyogrio read what it writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import rasterio
import shapely
from osgeo import gdal
from rasterio.warp import transform_bounds

import taco_gdal
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.index import GTI_MIN_VERSION, footprints, gti_xml, index
from taco_gdal.model import Taco, Tortilla
from taco_gdal.rasters import samples_from_rasters
from taco_gdal.write import create
from tests.cli.conftest import taco
from tests.support.rasters import SIZE, raster_folder
from tests.support.servers.range_server import RangeServer


def _gdalinfo(location: str) -> dict[str, object]:
    proc = subprocess.run(["gdalinfo", "-json", location], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


@pytest.fixture(scope="module")
def two_crs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A flat TACO ZIP of 2 UTM (EPSG:32630) and 2 EPSG:4326 rasters, metadata from the files."""
    root = tmp_path_factory.mktemp("two-crs")
    folder = raster_folder(root)
    taco = Taco(
        Tortilla(samples_from_rasters(folder)),
        id="two_crs", dataset_version="1", description="index test", licenses=["other"],
        providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    (root / "www").mkdir()
    return create(taco, root / "www" / "two_crs.tacozip", quiet=True)[0]


def test_nested_file_samples_all_levels(datasets: dict[str, Path], tmp_path: Path) -> None:
    ds = taco_gdal.load(datasets["3level"])
    result = index(ds, tmp_path / "i.gpkg")
    layer = pyogrio.read_dataframe(result.path, layer=result.layer)
    # per scene: FILE "label" at level 1, FILEs rgb/nir under before/ and after/ at level 2
    assert result.features == len(layer) == 3 * 5
    assert layer.crs.to_epsg() == 4326
    scene = ds.read("scene002")
    row = layer[layer["key"] == "scene002/after/nir"].iloc[0]
    assert row["location"] == scene.read("after").read("nir")
    assert (row["id"], row["parent"], row["role"], row["level"]) == (
        "nir", "scene002/after", "after/nir", 2,
    )  # fmt: skip
    assert layer[layer["key"] == "scene000/label"].iloc[0]["level"] == 1
    level1 = ds.to_arrow(1).to_pylist()
    assert set(layer["location"]) == {
        *(r[GDAL_VSI] for r in level1 if r["type"] == "FILE"),
        *ds.to_arrow(2)[GDAL_VSI].to_pylist(),
    }
    assert layer.geometry.notna().all() and {"cloud_cover", "split"} <= set(layer.columns)


def test_filtered_view_is_indexed(datasets: dict[str, Path], tmp_path: Path) -> None:
    ds = taco_gdal.load(datasets["2level"]).filter_bbox(-3.75, 40.3, -3.5, 40.46, level=1)
    frame = footprints(ds)
    assert list(frame["location"]) == ds.to_arrow(1)[GDAL_VSI].to_pylist()
    assert 0 < len(frame) < 9
    assert frame.geometry.intersects(shapely.box(-3.75, 40.3, -3.5, 40.46)).all()


def test_footprints_are_reprojected_outlines(two_crs: Path) -> None:
    frame = footprints(taco_gdal.load(two_crs)).set_index("id")
    assert set(frame["crs"]) == {"EPSG:32630", "EPSG:4326"}
    for sample_id, row in frame.iterrows():
        with rasterio.open(row["location"]) as src:
            expected = transform_bounds(src.crs, "EPSG:4326", *src.bounds, densify_pts=21)
        assert row.geometry.geom_type == "Polygon", sample_id
        assert np.allclose(row.geometry.bounds, expected, atol=1e-6), sample_id


def test_cli_index_gpkg_vrt_and_gdal_tools(two_crs: Path, tmp_path: Path) -> None:
    out, mosaics = tmp_path / "two.gpkg", tmp_path / "mosaics"
    document = taco("index", two_crs, out, "--vrt", mosaics, "--json").json("index")
    assert document["features"] == 4 and document["layer"] == "two_crs"
    summary = subprocess.run(
        ["ogrinfo", "-so", str(out), "two_crs"], capture_output=True, text=True
    )
    assert summary.returncode == 0, summary.stderr
    assert "Feature Count: 4" in summary.stdout and "location: String" in summary.stdout
    assert "Geometry: Polygon" in summary.stdout and 'ID["EPSG",4326]' in summary.stdout
    layer = pyogrio.read_dataframe(out)
    assert set(layer["location"]) == set(taco_gdal.load(two_crs).data[GDAL_VSI])
    assert _gdalinfo(str(layer["location"].iloc[0]))["size"] == [SIZE, SIZE]
    by_name = {Path(p).name: p for p in document["vrt"]}
    assert set(by_name) == {"samples_EPSG_32630.vrt", "samples_EPSG_4326.vrt"}
    utm = _gdalinfo(by_name["samples_EPSG_32630.vrt"])
    assert utm["size"] == [2 * SIZE, SIZE]  # two tiles side by side
    geo = _gdalinfo(by_name["samples_EPSG_4326.vrt"])
    assert geo["size"] == [2 * SIZE, SIZE]
    if int(gdal.VersionInfo()) >= GTI_MIN_VERSION:
        assert len(document["gti"]) == 2
        assert _gdalinfo(document["gti"][0])["size"][0] > 0
    else:  # GDAL 3.6: no GTI driver, so no GTI file is written
        assert document["gti"] == [] and not list(mosaics.glob("*.gti"))


def test_gti_description_is_well_formed() -> None:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(gti_xml(Path("/d/i.gpkg"), "d", "it's", "EPSG:32630"))
    assert root.tag == "GDALTileIndexDataset"
    assert root.findtext("LocationField") == "location"
    assert root.findtext("Filter") == "role = 'it''s' AND crs = 'EPSG:32630'"


def test_cli_index_over_http_opens_remotely(two_crs: Path, tmp_path: Path) -> None:
    out = tmp_path / "remote.fgb"
    with RangeServer(root=two_crs.parent) as server:
        url = f"{server.url}/{two_crs.name}"
        quiet = taco("index", url, out)
        assert "Range:" not in quiet.err
        verbose = taco("info", url, "--config", "CPL_CURL_VERBOSE=YES")  # reaches libcurl
        assert verbose.json("info")["levels"][0]["samples"] == 4
        assert "Range: bytes=" in verbose.err
        layer = pyogrio.read_dataframe(out)
        location = str(layer["location"].iloc[0])
        assert location.startswith("/vsisubfile/") and f",/vsicurl/{url}" in location
        server.log.clear()
        assert _gdalinfo(location)["size"] == [SIZE, SIZE]
        ranged = [r for r in server.log.records(method="GET") if r.range]
        assert ranged, "gdalinfo read the sample with range requests"
    assert len(layer) == 4 and layer.crs.to_epsg() == 4326


def test_geoparquet_and_errors(two_crs: Path, tmp_path: Path) -> None:
    ds = taco_gdal.load(two_crs)
    result = index(ds, tmp_path / "i.parquet")
    frame = gpd.read_parquet(result.path)
    assert len(frame) == 4 and frame.crs.to_epsg() == 4326
    with pytest.raises(taco_gdal.TacoExistsError, match=r"i\.parquet"):
        index(ds, tmp_path / "i.parquet")
    with pytest.raises(taco_gdal.TacoValidationError, match=r"\.shp"):
        index(ds, tmp_path / "i.shp")


def test_probe_outlines_samples_without_footprint_metadata(tmp_path: Path) -> None:
    from taco_caf import write_caf

    rasters = sorted(raster_folder(tmp_path, utm=1, lonlat=1).glob("*.tif"))
    ds = taco_gdal.load(write_caf(rasters, tmp_path / "tiles.caf"))
    assert footprints(ds).geometry.isna().all()  # CAF carries no footprint metadata
    probed = footprints(ds, probe=True).set_index("id")
    assert list(probed["crs"]) == ["EPSG:4326", "EPSG:32630"]
    for raster in rasters:
        with rasterio.open(raster) as src:
            expected = transform_bounds(src.crs, "EPSG:4326", *src.bounds, densify_pts=21)
        assert np.allclose(probed.loc[raster.name].geometry.bounds, expected, atol=1e-6)
    result = index(ds, tmp_path / "caf.gpkg", probe=True, vrt_dir=tmp_path / "vrt")
    assert sorted(p.name for p in result.vrts) == [
        "samples_EPSG_32630.vrt",
        "samples_EPSG_4326.vrt",
    ]
