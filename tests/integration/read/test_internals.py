"""Pure pieces of the reader: point decoding, time ranges, SQL builders, the spatial wheel."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest
import shapely

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query._duck import spatial_extension_path
from taco_gdal.read.query.prepared import add_point_columns, decode_points, point_columns
from taco_gdal.read.query.sql import gdal_vsi_sql, quote_ident, sql_string
from taco_gdal.read.query.timerange import parse_range


def _wkb(values: list[object]) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(values, pa.binary())])


def test_points_are_decoded_exactly() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-180, 180, 1000), rng.uniform(-90, 90, 1000)
    decoded = decode_points(_wkb(list(shapely.to_wkb(shapely.points(x, y)))))
    assert decoded is not None
    assert np.array_equal(decoded[0], x) and np.array_equal(decoded[1], y)


def test_points_with_nulls_and_slices() -> None:
    points = list(shapely.to_wkb(shapely.points([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])))
    decoded = decode_points(_wkb([points[0], None, points[2]]))
    assert decoded is not None
    assert decoded[0][0] == 1.0 and np.isnan(decoded[0][1]) and decoded[1][2] == 6.0
    sliced = pa.chunked_array([pa.array(points, pa.binary()).slice(1)])
    decoded = decode_points(sliced)
    assert decoded is not None and decoded[0].tolist() == [2.0, 3.0]


def test_non_points_are_left_alone() -> None:
    assert decode_points(_wkb([shapely.box(0, 0, 1, 1).wkb])) is None
    big_endian = shapely.to_wkb(shapely.Point(1, 2), byte_order=0)
    assert decode_points(_wkb([big_endian])) is None
    point_z = shapely.to_wkb(shapely.Point(1, 2, 3))
    assert decode_points(_wkb([point_z])) is None
    table = pa.table({"istac:geometry": pa.array([shapely.box(0, 0, 1, 1).wkb], pa.binary())})
    assert add_point_columns(table).column_names == ["istac:geometry"]
    points = pa.table({"stac:centroid": pa.array([shapely.Point(1, 2).wkb], pa.binary())})
    assert add_point_columns(points).column_names == [
        "stac:centroid",
        *point_columns("stac:centroid"),
    ]


def test_time_ranges() -> None:
    day = parse_range("2023-01-02")
    assert (day.start, day.end, day.end_inclusive) == (
        datetime(2023, 1, 2),
        datetime(2023, 1, 3),
        False,
    )
    instant = parse_range("2023-01-02T03:04:05.000006+01:00")
    assert instant.start == instant.end == datetime(2023, 1, 2, 2, 4, 5, 6)
    assert instant.end_inclusive
    open_start = parse_range(("..", datetime(2023, 5, 1, tzinfo=UTC)))
    assert open_start.start is None and open_start.end == datetime(2023, 5, 1)
    assert parse_range([date(2023, 1, 1), None]).end is None
    assert parse_range("2023-01-01/").end is None
    assert parse_range(np.datetime64("2023-01-01T00:00:01")).start == datetime(2023, 1, 1, 0, 0, 1)
    with pytest.raises(TacoQueryError):
        parse_range(("2023-01-01",))
    with pytest.raises(TacoQueryError):
        parse_range("a/b/c")
    with pytest.raises(TacoQueryError):
        parse_range(12)
    with pytest.raises(TacoQueryError):
        parse_range(None)
    assert parse_range((datetime(2023, 1, 1), datetime(2023, 1, 1))).end_inclusive
    with pytest.raises(TacoQueryError):
        parse_range((datetime(2023, 1, 2), datetime(2023, 1, 2) - timedelta(microseconds=1)))


def test_sql_text_builders() -> None:
    assert quote_ident('we"ird') == '"we""ird"'
    assert sql_string("it's") == "'it''s'"
    folder = gdal_vsi_sql(VsiRule("folder", "/r/DATA"), ["id", "type"])
    assert "'/r/DATA/'" in folder and '"id"' in folder and "'/__meta__'" in folder
    nested = gdal_vsi_sql(VsiRule("folder", "/r/DATA"), ["id", "type", "internal:relative_path"])
    assert '"internal:relative_path"' in nested
    catalog = gdal_vsi_sql(
        VsiRule("source_file", "/vsis3/b/x/"),
        ["internal:offset", "internal:size", "internal:source_file"],
    )
    assert "',/vsis3/b/x/'" in catalog
    assert gdal_vsi_sql(VsiRule("stored"), ["internal:gdal_vsi"]) == '"internal:gdal_vsi"'
    with pytest.raises(Exception, match="internal:offset"):
        gdal_vsi_sql(VsiRule("subfile", "/x.zip"), ["id"])


def test_spatial_extension_comes_from_the_wheel() -> None:
    path = spatial_extension_path()
    assert path.name == "spatial.duckdb_extension" and "duckdb_extension_spatial" in str(path)
