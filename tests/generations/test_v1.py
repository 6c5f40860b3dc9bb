"""TACO v1 (``.taco`` by tacotoolbox 0.5.2, ``.tortilla`` by pytortilla 0.5.1) read by taco_gdal.

Compared with what tacoreader 0.6.5 returned on the same files
(``golden/v1/tacoreader_view.json``): ids and order, every v1 column, the
``/vsisubfile/`` range of every sample (tacoreader's ``internal:subfile``) and the
SHA-256 of its bytes; embedded tortillas against tacoreader's ``read(i)``.
Differences, on purpose:

* ``stac:centroid``: WKT text in v1, a WKB point in taco_gdal (TACO 2's type),
  the same point; ``stac:time_start`` / ``stac:time_end``: epoch seconds (float)
  in v1, UTC timestamps in taco_gdal, the same instant.  Both so that
  ``filter_bbox`` / ``filter_datetime`` work as on v2.
* A ``TORTILLA`` sample is a FOLDER row whose GDAL path is null (its children
  are level 1); tacoreader gives the embedded tortilla's range, which taco_gdal
  keeps in ``internal:offset`` / ``internal:size``.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
import shapely

import taco_gdal
from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import FOLDER, GDAL_VSI, ID, OFFSET, SIZE, TYPE
from taco_gdal.io.vsi import read_all
from tests.generations.conftest import GOLDEN, golden

FILES = ("v1_flat.taco", "v1_flat.tortilla", "v1_nested.taco")


@pytest.fixture(scope="module")
def reader_view() -> dict[str, Any]:
    views: dict[str, Any] = json.loads(golden("v1/tacoreader_view.json").read_text())["views"]
    return views


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _check_rows(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    assert [r[ID] for r in ours] == [r["tortilla:id"] for r in theirs]
    for mine, expected in zip(ours, theirs, strict=True):
        for column, value in expected.items():
            if column in ("internal:subfile", "sha256"):
                continue
            if column == "stac:centroid":  # WKT -> WKB point (see module doc)
                assert shapely.from_wkb(mine[column]).equals(shapely.from_wkt(value))
            elif column in ("stac:time_start", "stac:time_end") and value is not None:
                assert mine[column].timestamp() == value  # epoch seconds -> timestamp
            else:
                assert _plain(mine[column]) == value, column
        offset, size = expected["internal:subfile"][len("/vsisubfile/") :].split(",")[0].split("_")
        assert (mine[OFFSET], mine[SIZE]) == (int(offset), int(size))
        if mine[TYPE] == FOLDER:
            assert mine[GDAL_VSI] is None
            continue
        container = GOLDEN / "v1" / expected["internal:subfile"].split(",", 1)[1]
        assert mine[GDAL_VSI] == f"/vsisubfile/{offset}_{size},{container}"
        assert hashlib.sha256(read_all(mine[GDAL_VSI])).hexdigest() == expected["sha256"]


@pytest.mark.parametrize("name", FILES)
def test_rows_and_bytes_match_tacoreader_06(name: str, reader_view: dict[str, Any]) -> None:
    view = reader_view[name]
    ds = taco_gdal.load(golden(f"v1/{name}"))
    assert ds.format == "taco_v1"
    _check_rows(ds.to_arrow(0).to_pylist(), view["rows"])
    for parent, rows in view["children"].items():
        children = ds.read(parent)
        assert isinstance(children, taco_gdal.TacoDataFrame)
        level1 = ds.to_arrow(1).to_pylist()
        _check_rows(
            [
                r
                for r in level1
                if r[ID] in set(children[ID])
                and r["tortilla:offset"] in set(children["tortilla:offset"])
            ],
            rows,
        )


def test_collection_is_carried(reader_view: dict[str, Any]) -> None:
    ds = taco_gdal.load(golden("v1/v1_flat.taco"))
    stored = reader_view["v1_flat.taco"]["collection"]
    for key in ("id", "dataset_version", "description", "licenses", "extent"):
        assert ds.collection[key] == stored[key]
    assert ds.collection["tasks"] == [stored["task"]]
    assert ds.collection["taco_gdal:source"] == {
        "generation": "v1",
        "format": "taco",
        "taco_version": "0.4.0",
    }


def test_tortilla_gets_a_derived_collection() -> None:
    ds = taco_gdal.load(golden("v1/v1_flat.tortilla"))
    assert ds.collection["id"] == "v1_flat"
    assert ds.collection["taco_gdal:source"]["format"] == "tortilla"


def test_navigation_of_embedded_tortillas() -> None:
    ds = taco_gdal.load(golden("v1/v1_nested.taco"))
    assert ds.max_depth == 1
    children = ds.read("roi_1")
    assert isinstance(children, taco_gdal.TacoDataFrame)
    assert list(children[ID]) == ["band_0", "band_1", "band_2"]
    path = children.read("band_2")
    assert isinstance(path, str)
    import rasterio

    with rasterio.open(path) as src:
        assert src.read().shape == (1, 8, 8)


def test_filters_agree_with_pandas_and_shapely(reader_view: dict[str, Any]) -> None:
    import pandas as pd

    rows = reader_view["v1_flat.taco"]["rows"]
    ids = pd.Series([r["tortilla:id"] for r in rows])
    times = pd.to_datetime(pd.Series([r["stac:time_start"] for r in rows]), unit="s", utc=True)
    expected = sorted(ids[times >= pd.Timestamp("2019-02-01", tz="UTC")])
    ds = taco_gdal.load(golden("v1/v1_flat.taco"))
    got = ds.filter_datetime("2019-02-01/..", time_col="stac:time_start").data
    assert sorted(got[ID]) == expected == ["tile_1", "tile_2"]
    points = shapely.from_wkt([r["stac:centroid"] for r in rows])
    for box in [(-2.5, 40.5, -1.5, 41.5), (-3.5, 39.5, -0.5, 41.5)]:
        truth = sorted(ids[shapely.intersects(points, shapely.box(*box))])
        assert sorted(ds.filter_bbox(*box).data[ID]) == truth


def test_a_truncated_file_is_a_format_error(tmp_path: Path) -> None:
    target = tmp_path / "cut.taco"
    target.write_bytes(golden("v1/v1_flat.taco").read_bytes()[:5000])
    with pytest.raises(TacoFormatError, match="past the"):
        taco_gdal.load(target)


def test_remote_v1_metadata_in_two_reads() -> None:
    from tests.support.servers.range_server import RangeServer

    with RangeServer(root=golden("v1/v1_flat.taco").parent) as server:
        ds = taco_gdal.load(f"{server.url}/v1_flat.taco")
        # the probe (header), then footer + COLLECTION in one range; this 10 KB file
        # fits in GDAL's first block, so GDAL may serve both from one GET
        assert server.log.count("/v1_flat.taco", "GET") <= 2, server.log.describe()
        path = str(ds.data["internal:gdal_vsi"].iloc[1])
        assert path.startswith("/vsisubfile/630_430,/vsicurl/http://127.0.0.1")
        assert read_all(path) == read_all(
            str(taco_gdal.load(golden("v1/v1_flat.taco")).data["internal:gdal_vsi"].iloc[1])
        )


@pytest.mark.parametrize("name", ["v1/v1_nested.taco", "v3/v3_nested.zip", "v3/v3_tacocat"])
def test_datasets_of_other_generations_pickle(name: str) -> None:
    import pickle

    ds = taco_gdal.load(golden(name))
    again = pickle.loads(pickle.dumps(ds))
    assert again.format == ds.format
    assert again.to_arrow(1).equals(ds.to_arrow(1))
