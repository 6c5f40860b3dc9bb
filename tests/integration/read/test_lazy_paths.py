"""`.data`'s GDAL path column is built for the rows looked at, and equals DuckDB's.

A frame served from memory (see :mod:`taco_gdal.read.frames._direct`) carries
``internal:gdal_vsi`` as a :class:`~taco_gdal.read.frames._lazystr.LazyStringArray`:
looking at some rows computes those rows; anything else computes the column
once.  Every value is compared with the column DuckDB's ``level0`` view
computes (the SQL form of the same path rule), on every reference container
and shape, unfiltered and filtered.
"""

from __future__ import annotations

import pickle

import pandas as pd
import pyarrow as pa
import shapely
from pandas.arrays import ArrowStringArray

import taco_gdal.read as reader
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.read.dataset import TacoDataset
from taco_gdal.read.frames._lazystr import LazyStringArray
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import quote_ident
from tests.integration.read.conftest import RefDataset


def _duckdb_paths(ds: TacoDataset) -> list[str]:
    state = ds.state
    sql = f"SELECT {quote_ident(GDAL_VSI)} FROM {quote_ident(state.view)}"
    return [str(v) for v in _duck.fetch(state.base, state.steps, sql, what="test").column(0)]


def _lazy(frame: pd.DataFrame) -> LazyStringArray:
    values = frame[GDAL_VSI].array
    assert isinstance(values, LazyStringArray), type(values)
    return values


def test_looking_at_rows_computes_only_them(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    truth = _duckdb_paths(ds)
    frame = ds.data
    assert not _lazy(frame).computed
    assert frame[GDAL_VSI].dtype == frame["id"].dtype  # pandas' own string dtype
    assert frame.head(2)[GDAL_VSI].tolist() == truth[:2]
    assert frame[GDAL_VSI].iloc[-1] == truth[-1]
    assert frame.iloc[[len(frame) - 1, 0]][GDAL_VSI].tolist() == [truth[-1], truth[0]]
    picked = frame[frame["id"] == frame["id"].iloc[0]]
    assert picked[GDAL_VSI].tolist() == [truth[0]]
    last = frame.read(len(frame) - 1)  # a FILE reads as its path, a FOLDER as its children
    assert last == truth[-1] if isinstance(last, str) else len(last) > 0
    assert not _lazy(frame).computed
    wide = ("display.max_columns", None, "display.width", 10**5, "display.max_colwidth", None)
    with pd.option_context(*wide, "display.max_rows", 2, "display.min_rows", 2):
        text = repr(frame)  # a truncated repr: the first and the last row
    assert truth[0] in text and truth[-1] in text and len(frame) == len(truth)
    assert not _lazy(frame).computed or len(frame) <= 2


def test_whole_column_work_computes_it_once_and_matches(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    truth = _duckdb_paths(ds)
    frame = ds.data
    column = frame[GDAL_VSI]
    assert column.tolist() == truth
    assert _lazy(frame).computed
    assert (column == truth[0]).sum() == 1
    assert column.str.startswith("/vsi").all() or ref.format == "folder"
    assert frame.copy()[GDAL_VSI].tolist() == truth


def test_filtered_frames_are_lazy_and_match(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    kept = ds.filter_bbox(-1.0, -1.0, 30.0, 50.0, geometry_col="stac:centroid")
    frame = kept.data
    assert not _lazy(frame).computed
    assert frame[GDAL_VSI].tolist() == _duckdb_paths(kept)


def test_pickled_frames_carry_plain_values(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    frame = ds.data
    again = pickle.loads(pickle.dumps(frame))
    values = again[GDAL_VSI].array
    assert type(values) is ArrowStringArray
    assert again[GDAL_VSI].tolist() == _duckdb_paths(ds)


def test_a_users_edit_stays_in_their_frame(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    frame = pd.DataFrame(ds.data)  # a TacoDataFrame protects the column; a copy edits freely
    assert isinstance(frame[GDAL_VSI].array, LazyStringArray)
    first = frame.index[0]
    frame.loc[first, GDAL_VSI] = "/vsimem/edited.tif"
    assert frame.loc[first, GDAL_VSI] == "/vsimem/edited.tif"
    assert ds.data[GDAL_VSI].iloc[0] == _duckdb_paths(ds)[0]


def test_the_arrow_form_is_the_duckdb_table(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    table = ds.to_arrow(0)
    assert table.column(GDAL_VSI).type == pa.string()
    assert [str(v) for v in table.column(GDAL_VSI)] == _duckdb_paths(ds)


def test_points_are_decoded_by_the_first_spatial_filter_not_by_load(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    assert not [c for c in ds.state.base.tables[0].column_names if c.startswith("__taco_")]
    kept = ds.filter_bbox(-1.0, -1.0, 30.0, 50.0, geometry_col="stac:centroid")
    table = ds.to_arrow(0)
    points = shapely.from_wkb(table.column("stac:centroid").to_pylist())
    inside = shapely.intersects(points, shapely.box(-1.0, -1.0, 30.0, 50.0))
    truth = [str(i) for i, keep in zip(table.column("id").to_pylist(), inside, strict=True) if keep]
    assert kept.data["id"].tolist() == truth and len(truth) > 0
