"""folder2zip / zip2folder: byte copies, regenerated __meta__, safe extraction."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.format import names
from taco_gdal.write import create, folder2zip, zip2folder
from taco_gdal.write._sources import read_zip_metadata
from tests.integration.write._verify import unzip_test, verify_folder, verify_zip
from tests.support.datasets import SHAPES, Shape, make_taco


@pytest.mark.parametrize("shape", SHAPES)
def test_zip_folder_zip(tmp_path: Path, shape: Shape) -> None:
    taco = make_taco(tmp_path, shape)
    package = taco.metadata()
    first = create(taco, tmp_path / "a.tacozip", quiet=True)[0]
    folder = zip2folder(first, tmp_path / "b", quiet=True)
    verify_folder(folder, package)
    second = folder2zip(folder, tmp_path / "c.tacozip", quiet=True)
    verify_zip(second, package)
    # same members and bytes, same metadata; offsets re-measured (identical layout here)
    with zipfile.ZipFile(first) as a, zipfile.ZipFile(second) as c:
        assert a.namelist() == c.namelist()
        for name in a.namelist():
            if name.startswith("DATA/") and not name.endswith(names.LOCAL_META):
                assert a.read(name) == c.read(name)
    for x, y in zip(read_zip_metadata(first).levels, read_zip_metadata(second).levels, strict=True):
        assert x.equals(y)


def test_folder_to_zip_regenerates_meta(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "3level")
    folder = create(taco, tmp_path / "f", quiet=True)[0]
    out = folder2zip(folder, tmp_path / "f.tacozip", quiet=True)
    levels = verify_zip(out, taco.metadata())
    assert pq.read_table(folder / "METADATA" / "level2.parquet").equals(
        levels[2].drop_columns([names.OFFSET, names.SIZE])
    )


@pytest.mark.parametrize("bad", ["../evil", "/etc/evil", "DATA\\..\\evil", "DATA/a/../../../x"])
def test_zip2folder_refuses_escaping_names(tmp_path: Path, bad: str) -> None:
    archive = tmp_path / "bad.tacozip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("TACO_HEADER", b"\0" * 116)
        z.writestr(zipfile.ZipInfo(bad), b"payload")
    with pytest.raises(TacoFormatError, match="escape"):
        zip2folder(archive, tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tacozip"]


def test_zip2folder_of_a_split_part(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "2level", n=4)
    parts = create(taco, tmp_path / "p.tacozip", split_size=1, quiet=True)
    folder = zip2folder(parts[1], tmp_path / "second", quiet=True)
    assert pq.read_table(folder / "METADATA" / "level0.parquet").column("id").to_pylist() == [
        "tile001"
    ]
    unzip_test(folder2zip(folder, tmp_path / "again.zip", quiet=True))
