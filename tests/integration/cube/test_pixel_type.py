"""The cube's pixel type and nodata from ``taco_gdal:data_type`` / ``taco_gdal:nodata``.

``samples_from_rasters`` records them as rasterio reads them; the cube takes the
type every sample fits and the first sample's nodata, ``dtype=`` overrides the
type, and a sample without a type sends the cube back to reading a header.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import rasterio

import taco_gdal
from taco_gdal.errors import TacoSchemaError
from taco_gdal.format.names import DATA_TYPE, GDAL_VSI, NODATA


def _files(ds: taco_gdal.TacoDataset) -> tuple[list[np.dtype], list[float | None], np.ndarray]:
    """Band 1's type and nodata of each file, and the files' pixels, as rasterio reads them."""
    kinds, nodatas, arrays = [], [], []
    for path in ds.data[GDAL_VSI]:
        with rasterio.open(path) as src:
            kinds.append(np.dtype(src.dtypes[0]))
            nodatas.append(src.nodata)
            arrays.append(src.read())
    return kinds, nodatas, np.stack(arrays)


def test_mixed_uint8_and_uint16_samples_stack_as_uint16(series_kinds: Path) -> None:
    ds = taco_gdal.load(series_kinds)
    kinds, nodatas, pixels = _files(ds)
    assert {k.name for k in kinds} == {"uint8", "uint16"}
    assert list(ds.data[DATA_TYPE]) == [k.name for k in kinds]
    cube = ds.to_xarray()
    assert cube.dtype == np.result_type(*kinds) == np.uint16
    assert cube.attrs["nodata"] == nodatas[0]
    np.testing.assert_array_equal(cube.values, pixels)
    grid = ds.to_xarray(crs="EPSG:32630", resolution=100)
    assert grid.dtype == np.uint16


def test_dtype_overrides_the_recorded_type_and_keeps_its_nodata(series_float: Path) -> None:
    ds = taco_gdal.load(series_float)
    _, nodatas, pixels = _files(ds)
    cube = ds.to_xarray(dtype="float64")
    assert cube.dtype == np.float64
    assert cube.attrs["nodata"] == nodatas[0]
    np.testing.assert_array_equal(cube.values, pixels.astype(np.float64))


def test_nodata_of_the_first_sample_when_samples_disagree(series_float: Path) -> None:
    ds = taco_gdal.load(series_float).sql(
        f'SELECT * REPLACE (CASE WHEN id = \'t0\' THEN -1.0 ELSE "{NODATA}" END AS "{NODATA}") '
        "FROM data"
    )
    assert sorted(set(ds.data[NODATA])) == [-9999.0, -1.0]
    cube = ds.to_xarray()
    assert cube.attrs["nodata"] == ds.data[NODATA].iloc[0]


def test_a_sample_without_a_type_reads_the_first_header(
    series_float: Path, mixed_plain: Path
) -> None:
    ds = taco_gdal.load(series_float).sql(
        f"SELECT * REPLACE (CASE WHEN id = 't3' THEN NULL ELSE \"{DATA_TYPE}\" END "
        f'AS "{DATA_TYPE}") FROM data'
    )
    assert ds.data[DATA_TYPE].isna().sum() == 1
    kinds, nodatas, _ = _files(ds)
    cube = ds.to_xarray()
    assert (cube.dtype, cube.attrs["nodata"]) == (kinds[0], nodatas[0])
    plain = taco_gdal.load(mixed_plain)
    kinds, nodatas, _ = _files(plain)
    cube = plain.to_xarray()
    assert (cube.dtype, cube.attrs["nodata"]) == (kinds[0], nodatas[0])


def test_a_data_type_numpy_does_not_know_raises_naming_it(series_float: Path) -> None:
    ds = taco_gdal.load(series_float).sql(
        f"SELECT * REPLACE ('pixels' AS \"{DATA_TYPE}\") FROM data"
    )
    with pytest.raises(TacoSchemaError, match=rf"{DATA_TYPE}.*'uint16'.*found \['pixels'\]"):
        ds.to_xarray()


def test_samples_from_rasters_output_validates_with_the_columns_declared(
    series_float: Path,
) -> None:
    report = taco_gdal.validate(series_float)
    assert report.ok, str(report)
    declared = {e[0]: e[1] for e in taco_gdal.load(series_float).field_schema["level0"]}
    assert (declared[DATA_TYPE], declared[NODATA]) == (str(pa.string()), str(pa.float64()))
