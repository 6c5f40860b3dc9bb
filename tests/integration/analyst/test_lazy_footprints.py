"""`.data` footprints are computed when used, and used they equal the eager ones.

The mixed-CRS dataset (UTM 30N, UTM 31N, EPSG:4326, one scene across the
antimeridian) makes every footprint a reprojection; the eager truth is
:func:`~taco_gdal.read.frames._geoframe.footprints_for_rows` on the same rows.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

import taco_gdal
from taco_gdal.read.frames._geoframe import footprints_for_rows
from taco_gdal.read.spatial._lazygeom import LazyGeometryArray


def _truth(ds: taco_gdal.TacoDataset) -> np.ndarray:
    table = ds.to_arrow(0)
    return footprints_for_rows(table, "istac:geometry", ds.state, 0)


def _same(a: object, b: object) -> bool:
    return bool(shapely.equals_exact(a, b, tolerance=1e-12))


def test_data_returns_before_any_footprint_exists(flat_path: Path) -> None:
    frame = taco_gdal.load(str(flat_path)).data
    values = frame.geometry.values
    assert isinstance(values, LazyGeometryArray) and not values.computed
    assert len(frame) == len(values) > 0
    assert str(frame.crs) == "EPSG:4326"
    assert frame["id"].tolist()  # reading other columns computes nothing
    assert not values.computed


def test_taking_rows_computes_only_those_and_matches_the_truth(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    truth = _truth(ds)
    frame = ds.data
    head = frame.head(3)
    assert all(_same(g, t) for g, t in zip(head.geometry, truth[:3], strict=True))
    picked = frame.iloc[[len(frame) - 1, 0]]
    assert _same(picked.geometry.iloc[0], truth[-1]) and _same(picked.geometry.iloc[1], truth[0])
    masked = frame[frame["id"] == frame["id"].iloc[2]]
    assert _same(masked.geometry.iloc[0], truth[2])
    assert _same(frame.geometry.iloc[-1], truth[-1])
    assert not frame.geometry.values.computed


def test_whole_column_work_computes_once_and_matches(flat_path: Path, tmp_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    truth = _truth(ds)
    frame = ds.data
    bounds = frame.total_bounds
    assert frame.geometry.values.computed
    assert np.allclose(bounds, shapely.total_bounds(truth))
    assert all(_same(g, t) for g, t in zip(frame.geometry, truth, strict=True))
    out = tmp_path / "footprints.gpkg"
    frame.to_file(out)
    back = pyogrio.read_dataframe(out)
    assert back.crs.to_epsg() == 4326 and len(back) == len(truth)


def test_a_frame_pickles_and_copies_with_its_footprints(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    truth = _truth(ds)
    frame = ds.data
    copied = frame.copy()
    again = pickle.loads(pickle.dumps(frame))
    for other in (copied, again):
        assert all(_same(g, t) for g, t in zip(other.geometry, truth, strict=True))
    assert str(again.crs) == "EPSG:4326"


def test_setting_a_footprint_changes_only_that_frame(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    frame = ds.data
    point = shapely.Point(0, 0)
    frame.loc[frame.index[0], "geometry"] = point
    assert _same(frame.geometry.iloc[0], point)
    assert not _same(ds.data.geometry.iloc[0], point)


def test_showing_a_big_frame_draws_a_sample_without_computing_all(
    flat_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taco_gdal.read.notebook import _plots

    monkeypatch.setattr(_plots, "_MAP_SHAPES", 3)  # "big" = more rows than the map draws
    frame = taco_gdal.load(str(flat_path)).data
    with pd.option_context("display.max_rows", 4, "display.min_rows", 4):
        page = frame._repr_html_()  # the table shows 4 rows: it computes only those
    assert page is not None and "<svg" in page
    assert "<path" in page or page.count("<rect") > 1  # footprints (tiny ones as squares)
    assert f"{len(frame)} rows, 3 of an even sample drawn" in page
    assert not frame.geometry.values.computed
