"""Level Parquet written a row group at a time: the same bytes as one ``pq.write_table``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.format.names import FILE, ID, RELATIVE_PATH, TYPE
from taco_gdal.write._parquet import LEVEL_OPTIONS, parquet_file, parquet_options


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
