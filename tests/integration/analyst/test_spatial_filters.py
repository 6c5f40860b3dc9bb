"""filter_bbox / filter_geometry on mixed-CRS footprints equal a shapely ground truth in 4326."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pytest
import shapely

import taco_gdal
from taco_gdal.errors import TacoQueryError, TacoWarning
from taco_gdal.read.spatial.queries import box_geometry, check_box
from tests.integration.analyst.conftest import CHILDREN, GROUPS, group_members
from tests.support.scenes import SCENES, truth_footprint, truth_ids

BOXES = [  # (minx, miny, maxx, maxy) in EPSG:4326
    (-4.0, 39.9, -3.0, 40.8),  # the box: UTM 30N scenes and one 4326 scene
    (-3.6, 40.3, 2.0, 41.5),  # every CRS of the mainland
    (2.05, 41.30, 2.40, 41.60),  # UTM 31N only
    (179.5, -17.5, -179.5, -16.0),  # across the antimeridian (minx > maxx)
    (-179.9, -17.5, -179.7, -16.0),  # only the west half of the UTM 60S scene
    (-180.0, -90.0, 180.0, 90.0),  # the world
]


def _ids(ds: taco_gdal.TacoDataset) -> set[str]:
    return set(ds.data["id"])


@pytest.mark.parametrize("box", BOXES, ids=str)
def test_filter_bbox_level0_equals_ground_truth(flat_path: Path, box: tuple[float, ...]) -> None:
    ds = taco_gdal.load(str(flat_path))
    expected = truth_ids(box_geometry(check_box(box, "EPSG:4326")))
    assert expected, "each box hits something"
    assert _ids(ds.filter_bbox(*box)) == expected


def test_utm_scenes_are_not_dropped(flat_path: Path) -> None:
    """The issue's symptom: the lon/lat box returned only the 4326 scenes."""
    ds = taco_gdal.load(str(flat_path))
    found = _ids(ds.filter_bbox(-4.0, 39.9, -3.0, 40.8))
    assert {"utm30_0", "utm30_1", "utm30_2", "utm30_3"} <= found


def test_box_in_another_crs_is_reprojected(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    box = (425_000.0, 4_400_000.0, 455_000.0, 4_470_000.0)
    expected = truth_ids(box_geometry(box, "EPSG:32630"))
    assert expected == {"utm30_1", "utm30_2"}
    assert _ids(ds.filter_bbox(*box, crs="EPSG:32630")) == expected


def test_filter_geometry_any_shape_and_crs(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    triangle = shapely.Polygon([(-4.2, 40.3), (-2.0, 41.3), (-2.0, 40.3)])
    assert _ids(ds.filter_geometry(triangle)) == truth_ids(triangle)
    line = shapely.LineString([(1.5, 41.45), (2.2, 41.45)])
    assert _ids(ds.filter_geometry(line)) == truth_ids(line) == {"utm31_0", "utm31_1", "utm31_2"}
    utm_point = shapely.Point(440_000, 4_470_000)  # inside utm30_1
    assert _ids(ds.filter_geometry(utm_point.buffer(100), crs="EPSG:32630")) == {"utm30_1"}


def test_filters_compound_and_pickle(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    both = ds.filter_bbox(-3.6, 40.3, 2.0, 41.5).filter_datetime("2024-01/2024-03")
    expected = {
        s.stem
        for s in SCENES
        if s.time.month <= 3 and truth_footprint(s).intersects(shapely.box(-3.6, 40.3, 2.0, 41.5))
    }
    assert _ids(both) == expected and expected
    again = pickle.loads(pickle.dumps(both))
    assert _ids(again) == expected
    assert len(both) == len(expected)


@pytest.mark.parametrize("box", BOXES, ids=str)
def test_filter_bbox_level1_cascade_equals_ground_truth(
    nested_path: Path, box: tuple[float, ...]
) -> None:
    ds = taco_gdal.load(str(nested_path))
    query = box_geometry(check_box(box, "EPSG:4326"))
    hits = truth_ids(query)
    groups = {f"grp{g}" for g in range(GROUPS) if hits & set(group_members(g))}
    filtered = ds.filter_bbox(*box, level=1)
    assert _ids(filtered) == groups
    frame = filtered.data
    for group in groups:
        members = dict(zip(CHILDREN, group_members(int(group[3:])), strict=True))
        children = frame.read(group)
        assert {members[c] for c in children["id"]} == hits & set(members.values())


def test_filter_geometry_level1(nested_path: Path) -> None:
    ds = taco_gdal.load(str(nested_path))
    aoi = shapely.Point(2.2, 41.45).buffer(0.05)
    hits = truth_ids(aoi)
    assert hits == {"utm31_2"}
    assert _ids(ds.filter_geometry(aoi, level=1)) == {"grp2"}


@pytest.mark.parametrize(
    ("box", "kwargs", "message"),
    [
        ((-4.0, 40.8, -3.0, 39.9), {}, r"miny 40.8 > maxy 39.9 in box \(-4, 40.8, -3, 39.9\)"),
        ((-4.0, -95.0, -3.0, 40.8), {}, r"latitudes must be in \[-90, 90\]"),
        ((-190.0, 39.9, -3.0, 40.8), {}, r"longitudes must be in \[-180, 180\]"),
        ((-4.0, 39.9, -3.0, 95.0), {}, r"latitudes must be in \[-90, 90\]"),
        ((455_000, 4.4e6, 425_000, 4.47e6), {"crs": "EPSG:32630"}, "only an EPSG:4326 box"),
    ],
)
def test_bad_boxes_err(
    flat_path: Path, box: tuple[float, ...], kwargs: dict[str, str], message: str
) -> None:
    ds = taco_gdal.load(str(flat_path))
    with pytest.raises(TacoQueryError, match=message) as info:
        ds.filter_bbox(*box, **kwargs)
    assert "expected (minx, miny, maxx, maxy)" in str(info.value)


def test_box_outside_the_extent_warns_with_the_extent(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    with pytest.warns(TacoWarning, match=r"extent \(-180, -17.17, 180, 41.55\)"):
        empty = ds.filter_bbox(40.0, -4.0, 40.8, -3.0)  # lat/lon order by mistake
    assert len(empty) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds.filter_bbox(-4.0, 39.9, -3.0, 40.8)
