"""A dataset's frame as geopandas and OGR see it (issue 44): GeoJSON dicts and vector files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.index import index
from tests.support.datasets import write_dataset


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("vector"), "flat", "zip")


def test_geo_interface_and_geo_dict(flat: Path) -> None:
    frame = taco_gdal.load(flat).data
    features = frame.__geo_interface__["features"]
    assert [f["properties"]["id"] for f in features] == ["s000", "s001", "s002"]
    assert features[0]["geometry"]["type"] == "Point"
    assert frame.to_geo_dict()["type"] == "FeatureCollection"
    properties = json.loads(json.dumps(frame.__geo_interface__))["features"][0]["properties"]
    assert properties["stac:tensor_shape"] == "[1, 16, 16]"
    assert properties["stac:time_start"] == "2023-01-01T12:00:00"


def test_explore_returns_a_folium_map(flat: Path) -> None:
    import folium

    explored = taco_gdal.load(flat).data.explore(column="cloud_cover")
    assert isinstance(explored, folium.Map)
    assert "s001" in explored.get_root().render()  # popups rendered (bytes would fail here)


def test_protected_columns_still_refused_through_masks(flat: Path) -> None:
    frame = taco_gdal.load(flat).data
    with pytest.raises(TacoQueryError, match="'id' is protected"):
        frame[frame.notna().to_numpy()] = "x"
    with pytest.raises(TacoQueryError, match="'id' is protected"):
        frame[np.ones(len(frame), dtype=bool)] = 0
    frame[pd.isna(frame).to_numpy()] = None  # nothing changes: allowed
    assert frame["id"].tolist() == ["s000", "s001", "s002"]


@pytest.mark.parametrize("suffix", ["geojson", "gpkg", "fgb"])
def test_to_file_writes_text_not_python_reprs(flat: Path, tmp_path: Path, suffix: str) -> None:
    ds = taco_gdal.load(flat)
    out = tmp_path / f"tiles.{suffix}"
    ds.data.to_file(out)
    back = pyogrio.read_dataframe(out).sort_values("id").reset_index(drop=True)
    first = ds.data.iloc[0]
    centroid = back.loc[0, "stac:centroid"]
    assert shapely.from_wkt(centroid).equals(shapely.from_wkb(first["stac:centroid"]))
    shape = back.loc[0, "stac:tensor_shape"]
    shape = json.loads(shape) if isinstance(shape, str) else list(shape)  # GeoJSON: a real list
    assert shape == list(first["stac:tensor_shape"])
    assert pd.Timestamp(back.loc[0, "stac:time_start"]) == first["stac:time_start"]


def test_geojson_text_has_lists_wkt_and_iso_times(flat: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiles.geojson"
    taco_gdal.load(flat).data.to_file(out)
    properties = json.loads(out.read_text())["features"][0]["properties"]
    assert properties["stac:tensor_shape"] == [1, 16, 16]
    assert properties["stac:centroid"].startswith("POINT (")
    assert properties["stac:time_start"] == "2023-01-01T12:00:00"
    assert "b'" not in out.read_text()


@pytest.mark.parametrize("suffix", ["geojson", "gpkg", "fgb"])
def test_index_layers_carry_lists_and_wkb_as_text(flat: Path, tmp_path: Path, suffix: str) -> None:
    ds = taco_gdal.load(flat)
    result = index(ds, tmp_path / f"i.{suffix}")
    layer = pyogrio.read_dataframe(result.path).sort_values("id").reset_index(drop=True)
    shape = layer.loc[0, "stac:tensor_shape"]
    shape = json.loads(shape) if isinstance(shape, str) else list(shape)
    assert shape == [1, 16, 16]
    assert shapely.from_wkt(layer.loc[0, "stac:centroid"]).geom_type == "Point"
