"""Datasets written with a checksum validate clean, and the reference reader still loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.format.names import CHECKSUM
from taco_gdal.write import create
from tests.support.datasets import make_taco


@pytest.mark.parametrize("container", ["zip", "folder"])
@pytest.mark.parametrize("algorithm", ["crc32c", "xxh3", "sha256"])
def test_written_with_checksum_validates_clean(
    tmp_path: Path, container: str, algorithm: str
) -> None:
    taco = make_taco(tmp_path / "src", "2level")
    out = tmp_path / ("d.tacozip" if container == "zip" else "d")
    path = create(taco, out, quiet=True, checksum=algorithm)[0]
    report = taco_gdal.validate(path)
    assert report.ok, str(report)
    fields = taco_gdal.load(path).field_schema
    for level in ("level0", "level1"):
        assert [e[1] for e in fields[level] if e[0] == CHECKSUM] == ["string"]


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore:fetch_arrow_table:DeprecationWarning")
def test_reference_reader_loads_a_dataset_with_checksums(tmp_path: Path) -> None:
    import tacoreader

    taco = make_taco(tmp_path / "src", "flat")
    path = create(taco, tmp_path / "d.tacozip", quiet=True, checksum="xxh3")[0]
    reference = tacoreader.load(str(path))
    assert CHECKSUM in [e[0] for e in reference.field_schema["level0"]]
    assert len(reference.data.to_arrow()) == 3
