"""samples_from_stac: Items -> samples -> TACO, round trips both ways, HTTP catalogs, bad Items."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pystac
import pytest
import rasterio
import rasterio.warp
import shapely
from pystac.extensions.file import FileExtension
from pystac.extensions.projection import ProjectionExtension

import taco_gdal
from taco_gdal.errors import (
    TacoChecksumError,
    TacoFormatError,
    TacoPITError,
    TacoValidationError,
)
from taco_gdal.io.vsi import read_all
from taco_gdal.model import Taco, Tortilla
from taco_gdal.read.interop.stac_files import write_stac
from tests.support.datasets import write_dataset
from tests.support.rasters import raster_folder
from tests.support.servers.range_server import RangeServer

_COMPARED = ("id", "type", "stac:crs", "stac:tensor_shape", "stac:geotransform",
             "stac:time_start", "stac:time_end", "istac:crs", "istac:geometry",
             "istac:time_start", "istac:time_end", "taco_gdal:checksum")  # fmt: skip


def _write(samples: list[Any], out: Path) -> taco_gdal.TacoDataset:
    taco = Taco(
        Tortilla(samples), id="back", dataset_version="1.0.0", licenses=["CC-BY-4.0"],
        description="from STAC", providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    return taco_gdal.load(taco_gdal.create(taco, out, quiet=True, checksum="sha256")[0])


def _bytes(ds: taco_gdal.TacoDataset, level: int = 0) -> list[bytes]:
    return [read_all(p) for p in ds.frame(internal=True)["internal:gdal_vsi"]] if level == 0 \
        else []  # fmt: skip


@pytest.mark.parametrize("source", ["items", "json", "ndjson", "parquet"])
def test_taco_stac_taco_is_exact(mixed: Path, tmp_path: Path, source: str) -> None:
    ds = taco_gdal.load(mixed)
    items: Any = ds.to_stac()
    if source != "items":
        items = write_stac(ds.state, tmp_path / f"items.{source}")[0]
    back = _write(taco_gdal.samples_from_stac(items), tmp_path / "back.tacozip")
    original, copied = ds.to_arrow(), back.to_arrow()
    for column in _COMPARED:
        assert copied[column].equals(original[column]), column
    assert _bytes(back) == _bytes(ds)


def test_folder_items_round_trip(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "2level", "zip"))
    back = _write(taco_gdal.samples_from_stac(ds.to_stac(href="url")), tmp_path / "b.tacozip")
    assert back.to_arrow().column("id").to_pylist() == ds.to_arrow().column("id").to_pylist()
    original, copied = ds.to_arrow(1), back.to_arrow(1)
    for column in ("id", "stac:crs", "stac:geotransform", "stac:time_start"):
        assert copied[column].equals(original[column]), column
    for tile in ("tile000", "tile002"):
        for band in ("b02", "b03", "b04"):
            assert read_all(back.read(tile).read(band)) == read_all(ds.read(tile).read(band))


def _catalog(www: Path) -> pystac.Catalog:
    """A static catalog of the rasters in ``www``: one Item per raster, made with pystac."""
    catalog = pystac.Catalog("served", "rasters served over HTTP")
    for path in sorted(www.glob("*.tif")):
        with rasterio.open(path) as src:
            crs, transform, shape = src.crs.to_string(), src.transform, src.shape
            corners = [(0, 0), (src.width, 0), (src.width, src.height), (0, src.height)]
            xy = [src.transform * c for c in corners]
            lonlat = rasterio.warp.transform(src.crs, "EPSG:4326", *zip(*xy, strict=True))
            day = int(src.tags()["TIFFTAG_DATETIME"][8:10])
        polygon = shapely.geometry.polygon.orient(
            shapely.Polygon(list(zip(*lonlat, strict=True)))
        )  # RFC 7946
        item = pystac.Item(
            path.stem, json.loads(shapely.to_geojson(polygon)), list(polygon.bounds),
            datetime(2023, 3, day, 10, tzinfo=UTC), {"platform": "tests"},
        )  # fmt: skip
        data = path.read_bytes()
        asset = pystac.Asset(str(path), roles=["data"])  # saved relative to the Item
        item.add_asset("image", asset)
        proj = ProjectionExtension.ext(asset, add_if_missing=True)
        proj.code, proj.shape, proj.transform = crs, list(shape), list(transform)[:6]
        file = FileExtension.ext(asset, add_if_missing=True)
        file.size, file.checksum = len(data), "1220" + hashlib.sha256(data).hexdigest()
        catalog.add_item(item)
    return catalog


@pytest.mark.network
def test_from_static_catalog_over_http(tmp_path: Path) -> None:
    www = raster_folder(tmp_path)
    catalog = _catalog(www)
    catalog.normalize_hrefs(str(www))
    catalog.make_all_asset_hrefs_relative()
    catalog.save(pystac.CatalogType.SELF_CONTAINED)
    rasters = sorted(www.glob("*.tif"))
    with RangeServer(root=www) as server:
        server.log.clear()
        samples = taco_gdal.samples_from_stac(f"{server.url}/catalog.json")
        for raster in rasters:
            gets = server.log.count(path=raster.name, method="GET")
            assert gets == 1, server.log.describe()
    back = _write(samples, tmp_path / "served.tacozip")
    by_id = {s.id: s for s in samples}
    frame = back.frame(internal=True)
    for sample_id, path in zip(frame["id"], frame["internal:gdal_vsi"], strict=True):
        assert read_all(path) == (www / f"{sample_id}.tif").read_bytes()
    assert set(by_id) == {r.stem for r in rasters}
    originals = {i.id: i for i in catalog.get_items(recursive=True)}
    for item in back.to_stac():
        original = originals[item.id]
        assert item.datetime == original.datetime
        exported, given = item.assets["data"], original.assets["image"]
        for name in ("proj:code", "proj:shape", "proj:transform", "file:size", "file:checksum"):
            assert exported.extra_fields[name] == given.extra_fields[name], name
        assert item.geometry == original.geometry
        assert item.bbox == original.bbox
        assert item.properties["platform"] == "tests"
        assert read_all(exported.href) == (www / f"{item.id}.tif").read_bytes()


def _item(tmp_path: Path, **assets: dict[str, Any]) -> dict[str, Any]:
    raster = raster_folder(tmp_path, utm=1, lonlat=0) / "utm_0.tif"
    return {
        "type": "Feature", "stac_version": "1.1.0", "id": "one", "geometry": None,
        "properties": {"datetime": "2023-03-01T10:00:00Z"}, "links": [],
        "assets": {k: {"href": str(raster), **v} for k, v in assets.items()},
    }  # fmt: skip


def test_items_whose_assets_disagree_are_refused_by_name(tmp_path: Path) -> None:
    first = _item(tmp_path / "a", red={}, nir={})
    second = {**_item(tmp_path / "b", red={}), "id": "odd"}
    with pytest.raises(TacoPITError, match=r"Item 'odd'.*\['red', 'nir'\].*\['red'\]"):
        taco_gdal.samples_from_stac([first, second])


def test_missing_asset_and_bad_entries(tmp_path: Path) -> None:
    item = _item(tmp_path, red={})
    with pytest.raises(TacoValidationError, match=r"Item 'one'.*missing \['nir'\]"):
        taco_gdal.samples_from_stac([item], assets=["red", "nir"])
    with pytest.raises(TacoFormatError, match=r"entry 0: expected a STAC Item"):
        taco_gdal.samples_from_stac([{"type": "Collection"}])
    no_time = {**item, "properties": {}}
    with pytest.raises(TacoValidationError, match=r"Item 'one': expected datetime"):
        taco_gdal.samples_from_stac([no_time])
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "Thing"}')
    with pytest.raises(TacoFormatError, match=r"bad.json: expected a STAC ItemCollection"):
        taco_gdal.samples_from_stac(bad)


def test_size_and_checksum_mismatches(tmp_path: Path) -> None:
    item = _item(tmp_path, red={})
    data = Path(item["assets"]["red"]["href"]).read_bytes()
    item["assets"]["red"]["file:size"] = len(data) + 1
    with pytest.raises(TacoChecksumError, match=rf"asset 'one'.*says {len(data) + 1} bytes"):
        taco_gdal.samples_from_stac([item])
    item["assets"]["red"]["file:size"] = len(data)
    item["assets"]["red"]["file:checksum"] = "1220" + hashlib.sha256(b"other").hexdigest()
    with pytest.raises(TacoChecksumError, match=r"file:checksum says 1220"):
        taco_gdal.samples_from_stac([item])
    item["assets"]["red"]["file:checksum"] = "1220" + hashlib.sha256(data).hexdigest()
    with rasterio.open(item["assets"]["red"]["href"]) as src:
        grid = {"proj:code": "EPSG:32630", "proj:shape": list(src.shape),
                "proj:transform": list(src.transform)[:6]}  # fmt: skip
        expected = (list(src.transform.to_gdal()), [src.count, *src.shape])
    item["assets"]["red"].update(grid)
    (sample,) = taco_gdal.samples_from_stac([item])
    assert sample.type == "FILE" and sample["stac:crs"] == "EPSG:32630"
    assert (sample["stac:geotransform"], sample["stac:tensor_shape"]) == expected
    assert sample["istac:crs"] == "EPSG:32630"  # no Item geometry: the grid's outline


@pytest.mark.network
def test_assets_on_s3_are_fetched_once_each(tmp_path: Path) -> None:
    from tests.support.servers.s3 import S3Emulator

    rasters = sorted(raster_folder(tmp_path).glob("*.tif"))
    items = [i.to_dict() for i in _catalog(rasters[0].parent).get_items()]
    with S3Emulator() as s3:
        for item, raster in zip(items, rasters, strict=True):
            item["assets"]["image"]["href"] = s3.upload(raster, "assets")
        s3.server.log.clear()
        with taco_gdal.Env(**s3.gdal_options()):
            samples = taco_gdal.samples_from_stac(items)
        for raster in rasters:
            assert s3.server.log.count(path=raster.name, method="GET") == 1, (
                s3.server.log.describe()
            )
    back = _write(samples, tmp_path / "s3.tacozip")
    frame = back.frame(internal=True)
    for sample_id, path in zip(frame["id"], frame["internal:gdal_vsi"], strict=True):
        assert read_all(path) == (rasters[0].parent / f"{sample_id}.tif").read_bytes()


@pytest.mark.parametrize(("algorithm", "prefix"), [("xxh3", "e3e70208"), ("crc32c", None)])
def test_digests_as_multihash(tmp_path: Path, algorithm: str, prefix: str | None) -> None:
    from tests.integration.interop.conftest import make_mixed

    ds = taco_gdal.load(make_mixed(tmp_path, checksum=algorithm))
    stored = ds.to_arrow().column("taco_gdal:checksum").to_pylist()
    items = ds.to_stac()
    for item, digest in zip(items, stored, strict=True):
        value = item.assets["data"].extra_fields.get("file:checksum")
        # CRC-32C has no multicodec code: no file:checksum rather than a wrong one
        assert value == (None if prefix is None else prefix + digest.split(":")[1])
    item = items[0].to_dict()
    if prefix is not None:  # a wrong digest of the same algorithm is caught on the way in
        item["assets"]["data"]["file:checksum"] = prefix + "0" * 16
        with pytest.raises(TacoChecksumError, match=r"\(xxh3\)"):
            taco_gdal.samples_from_stac([item])


def test_grid_only_samples_keep_their_grid_outline(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip"))  # stac:* columns, no istac
    items = ds.to_stac()
    back = _write(taco_gdal.samples_from_stac(items), tmp_path / "b.tacozip")
    original, copied = ds.to_arrow(), back.to_arrow()
    for column in ("id", "stac:crs", "stac:geotransform", "stac:tensor_shape", "stac:time_start"):
        assert copied[column].equals(original[column]), column
    assert copied["istac:crs"].to_pylist() == original["stac:crs"].to_pylist()
    again = back.to_stac()
    assert [i.geometry for i in again] == [i.geometry for i in items]
    assert [i.bbox for i in again] == [i.bbox for i in items]


@pytest.mark.network
def test_from_a_pystac_client_search(tmp_path: Path) -> None:
    from pystac_client import Client

    www = raster_folder(tmp_path)
    with RangeServer(root=www) as server:
        items = [i.to_dict() for i in _catalog(www).get_items()]
        for item in items:  # as an API answers: absolute hrefs, no catalog links
            asset = item["assets"]["image"]
            asset["href"] = f"{server.url}/{Path(asset['href']).name}"
            item["links"] = []
        conforms = ["https://api.stacspec.org/v1.0.0/core",
                    "https://api.stacspec.org/v1.0.0/item-search"]  # fmt: skip
        links = [
            {"rel": "self", "href": f"{server.url}/api.json"},
            {"rel": "root", "href": f"{server.url}/api.json"},
            {"rel": "search", "href": f"{server.url}/search", "method": "GET",
             "type": "application/geo+json"},
        ]  # fmt: skip
        landing = {"type": "Catalog", "id": "api", "stac_version": "1.1.0",
                   "description": "static", "conformsTo": conforms, "links": links}  # fmt: skip
        (www / "api.json").write_text(json.dumps(landing))
        (www / "search").write_text(json.dumps({"type": "FeatureCollection", "features": items}))
        search = Client.open(f"{server.url}/api.json").search(method="GET", max_items=10)
        samples = taco_gdal.samples_from_stac(search.items())
        again = taco_gdal.samples_from_stac(search)  # the search itself works too
    assert [s.id for s in samples] == [s.id for s in again] == [i["id"] for i in items]
    back = _write(samples, tmp_path / "searched.tacozip")
    frame = back.frame(internal=True)
    for sample_id, path in zip(frame["id"], frame["internal:gdal_vsi"], strict=True):
        assert read_all(path) == (www / f"{sample_id}.tif").read_bytes()


def test_rasters_with_and_without_nodata_round_trip(tmp_path: Path) -> None:
    """taco_gdal:data_type / taco_gdal:nodata describe the asset's file, not the Item: they
    stay out of the properties, so Items of rasters with and without nodata import alike."""
    import numpy as np
    from rasterio.transform import from_origin

    src = tmp_path / "src"
    src.mkdir()
    for k, nodata in enumerate([None, 0]):
        profile = {
            "driver": "GTiff",
            "width": 4,
            "height": 4,
            "count": 1,
            "dtype": "uint16",
            "crs": "EPSG:32630",
            "transform": from_origin(500_000 + 40 * k, 4e6, 10, 10),
        }
        with rasterio.open(src / f"r{k}.tif", "w", nodata=nodata, **profile) as dst:
            dst.write(np.full((1, 4, 4), k + 1, np.uint16))
    ds = _write(taco_gdal.samples_from_rasters(src, time=datetime(2024, 1, 1)), tmp_path / "a")
    assert ds.data["taco_gdal:nodata"].isna().tolist() == [True, False]
    items = ds.to_stac()
    assert not [key for item in items for key in item.properties if key.startswith("taco_gdal")]
    back = _write(taco_gdal.samples_from_stac(items), tmp_path / "b")
    assert _bytes(back) == _bytes(ds)
