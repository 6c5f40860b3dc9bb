"""`.data` without DuckDB's copy: the rows of an unfiltered or filtered level come from memory.

Every frame the fast path builds must equal, column for column and row for
row, the frame built from DuckDB's ``SELECT * FROM <view>`` (the path every
other query takes): on every reference container and shape, unfiltered, after
level-0 and deeper filters, and after spatial filters (whose rows reach DuckDB
as a :class:`~taco_gdal.read.query.state.RowSet` table).  A view ``sql()`` made is
never taken from memory: its values may differ from the stored ones.
"""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from geopandas.testing import assert_geodataframe_equal
from pandas.testing import assert_frame_equal

import taco_gdal.read as reader
from taco_gdal.read.dataset import TacoDataset
from taco_gdal.read.frames._direct import filtered_rows
from taco_gdal.read.frames.dataframe import FrameContext, TacoGeoDataFrame, to_frame
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import quote_ident
from taco_gdal.read.query.state import RowSet
from tests.integration.read.conftest import T0, RefDataset


def _from_duckdb(ds: TacoDataset) -> pa.Table:
    state = ds.state
    return _duck.fetch(
        state.base, state.steps, f"SELECT * FROM {quote_ident(state.view)}", what="test"
    )


def _assert_same(ds: TacoDataset) -> None:
    direct = filtered_rows(ds.state)
    assert direct is not None, "a filter-only state must be served from memory"
    fast = direct.to_table()
    slow = _from_duckdb(ds)
    assert fast.schema.equals(slow.schema)
    assert fast.equals(slow)
    context = FrameContext(ds.state, 0)
    ours = ds.frame(internal=True)
    theirs = to_frame(slow, context, ds.path, internal=True)
    if isinstance(ours, TacoGeoDataFrame):
        assert_geodataframe_equal(ours, theirs)
    else:
        assert_frame_equal(ours, theirs)


def _views(ds: TacoDataset, depth: int) -> list[TacoDataset]:
    end = (T0.replace(day=3)).isoformat()
    views = [ds, ds.filter_datetime(f"../{end}")]
    views.append(ds.filter_bbox(-1.0, -1.0, 30.0, 50.0, geometry_col="stac:centroid"))
    if depth >= 1:
        views.append(ds.filter_datetime(f"../{end}", level=1))
        box = (4.0, 0.0, 30.0, 50.0)
        views.append(ds.filter_bbox(*box, geometry_col="stac:centroid", level=1))
        views.append(views[-1].filter_datetime(f"../{end}"))
    return views


def test_memory_rows_equal_duckdb_rows(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for view in _views(ds, ref.depth):
        _assert_same(view)


def test_spatial_filter_rows_travel_as_a_row_set(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    kept = ds.filter_bbox(-1.0, -1.0, 30.0, 50.0, geometry_col="stac:centroid")
    (step,) = kept.state.steps
    ((_, rows),) = step.params
    assert isinstance(rows, RowSet)
    assert sorted(rows.positions().tolist()) == sorted(kept.data.index.tolist())
    again = pickle.loads(pickle.dumps(kept))
    assert again.data["id"].tolist() == kept.data["id"].tolist()


def test_sql_views_are_not_taken_from_memory(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    doubled = ds.sql("SELECT * REPLACE (score * 2 AS score) FROM data")
    assert filtered_rows(doubled.state) is None
    assert doubled.data["score"].tolist() == [2 * s for s in ds.data["score"].tolist()]
    then_filtered = doubled.filter_datetime("2000/..")
    assert filtered_rows(then_filtered.state) is None
    assert then_filtered.data["score"].tolist() == doubled.data["score"].tolist()


@pytest.mark.parametrize("repeat", [2])
def test_repeated_data_is_independent(ref: RefDataset, repeat: int) -> None:
    ds = reader.load(ref.path)
    first = ds.data
    first["score"] = -1.0  # a user's change never reaches the next frame
    for _ in range(repeat):
        assert (ds.data["score"] != -1.0).all()
