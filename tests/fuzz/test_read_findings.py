"""Held-out fuzzing findings inside taco_gdal/read/ (issue 44): only TacoErrors may escape."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.errors import TacoError, TacoValidationError
from taco_gdal.write.zip_container import write_zip
from tests.support.datasets import make_taco, write_dataset


def test_pit_schema_hierarchy_that_is_not_an_object_in_a_zip(tmp_path: Path) -> None:
    # read/frames.py:215 PitSchema.from_dict: AttributeError 'int' object has no attribute
    # 'items' from repr(); the FOLDER reader checks it at load (collection_depth), ZIP does not.
    package = make_taco(tmp_path / "src", "flat").metadata()
    package.collection["taco:pit_schema"]["hierarchy"] = 5
    path = write_zip(package, tmp_path / "bad.tacozip", quiet=True)
    with pytest.raises(TacoError, match="hierarchy"):
        ds = taco_gdal.load(path)
        repr(ds)
        ds._repr_html_()


def test_level1_geometry_column_that_is_not_binary(tmp_path: Path) -> None:
    # read/_footprints.py:1129 _WkbColumn.of: ValueError not enough values to unpack
    # (an int64 column has 2 buffers) from filter_bbox(level=1).
    folder = write_dataset(tmp_path, "2level", "folder")
    level1 = folder / "METADATA" / "level1.parquet"
    table = pq.read_table(level1)
    at = table.column_names.index("stac:centroid")
    table = table.set_column(at, "stac:centroid", pa.array(range(table.num_rows), pa.int64()))
    pq.write_table(table, level1)
    with pytest.raises(TacoError, match="stac:centroid"):
        _ = taco_gdal.load(folder).filter_bbox(-4, 40, -3, 41, level=1).data


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("taco:field_schema", {"level0": 1.5}),  # write/export.py:179 'float' not iterable
        ("taco:field_schema", {"level0": [1.5]}),  # write/export.py:183 float has no len()
        ("taco:pit_schema", {"root": {"n": 3, "type": "FOLDER"}, "hierarchy": {"1": True}}),
        ("taco:pit_schema", {"root": "x", "hierarchy": {}}),  # frames.py:217 str has no get
        (
            "taco:pit_schema",  # read/_html.py:39 '<' between str and float
            {
                "root": {"n": 3, "type": "FOLDER"},
                "hierarchy": {
                    "1": [{"n": 9, "type": ["FILE", 1.5, "FILE"], "id": ["b02", "b03", "b04"]}]
                },
            },
        ),
    ],
)
def test_malformed_schemas_in_a_folder_collection(tmp_path: Path, key: str, value: object) -> None:
    # Found by the folder_json fuzzer (tests/fuzz/_targets.py): only TacoErrors may escape
    # load, repr, _repr_html_ and export when COLLECTION.json's schemas have wrong types.
    import json

    folder = write_dataset(tmp_path, "2level", "folder")
    document = folder / "COLLECTION.json"
    collection = json.loads(document.read_text(encoding="utf-8"))
    collection[key] = value
    document.write_text(json.dumps(collection), encoding="utf-8")
    outcome = "ran"
    try:
        ds = taco_gdal.load(folder)
        repr(ds)
        ds._repr_html_()
        taco_gdal.export(ds, tmp_path / "out.tacozip", quiet=True)
    except TacoError:
        outcome = "refused"
    assert outcome in ("ran", "refused")  # anything else propagated: a finding


def test_timestamps_outside_pythons_range(tmp_path: Path) -> None:
    # Found by the long parquet run (seed 2026): read/_notebook.py:115 _time_range converts
    # DuckDB's min/max to Python datetimes; a mutated int64 gives OverflowError in
    # _repr_html_ (the summary's time range).
    folder = write_dataset(tmp_path, "flat", "folder")
    level0 = folder / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    at = table.column_names.index("stac:time_start")
    kind = table.schema.field(at).type
    huge = pa.array([2**62, 0, 1], pa.int64()).cast(kind)
    pq.write_table(table.set_column(at, "stac:time_start", huge), level0)
    outcome = "ran"
    try:
        ds = taco_gdal.load(folder)
        repr(ds)
        ds._repr_html_()
    except TacoError:
        outcome = "refused"
    assert outcome in ("ran", "refused")


def test_export_of_timestamps_outside_pythons_range(tmp_path: Path) -> None:
    # Found by the long parquet run (seed 4702, e.g. mutation [(528790, 171), (682070, 104)]):
    # export() computes the new COLLECTION.json extent from the level tables, and a mutated
    # int64 time past year 9999 raised OverflowError there.
    folder = write_dataset(tmp_path, "flat", "folder")
    level0 = folder / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    at = table.column_names.index("stac:time_start")
    huge = pa.array([2**62, 0, 1], pa.int64()).cast(table.schema.field(at).type)
    pq.write_table(table.set_column(at, "stac:time_start", huge), level0)
    ds = taco_gdal.load(folder)
    with pytest.raises(TacoValidationError, match=r"stac:time_start.*years 1-9999"):
        taco_gdal.export(ds, tmp_path / "out.tacozip", quiet=True)
    assert not (tmp_path / "out.tacozip").exists()


@pytest.mark.parametrize(
    "extent",
    [
        # folder_json, seed 4902, mutation [(980782, 251)]: repr() raised IndexError on a
        # temporal extent of one value (read/notebook/_html.py _extent)
        {"spatial": [-4.0, 40.0, -3.0, 41.0], "temporal": ["2023-01-01T00:00:00Z"]},
        {"spatial": [-4.0, 40.0, -3.0, 41.0], "temporal": ["2023-01-01", "2023-02-01", None]},
        {"spatial": [-4.0, 40.0, -3.0], "temporal": [None, None]},
        {"spatial": [-4.0, 40.0, -3.0, 41.0], "temporal": [2023, None]},
    ],
)
def test_malformed_extent_is_ignored(tmp_path: Path, extent: dict[str, object]) -> None:
    import json

    folder = write_dataset(tmp_path, "2level", "folder")
    document = folder / "COLLECTION.json"
    collection = json.loads(document.read_text(encoding="utf-8"))
    collection["extent"] = extent
    document.write_text(json.dumps(collection), encoding="utf-8")
    ds = taco_gdal.load(folder)
    assert ds.extent is None
    assert "extent: unknown" in repr(ds)
    ds._repr_html_()
    assert ds.to_stac_collection().id == collection["id"]
    taco_gdal.export(ds, tmp_path / "out.tacozip", quiet=True)
