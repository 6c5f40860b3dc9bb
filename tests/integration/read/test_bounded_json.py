"""Every JSON the reader and the mergers parse is bounded (issue 44): no RecursionError escapes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
import shapely

from taco_gdal.errors import TacoFormatError
from taco_gdal.read.spatial.crs import column_crs
from taco_gdal.write.tacollection import create_tacollection
from tests.support.datasets import write_dataset

DEEP = "[" * 100_000 + "]" * 100_000


def test_geoparquet_metadata_nested_too_deep_is_ignored() -> None:
    table = pa.table({"footprint": [shapely.box(0, 0, 1, 1).wkb]})
    table = table.replace_schema_metadata({b"geo": DEEP.encode()})
    assert column_crs(table, "footprint", "EPSG:32630") == (None, "EPSG:32630")


def test_merging_a_collection_nested_too_deep_is_refused(tmp_path: Path) -> None:
    folders = [write_dataset(tmp_path / name, "flat", "folder") for name in ("a", "b")]
    document = folders[1] / "COLLECTION.json"
    collection = json.loads(document.read_text(encoding="utf-8"))
    document.write_text(json.dumps(collection)[:-1] + f', "deep": {DEEP}}}', encoding="utf-8")
    with pytest.raises(TacoFormatError, match="nested at most 64 deep"):
        create_tacollection(folders, tmp_path / "out")


def test_merging_a_malformed_pit_schema_is_refused(tmp_path: Path) -> None:
    folders = [write_dataset(tmp_path / name, "2level", "folder") for name in ("a", "b")]
    document = folders[1] / "COLLECTION.json"
    collection = json.loads(document.read_text(encoding="utf-8"))
    collection["taco:pit_schema"]["hierarchy"]["1"] = [7]
    document.write_text(json.dumps(collection), encoding="utf-8")
    with pytest.raises(TacoFormatError, match=r"hierarchy\['1'\]\[0\]: expected an object"):
        create_tacollection(folders, tmp_path / "out")
