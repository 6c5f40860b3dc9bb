"""STAC and ISTAC: types, centroids in EPSG:4326, times, reading a raster with rasterio."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import shapely
from pyproj import Transformer

from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.extensions import ISTAC, STAC
from taco_gdal.model import Sample
from tests.unit.extensions.conftest import WriteTiff

T0 = datetime(2024, 5, 1, 12, 0)
T0_US = 1_714_564_800_000_000


def _utm_to_wgs84(x: float, y: float) -> tuple[float, float]:
    lon, lat = Transformer.from_crs(32633, 4326, always_xy=True).transform(x, y)
    return float(lon), float(lat)


def test_stac_schema_types() -> None:
    assert STAC(schema_only=True).get_schema() == {
        "stac:crs": pa.string(),
        "stac:tensor_shape": pa.list_(pa.int64()),
        "stac:geotransform": pa.list_(pa.float64()),
        "stac:time_start": pa.timestamp("us"),
        "stac:centroid": pa.binary(),
        "stac:time_end": pa.timestamp("us"),
        "stac:time_middle": pa.timestamp("us"),
    }


def test_stac_centroid_from_geotransform_and_shape() -> None:
    ext = STAC("EPSG:32633", (3, 100, 200), (500_000, 10, 0, 5_000_000, 0, -10), T0_US)
    point = shapely.from_wkb(ext.centroid)
    assert (point.x, point.y) == pytest.approx(_utm_to_wgs84(501_000, 4_999_500))
    assert len(ext.centroid or b"") == 21  # 2D WKB point


def test_stac_times_int_or_datetime_and_midpoint() -> None:
    end = T0 + timedelta(hours=2)
    ext = STAC("EPSG:4326", (1, 2), (0, 1, 0, 0, 0, -1), T0, time_end=end)
    assert ext.time_start == T0_US
    assert ext.time_middle == T0_US + 3_600_000_000
    aware = datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert STAC("EPSG:4326", (1, 2), (0, 1, 0, 0, 0, -1), aware).time_start == T0_US
    row = Sample("s", b"1").extend_with(ext)
    assert row["stac:time_start"] == T0
    assert row["stac:time_middle"] == T0 + timedelta(hours=1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"crs": None}, "STAC.crs"),
        ({"crs": "EPSG:999999"}, "cannot interpret"),
        ({"tensor_shape": (5,)}, "tensor_shape"),
        ({"tensor_shape": (1, 0, 3)}, "tensor_shape"),
        ({"geotransform": (0, 1, 0)}, "geotransform"),
        ({"time_start": None}, "time_start: required"),
        ({"time_start": "2024-01-01"}, "expected int microseconds"),
        ({"time_end": T0_US - 1}, "is after time_end"),
    ],
)
def test_stac_invalid_inputs(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {
        "crs": "EPSG:4326",
        "tensor_shape": (1, 4, 4),
        "geotransform": (0, 1, 0, 0, 0, -1),
        "time_start": T0_US,
    }
    with pytest.raises(TacoValidationError, match=match):
        STAC(**{**args, **kwargs})  # type: ignore[arg-type]


def test_stac_from_raster(write_tiff: WriteTiff) -> None:
    tif = write_tiff("a.tif", np.zeros((2, 6, 4), np.uint8))
    ext = STAC.from_raster(tif, time_start=T0)
    assert ext.crs == "EPSG:32633"
    assert ext.tensor_shape == (2, 6, 4)
    assert ext.geotransform == (500_000.0, 10.0, 0.0, 5_000_000.0, 0.0, -10.0)
    point = shapely.from_wkb(ext.centroid)
    assert (point.x, point.y) == pytest.approx(_utm_to_wgs84(500_020, 4_999_970))


def test_stac_from_raster_errors(write_tiff: WriteTiff, tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match="cannot open"):
        STAC.from_raster(tmp_path / "missing.tif", time_start=0)
    bare = write_tiff("bare.tif", np.zeros((1, 2, 2), np.uint8), crs=None)
    with pytest.raises(TacoValidationError, match="has no CRS"):
        STAC.from_raster(bare, time_start=0)


@pytest.mark.reference
def test_stac_row_equals_tacotoolbox() -> None:
    from tacotoolbox.sample.extensions.stac import STAC as RefSTAC

    args = {
        "crs": "EPSG:32633",
        "tensor_shape": (3, 100, 200),
        "geotransform": (500_000.0, 10.0, 0.0, 5_000_000.0, 0.0, -10.0),
        "time_start": T0_US,
        "time_end": T0_US + 10,
    }
    theirs = RefSTAC(**args)._compute(None)
    ours = STAC(**args)(Sample("s", b"1"))  # type: ignore[arg-type]
    assert ours.equals(theirs)


def test_istac_centroid_in_wgs84_geometry_in_source_crs() -> None:
    box = shapely.box(500_000, 4_999_000, 502_000, 5_000_000)
    ext = ISTAC("EPSG:32633", shapely.to_wkb(box), T0_US, time_end=T0_US + 2)
    point = shapely.from_wkb(ext.centroid)
    assert (point.x, point.y) == pytest.approx(_utm_to_wgs84(501_000, 4_999_500))
    assert ext.time_middle == T0_US + 1
    table = ext(Sample("s", b"1"))
    assert table.column_names == [
        "istac:crs",
        "istac:geometry",
        "istac:time_start",
        "istac:time_end",
        "istac:time_middle",
        "istac:centroid",
    ]
    assert shapely.from_wkb(table.column("istac:geometry")[0].as_py()).equals(box)
    assert table.schema.field("istac:time_end").type == pa.timestamp("us")


@pytest.mark.parametrize(
    ("geometry", "match"),
    [(b"\x01\x02", "not valid WKB"), (shapely.to_wkb(shapely.Polygon()), "empty")],
)
def test_istac_invalid_geometry(geometry: bytes, match: str) -> None:
    with pytest.raises(TacoValidationError, match=match):
        ISTAC("EPSG:4326", geometry, T0_US)


def test_istac_naive_datetime_is_utc() -> None:
    geom = shapely.to_wkb(shapely.Point(1, 2))
    assert (
        ISTAC("EPSG:4326", geom, T0).time_start
        == ISTAC("EPSG:4326", geom, T0.replace(tzinfo=UTC)).time_start
    )
