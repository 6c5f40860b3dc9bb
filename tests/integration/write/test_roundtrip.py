"""Round trips over {flat, 2level, 3level, padded} x {ZIP, FOLDER}, written from model Tacos."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from taco_gdal.format import names
from taco_gdal.write import create
from tests.datasets import SHAPES, Shape, make_taco
from tests.integration.write._verify import member_order, verify_folder, verify_zip


@pytest.mark.parametrize("shape", SHAPES)
def test_zip_roundtrip(tmp_path: Path, shape: Shape) -> None:
    taco = make_taco(tmp_path, shape)
    package = taco.metadata()
    paths = create(taco, tmp_path / "out.tacozip", quiet=True)
    assert paths == [tmp_path / "out.tacozip"]
    levels = verify_zip(paths[0], package)
    assert len(levels) == len(package.levels)
    order = member_order(paths[0])
    data = [n for n in order if n.startswith("DATA/") and not n.endswith(names.LOCAL_META)]
    metas = [n for n in order if n.endswith(names.LOCAL_META)]
    # DATA members first (depth first), then __meta__ deepest first, then levels, COLLECTION
    assert order == [
        names.HEADER_MEMBER,
        *data,
        *metas,
        *[names.level_member(k) for k in range(len(levels))],
        names.COLLECTION_FILE,
    ]
    assert [m.count("/") for m in metas] == sorted((m.count("/") for m in metas), reverse=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tacozip", f"src_{shape}"]


@pytest.mark.parametrize("shape", SHAPES)
def test_folder_roundtrip(tmp_path: Path, shape: Shape) -> None:
    taco = make_taco(tmp_path, shape)
    package = taco.metadata()
    paths = create(taco, tmp_path / "out", quiet=True)
    assert paths == [tmp_path / "out"]
    verify_folder(paths[0], package)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", f"src_{shape}"]


def test_zip_and_folder_store_the_same_metadata(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "3level")
    zipped = verify_zip(create(taco, tmp_path / "a.tacozip", quiet=True)[0], taco.metadata())
    folder = verify_folder(create(taco, tmp_path / "b", quiet=True)[0], taco.metadata())
    for z, f in zip(zipped, folder, strict=True):
        assert z.drop_columns([names.OFFSET, names.SIZE]).equals(f)


def test_parquet_settings(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "2level")
    out = create(taco, tmp_path / "f", quiet=True)[0]
    level = pq.ParquetFile(out / names.METADATA_DIR / names.level_file(1)).metadata
    column = level.row_group(0).column(0)
    assert column.compression == "ZSTD"
    assert column.statistics is not None and column.statistics.has_min_max
    meta = pq.ParquetFile(out / names.DATA_DIR / "tile000" / names.LOCAL_META).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    # parquet_kwargs override every table of the call
    other = create(taco, tmp_path / "g", quiet=True, compression="snappy")[0]
    level = pq.ParquetFile(other / names.METADATA_DIR / names.level_file(0)).metadata
    assert level.row_group(0).column(0).compression == "SNAPPY"
