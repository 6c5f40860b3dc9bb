"""Children of a FOLDER from the level table and its ChildIndex: the same rows as ``__meta__``."""

from __future__ import annotations

from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.format.names import CURRENT_ID, GDAL_VSI, ID, PARENT_ID
from taco_gdal.read.frames._children import children_table, survivors
from taco_gdal.read.frames.navigation import read_meta
from taco_gdal.read.query.sql import quote_ident

DAY_ONE = "2020-01-02/2020-01-02"  # the day of child q1 only


def _level_view_rows(ds: taco_gdal.TacoDataset, parent: int) -> list[str]:
    frame = ds.sql(
        f"SELECT {quote_ident(GDAL_VSI)} FROM level1 WHERE {quote_ident(PARENT_ID)} = {parent} "
        f"ORDER BY {quote_ident(CURRENT_ID)}"
    ).data
    return [str(v) for v in frame[GDAL_VSI]]


def test_children_equal_the_level_rows_and_the_meta_file(cascade_zip: Path) -> None:
    ds = taco_gdal.load(cascade_zip)
    state = ds._state
    folders = ds.to_arrow(0)
    for parent in (0, 1, 57, folders.num_rows - 1):
        children = children_table(state, 1, parent, what="test")
        assert children.column(PARENT_ID).to_pylist() == [parent] * 4
        assert children.column(GDAL_VSI).to_pylist() == _level_view_rows(ds, parent)
        meta, _ = read_meta(str(folders.column(GDAL_VSI)[parent]), "test")
        assert children.column(ID).to_pylist() == meta.column(ID).to_pylist()
        assert children.column(GDAL_VSI).to_pylist() == [
            f"/vsisubfile/{o}_{s},{ds.path}"
            for o, s in zip(
                meta.column("internal:offset").to_pylist(),
                meta.column("internal:size").to_pylist(),
                strict=True,
            )
        ]


def test_a_level_filter_keeps_only_surviving_children(cascade_zip: Path) -> None:
    ds = taco_gdal.load(cascade_zip).filter_datetime(DAY_ONE, level=1)
    state = ds._state
    view = state.views[1]
    alive = survivors(state, 1, view)
    assert alive.tolist() == list(range(1, 400, 4))  # q1 of every FOLDER
    assert survivors(state, 1, view) is alive  # evaluated once per view
    for parent in (0, 42, 99):
        children = children_table(state, 1, parent, what="test")
        assert children.column(ID).to_pylist() == ["q1"]
        assert children.column(CURRENT_ID).to_pylist() == [parent * 4 + 1]


def test_navigation_returns_the_children(cascade_zip: Path) -> None:
    ds = taco_gdal.load(cascade_zip)
    frame = ds.data
    children = frame.read(7)
    assert list(children[ID]) == ["q0", "q1", "q2", "q3"]
    filtered = ds.filter_datetime(DAY_ONE, level=1).data.read(7)
    assert list(filtered[ID]) == ["q1"]
    assert str(filtered[GDAL_VSI].iloc[0]) == str(children[GDAL_VSI].iloc[1])


@pytest.mark.reference
# tacoreader 2.4.21 calls DuckDB's fetch_arrow_table(), deprecated in duckdb 1.5
@pytest.mark.filterwarnings("ignore:fetch_arrow_table\\(\\) is deprecated:DeprecationWarning")
def test_navigation_agrees_with_tacoreader(cascade_zip: Path) -> None:
    import tacoreader

    ours = taco_gdal.load(cascade_zip).filter_datetime(DAY_ONE, level=1).data
    theirs = tacoreader.load(str(cascade_zip)).filter_datetime(DAY_ONE, level=1).data
    for position in (0, 13, 99):
        a, b = ours.read(position), theirs.read(position)
        assert list(a[ID]) == list(b.to_arrow().column(ID).to_pylist()) == ["q1"]
        assert list(a[GDAL_VSI]) == b.to_arrow().column(GDAL_VSI).to_pylist()
