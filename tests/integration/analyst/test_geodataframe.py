""".data as a one-CRS GeoDataFrame, files written and read back, pandas-like access, stats."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import rasterio
import shapely

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.read.frames.dataframe import TacoGeoDataFrame
from tests.support.scenes import SCENES, truth_footprint


def test_data_has_one_active_geometry_in_4326(flat_path: Path) -> None:
    data = taco_gdal.load(str(flat_path)).data
    assert isinstance(data, TacoGeoDataFrame)
    assert data.active_geometry_name == "geometry"
    assert data.crs is not None and data.crs.to_epsg() == 4326
    assert list(data.columns[data.dtypes == "geometry"]) == ["geometry"]
    west, south, east, north = data.total_bounds
    assert -180 <= west <= east <= 180 and -90 <= south <= north <= 90
    by_id = dict(zip(data["id"], data.geometry, strict=True))
    for scene in SCENES:
        truth = truth_footprint(scene)
        assert by_id[scene.stem].symmetric_difference(truth).area <= 1e-4 * truth.area
    # the source-CRS footprint stays as stored: WKB in the row's istac:crs
    row = data[data["id"] == "utm30_0"].iloc[0]
    assert row["istac:crs"] == "EPSG:32630"
    assert shapely.from_wkb(row["istac:geometry"]).bounds[0] == 400_000
    assert data.to_crs("EPSG:3857").crs.to_epsg() == 3857


@pytest.mark.parametrize(
    ("driver", "suffix"), [("GPKG", ".gpkg"), ("FlatGeobuf", ".fgb"), ("Parquet", ".parquet")]
)
def test_to_file_round_trips(flat_path: Path, tmp_path: Path, driver: str, suffix: str) -> None:
    data = taco_gdal.load(str(flat_path)).filter_bbox(-4.0, 39.9, -3.0, 40.8).data
    target = tmp_path / f"footprints{suffix}"
    if driver == "Parquet":
        data.to_parquet(target)
        back = gpd.read_parquet(target)
    else:
        data.to_file(target, driver=driver)
        info = pyogrio.read_info(target)
        assert info["crs"] == "EPSG:4326" and info["features"] == len(data)
        back = pyogrio.read_dataframe(target)
    assert back.crs is not None and back.crs.to_epsg() == 4326
    assert sorted(back["id"]) == sorted(data["id"])
    assert back.geometry.union_all().equals_exact(data.geometry.union_all(), 1e-9)


def test_internal_columns_on_request(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    tidy = ds.frame()
    assert "internal:gdal_vsi" in tidy.columns
    assert not [c for c in tidy.columns if c.startswith("internal:") and c != "internal:gdal_vsi"]
    assert tidy.index.name == "internal:current_id"
    full = ds.frame(internal=True)
    assert {"internal:offset", "internal:size", "internal:current_id"} <= set(full.columns)


def test_len_head_and_iteration(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    assert len(ds) == len(SCENES)
    march = ds.filter_datetime("2024-03")
    expected = sorted(s.stem for s in SCENES if (s.time.year, s.time.month) == (2024, 3))
    assert len(march) == len(expected) > 0
    assert sorted(row["id"] for row in march) == expected
    head = ds.head(3)
    assert list(head["id"]) == list(ds.data["id"][:3])
    assert ds.head(0).empty
    with pytest.raises(TacoQueryError, match="expected an int >= 0"):
        ds.head(-1)


def _pixels(folder: Path, stems: list[str]) -> np.ndarray:
    values = []
    for stem in stems:
        with rasterio.open(folder / f"{stem}.tif") as src:
            values.append(src.read(1).ravel().astype(np.float64))
    return np.concatenate(values)


def test_stats_run_on_the_filtered_view(flat_path: Path, scene_dir: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    filtered = ds.filter_bbox(-4.0, 39.9, -3.0, 40.8)
    pixels = _pixels(scene_dir, sorted(filtered.data["id"]))
    assert filtered.stats_mean(0) == pytest.approx(pixels.mean())
    assert filtered.stats_std(0) == pytest.approx(pixels.std())
    assert filtered.stats_min(0) == pixels.min()
    assert filtered.stats_max(0) == pixels.max()
    assert pixels.min() < filtered.stats_median(0) < pixels.max()
    quartiles = [filtered.stats_p25(0), filtered.stats_p50(0), filtered.stats_p75(0)]
    assert quartiles == sorted(quartiles) and filtered.stats_p95(0) >= quartiles[-1]
    for median in (filtered.stats_p50(0), filtered.stats_median(0)):  # merges compact at random
        assert np.mean(pixels < median) - 0.01 <= 0.5 <= np.mean(pixels <= median) + 0.01
    # any percentile, from the merged sketches: a rank within the stated error
    error = filtered.stats(0, q=(90,)).rank_error
    assert error is not None and error < 0.01
    p90 = filtered.stats_percentile(90, 0)
    assert np.mean(pixels < p90) - error <= 0.9 <= np.mean(pixels <= p90) + error
    with pytest.raises(TacoQueryError, match=r"q expected numbers in 0..100, found 101"):
        filtered.stats_percentile(101)
    everything = _pixels(scene_dir, [s.stem for s in SCENES])
    assert ds.stats_mean()[0] == pytest.approx(everything.mean())
    assert filtered.stats_mean(0) != pytest.approx(everything.mean())
    with pytest.raises(TacoQueryError, match="does not apply"):
        ds.stats_categorical()


def test_plot_and_explore(flat_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = taco_gdal.load(str(flat_path)).filter_bbox(-4.5, 39.0, 3.0, 42.0)
    axes = ds.plot(column="stac:time_start")
    assert axes.get_xlabel() == "longitude (°)" and len(axes.collections) >= 1
    xmin, xmax = axes.get_xlim()
    assert -5 < xmin < xmax < 4  # degrees, not metres
    quick = ds.data.plot_sample("utm30_1")
    assert quick.get_title().startswith("utm30_1  2024-")
    assert quick.images[0].get_array().shape == (8, 8)
    plt.close("all")
    import folium  # a test requirement: explore() is exercised for real

    folium_map = ds.explore(tiles=None)
    assert isinstance(folium_map, folium.Map)
    assert "utm30_1" in folium_map.get_root().render()


def test_plot_legend_survives_a_default_savefig(flat_path: Path, tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = taco_gdal.load(str(flat_path))
    axes = ds.plot(column="istac:crs")  # "EPSG:326.." labels, once cut at "EPSG:32"
    figure = axes.figure
    figure.savefig(tmp_path / "map.png")  # no bbox_inches: what a user types first
    legend = axes.get_legend()
    box = legend.get_window_extent(figure.canvas.get_renderer())
    assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1, (box, figure.bbox)
    assert figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1, (box, figure.bbox)
    assert all(t.get_text().startswith("EPSG:") for t in legend.get_texts())
    plt.close("all")
    figure, mine = plt.subplots()
    ds.plot(column="istac:crs", ax=mine)  # the caller's figure: the legend goes inside
    figure.savefig(tmp_path / "mine.png")
    box = mine.get_legend().get_window_extent(figure.canvas.get_renderer())
    assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1, (box, figure.bbox)
    assert figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1, (box, figure.bbox)
    plt.close("all")


def test_a_view_without_the_crs_column_still_gets_4326_footprints(flat_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    view = ds.sql('SELECT id, "istac:geometry", "internal:current_id" FROM data LIMIT 3')
    frame = view.data
    assert frame.crs.to_epsg() == 4326
    west, _, east, _ = frame.total_bounds
    assert -180 <= west <= east <= 180
