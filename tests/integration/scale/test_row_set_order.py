"""Filters decided in numpy keep the view's row order, even when DuckDB joins in parallel.

A spatial or datetime filter reaches DuckDB as a semi-join on a table of row
positions; a parallel hash join returns rows in any order, so the view numbers
its source's rows and restores their order.  300k rows are enough for DuckDB
to split the scan between threads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import taco_gdal
from bench.scale import datasets

BOX = (-3.0, 40.0, 3.0, 45.0)


@pytest.fixture(scope="module")
def big_zip(scale_folder: Path) -> Path:
    return datasets.flat(300_000, scale_folder)


def _positions(ds: taco_gdal.TacoDataset) -> list[int]:
    return [int(i[1:]) for i in ds.to_arrow(0).column("id").to_pylist()]  # ids are s<row>


def test_filtered_rows_keep_stored_order(big_zip: Path) -> None:
    ds = taco_gdal.load(str(big_zip))
    kept = ds.filter_bbox(*BOX).filter_datetime("2021-01-01/2021-06-30")
    positions = _positions(kept)
    assert len(positions) > 1000
    assert positions == sorted(positions)
    assert kept.data["id"].tolist() == [f"s{p}" for p in positions]


def test_filter_after_sql_keeps_the_sql_order(big_zip: Path) -> None:
    ds = taco_gdal.load(str(big_zip))
    reordered = ds.sql("SELECT * FROM data ORDER BY cloud_cover, id")
    inside = set(ds.filter_bbox(*BOX).to_arrow(0).column("id").to_pylist())
    expected = [i for i in reordered.to_arrow(0).column("id").to_pylist() if i in inside]
    assert reordered.filter_bbox(*BOX).to_arrow(0).column("id").to_pylist() == expected
