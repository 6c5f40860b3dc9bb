"""Which Arrow types DuckDB gives back unchanged, and what load asks DuckDB for.

:func:`taco_gdal.read.query._duck.keeps_arrow_types` lets ``load`` and ``.data``
skip DuckDB (no session, no views, no ``LIMIT 0`` schema query) when every
column has a type DuckDB returns as it was given.  The rule is checked here
against DuckDB itself, type by type; a table with any other type still builds
its views at load, so a type DuckDB refuses fails ``load`` as before.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoFormatError
from taco_gdal.read.query import _duck
from tests.integration.read.conftest import RefDataset
from tests.support.datasets import write_dataset

TYPES = [
    pa.bool_(),
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.large_binary(),
    pa.date32(),
    pa.timestamp("s"),
    pa.timestamp("ms"),
    pa.timestamp("us"),
    pa.timestamp("ns"),
    pa.timestamp("us", tz="UTC"),
    pa.dictionary(pa.int32(), pa.string()),
    pa.duration("us"),
    pa.list_(pa.float64()),
    pa.list_(pa.field("element", pa.int64())),
    pa.list_(pa.list_(pa.string())),
    pa.large_list(pa.float64()),
    pa.struct([("a", pa.int64())]),
    pa.null(),
]


@pytest.mark.parametrize("kind", TYPES, ids=str)
def test_kept_types_come_back_from_duckdb_unchanged(kind: pa.DataType) -> None:
    table = pa.table({"x": pa.array([None], kind)})
    conn = duckdb.connect()
    try:
        conn.register("t", table)
        back = conn.execute("SELECT * FROM t LIMIT 0").to_arrow_table().schema
    finally:
        conn.close()
    plain = pa.schema([pa.field("x", kind)])
    if _duck.keeps_arrow_types(table.schema):
        assert back.equals(plain, check_metadata=False), (kind, back)
    else:  # not claimed: DuckDB changes it, or the rule is only cautious (nested types)
        assert kind not in (pa.string(), pa.int64(), pa.float64(), pa.binary())


def test_names_equal_but_for_case_are_never_kept() -> None:
    assert not _duck.keeps_arrow_types(pa.schema([("id", pa.string()), ("ID", pa.string())]))


def test_load_and_data_ask_duckdb_nothing_for_kept_types(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    assert all(_duck.keeps_arrow_types(t.schema) for t in ds.state.base.tables)
    frame = ds.data
    assert len(frame) > 0
    assert ds.state.base not in _duck._sessions  # no DuckDB session was built
    assert len(ds.sql("SELECT * FROM data").data) == len(frame)  # a query builds one
    assert ds.state.base in _duck._sessions


def test_a_type_duckdb_refuses_fails_load_naming_the_column(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, "flat", "folder")
    level0 = path / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    half = pa.array(np.ones(table.num_rows, dtype=np.float16))
    pq.write_table(table.append_column("half", half), level0)
    with pytest.raises(TacoFormatError, match=r"'half' \(halffloat\)"):
        reader.load(path)
