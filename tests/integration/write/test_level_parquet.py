"""Level Parquet written a row group at a time (the same bytes as one ``pq.write_table``), and
level tables dropped by a single-ZIP ``create()`` as they are written (the same members)."""

from __future__ import annotations

import gc
import weakref
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.format.names import CHECKSUM, FILE, ID, RELATIVE_PATH, TYPE
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from taco_gdal.write._parquet import LEVEL_OPTIONS, parquet_file, parquet_options
from taco_gdal.write._tables import rebuild_columns
from taco_gdal.write.zip_container import write_zip


def _level(rows: int) -> pa.Table:
    paths = [f"t{i // 16:07d}/s{i // 4 % 4}/b{i % 4}" for i in range(rows)]
    return pa.table(
        {
            ID: [f"b{i % 4}" for i in range(rows)],
            TYPE: [FILE] * rows,
            "cloud": [float(i % 7) for i in range(rows)],
            RELATIVE_PATH: paths,
        }
    )


@pytest.mark.parametrize(
    ("rows", "row_group_size"), [(0, 64), (5, 64), (64, 64), (1000, 64), (1000, 333), (70, None)]
)
def test_parquet_file_equals_write_table(
    tmp_path: Path, rows: int, row_group_size: int | None
) -> None:
    options = parquet_options(LEVEL_OPTIONS, {"row_group_size": row_group_size})
    if row_group_size is None:
        options.pop("row_group_size")
    table = _level(rows)
    parquet_file(table, str(tmp_path / "ours.parquet"), options)
    pq.write_table(table, tmp_path / "one_call.parquet", **options)
    ours = (tmp_path / "ours.parquet").read_bytes()
    assert ours == (tmp_path / "one_call.parquet").read_bytes()
    expected_groups = 1 if row_group_size is None else max(1, -(-rows // row_group_size))
    metadata = pq.ParquetFile(tmp_path / "ours.parquet").metadata
    assert metadata.num_rows == rows
    assert metadata.num_row_groups == expected_groups
    assert pq.read_table(tmp_path / "ours.parquet").equals(table)


def _cascade(folder: Path) -> Taco:
    roots = []
    for r in range(3):
        mids = []
        for j in range(2):
            leaves = []
            for m in range(3):
                path = folder / f"f{r}{j}{m}"
                path.write_bytes(bytes([r, j, m]) * 5)
                leaves.append(Sample(f"b{m}", path, cloud=float(m)))
            mids.append(Sample(f"s{j}", Tortilla(leaves), cloud=float(j)))
        roots.append(Sample(f"t{r}", Tortilla(mids), cloud=float(r)))
    return Taco(
        Tortilla(roots), id="drop", dataset_version="1", description="d",
        licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip


def test_single_zip_drops_tables_as_written_same_members(tmp_path: Path) -> None:
    # create() of one ZIP drops sources and levels as they are written (last use);
    # write_zip keeps them: every member is the same
    taco = _cascade(tmp_path)
    dropped = create(taco, tmp_path / "dropped.tacozip", quiet=True)[0]
    kept = write_zip(taco.metadata(), tmp_path / "kept.tacozip", quiet=True)
    with zipfile.ZipFile(dropped) as a, zipfile.ZipFile(kept) as b:
        assert a.namelist() == b.namelist()
        assert len(a.namelist()) == 1 + 18 + 9 + 3 + 1
        for name in a.namelist():
            assert a.read(name) == b.read(name), name


def test_create_leaves_no_level_table_alive(tmp_path: Path) -> None:
    taco = _cascade(tmp_path)
    package = taco.metadata()
    held = [weakref.ref(table) for table in package.levels]
    del package
    create(taco, tmp_path / "out.tacozip", quiet=True)
    gc.collect()
    assert [ref() for ref in held] == [None, None, None]
    assert load_levels(tmp_path / "out.tacozip") == [3, 6, 18]


def load_levels(path: Path) -> list[int]:
    """Rows of each stored level Parquet of a TACO ZIP."""
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.startswith("METADATA/level"))
        return [pq.read_metadata(pa.BufferReader(archive.read(n))).num_rows for n in names]


def _folder_level(rows: int) -> tuple[pa.Table, np.ndarray, pa.Array]:
    """Level 1 of a tree: every third row a FOLDER, parents from a 3-row level 0."""
    folder = np.arange(rows) % 3 == 0
    parents = np.arange(rows, dtype=np.int64) * 3 // max(rows, 1)
    ids = [f"s{i}" for i in range(rows)]
    paths = [f"t{p}/{i}" + ("/" if f else "") for p, i, f in zip(parents, ids, folder, strict=True)]
    table = pa.table(
        {
            ID: pa.array(ids, pa.string()),
            TYPE: pa.array(["FOLDER" if f else FILE for f in folder], pa.string()),
            "cloud": pa.array([float(i % 5) for i in range(rows)], pa.float64()),
            "internal:current_id": np.arange(rows, dtype=np.int64),
            "internal:parent_id": parents,
            RELATIVE_PATH: pa.array(paths, pa.string()),
        }
    )
    return table, folder, pa.array(["t0/", "t1/", "t2/"])


@pytest.mark.parametrize(("rows", "row_group_size"), [(0, 64), (7, 64), (1000, 64), (1000, None)])
def test_rebuilt_columns_write_the_same_bytes(
    tmp_path: Path, rows: int, row_group_size: int | None
) -> None:
    table, folder, parent_paths = _folder_level(rows)
    options = parquet_options(LEVEL_OPTIONS, {"row_group_size": row_group_size})
    compact, rebuilt = rebuild_columns(table, folder, parent_paths)
    assert sorted(rebuilt.columns) == sorted([TYPE, "internal:current_id", RELATIVE_PATH])
    assert compact.column_names == [ID, "cloud", "internal:parent_id"]
    parquet_file(table, str(tmp_path / "held.parquet"), options)
    parquet_file(compact, str(tmp_path / "rebuilt.parquet"), options, rebuilt)
    assert (tmp_path / "rebuilt.parquet").read_bytes() == (tmp_path / "held.parquet").read_bytes()


def test_columns_that_differ_are_kept(tmp_path: Path) -> None:
    table, folder, parent_paths = _folder_level(50)
    paths = table.column(RELATIVE_PATH).to_pylist()
    paths[49] = "elsewhere/s49"
    current = np.arange(50, dtype=np.int64)
    current[3] = 99
    table = table.set_column(5, RELATIVE_PATH, pa.array(paths))
    table = table.set_column(3, "internal:current_id", pa.array(current))
    compact, rebuilt = rebuild_columns(table, folder, parent_paths)
    assert rebuilt.columns == {TYPE}
    options = parquet_options(LEVEL_OPTIONS)
    parquet_file(table, str(tmp_path / "held.parquet"), options)
    parquet_file(compact, str(tmp_path / "rebuilt.parquet"), options, rebuilt)
    assert (tmp_path / "rebuilt.parquet").read_bytes() == (tmp_path / "held.parquet").read_bytes()
    assert pq.read_table(tmp_path / "rebuilt.parquet").column(RELATIVE_PATH).to_pylist() == paths


@pytest.mark.parametrize(
    "asked", [None, False, [ID, CHECKSUM]], ids=["default", "no-dictionary", "listed"]
)
def test_the_digest_column_has_no_dictionary(tmp_path: Path, asked: object) -> None:
    # digests are all distinct: a dictionary only makes the column larger and slower
    table = _level(1000).append_column(CHECKSUM, pa.array([f"xxh3:{i:016x}" for i in range(1000)]))
    options = parquet_options(LEVEL_OPTIONS, {} if asked is None else {"use_dictionary": asked})
    parquet_file(table, str(tmp_path / "level.parquet"), options)
    group = pq.ParquetFile(tmp_path / "level.parquet").metadata.row_group(0)
    encodings = {
        group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)
    }
    assert not any("DICTIONARY" in e for e in encodings[CHECKSUM])
    assert any("DICTIONARY" in e for e in encodings[ID]) == (asked is not False)
    assert pq.read_table(tmp_path / "level.parquet").equals(table)
