"""Regression tests for what the long fuzz runs (scripts/fuzz.py) found, one test per finding."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import CURRENT_ID, ID, OFFSET, RELATIVE_PATH, TYPE
from taco_gdal.read.containers._parse import parse_level
from tests.datasets import write_dataset


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


@pytest.mark.parametrize(
    ("column", "values"),
    [
        (ID, pa.array([b"a", b"b"], pa.binary())),
        (TYPE, pa.array([1, 2], pa.int64())),
        (CURRENT_ID, pa.array(["0", "1"])),
        (OFFSET, pa.array([1.5, 2.5])),
        (RELATIVE_PATH, pa.array([b"a", b"b"], pa.binary())),
    ],
)
def test_spec_column_of_the_wrong_type_is_refused(column: str, values: pa.Array) -> None:
    # Found by the parquet fuzzer (seed 2026): a flipped logical-type byte made ``id``
    # a BLOB, and building the views failed with DuckDB's BinderException.
    columns = {ID: pa.array(["a", "b"]), TYPE: pa.array(["FILE", "FILE"]), column: values}
    with pytest.raises(TacoFormatError, match=f"column '{column}' must hold"):
        parse_level(_parquet(pa.table(columns)), "level0.parquet")


def test_text_columns_may_be_large_strings_and_internal_columns_null() -> None:
    table = pa.table(
        {
            ID: pa.array(["a"], pa.large_string()),
            TYPE: pa.array(["FILE"]),
            RELATIVE_PATH: pa.nulls(1),
        }
    )
    assert parse_level(_parquet(table), "level0.parquet").num_rows == 1


def test_binary_id_in_a_folder_dataset_fails_load_with_a_taco_error(tmp_path: Path) -> None:
    root = write_dataset(tmp_path, "flat", "folder", n=2)
    level0 = root / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    position = table.column_names.index(ID)
    pq.write_table(table.set_column(position, ID, table.column(ID).cast(pa.binary())), level0)
    with pytest.raises(TacoFormatError, match="column 'id' must hold text, found binary"):
        taco_gdal.load(root)
