"""TacoDataset.to_stac and friends, checked with pystac, odc-stac, stackstac and stac-geoparquet."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pystac
import pytest
import rasterio
import shapely
from pystac.extensions.file import FileExtension
from pystac.extensions.projection import ProjectionExtension

import taco_gdal
from taco_gdal.io.vsi import read_all
from tests.support.datasets import write_dataset


def _pixels(href: str) -> np.ndarray:
    with rasterio.open(href) as src:
        return src.read(1)


def test_items_carry_proj_file_time_and_footprint(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    items = ds.to_stac()
    rows = ds.to_arrow().to_pylist()
    frame = ds.data
    assert isinstance(items, pystac.ItemCollection)
    assert [i.id for i in items] == [r["id"] for r in rows]
    for item, row, footprint in zip(items, rows, frame.geometry, strict=True):
        asset = item.assets["data"]
        proj = ProjectionExtension.ext(asset)
        assert proj.code == row["stac:crs"]
        assert proj.shape == row["stac:tensor_shape"][-2:]
        gt = row["stac:geotransform"]
        assert proj.transform == [gt[1], gt[2], gt[0], gt[4], gt[5], gt[3]]
        data = read_all(asset.href)
        assert FileExtension.ext(asset).size == len(data)
        assert FileExtension.ext(asset).checksum == "1220" + hashlib.sha256(data).hexdigest()
        assert item.datetime is not None
        assert item.datetime.replace(tzinfo=None) == row["stac:time_start"]
        assert shapely.geometry.shape(item.geometry).equals(footprint)
        assert item.bbox == list(footprint.bounds)
    assert len({i.properties["proj:code"] if "proj:code" in i.properties else
                i.assets["data"].extra_fields["proj:code"] for i in items}) == 2  # fmt: skip


def test_filters_and_collection(mixed: Path) -> None:
    ds = taco_gdal.load(mixed).filter_datetime("2023-03-10/2023-03-31")
    assert [i.id for i in ds.to_stac()] == ds.data.id.tolist() == ["geo_0", "geo_1"]
    collection = ds.to_stac_collection()
    assert (collection.id, collection.license, collection.keywords) == (
        "mixed",
        "CC-BY-4.0",
        ["stac"],
    )
    assert collection.extent.spatial.bboxes[0] == taco_gdal.load(mixed).extent["spatial"]


# odc-geo 0.5.3 calls shapely.ops.transform, which shapely 2.2 deprecates
@pytest.mark.filterwarnings("ignore:The 'shapely.ops.transform:DeprecationWarning")
def test_odc_stac_load_equals_rasterio(mixed: Path) -> None:
    import odc.stac

    items = list(taco_gdal.load(mixed).to_stac())
    for crs, resolution in (("EPSG:32630", 30.0), ("EPSG:4326", 0.0005)):
        chosen = [i for i in items if i.assets["data"].extra_fields["proj:code"] == crs]
        loaded = odc.stac.load(
            chosen, bands=["data"], crs=crs, resolution=resolution, anchor="floating",
            groupby="id",
        )  # fmt: skip
        assert loaded.data.shape[0] == len(chosen) == 2
        for index, item in enumerate(chosen):
            expected = _pixels(item.assets["data"].href)
            with rasterio.open(item.assets["data"].href) as src:
                west, south, east, north = src.bounds
            ydim, xdim = loaded.odc.spatial_dims
            window = {xdim: slice(west, east), ydim: slice(north, south)}
            sliced = loaded.data.isel(time=index).sel(window).values
            np.testing.assert_array_equal(sliced, expected)


def test_stackstac_equals_rasterio(mixed: Path) -> None:
    import stackstac

    items = [i for i in taco_gdal.load(mixed).to_stac()
             if i.assets["data"].extra_fields["proj:code"] == "EPSG:32630"]  # fmt: skip
    with rasterio.open(items[0].assets["data"].href) as first:
        west, north = first.bounds.left, first.bounds.top
    with rasterio.open(items[-1].assets["data"].href) as last:
        east, south = last.bounds.right, last.bounds.bottom
    stack = stackstac.stack(
        [i.to_dict() for i in items], assets=["data"], epsg=32630, resolution=30.0,
        bounds=(west, south, east, north), snap_bounds=False, dtype="float64", rescale=False,
        fill_value=np.nan,
    ).compute()  # fmt: skip
    for index, item in enumerate(items):
        expected = _pixels(item.assets["data"].href)
        with rasterio.open(item.assets["data"].href) as src:
            left, bottom, right, top = src.bounds
        half = 15.0  # stackstac's coordinates are pixel corners: stop half a pixel early
        window = {"x": slice(left, right - half), "y": slice(top, bottom + half)}
        got = stack.isel(time=index, band=0).sel(window)
        np.testing.assert_array_equal(got.values, expected.astype("float64"))


def test_geoparquet_reads_back_into_the_same_items(mixed: Path, tmp_path: Path) -> None:
    from stac_geoparquet.arrow import stac_table_to_items

    ds = taco_gdal.load(mixed)
    path = ds.to_stac_geoparquet(tmp_path / "items.parquet")
    back = [pystac.Item.from_dict(d) for d in stac_table_to_items(pq.read_table(path))]
    for original, read in zip(ds.to_stac(), back, strict=True):
        assert read.id == original.id
        assert read.datetime == original.datetime
        assert shapely.geometry.shape(read.geometry).equals(
            shapely.geometry.shape(original.geometry)
        )
        assert read.assets["data"].to_dict() == original.assets["data"].to_dict()
        assert read.bbox == original.bbox


def test_folder_items_url_hrefs_and_levels(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "2level", "zip"))
    items = ds.to_stac(href="url")
    children = ds.to_arrow(1).to_pylist()
    assert [i.id for i in items] == ["tile000", "tile001", "tile002"]
    first = items[0]
    assert sorted(first.assets) == ["b02", "b03", "b04"]
    container = Path(ds.path).read_bytes()
    for key, asset in first.assets.items():
        start, end = asset.extra_fields["archive:start"], asset.extra_fields["archive:end"]
        assert asset.href == ds.path
        assert container[start : end + 1] == read_all(ds.read("tile000").read(key))
    assert first.properties["start_datetime"].startswith("2023-01-01")
    assert first.properties["end_datetime"].startswith("2023-01-03")
    assert [i.id for i in ds.to_stac(level=1)][:3] == ["tile000/b02", "tile000/b03", "tile000/b04"]
    assert len(ds.to_stac(level=1)) == len(children)


@pytest.mark.parametrize("suffix", [".parquet", ".ndjson"])
def test_batches_with_different_columns_give_the_same_items(tmp_path: Path, suffix: str) -> None:
    from stac_geoparquet.arrow import stac_table_to_items

    from taco_gdal.read.interop.stac_files import write_stac

    flat = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=5))
    query = "SELECT * REPLACE (CASE WHEN id = 's000' THEN NULL ELSE cloud_cover END AS cloud_cover)"
    ds = flat.sql(f"{query} FROM data")
    expected = [i.to_dict() for i in ds.to_stac()]
    assert "cloud_cover" not in expected[0]["properties"]
    assert "cloud_cover" in expected[1]["properties"]
    path, count = write_stac(ds.state, tmp_path / f"items{suffix}", batch=1)
    if suffix == ".parquet":
        back = [
            pystac.Item.from_dict(d).to_dict() for d in stac_table_to_items(pq.read_table(path))
        ]
    else:
        back = [
            pystac.Item.from_dict(json.loads(line)).to_dict()
            for line in path.read_text().splitlines()
        ]
    assert count == len(back) == 5
    for read, original in zip(back, expected, strict=True):
        read["properties"] = {k: v for k, v in read["properties"].items() if v is not None}
        assert read["properties"] == original["properties"]
        assert read["assets"] == original["assets"]
        assert read["id"] == original["id"]


def test_footprint_across_the_antimeridian_is_cut(tmp_path: Path) -> None:
    from taco_gdal.model import Taco, Tortilla
    from tests.support.rasters import write_raster

    folder = tmp_path / "east"
    folder.mkdir()
    write_raster(folder / "dateline.tif", "EPSG:32660", 700_000.0, 100_000.0, 10_000.0, 1)
    taco = Taco(
        Tortilla(taco_gdal.samples_from_rasters(folder)), id="dateline",
        dataset_version="1.0.0", licenses=["CC-BY-4.0"], description="x",
        providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    ds = taco_gdal.load(taco_gdal.create(taco, tmp_path / "d.tacozip", quiet=True)[0])
    (item,) = ds.to_stac()
    geometry = shapely.geometry.shape(item.geometry)
    assert geometry.geom_type == "MultiPolygon"
    west, south, east, north = item.bbox
    assert west > east and 170 < west < 180 and -180 < east < -170
    assert geometry.equals(ds.data.geometry.iloc[0])
    assert (south, north) == (geometry.bounds[1], geometry.bounds[3])


def test_without_the_stac_extra_the_error_says_how_to_install(mixed: Path) -> None:
    code = f"""
        import sys
        import taco_gdal
        ds = taco_gdal.load({str(mixed)!r})
        ds.data
        assert "pystac" not in sys.modules, "pystac imported by load()"
        sys.modules["pystac"] = None  # what an environment without pystac looks like
        try:
            ds.to_stac()
        except ImportError as exc:
            from taco_gdal.errors import TacoDependencyError
            assert isinstance(exc, TacoDependencyError), type(exc)
            print(exc)
        else:
            raise SystemExit("exported without pystac")
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True, text=True
    )
    assert "pip install 'taco_gdal[stac]'" in out.stdout
