"""``gdal_vsi_arrow`` (navigation) and ``gdal_vsi_sql`` (every view) build the same paths."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from taco_gdal.format.names import (
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    OFFSET,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query.sql import gdal_vsi_arrow, gdal_vsi_sql, not_padding_mask, not_padding_sql

ROWS = pa.table(
    {
        ID: ["a", "__TACOPAD__0", "c/d", "e"],
        TYPE: [FILE, FILE, FOLDER, FOLDER],
        OFFSET: pa.array([0, 10, 2**40, 7], pa.int64()),
        SIZE: pa.array([5, 0, 123, 1], pa.int64()),
        SOURCE_FILE: ["p1.tacozip", "p1.tacozip", "p'2.tacozip", "p3.tacozip"],
        RELATIVE_PATH: ["x/a", "x/pad", "x/c/d/", "e/"],
        GDAL_VSI: ["/s/1", "/s/2", "/s/3", "/s/4"],
    }
)


@pytest.mark.parametrize(
    "rule",
    [
        VsiRule("subfile", "/vsicurl/http://127.0.0.1/it's.tacozip"),
        VsiRule("source_file", "/data/cat/"),
        VsiRule("folder", "/data/folder/"),
        VsiRule("stored"),
    ],
    ids=lambda r: r.kind,
)
@pytest.mark.parametrize("relative", [True, False], ids=["relative_path", "id"])
def test_arrow_and_sql_agree(rule: VsiRule, relative: bool) -> None:
    table = ROWS if relative else ROWS.drop_columns([RELATIVE_PATH])
    connection = duckdb.connect()
    connection.register("t", table)
    sql = gdal_vsi_sql(rule, table.column_names)
    expected = connection.execute(f"SELECT {sql} FROM t").fetchall()
    assert gdal_vsi_arrow(rule, table).to_pylist() == [row[0] for row in expected]
    kept = connection.execute(f"SELECT {not_padding_sql()} FROM t").fetchall()
    assert not_padding_mask(table).to_pylist() == [row[0] for row in kept]
