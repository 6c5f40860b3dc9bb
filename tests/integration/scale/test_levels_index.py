"""ChildIndex (children of a row in O(children)) and chunked point decoding, against brute force."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import shapely

from taco_gdal.format.names import ISTAC_CENTROID, ISTAC_GEOMETRY, PARENT_ID
from taco_gdal.read.query.prepared import ChildIndex, add_point_columns, child_index, point_columns


@pytest.mark.parametrize("shuffled", [False, True])
def test_child_index_matches_a_scan(shuffled: bool) -> None:
    rng = np.random.default_rng(3)
    parents = 50
    counts = rng.integers(0, 6, parents)  # some parents have no child
    ids = np.repeat(np.arange(parents), counts)
    if shuffled:
        ids = rng.permutation(ids)
    index = ChildIndex.build(ids, parents)
    assert (index.order is None) is (not shuffled)
    for parent in range(parents):
        expected = np.flatnonzero(ids == parent)  # stored order among siblings
        assert index.rows(parent).tolist() == expected.tolist()
    assert index.rows(parents).size == 0
    assert index.rows(-1).size == 0


def test_child_index_of_a_level_table() -> None:
    table = pa.table({"id": ["a", "b", "c"], PARENT_ID: pa.array([1, 1, 0], pa.int64())})
    index = child_index(table, parents=2)
    assert index.rows(0).tolist() == [2]
    assert index.rows(1).tolist() == [0, 1]


def _wkb(geometries: list[shapely.Geometry]) -> pa.Array:
    return pa.array(shapely.to_wkb(np.array(geometries, dtype=object)).tolist(), pa.binary())


def test_points_decoded_chunk_by_chunk() -> None:
    points = [shapely.Point(i * 0.5, -i) for i in range(7)]
    column = pa.chunked_array([_wkb(points[:3]), _wkb(points[3:3]), _wkb(points[3:])])
    table = add_point_columns(pa.table({ISTAC_CENTROID: column}))
    x, y = point_columns(ISTAC_CENTROID)
    assert table.column(x).to_pylist() == [p.x for p in points]
    assert table.column(y).to_pylist() == [p.y for p in points]


def test_points_with_nulls_keep_their_rows() -> None:
    array = pa.array([shapely.Point(1, 2).wkb, None, shapely.Point(3, 4).wkb], pa.binary())
    table = add_point_columns(pa.table({ISTAC_CENTROID: array}))
    x, _ = point_columns(ISTAC_CENTROID)
    values = table.column(x).to_numpy()
    assert values[0] == 1 and np.isnan(values[1]) and values[2] == 3


def test_a_polygon_column_is_neither_decoded_nor_copied() -> None:
    squares = [shapely.box(i, i, i + 1, i + 1) for i in range(20_000)]
    column = pa.chunked_array([_wkb(squares[:10_000]), _wkb(squares[10_000:])])
    table = pa.table({ISTAC_GEOMETRY: column})
    before = pa.total_allocated_bytes()
    out = add_point_columns(table)
    grown = pa.total_allocated_bytes() - before
    assert out.column_names == [ISTAC_GEOMETRY]
    assert grown < column.nbytes // 100, f"the polygon column was copied ({grown} bytes)"
