"""`.data` and the level views: counts, ids, ids linking levels, GDAL paths, geometry."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
import shapely

import taco_gdal.read as reader
from taco_gdal.read import TacoDataFrame, TacoGeoDataFrame
from tests.integration.read.conftest import RefDataset


def test_level0_counts_and_ids(ref: RefDataset) -> None:
    data = reader.load(ref.path).frame(internal=True)
    assert isinstance(data, TacoDataFrame)
    assert data["id"].tolist() == [n.id for n in ref.level(0)]
    assert data["type"].tolist() == [n.type for n in ref.level(0)]
    assert data["internal:current_id"].tolist() == list(range(len(ref.level(0))))


def test_every_level_through_sql(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    assert ds.level_counts() == [len(ref.level(k)) for k in range(ref.depth + 1)]
    for level in range(1, ref.depth + 1):
        rows = ds.sql(f"SELECT * FROM level{level}").frame(internal=True)
        expected = ref.level(level)
        assert rows["id"].tolist() == [n.id for n in expected]
        assert rows["internal:current_id"].tolist() == list(range(len(expected)))
        parents = {n.position: i for i, n in enumerate(ref.level(level - 1))}
        assert rows["internal:parent_id"].tolist() == [parents[n.position[:-1]] for n in expected]


def test_cross_level_join_pairs_each_child_once(ref: RefDataset) -> None:
    if ref.depth == 0:
        return
    ds = reader.load(ref.path)
    joined = ds.sql(
        "SELECT p.id AS parent, c.id AS child FROM level0 p JOIN level1 c "
        'ON c."internal:parent_id" = p."internal:current_id" ORDER BY c."internal:current_id"'
    ).data
    assert list(zip(joined["parent"], joined["child"], strict=True)) == [
        (n.ids[0], n.id) for n in ref.level(1)
    ]


def test_gdal_vsi_form(ref: RefDataset) -> None:
    data = reader.load(ref.path).data
    vsi = data["internal:gdal_vsi"].tolist()
    if ref.format == "folder":
        suffix = "" if ref.shape == "flat" else "/__meta__"
        assert vsi == [f"{ref.path}/DATA/{n.id}{suffix}" for n in ref.level(0)]
    elif ref.format == "zip":
        assert all(v.startswith("/vsisubfile/") and v.endswith(f",{ref.path}") for v in vsi)
    else:
        assert all(v.startswith("/vsisubfile/") and ".tacozip" in v for v in vsi)
        assert data["internal:source_file"].notna().all()
        for v, source in zip(vsi, data["internal:source_file"], strict=True):
            assert v.endswith("/" + source)


def test_geometry_columns_are_shapely_with_crs(ref: RefDataset) -> None:
    data = reader.load(ref.path).data
    assert isinstance(data, TacoGeoDataFrame) and isinstance(data, gpd.GeoDataFrame)
    assert data.geometry.name == "geometry"  # one active column: EPSG:4326 footprints
    assert data.crs is not None and data.crs.to_epsg() == 4326
    stored = shapely.from_wkb(data["stac:centroid"].to_numpy())  # stored WKB stays bytes
    assert list(stored) == list(data.geometry)
    xs = [p.x for p in stored]
    ys = [p.y for p in stored]
    assert xs == pytest.approx([n.centroid[0] for n in ref.level(0)])
    assert ys == pytest.approx([n.centroid[1] for n in ref.level(0)])
    assert all(isinstance(p, shapely.Point) for p in data.geometry)


def test_timestamps_are_exact(ref: RefDataset) -> None:
    data = reader.load(ref.path).data
    times = [t.to_pydatetime() for t in data["stac:time_start"]]
    assert times == [n.time for n in ref.level(0)]


def test_slicing_keeps_navigation(reference) -> None:  # type: ignore[no-untyped-def]
    data = reader.load(reference("2level", "zip").path).data
    subset = data[data["score"] > 0]
    assert isinstance(subset, TacoGeoDataFrame)
    assert subset.read(0)["id"].tolist() == ["a", "b"]
    plain = data[["id", "type", "internal:gdal_vsi"]]  # the index keeps internal:current_id
    assert isinstance(plain, TacoDataFrame) and not isinstance(plain, gpd.GeoDataFrame)
    assert plain.read("tile2")["id"].tolist() == ["a", "b"]
    assert isinstance(data.head(2), TacoGeoDataFrame)
    assert isinstance(data.iloc[1:], TacoGeoDataFrame)


def test_frame_without_geometry_is_pandas(reference) -> None:  # type: ignore[no-untyped-def]
    ds = reader.load(reference("flat", "zip").path)
    data = ds.sql('SELECT id, type, "internal:gdal_vsi" FROM data').data
    assert type(data) is TacoDataFrame and isinstance(data, pd.DataFrame)
    assert data.read(0).startswith("/vsisubfile/")


def test_helper_columns_never_shown(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    assert not [c for c in ds.data.columns if str(c).startswith("__taco")]
    assert not [c for c in ds.columns if c.startswith("__taco")]
