"""create_tacocat / create_tacollection: consolidated metadata and schema reports."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.errors import TacoExistsError, TacoSchemaError, TacoValidationError
from taco_gdal.format import names
from taco_gdal.format.tacocat import TacoCatHeader
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write import create, create_tacocat, create_tacollection, write_zip
from taco_gdal.write._sources import read_zip_metadata
from tests.integration.write._package import package_from_tree
from tests.support.datasets import make_taco


def _two_zips(tmp_path: Path) -> list[Path]:
    a = create(
        make_taco(tmp_path / "a", "2level", n=2, dataset_id="a"), tmp_path / "a.tacozip", quiet=True
    )
    b = create(
        make_taco(tmp_path / "b", "2level", n=3, dataset_id="b"), tmp_path / "b.tacozip", quiet=True
    )
    return a + b


def test_tacocat_both_forms(tmp_path: Path) -> None:
    inputs = _two_zips(tmp_path)
    out = create_tacocat(inputs, quiet=True)
    assert out == [tmp_path / names.TACOCAT_DIR, tmp_path / names.TACOCAT_FILE]
    folder, binary = out
    data = binary.read_bytes()
    header = TacoCatHeader.unpack(data)
    assert header.max_depth == 1
    for level, entry in enumerate(header.levels):
        stored = pq.read_table(folder / names.level_file(level))
        assert data[entry.offset : entry.end] == (folder / names.level_file(level)).read_bytes()
        sources = [read_zip_metadata(p).levels[level] for p in inputs]
        assert stored.num_rows == sum(t.num_rows for t in sources)
        assert stored.column(names.SOURCE_FILE).to_pylist() == [
            p.name for p, t in zip(inputs, sources, strict=True) for _ in range(t.num_rows)
        ]
        # offsets stay those of the source ZIP
        expected = pa.concat_arrays(
            [t.column(names.OFFSET).combine_chunks() for t in sources]
        ).to_pylist()
        assert stored.column(names.OFFSET).to_pylist() == expected
    collection = json.loads(data[header.collection.offset : header.collection.end])
    assert collection == json.loads((folder / names.COLLECTION_FILE).read_bytes())
    assert collection[names.PIT_SCHEMA_KEY]["root"]["n"] == 5
    assert collection[names.PIT_SCHEMA_KEY]["hierarchy"]["1"][0]["n"] == 15
    assert collection[names.SOURCES_KEY]["ids"] == ["a", "b"]
    with pytest.raises(TacoExistsError):
        create_tacocat(inputs, quiet=True)


def test_tacocat_schema_report(tmp_path: Path) -> None:
    src = tmp_path / "x.bin"
    src.write_bytes(b"x")
    first = package_from_tree([("s0", str(src))])
    level = first.levels[0]
    changed = level.set_column(
        level.schema.get_field_index("tag"), "tag", pa.array([7], pa.int64())
    ).append_column("extra", pa.array([1.5]))
    second = MetadataPackage([changed], first.collection)
    a = write_zip(first, tmp_path / "a.tacozip", quiet=True)
    b = write_zip(second, tmp_path / "b.tacozip", quiet=True)
    with pytest.raises(TacoSchemaError) as info:
        create_tacocat([a, b], quiet=True)
    message = str(info.value)
    assert "b.tacozip level0: column 'tag' is int64, a.tacozip has string" in message
    assert "b.tacozip level0: extra column 'extra'" in message
    assert not (tmp_path / names.TACOCAT_DIR).exists()
    assert not (tmp_path / names.TACOCAT_FILE).exists()


def test_tacocat_needs_one_folder_or_output(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    a = create(make_taco(tmp_path / "a", "flat", n=1), tmp_path / "a.tacozip", quiet=True)[0]
    b = create(make_taco(tmp_path / "b", "flat", n=1), tmp_path / "x" / "b.tacozip", quiet=True)[0]
    with pytest.raises(TacoValidationError, match="folders"):
        create_tacocat([a, b], quiet=True)
    out = create_tacocat([a, b], tmp_path / "cat", quiet=True)
    assert out[0] == tmp_path / "cat" / names.TACOCAT_DIR and out[1].is_file()


def test_tacollection(tmp_path: Path) -> None:
    inputs = _two_zips(tmp_path)
    target = create_tacollection(inputs, tmp_path / "global")
    assert target == tmp_path / "global" / names.TACOLLECTION_FILE
    merged = json.loads(target.read_bytes())
    parts = [read_zip_metadata(p).collection for p in inputs]
    assert merged[names.PIT_SCHEMA_KEY]["root"]["n"] == 5
    assert merged[names.PIT_SCHEMA_KEY]["shape"][0] == 5
    spatial = [p["extent"]["spatial"] for p in parts]
    assert merged["extent"]["spatial"] == [
        min(s[0] for s in spatial),
        min(s[1] for s in spatial),
        max(s[2] for s in spatial),
        max(s[3] for s in spatial),
    ]
    assert merged["extent"]["temporal"] == [
        min(p["extent"]["temporal"][0] for p in parts),
        max(p["extent"]["temporal"][1] for p in parts),
    ]
    sources = merged[names.SOURCES_KEY]
    assert sources["count"] == 2 and sources["files"] == ["a.tacozip", "b.tacozip"]
    assert [e["spatial"] for e in sources["extents"]] == spatial
    with pytest.raises(TacoExistsError):
        create_tacollection(inputs, tmp_path / "global")


def test_tacollection_rejects_other_pit(tmp_path: Path) -> None:
    flat = create(make_taco(tmp_path / "f", "flat", n=2), tmp_path / "f.tacozip", quiet=True)
    nested = create(make_taco(tmp_path / "n", "2level", n=2), tmp_path / "n.tacozip", quiet=True)
    with pytest.raises(TacoSchemaError, match=r"n\.tacozip: root type 'FOLDER'"):
        create_tacollection(flat + nested, tmp_path / "out")
    out = create_tacollection(flat + nested, tmp_path / "out", validate_schema=False)
    assert json.loads(out.read_bytes())[names.SOURCES_KEY]["count"] == 2
