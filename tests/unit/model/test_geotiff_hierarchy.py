"""A 3-level dataset (tiles -> sensors -> bands) of real 8x8 GeoTIFFs with STAC read by rasterio."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import rasterio
import shapely
from pyproj import Transformer
from rasterio.transform import from_origin

from taco_gdal.extensions import STAC, GeotiffStats, MajorTOM
from taco_gdal.model import Sample, Taco, Tortilla

MakeTaco = Callable[..., Taco]
SENSORS = {"s1": ("vv", "vh"), "s2": ("b02", "b03", "b04")}
START = datetime(2023, 3, 1, 10, 30)


def _geotiff(path: Path, x0: float, y0: float, value: int) -> Path:
    data = (np.arange(64, dtype=np.uint16).reshape(8, 8) + value)[None]
    profile = {
        "driver": "GTiff",
        "width": 8,
        "height": 8,
        "count": 1,
        "dtype": "uint16",
        "crs": "EPSG:32633",
        "transform": from_origin(x0, y0, 10.0, 10.0),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Tortilla:
    tiles = []
    for t in range(3):
        x0, y0 = 500_000.0 + 1_000 * t, 5_000_000.0
        sensors = []
        for sensor, bands in SENSORS.items():
            samples = []
            for b, band in enumerate(bands):
                tif = _geotiff(tmp_path / f"t{t}_{sensor}_{band}.tif", x0, y0, 10 * t + b)
                stac = STAC.from_raster(tif, time_start=START + timedelta(days=t))
                samples.append(Sample(band, tif).extend_with(stac).extend_with(GeotiffStats()))
            sensors.append(Sample(sensor, Tortilla(samples).extend_with(MajorTOM(dist_km=10))))
        tiles.append(Sample(f"tile_{t}", Tortilla(sensors), region="eu"))
    return Tortilla(tiles)


def test_three_levels_with_stac_from_rasterio(dataset: Tortilla, make_taco: MakeTaco) -> None:
    package = make_taco(dataset).metadata()
    assert package.depth == 2
    level0, level1, level2 = package.levels
    assert level0.column("id").to_pylist() == ["tile_0", "tile_1", "tile_2"]
    assert level1.column("internal:relative_path").to_pylist()[:2] == ["tile_0/s1/", "tile_0/s2/"]
    assert level2.num_rows == 3 * 5
    assert level2.column("internal:relative_path").to_pylist()[:5] == [
        "tile_0/s1/vv",
        "tile_0/s1/vh",
        "tile_0/s2/b02",
        "tile_0/s2/b03",
        "tile_0/s2/b04",
    ]
    assert level2.column_names[2:12] == [
        "stac:crs",
        "stac:tensor_shape",
        "stac:geotransform",
        "stac:time_start",
        "stac:centroid",
        "stac:time_end",
        "stac:time_middle",
        "geotiff:stats",
        "taco_gdal:stats_sketch",
        "majortom:code",
    ]
    schema = level2.schema
    assert schema.field("stac:tensor_shape").type == pa.list_(pa.int64())
    assert schema.field("stac:geotransform").type == pa.list_(pa.float64())
    assert schema.field("stac:time_start").type == pa.timestamp("us")
    assert schema.field("stac:centroid").type == pa.binary()
    assert schema.field("geotiff:stats").type == pa.list_(pa.list_(pa.float32()))
    row = level2.slice(0, 1).to_pylist()[0]
    assert row["stac:crs"] == "EPSG:32633"
    assert row["stac:tensor_shape"] == [1, 8, 8]
    assert row["stac:geotransform"] == [500_000.0, 10.0, 0.0, 5_000_000.0, 0.0, -10.0]
    assert row["stac:time_start"] == START
    lon, lat = Transformer.from_crs(32633, 4326, always_xy=True).transform(500_040.0, 4_999_960.0)
    point = shapely.from_wkb(row["stac:centroid"])
    assert (point.x, point.y) == pytest.approx((lon, lat))
    assert row["geotiff:stats"][0][:2] == [0.0, 63.0]
    assert row["majortom:code"].startswith("0010km_")


def test_extent_found_at_level_two(dataset: Tortilla, make_taco: MakeTaco) -> None:
    extent = make_taco(dataset).extent
    west, south, east, north = extent.spatial
    assert 14 < west < east < 15.1 and 45 < south <= north < 45.2
    assert extent.temporal == ("2023-03-01T10:30:00Z", "2023-03-03T10:30:00Z")


def test_pit_schema_of_the_geotiff_dataset(dataset: Tortilla, make_taco: MakeTaco) -> None:
    pit = make_taco(dataset).metadata().collection["taco:pit_schema"]
    assert pit["shape"] == [3, 2, 3]
    assert pit["hierarchy"]["2"] == [
        {"n": 6, "type": ["FILE", "FILE"], "id": ["vv", "vh"]},
        {"n": 9, "type": ["FILE"] * 3, "id": ["b02", "b03", "b04"]},
    ]
