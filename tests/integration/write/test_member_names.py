"""The ZIP writer checks member names once, column-wise (it keeps no set of names)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write.zip_container import write_zip


def _package(ids: list[str], source: Path) -> MetadataPackage:
    n = len(ids)
    level0 = pa.table(
        {
            "id": ids,
            "type": ["FILE"] * n,
            "internal:current_id": list(range(n)),
            "internal:parent_id": list(range(n)),
            "path": [str(source)] * n,
        }
    )
    return MetadataPackage([level0], {"id": "dup"})


def test_duplicate_member_names_are_refused_before_writing(tmp_path: Path) -> None:
    source = tmp_path / "s.bin"
    source.write_bytes(b"abc")
    out = tmp_path / "out.tacozip"
    with pytest.raises(TacoFormatError, match="duplicate ZIP member name 'DATA/b'"):
        write_zip(_package(["a", "b", "c", "b"], source), out)
    assert not out.exists()


def test_a_file_named_like_its_folders_meta_is_refused(tmp_path: Path) -> None:
    # level-1 FILE "t0/__meta__" and the __meta__ member of level-0 FOLDER "t0/"
    source = tmp_path / "s.bin"
    source.write_bytes(b"abc")
    level0 = pa.table(
        {
            "id": ["t0", "t1"],
            "type": ["FOLDER", "FOLDER"],
            "internal:current_id": [0, 1],
            "internal:parent_id": [0, 1],
            "path": pa.array([None, None], pa.string()),
        }
    )
    level1 = pa.table(
        {
            "id": ["a", "__meta__", "a", "b"],
            "type": ["FILE"] * 4,
            "internal:current_id": [0, 1, 2, 3],
            "internal:parent_id": [0, 0, 1, 1],
            "internal:relative_path": ["t0/a", "t0/__meta__", "t1/a", "t1/b"],
            "path": [str(source)] * 4,
        }
    )
    out = tmp_path / "out.tacozip"
    with pytest.raises(TacoFormatError, match="duplicate ZIP member name 'DATA/t0/__meta__'"):
        write_zip(MetadataPackage([level0, level1], {"id": "dup"}), out)
    assert not out.exists()


def test_many_distinct_names_pass_and_one_repeat_is_found(tmp_path: Path) -> None:
    # more rows than one batch of names, the repeat in the last batch
    source = tmp_path / "s.bin"
    source.write_bytes(b"")
    ids = [f"s{i:05d}" for i in range(5000)]
    layout_ok = write_zip(_package(ids, source), tmp_path / "ok.tacozip", quiet=True)
    assert layout_ok.exists()
    with pytest.raises(TacoFormatError, match="duplicate ZIP member name 'DATA/s00007'"):
        write_zip(_package([*ids, "s00007"], source), tmp_path / "dup.tacozip", quiet=True)
