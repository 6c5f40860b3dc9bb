"""create(): size splits, group_by, automatic TACOCAT, per-part COLLECTION."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from taco_gdal.errors import TacoExistsError, TacoValidationError
from taco_gdal.format import names
from taco_gdal.format.tacocat import TacoCatHeader
from taco_gdal.model.extent import extent_of_tables
from taco_gdal.model.pit import pit_schema
from taco_gdal.write import create, parse_size
from taco_gdal.write._sources import read_zip_metadata
from tests.integration.write._verify import verify_zip
from tests.support.datasets import make_taco


def test_parse_size() -> None:
    assert parse_size("4GB") == 4 * 1024**3
    assert parse_size(" 1.5 kb ") == 1536
    assert parse_size("10") == 10
    assert parse_size(123) == 123
    for bad in ("", "4XB", "-1GB", "0", "GB"):
        with pytest.raises(TacoValidationError):
            parse_size(bad)


def _parts_match_whole(parts: list[Path], whole_levels: int) -> None:
    for part in parts:
        meta = read_zip_metadata(part)
        assert len(meta.levels) == whole_levels
        assert meta.levels[0].column(names.CURRENT_ID).to_pylist() == list(
            range(meta.levels[0].num_rows)
        )
        pit = meta.collection[names.PIT_SCHEMA_KEY]
        assert pit == pit_schema(meta.levels)
        assert meta.collection["extent"] == extent_of_tables(meta.levels).to_dict()


def test_split_by_size(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "3level", n=5)
    package = taco.metadata()
    per_root = taco.tortilla.samples[0].size
    out = tmp_path / "ds.tacozip"
    parts = create(taco, out, split_size=2 * per_root, quiet=True)
    assert [p.name for p in parts] == [f"ds_part{i:04d}.tacozip" for i in (1, 2, 3)]
    assert not out.exists()
    ids = []
    for part in parts:
        meta = read_zip_metadata(part)
        ids += meta.levels[0].column("id").to_pylist()
        assert meta.levels[0].num_rows <= 2
    assert ids == package.levels[0].column("id").to_pylist()
    _parts_match_whole(parts, len(package.levels))
    # the first part is the first two scenes with their subtrees, verified byte for byte
    import numpy as np

    from taco_gdal.write._layout import Layout
    from taco_gdal.write._partition import subset_package

    first = subset_package(package, Layout(package), np.array([0, 1]))
    verify_zip(parts[0], first)
    # consolidated in both forms, rows tagged with their part
    cat = tmp_path / names.TACOCAT_DIR
    level2 = pq.read_table(cat / names.level_file(2))
    assert level2.num_rows == package.levels[2].num_rows
    assert set(level2.column(names.SOURCE_FILE).to_pylist()) == {p.name for p in parts}
    merged = json.loads((cat / names.COLLECTION_FILE).read_bytes())
    assert merged[names.PIT_SCHEMA_KEY]["root"]["n"] == 5
    assert merged["extent"] == package.collection["extent"]
    assert merged[names.SOURCES_KEY]["files"] == [p.name for p in parts]
    binary = (tmp_path / names.TACOCAT_FILE).read_bytes()
    header = TacoCatHeader.unpack(binary)
    assert header.max_depth == 2
    for level, entry in enumerate(header.levels):
        blob = binary[entry.offset : entry.end]
        assert blob == (cat / names.level_file(level)).read_bytes()
    assert (
        binary[header.collection.offset : header.collection.end]
        == (cat / names.COLLECTION_FILE).read_bytes()
    )


def test_no_split_when_under_size(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat")
    assert create(taco, tmp_path / "a.tacozip", quiet=True) == [tmp_path / "a.tacozip"]
    assert not (tmp_path / names.TACOCAT_DIR).exists()


def test_split_without_consolidation(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=4)
    parts = create(taco, tmp_path / "a.zip", split_size=1, consolidate=False, quiet=True)
    assert [p.name for p in parts] == [f"a_part{i:04d}.zip" for i in range(1, 5)]
    assert not (tmp_path / names.TACOCAT_DIR).exists()
    assert not (tmp_path / names.TACOCAT_FILE).exists()


def test_group_by(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "2level", n=6)
    parts = create(taco, tmp_path / "g.tacozip", group_by="split", quiet=True)
    assert [p.name for p in parts] == [
        "g_train.tacozip",
        "g_validation.tacozip",
        "g_test.tacozip",
    ]
    for part, split in zip(parts, ("train", "validation", "test"), strict=True):
        meta = read_zip_metadata(part)
        assert set(meta.levels[0].column("split").to_pylist()) == {split}
        assert meta.levels[1].num_rows == 3 * meta.levels[0].num_rows
    _parts_match_whole(parts, 2)
    assert (tmp_path / names.TACOCAT_DIR / names.COLLECTION_FILE).exists()


def test_group_by_and_split(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=6)
    parts = create(taco, tmp_path / "g.tacozip", group_by=["split"], split_size=1, quiet=True)
    assert [p.name for p in parts] == [
        "g_train_part0001.tacozip",
        "g_train_part0002.tacozip",
        "g_validation_part0001.tacozip",
        "g_validation_part0002.tacozip",
        "g_test_part0001.tacozip",
        "g_test_part0002.tacozip",
    ]


def test_group_by_unknown_column(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat")
    with pytest.raises(TacoValidationError, match="nope"):
        create(taco, tmp_path / "g.tacozip", group_by="nope", quiet=True)


def test_existing_part_refused_before_writing(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=4)
    (tmp_path / "a_part0003.tacozip").write_bytes(b"mine")
    with pytest.raises(TacoExistsError, match="a_part0003"):
        create(taco, tmp_path / "a.tacozip", split_size=1, quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_part0003.tacozip", "src_flat"]
    assert (tmp_path / "a_part0003.tacozip").read_bytes() == b"mine"


def test_existing_tacocat_refused(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=2)
    (tmp_path / names.TACOCAT_DIR).mkdir()
    with pytest.raises(TacoExistsError, match="tacocat"):
        create(taco, tmp_path / "a.tacozip", split_size=1, quiet=True)
    parts = create(taco, tmp_path / "a.tacozip", split_size=1, quiet=True, overwrite=True)
    assert len(parts) == 2 and (tmp_path / names.TACOCAT_FILE).is_file()


def test_folder_ignores_split_size(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=3)
    assert create(taco, tmp_path / "f", split_size=1, quiet=True) == [tmp_path / "f"]


@pytest.mark.parametrize("name", sorted(names.RESERVED_OUTPUT_NAMES))
def test_reserved_folder_names(tmp_path: Path, name: str) -> None:
    taco = make_taco(tmp_path, "flat", n=1)
    with pytest.raises(TacoValidationError, match="reserved"):
        create(taco, tmp_path / name, quiet=True)
    assert not (tmp_path / name).exists()


def test_bad_output_format(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat", n=1)
    with pytest.raises(TacoValidationError, match="must be one of"):
        create(taco, tmp_path / "x.tacozip", output_format="tar", quiet=True)  # type: ignore[arg-type]
