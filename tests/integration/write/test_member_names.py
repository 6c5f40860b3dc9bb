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
