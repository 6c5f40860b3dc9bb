"""Round trips over {flat, 2level, 3level, padded} x {ZIP, FOLDER}, written from model Tacos."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.format import names
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from taco_gdal.write._parquet import SMALL_META_ROWS
from tests.integration.write._verify import member_order, verify_folder, verify_zip
from tests.support.datasets import SHAPES, Shape, make_taco


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
    # a __meta__ of a few rows: uncompressed, no statistics (zstd saves nothing there)
    assert meta.row_group(0).column(0).compression == "UNCOMPRESSED"
    assert meta.row_group(0).column(0).statistics is None
    # parquet_kwargs override every table of the call
    other = create(taco, tmp_path / "g", quiet=True, compression="snappy")[0]
    level = pq.ParquetFile(other / names.METADATA_DIR / names.level_file(0)).metadata
    assert level.row_group(0).column(0).compression == "SNAPPY"


def _wide_taco(children: int) -> Taco:
    """Two FOLDERs of ``children`` FILE samples each."""
    roots = [
        Sample(
            f"r{r}",
            Tortilla([Sample(f"c{i}", f"{r}-{i}".encode(), k=i) for i in range(children)]),
        )
        for r in range(2)
    ]
    return Taco(
        Tortilla(roots), id="wide", dataset_version="1", description="wide folders",
        licenses=["CC0-1.0"], providers=[{"name": "test"}], tasks=["other"],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("children", "codec"), [(SMALL_META_ROWS - 1, "UNCOMPRESSED"), (SMALL_META_ROWS, "ZSTD")]
)
def test_local_meta_compressed_from_small_meta_rows(
    tmp_path: Path, children: int, codec: str
) -> None:
    taco = _wide_taco(children)
    folder = create(taco, tmp_path / "f", quiet=True)[0]
    zipped = create(taco, tmp_path / "z.tacozip", quiet=True)[0]
    with zipfile.ZipFile(zipped) as archive:
        in_zip = archive.read(f"{names.DATA_DIR}/r1/{names.LOCAL_META}")
    for source in (folder / names.DATA_DIR / "r1" / names.LOCAL_META, pa.BufferReader(in_zip)):
        meta = pq.ParquetFile(source).metadata
        column = meta.row_group(0).column(0)
        assert meta.num_rows == children
        assert column.compression == codec
        assert (column.statistics is not None) == (codec == "ZSTD")
        table = pq.read_table(source)
        assert table.column("k").to_pylist() == list(range(children))
