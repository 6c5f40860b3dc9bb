"""``taco stac`` and ``taco create --from-stac`` through the installed ``taco``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from stac_geoparquet.arrow import stac_table_to_items

import taco_gdal
from taco_gdal.format.names import GDAL_VSI, ID
from taco_gdal.io.vsi import read_all
from tests.cli.conftest import taco


@pytest.mark.parametrize("suffix", [".json", ".ndjson", ".parquet"])
def test_stac_writes_every_format(datasets: dict[str, Path], tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"items{suffix}"
    document = taco("stac", datasets["2level"], out, "--json").json("written")
    assert document == {"written": [str(out)], "samples": 3}
    if suffix == ".json":
        ids = [f["id"] for f in json.loads(out.read_text())["features"]]
    elif suffix == ".ndjson":
        ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    else:
        ids = [i["id"] for i in stac_table_to_items(pq.read_table(out))]
    assert ids == taco_gdal.load(datasets["2level"]).data.id.tolist()


def test_stac_selection_level_and_overwrite(datasets: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "items.ndjson"
    ds = taco_gdal.load(datasets["flat"])
    box = "-3.70,40.38,-3.64,40.43"
    expected = ds.filter_bbox(*(float(v) for v in box.split(","))).data.id.tolist()
    assert taco("stac", datasets["flat"], out, "--bbox", box, "-q").out.strip() == str(out)
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == expected
    again = taco("stac", datasets["flat"], out, check=False)
    assert again.code == 2 and "--overwrite" in again.err
    taco("stac", datasets["2level"], out, "--level", "1", "--where", "split = 'train'",
         "--overwrite")  # fmt: skip
    level1 = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    train = taco_gdal.load(datasets["2level"]).sql("SELECT * FROM data WHERE split = 'train'")
    assert level1 == [f"{t}/{b}" for t in train.data.id for b in ("b02", "b03", "b04")]
    bad = taco("stac", datasets["flat"], tmp_path / "items.txt", check=False)
    assert bad.code == 1 and ".parquet" in bad.err


def test_create_from_stac_round_trip(datasets: dict[str, Path], tmp_path: Path) -> None:
    items = tmp_path / "items.parquet"
    taco("stac", datasets["2level"], items)
    out = tmp_path / "back.tacozip"
    document = taco("create", "--from-stac", items, out, "--assets", "b02,b04", "--json")
    assert document.json("written")["samples"] == 3
    original, back = taco_gdal.load(datasets["2level"]), taco_gdal.load(out)
    assert back.data.id.tolist() == original.data.id.tolist()
    for tile in back.data.id:
        children = back.read(tile)
        assert children[ID].tolist() == ["b02", "b04"]
        for band, path in zip(children[ID], children[GDAL_VSI], strict=True):
            assert read_all(path) == read_all(original.read(tile).read(band))
    missing = taco("create", "--from-stac", items, tmp_path / "x.tacozip", "--assets", "nir",
                   check=False)  # fmt: skip
    assert missing.code == 1 and "missing ['nir']" in missing.err
    no_flag = taco("create", items, tmp_path / "y.tacozip", "--assets", "b02", check=False)
    assert no_flag.code == 2 and "--from-stac" in no_flag.err
