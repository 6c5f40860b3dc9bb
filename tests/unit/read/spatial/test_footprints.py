"""4326 footprints of mixed-CRS geometry columns, query boxes and their checks (no DuckDB)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pyarrow as pa
import pytest
import shapely

from taco_gdal.errors import TacoQueryError, TacoWarning
from taco_gdal.read.spatial.crs import column_crs
from taco_gdal.read.spatial.footprints import compute_footprints
from taco_gdal.read.spatial.queries import (
    box_geometry,
    check_box,
    query_geometry,
    warn_outside_extent,
)
from tests.support.scenes import PIXELS, SCENES, truth_footprint


def _scene_table() -> pa.Table:
    outlines = [
        shapely.box(s.west, s.north - PIXELS * s.pixel, s.west + PIXELS * s.pixel, s.north)
        for s in SCENES
    ]
    return pa.table(
        {
            "istac:geometry": pa.array(shapely.to_wkb(outlines), pa.binary()),
            "istac:crs": [s.crs for s in SCENES],
        }
    )


def test_footprints_match_a_finely_densified_ground_truth() -> None:
    footprints = compute_footprints(_scene_table(), "istac:geometry")
    for scene, geometry in zip(SCENES, footprints.geometries, strict=True):
        truth = truth_footprint(scene)
        assert geometry.symmetric_difference(truth).area <= 1e-4 * truth.area, scene.stem
        minx, _, maxx, _ = geometry.bounds
        assert -180 <= minx <= maxx <= 180
    fiji = footprints.geometries[[s.stem for s in SCENES].index("fiji_utm60")]
    assert fiji.geom_type == "MultiPolygon"  # cut at the antimeridian


@pytest.mark.parametrize(
    "box",
    [
        (-4.0, 39.9, -3.0, 40.8),
        (179.5, -17.0, -179.5, -16.0),
        (2.0, 41.4, 2.1, 41.5),
        (-180, -90, 180, 90),
    ],
)
def test_matches_equal_the_ground_truth(box: tuple[float, float, float, float]) -> None:
    footprints = compute_footprints(_scene_table(), "istac:geometry")
    query = box_geometry(check_box(box, "EPSG:4326"))
    got = {SCENES[i].stem for i in footprints.matches(query)}
    assert got == {s.stem for s in SCENES if truth_footprint(s).intersects(query)}
    assert got


def test_a_box_in_utm_is_reprojected() -> None:
    footprints = compute_footprints(_scene_table(), "istac:geometry")
    box = check_box((425_000, 4_400_000, 455_000, 4_470_000), "EPSG:32630")
    query = box_geometry(box, "EPSG:32630")
    assert -4 < query.bounds[0] < query.bounds[2] < -3
    got = {SCENES[i].stem for i in footprints.matches(query)}
    assert (
        got
        == {s.stem for s in SCENES if truth_footprint(s).intersects(query)}
        == {
            "utm30_1",
            "utm30_2",
        }
    )


def test_query_geometry_any_shape_and_crs() -> None:
    footprints = compute_footprints(_scene_table(), "istac:geometry")
    line = query_geometry(shapely.LineString([(1.5, 41.45), (2.2, 41.45)]))
    assert {SCENES[i].stem for i in footprints.matches(line)} == {"utm31_0", "utm31_1", "utm31_2"}
    with pytest.raises(TacoQueryError, match="expected a shapely geometry"):
        query_geometry((0, 0, 1, 1))
    with pytest.raises(TacoQueryError, match="cannot reproject from 'EPSG:999999'"):
        query_geometry(shapely.box(0, 0, 1, 1), "EPSG:999999")


@pytest.mark.parametrize(
    ("box", "crs", "message"),
    [
        ((-4, 41, -3, 40), "EPSG:4326", r"miny 41 > maxy 40 in box \(-4, 41, -3, 40\)"),
        ((40.4, -3.7, 40.8, 95), "EPSG:4326", r"latitudes must be in \[-90, 90\]"),
        ((-200, 40, -3, 41), "EPSG:4326", r"longitudes must be in \[-180, 180\]"),
        ((5e5, 4e6, 4e5, 4.1e6), "EPSG:32630", "only an EPSG:4326 box may cross"),
        ((0, 0, 1), "EPSG:4326", "four numbers"),
        ((0, float("nan"), 1, 1), "EPSG:4326", "finite"),
    ],
)
def test_bad_boxes_err_naming_the_box_and_the_order(
    box: tuple[float, ...], crs: str, message: str
) -> None:
    with pytest.raises(TacoQueryError, match=message) as info:
        check_box(box, crs)
    assert "(minx, miny, maxx, maxy)" in str(info.value)


def test_a_box_outside_the_extent_warns_with_the_extent() -> None:
    footprints = compute_footprints(_scene_table(), "istac:geometry")
    with pytest.warns(TacoWarning, match=r"extent \(-180, -17.17, 180, 41.55\)"):
        warn_outside_extent(footprints, box_geometry((10, 60, 11, 61)), "filter_bbox")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_outside_extent(footprints, box_geometry((-4, 40, -3, 41)), "filter_bbox")


def test_crs_sources_and_a_column_without_crs() -> None:
    point = shapely.to_wkb(shapely.Point(500_000, 4_000_000))
    geo = {"columns": {"geom": {"encoding": "WKB", "crs": "EPSG:32630"}}}
    table = pa.table({"geom": [point]}).replace_schema_metadata({"geo": json.dumps(geo)})
    assert column_crs(table, "geom") == (None, "EPSG:32630")
    assert compute_footprints(table, "geom").bounds[0, 0] == pytest.approx(-3.0)
    assert column_crs(pa.table({"x:geom": [point], "x:crs": ["EPSG:1"]}), "x:geom")[0] == "x:crs"
    with pytest.raises(TacoQueryError, match="expected a CRS for column 'geom'"):
        compute_footprints(pa.table({"geom": [point]}), "geom")
    nulls = pa.table({"stac:centroid": pa.array([None, shapely.to_wkb(shapely.Point(1, 2))])})
    footprints = compute_footprints(nulls, "stac:centroid")
    assert footprints.geometries[0] is None and np.isnan(footprints.bounds[0]).all()
    assert list(footprints.matches(shapely.box(0, 0, 5, 5))) == [1]


def test_4326_footprints_past_180_are_cut() -> None:
    table = pa.table(
        {
            "istac:geometry": [shapely.to_wkb(shapely.box(179, 0, 181, 1))],
            "istac:crs": ["EPSG:4326"],
        }
    )
    geometry = compute_footprints(table, "istac:geometry").geometries[0]
    assert geometry.geom_type == "MultiPolygon"
    assert geometry.bounds == (-180.0, 0.0, 180.0, 1.0)
