"""TACO 3.0.0 (CoZIP profile 2) and CoZIP flat archives written by taco-eo, read by taco_gdal.

Every fixture is compared with what taco-eo 0.14.2's own reader returned on the
same file (``golden/v3/taco_eo_view.json``, dumped when the fixtures were made):
sample ids and order, every file's byte range and the SHA-256 of its bytes, and
every metadata value.  Where taco_gdal deliberately shows something else, the
test says which and why:

* ``stac:centroid``: taco-eo stores ``struct<lon: float32, lat: float32>``;
  taco_gdal shows a WKB point (TACO 2's type for that column) with the same
  coordinates, so bounding-box filters work as on v2.
* ``id`` below the sample level: taco-eo has none (rows are positions); taco_gdal
  adds the file or folder name, so ``read("before")`` navigates as on v2.
* Variable leaves (``img*[1,4].tif``): taco-eo's wide read gives one list of
  locations; taco_gdal keeps one FILE row per member at level 1 and adds a list
  column named by the declaration holding the members' names.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import shutil
import struct
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import shapely

import taco_gdal
from taco_gdal.errors import TacoFormatError, TacoWarning
from taco_gdal.format.names import CURRENT_ID, FILE, GDAL_VSI, ID, RELATIVE_PATH, SOURCE_FILE, TYPE
from taco_gdal.io.vsi import read_all
from tests.generations.conftest import GOLDEN, golden

ARCHIVES = ("v3_flat.zip", "v3_nested.zip", "v3_sequence.zip", "v3_tacocat/.tacocat")


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode()}
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def _levels(ds: taco_gdal.TacoDataset) -> list[list[dict[str, Any]]]:
    return [ds.to_arrow(k).to_pylist() for k in range(ds.max_depth + 1)]


def _load(name: str) -> taco_gdal.TacoDataset:
    return taco_gdal.load(golden(f"v3/{name}"))


@pytest.mark.parametrize("name", ARCHIVES)
def test_samples_files_and_bytes_match_taco_eo(name: str, taco_eo_view: dict[str, Any]) -> None:
    view = taco_eo_view[name]
    ds = _load(name)
    levels = _levels(ds)
    assert [row[ID] for row in levels[0]] == [s["id"] for s in view["samples"]]
    files = {
        (row.get(SOURCE_FILE), row[RELATIVE_PATH]): row
        for level in levels[1:]
        for row in level
        if row[TYPE] == FILE
    }
    seen = 0
    for sample, row in zip(view["samples"], levels[0], strict=True):
        for leaf, where in sample["files"].items():
            if isinstance(where, list):  # a variable leaf: members in index order
                (declaration,) = [c for c in row if c.startswith(leaf + "*[")]
                members = list(zip(row[declaration], where, strict=True))
            else:
                members = [(leaf, where)]
            for inside, expected in members:
                ours = files[(row.get(SOURCE_FILE), f"{row[RELATIVE_PATH]}/{inside}")]
                container = GOLDEN / "v3" / expected["container"]
                assert ours[GDAL_VSI] == (
                    f"/vsisubfile/{expected['offset']}_{expected['size']},{container}"
                )
                data = read_all(ours[GDAL_VSI])
                assert hashlib.sha256(data).hexdigest() == expected["sha256"]
                seen += 1
    assert seen == len(files)  # no FILE row that taco-eo does not show


@pytest.mark.parametrize("name", ARCHIVES)
def test_metadata_values_match_taco_eo(name: str, taco_eo_view: dict[str, Any]) -> None:
    view = taco_eo_view[name]
    levels = _levels(_load(name))
    stored = {"sample": 0, "children": 1}
    for level_name, rows in view["levels"].items():
        depth = stored.get(level_name, level_name.count("/") + 1)
        key = ID if depth == 0 else RELATIVE_PATH
        ours = {(r.get(SOURCE_FILE), r[key]): r for r in levels[depth]}
        for theirs in rows:
            mine = ours[(theirs.get(SOURCE_FILE), theirs[key])]
            for column, value in theirs.items():
                if column.startswith("internal:") or column == "stac:centroid":
                    continue
                assert _json(mine[column]) == value, (name, level_name, column)
            if "stac:centroid" in theirs:  # struct of float32 -> WKB point (see module doc)
                x, y = struct.unpack_from("<dd", mine["stac:centroid"], 5)
                assert (x, y) == (theirs["stac:centroid"]["lon"], theirs["stac:centroid"]["lat"])


def test_collection_is_carried(taco_eo_view: dict[str, Any]) -> None:
    ds = _load("v3_nested.zip")
    stored = taco_eo_view["v3_nested.zip"]["collection"]
    for key in ("id", "description", "licenses", "taco:structure", "taco:metadata", "extent"):
        assert ds.collection[key] == stored[key]
    assert ds.collection["dataset_version"] == "unknown"  # taco-eo wrote none
    assert ds.pit_schema["shape"] == [3, 3, 2]


def test_levels_have_global_positions_and_parents() -> None:
    ds = _load("v3_nested.zip")
    level1, level2 = ds.to_arrow(1), ds.to_arrow(2)
    assert level1.column(CURRENT_ID).to_pylist() == list(range(9))
    assert level1.column(ID).to_pylist()[:3] == ["before", "after", "change.tif"]
    parents = level2.column("internal:parent_id").to_pylist()
    paths = level2.column(RELATIVE_PATH).to_pylist()
    by_position = level1.column(RELATIVE_PATH).to_pylist()
    for parent, path in zip(parents, paths, strict=True):
        assert path.rsplit("/", 1)[0] == by_position[parent]


def test_navigation_as_on_v2() -> None:
    ds = _load("v3_nested.zip")
    sample = ds.read("pair_1")
    assert isinstance(sample, taco_gdal.TacoDataFrame)
    assert list(sample[ID]) == ["before", "after", "change.tif"]
    before = sample.read("before")
    assert isinstance(before, taco_gdal.TacoDataFrame)
    assert list(before[ID]) == ["B02.tif", "B03.tif"]
    path = before.read("B03.tif")
    assert isinstance(path, str) and path.startswith("/vsisubfile/")
    import rasterio

    with rasterio.open(path) as src:
        assert src.read().shape == (1, 8, 8)


def test_variable_sequence_is_a_list_column() -> None:
    frame = _load("v3_sequence.zip").data
    assert [list(v) for v in frame["img*[1,4].tif"]] == [
        ["img0.tif"],
        ["img0.tif", "img1.tif", "img2.tif"],
        ["img0.tif", "img1.tif"],
    ]


def test_tacocat_has_global_ids_and_reads_partitions() -> None:
    ds = taco_gdal.load(golden("v3/v3_tacocat"))
    assert ds.format == "taco3cat"
    level0 = ds.to_arrow(0)
    assert level0.column(CURRENT_ID).to_pylist() == list(range(5))
    assert set(level0.column(SOURCE_FILE).to_pylist()) == {"cat_val.zip", "cat_train.zip"}
    child = ds.read("part_tile_1")
    assert isinstance(child, taco_gdal.TacoDataFrame)
    assert str(child[GDAL_VSI].iloc[0]).endswith("v3_tacocat/cat_train.zip")


def _geometries(view: dict[str, Any]) -> dict[str, shapely.Geometry]:
    return {
        row["id"]: shapely.from_wkb(base64.b64decode(row["stac:geometry"]["base64"]))
        for row in view["levels"]["sample"]
    }


@pytest.mark.parametrize(
    "box",
    [
        (-2.9, 39.1, -2.1, 39.9),
        (-1.5, 40.5, 0.5, 42.5),
        (-2.9, 41.1, -2.1, 41.9),
        (-0.2, 41.8, 0.9, 42.9),
    ],
)
def test_bbox_filter_agrees_with_shapely(
    box: tuple[float, float, float, float], taco_eo_view: dict[str, Any]
) -> None:
    view = taco_eo_view["v3_flat.zip"]
    query = shapely.box(*box)
    footprints = _geometries(view)
    expected = sorted(i for i, g in footprints.items() if g.intersects(query))
    with warnings.catch_warnings():  # an empty result warns (TacoWarning), as on v2
        warnings.simplefilter("ignore", TacoWarning)
        got = _load("v3_flat.zip").filter_bbox(*box, geometry_col="stac:geometry").data
        by_auto = _load("v3_flat.zip").filter_bbox(*box).data
    assert sorted(got[ID]) == expected
    centroids = {
        row["id"]: shapely.Point(row["stac:centroid"]["lon"], row["stac:centroid"]["lat"])
        for row in view["levels"]["sample"]
    }
    by_centroid = sorted(i for i, p in centroids.items() if p.intersects(query))
    assert sorted(by_auto[ID]) == by_centroid


def test_datetime_filter_agrees_with_pandas(taco_eo_view: dict[str, Any]) -> None:
    import pandas as pd

    rows = taco_eo_view["v3_flat.zip"]["levels"]["sample"]
    times = pd.Series(
        [pd.Timestamp(r["stac:datetime"]) for r in rows], index=[r["id"] for r in rows]
    )
    start, end = pd.Timestamp("2021-02-01T00:00:00Z"), pd.Timestamp("2021-03-15T00:00:00Z")
    expected = sorted(times[(times >= start) & (times <= end)].index)
    ds = _load("v3_flat.zip").filter_datetime(
        "2021-02-01T00:00:00Z/2021-03-15T00:00:00Z", time_col="stac:datetime"
    )
    assert sorted(ds.data[ID]) == expected == ["tile_1", "tile_2"]
    auto = _load("v3_flat.zip").filter_datetime("2021-02-01T00:00:00Z/2021-03-15T00:00:00Z")
    assert sorted(auto.data[ID]) == expected  # time_col="auto" finds stac:datetime


def test_flat_profile_is_a_packed_files_container() -> None:
    ds = taco_gdal.load(golden("v3/cozip_flat.zip"))
    assert ds.format == "cozip"
    frame = ds.data
    assert list(frame[ID]) == ["tiles/t0.tif", "tiles/t1.tif", "tiles/t2.tif"]
    assert list(frame["band"]) == ["red", "green", "blue"]
    import zipfile

    with zipfile.ZipFile(golden("v3/cozip_flat.zip")) as archive:
        for name, path in zip(frame[ID], frame[GDAL_VSI], strict=True):
            assert read_all(str(path)) == archive.read(str(name))


@pytest.mark.parametrize("where", ["index", "tail"])
def test_a_modified_archive_fails_the_fnv_check(where: str, tmp_path: Path) -> None:
    target = tmp_path / "v3_flat.zip"
    shutil.copy(golden("v3/v3_flat.zip"), target)
    data = bytearray(target.read_bytes())
    position = 70 if where == "index" else len(data) - 30  # a name byte / the central directory
    data[position] = ord("X") if data[position] != ord("X") else ord("Y")
    target.write_bytes(bytes(data))
    with pytest.raises(TacoFormatError, match="HASH_MISMATCH"):
        taco_gdal.load(target)


def test_metadata_is_one_range_read_over_http() -> None:
    from tests.support.servers.range_server import RangeServer

    folder = golden("v3/v3_nested.zip").parent
    with RangeServer(root=folder) as server:
        ds = taco_gdal.load(f"{server.url}/v3_nested.zip")
        ranges = [r for r in server.log.records("/v3_nested.zip", "GET")]
        # the 256-byte probe (header + index) and one read of every priority file
        assert len(ranges) == 2, server.log.describe()
        assert ds.to_arrow(2).num_rows == 12
    assert pa.__version__  # pyarrow is what carries the tables


def test_index_that_disagrees_with_the_zip_entries_is_refused(tmp_path: Path) -> None:
    """A writer bug, not corruption: the hash is right but an offset is not (MISSING_ENTRY)."""
    from taco_cozip.layout import INDEX_OFFSET, fnv1a64, hash_ranges, parse_header

    data = bytearray(golden("v3/v3_flat.zip").read_bytes())
    header = parse_header(bytes(data[:INDEX_OFFSET]), "fixture")
    count = struct.unpack_from("<I", data, INDEX_OFFSET + 7)[0]
    lengths = struct.unpack_from(f"<{count}H", data, INDEX_OFFSET + 11)
    offsets_at = INDEX_OFFSET + 11 + 2 * count + sum(lengths)
    first = struct.unpack_from("<Q", data, offsets_at)[0]
    struct.pack_into("<Q", data, offsets_at, first + 1)  # one byte off
    ranges = hash_ranges(header, len(data), "fixture")
    hashed = b"".join(bytes(data[lo:hi]) for lo, hi in ranges)
    struct.pack_into("<Q", data, 43, fnv1a64(hashed))
    target = tmp_path / "bad_index.zip"
    target.write_bytes(bytes(data))
    with pytest.raises(TacoFormatError, match="MISSING_ENTRY"):
        taco_gdal.load(target)


def test_spec_level_names_read_like_taco_eo_names() -> None:
    """TACO 3.0.0's text names the levels collection/sample/sample/<folder>; taco-eo
    0.14 writes sample/children/children/<folder>.  Both map to the same levels."""
    import zipfile

    import pyarrow.parquet as pq

    from taco_cozip.levels import Structure, to_levels

    with zipfile.ZipFile(golden("v3/v3_nested.zip")) as archive:
        eo = {
            name: pq.read_table(pa.BufferReader(archive.read(f"METADATA/{file}")))
            for name, file in [
                ("sample", "sample.parquet"),
                ("children", "children.parquet"),
                ("children/before", "children__before.parquet"),
                ("children/after", "children__after.parquet"),
            ]
        }
    spec = {
        {"sample": "collection", "children": "sample"}.get(
            name, name.replace("children", "sample")
        ): table
        for name, table in eo.items()
    }
    structure = Structure.parse(
        ["before/B02.tif", "before/B03.tif", "after/B02.tif", "after/B03.tif", "change.tif"], "x"
    )
    ours, _ = to_levels(eo, structure, "taco-eo names")
    theirs, _ = to_levels(spec, structure, "spec names")
    assert [t.num_rows for t in ours] == [3, 9, 12]
    assert all(a.equals(b) for a, b in zip(ours, theirs, strict=True))
