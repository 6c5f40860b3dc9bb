"""create, export, convert, cat, validate, verify through the installed ``taco``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.format.names import CHECKSUM, GDAL_VSI, ID, ISTAC_GEOMETRY, STAC_CRS
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.rasters import samples_from_rasters
from tests.cli.conftest import taco
from tests.support.rasters import raster_folder


def _ids(path: Path | str, level: int = 0) -> list[str]:
    return [str(v) for v in taco_gdal.load(path).to_arrow(level).column(ID).to_pylist()]


def test_create_from_a_folder_of_rasters(tmp_path: Path) -> None:
    folder = raster_folder(tmp_path)
    out = tmp_path / "tiles.tacozip"
    document = taco("create", folder, out, "--license", "CC-BY-4.0", "--json").json("written")
    assert document == {"written": [str(out)], "samples": 4}
    ds = taco_gdal.load(out)
    assert ds.id == "tiles" and ds.licenses == ["CC-BY-4.0"]
    assert _ids(out) == [s.id for s in samples_from_rasters(folder)]
    table = ds.to_arrow(0)
    assert set(table.column(STAC_CRS).to_pylist()) == {"EPSG:32630", "EPSG:4326"}
    assert ISTAC_GEOMETRY in table.column_names  # footprints read from the rasters


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_create_from_a_table(tmp_path: Path, suffix: str) -> None:
    folder = raster_folder(tmp_path, utm=1, lonlat=2)
    table = pa.table(
        {
            "path": ["rasters/geo_0.tif", "rasters/geo_1.tif", str(folder / "utm_0.tif")],
            "id": ["a", "b", "c"],
            "label": ["water", "forest", "urban"],
        }
    )
    table_path = tmp_path / f"samples{suffix}"
    if suffix == ".csv":
        pacsv.write_csv(table, table_path)
    else:
        pq.write_table(table, table_path)
    out = tmp_path / "from_table.tacozip"
    assert taco("create", table_path, out, "--id", "from_table").out.strip() == str(out)
    ds = taco_gdal.load(out)
    rows = ds.to_arrow(0)
    assert rows.column(ID).to_pylist() == ["a", "b", "c"]
    assert rows.column("label").to_pylist() == ["water", "forest", "urban"]
    assert rows.column(STAC_CRS).to_pylist() == ["EPSG:4326", "EPSG:4326", "EPSG:32630"]
    with open(folder / "geo_1.tif", "rb") as f:
        original = f.read()
    with taco_gdal.open_sample(ds.read("b")) as src:  # bytes copied as they were
        assert src.width == 20
    location = parse_subfile(ds.read("b"))
    with open(location.container, "rb") as f:
        f.seek(location.offset)
        assert f.read(location.size) == original


def test_export_with_filters_and_overwrite(datasets: dict[str, Path], tmp_path: Path) -> None:
    source = datasets["2level"]
    out = tmp_path / "train.tacozip"
    args = ("export", source, out, "--where", "split <> 'test'", "--level", "1", "--bbox")
    box = "-3.75,40.3,-3.5,40.46"
    document = taco(*args, box, "--json").json("written")
    expected = (
        taco_gdal.load(source)
        .sql("SELECT * FROM data WHERE split <> 'test'")
        .filter_bbox(-3.75, 40.3, -3.5, 40.46, level=1)
    )
    assert _ids(out) == expected.to_arrow(0).column(ID).to_pylist() == ["tile000", "tile001"]
    assert document["samples"] == 2
    assert len(_ids(out, 1)) == 6  # whole subtrees
    again = taco(*args, box, check=False)
    assert again.code == 2 and "--overwrite" in again.err and str(out) in again.err
    taco(*args, box, "--overwrite")


def test_convert_zip_folder_zip_and_caf(datasets: dict[str, Path], tmp_path: Path) -> None:
    from taco_caf import write_caf

    source = datasets["2level"]
    folder = tmp_path / "as_folder"
    assert taco("convert", source, folder, "--json").json("written")["from"] == "zip"
    back = tmp_path / "back.tacozip"
    taco("convert", folder, back)
    assert _ids(folder, 1) == _ids(back, 1) == _ids(source, 1)
    assert taco_gdal.load(folder).format == "folder"
    rasters = raster_folder(tmp_path, utm=1, lonlat=1)
    caf = write_caf(sorted(rasters.glob("*.tif")), tmp_path / "tiles.caf")
    converted = tmp_path / "tiles.tacozip"
    taco("convert", caf, converted, "--id", "tiles")
    ds = taco_gdal.load(converted)
    assert ds.id == "tiles" and ds.format == "zip"
    assert sorted(_ids(converted)) == ["geo_0.tif", "utm_0.tif"]


def test_convert_taridx_shards_to_taco(tmp_path: Path) -> None:
    import tarfile

    from taco_taridx import write_taridx

    rasters = sorted(raster_folder(tmp_path, utm=1, lonlat=1).glob("*.tif"))
    shard = tmp_path / "train.tar"
    with tarfile.open(shard, "w", format=tarfile.USTAR_FORMAT) as tar:
        for raster in rasters:
            tar.add(raster, arcname=f"{raster.stem}.tif")
    index_path = write_taridx(shard, tmp_path / "train.taridx")
    out = tmp_path / "train.tacozip"
    assert taco("convert", index_path, out, "--json").json("written")["from"] == "taridx"
    converted = taco_gdal.load(out)
    assert sorted(converted.to_arrow(0).column("member").to_pylist()) == sorted(
        r.name for r in rasters
    )
    with taco_gdal.open_sample(converted.read(0)) as src:
        assert src.crs is not None and src.width == 20


def test_cat_makes_a_tacocat_of_parts(datasets: dict[str, Path], tmp_path: Path) -> None:
    parts = sorted(datasets["tacocat"].parent.glob("*.tacozip"))
    copies = [Path(shutil.copy(p, tmp_path / p.name)) for p in parts]
    written = taco("cat", *copies, tmp_path, "--json").json("written")
    assert written["written"] == [str(tmp_path / ".tacocat"), str(tmp_path / "__TACOCAT__")]
    cat = taco_gdal.load(tmp_path / ".tacocat")
    assert cat.format == "tacocat"
    assert _ids(tmp_path / ".tacocat", 1) == _ids(datasets["tacocat"], 1)
    assert {parse_subfile(v).container for v in cat.to_arrow(1).column(GDAL_VSI).to_pylist()} == {
        str(c) for c in copies
    }


def test_validate_and_verify_report_as_json(datasets: dict[str, Path], tmp_path: Path) -> None:
    source = datasets["flat"]
    assert taco("validate", source, "--json").json("report")["ok"] is True
    assert taco("verify", source, "--level", "full", "--json").json("report")["ok"] is True
    broken = tmp_path / "broken.tacozip"
    shutil.copy(source, broken)
    sample = parse_subfile(taco_gdal.load(broken).read(1))
    with open(broken, "r+b") as f:
        f.seek(sample.offset + sample.size // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    failed = taco("verify", broken, "--json", check=False)
    assert failed.code == 1
    report = failed.json("report")
    assert report["ok"] is False and report["failures"]
    assert any("CRC" in f["code"] for f in report["failures"])
    text = taco("verify", broken, check=False)
    assert text.code == 1 and text.out.startswith(f"verify {broken}: ")


def test_create_and_export_store_digests_that_verify_checks(
    datasets: dict[str, Path], tmp_path: Path
) -> None:
    folder = raster_folder(tmp_path)
    out = tmp_path / "digested.tacozip"
    taco("create", folder, out, "--checksum", "sha256")
    ds = taco_gdal.load(out)
    rows = ds.to_arrow(0)
    for sample_id, stored in zip(
        rows.column(ID).to_pylist(), rows.column(CHECKSUM).to_pylist(), strict=True
    ):
        with open(folder / f"{sample_id}.tif", "rb") as f:
            assert stored == f"sha256:{hashlib.sha256(f.read()).hexdigest()}"
    assert taco("verify", out, "--level", "full", "--json").json("report")["ok"] is True
    sample = parse_subfile(ds.read(1))
    with open(out, "r+b") as f:  # one byte of the second sample, flipped
        f.seek(sample.offset + sample.size // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    failed = taco("verify", out, "--level", "full", "--json", check=False)
    assert failed.code == 1
    hashes = [f for f in failed.json("report")["failures"] if f["code"] == "HASH_MISMATCH"]
    assert len(hashes) == 1 and rows.column(ID)[1].as_py() in json.dumps(hashes[0])

    exported = tmp_path / "exported.tacozip"
    taco("export", datasets["flat"], exported, "--checksum", "xxh3")
    assert all(
        value.startswith("xxh3:")
        for value in taco_gdal.load(exported).to_arrow(0).column(CHECKSUM).to_pylist()
    )
    refused = taco("create", folder, tmp_path / "md5.tacozip", "--checksum", "md5", check=False)
    assert refused.code == 2 and "'md5' is not one of 'crc32c', 'xxh3', 'sha256'" in refused.err


def test_create_with_stats_feeds_the_stats_methods(tmp_path: Path) -> None:
    folder = raster_folder(tmp_path)  # every raster: values 20..219, each twice
    out = tmp_path / "stats.tacozip"
    taco("create", folder, out, "--stats")
    ds = taco_gdal.load(out)
    assert "geotiff:stats" in ds.to_arrow(0).column_names
    assert ds.stats_mean().tolist() == pytest.approx([119.5])
    assert ds.stats_min().tolist() == [20.0] and ds.stats_max().tolist() == [219.0]
    assert "taco_gdal:stats_sketch" in ds.to_arrow(0).column_names
    pixels = np.arange(20, 220)  # every value as often as any other, in every raster
    result = ds.stats(band=0, q=(10, 90))
    assert result.rank_error is not None
    for q, value in zip(result.q, result.percentiles, strict=True):
        below, at_or_below = np.mean(pixels < value), np.mean(pixels <= value)
        assert below - result.rank_error <= q / 100 <= at_or_below + result.rank_error
    assert taco_gdal.validate(out).ok
    classes = tmp_path / "classes.tacozip"
    taco("create", folder, classes, "--stats", "--stats-classes", "20,21,5")
    fractions = taco_gdal.load(classes).stats_categorical()
    assert fractions.shape == (1, 3)
    assert fractions[0].tolist() == pytest.approx([0.005, 0.005, 0.0])


def test_create_stats_classes_need_stats_and_integers(tmp_path: Path) -> None:
    folder = raster_folder(tmp_path, utm=0, lonlat=1)
    alone = taco("create", folder, tmp_path / "a.tacozip", "--stats-classes", "1,2", check=False)
    assert alone.code == 2 and "needs --stats" in alone.err
    bad = taco(
        "create", folder, tmp_path / "b.tacozip", "--stats", "--stats-classes", "x", check=False
    )
    assert bad.code == 2 and "comma-separated integer class values" in bad.err
