"""``to_xarray()`` as a stack: values equal rasterio reads, coordinates from the metadata."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import rasterio
import rasterio.transform

import taco_gdal
from taco_gdal.errors import (
    TacoDependencyError,
    TacoNavigationError,
    TacoQueryError,
    TacoSchemaError,
)
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.model import Taco, Tortilla
from taco_gdal.read.cube._deps import require
from taco_gdal.read.cube.stack import MIN_BLOCK_SAMPLES


def _rasterio_stack(paths: list[str]) -> np.ndarray:
    arrays = []
    for path in paths:
        with rasterio.open(path) as src:
            arrays.append(src.read())
    return np.stack(arrays)


def test_stack_equals_rasterio_reads_of_a_mixed_crs_multi_date_dataset(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    cube = ds.to_xarray()
    frame = ds.data
    assert cube.dims == ("sample", "band", "y", "x")
    assert cube.dtype == np.uint16  # native type, read from the file
    assert cube.attrs["nodata"] == 0
    np.testing.assert_array_equal(cube.values, _rasterio_stack(list(frame[GDAL_VSI])))
    assert list(cube["id"].values) == list(frame["id"])
    assert list(cube["crs"].values) == list(frame["stac:crs"])
    assert len(set(cube["crs"].values)) == 3
    np.testing.assert_array_equal(
        cube["time"].values, frame["stac:time_start"].to_numpy().astype("datetime64[ns]")
    )
    for k, path in enumerate(frame[GDAL_VSI]):
        with rasterio.open(path) as src:
            assert tuple(cube["transform"].values[k].tolist()) == src.transform.to_gdal()
    assert "x" not in cube.coords  # several grids: no shared x/y


def test_bands_dtype_and_user_coords(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    frame = ds.data
    cube = ds.to_xarray(bands=[2], dtype="float32", coords=["istac:crs"])
    assert cube.dtype == np.float32
    assert list(cube["band"].values) == [2]
    expected = _rasterio_stack(list(frame[GDAL_VSI]))[:, [1]].astype(np.float32)
    np.testing.assert_array_equal(cube.values, expected)
    assert list(cube["istac:crs"].values) == list(frame["istac:crs"])


def test_a_filtered_view_stacks_only_its_samples(mixed: Path) -> None:
    ds = taco_gdal.load(mixed).sql("SELECT * FROM data WHERE id LIKE '%utm31'")
    cube = ds.to_xarray()
    assert list(cube["id"].values) == ["d0_utm31", "d1_utm31", "d2_utm31"]
    np.testing.assert_array_equal(cube.values, _rasterio_stack(list(ds.data[GDAL_VSI])))


def test_one_grid_sets_x_y_and_crs_for_rioxarray(series: Path) -> None:
    import rioxarray  # noqa: F401  (registers .rio)

    ds = taco_gdal.load(series)
    cube = ds.to_xarray()
    path = ds.data[GDAL_VSI].iloc[0]
    with rasterio.open(path) as src:
        assert cube.rio.crs == src.crs
        assert cube.rio.transform() == src.transform
        np.testing.assert_allclose(cube["x"].values, [(src.transform * (c + 0.5, 0))[0]
                                                       for c in range(src.width)])  # fmt: skip
    by_time = cube.swap_dims(sample="time")
    assert by_time.dims[0] == "time"
    np.testing.assert_array_equal(
        by_time.sel(time=cube["time"].values[2]).values, cube.isel(sample=2).values
    )


def test_graph_has_one_task_per_block_of_samples(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    cube = ds.to_xarray(dtype="uint16")
    assert len(cube.data.__dask_graph__()) == 1  # 9 samples < MIN_BLOCK_SAMPLES
    per_two = ds.to_xarray(dtype="uint16", chunks={"sample": 2})
    assert len(per_two.data.__dask_graph__()) == 5
    np.testing.assert_array_equal(per_two.values, cube.values)
    assert MIN_BLOCK_SAMPLES == 16


def test_asset_picks_the_file_child_by_id(nested: Path) -> None:
    ds = taco_gdal.load(nested)
    img = ds.to_xarray(asset="img")
    mask = ds.to_xarray(asset="mask")
    assert img.shape == (3, 2, 96, 96) and mask.shape == (3, 1, 48, 48)
    assert list(img["id"].values) == ["site0", "site1", "site2"]
    for k in range(3):
        child = ds.data.read(k)
        assert not isinstance(child, str)
        paths = dict(zip(child["id"], child[GDAL_VSI], strict=True))
        np.testing.assert_array_equal(img.values[k], _rasterio_stack([paths["img"]])[0])
        np.testing.assert_array_equal(mask.values[k], _rasterio_stack([paths["mask"]])[0])
    with pytest.raises(TacoNavigationError, match="FILE child 'nir'"):
        ds.to_xarray(asset="nir")
    with pytest.raises(TacoNavigationError, match="asset='<child id>'"):
        ds.to_xarray()


def test_different_shapes_name_the_groups(mixed_shapes: Path) -> None:
    ds = taco_gdal.load(mixed_shapes)
    with pytest.raises(TacoSchemaError) as caught:
        ds.to_xarray()
    message = str(caught.value)
    assert "[2, 96, 96]: 9 samples" in message and "[1, 48, 48]: 2 samples" in message
    assert "odd0" in message
    # the hint in the message works: one group at a time
    odd = ds.sql('SELECT * FROM data WHERE "stac:tensor_shape" = [1, 48, 48]').to_xarray()
    assert odd.shape == (2, 1, 48, 48)


def test_bad_arguments_are_taco_errors(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    with pytest.raises(TacoQueryError, match=r"band numbers in 1\.\.2"):
        ds.to_xarray(bands=[3])
    with pytest.raises(TacoQueryError, match="no column 'cloud'"):
        ds.to_xarray(coords=["cloud"])
    with pytest.raises(TacoQueryError, match="only the 'sample' dimension"):
        ds.to_xarray(chunks={"x": 10})
    with pytest.raises(TacoQueryError, match="found \\['colour'\\]"):
        ds.to_xarray(colour="red")


def test_a_missing_extra_says_how_to_install_it() -> None:
    with pytest.raises(TacoDependencyError, match=r"pip install 'taco_gdal\[xarray\]'"):
        require("odc_geo_not_installed_here")


def _tiny_dataset(folder: Path, metadata: dict[str, pa.Array]) -> taco_gdal.TacoDataset:
    folder.mkdir()
    src = folder / "tiny.tif"
    profile = {
        "driver": "GTiff",
        "width": 4,
        "height": 4,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:32630",
        "transform": rasterio.transform.from_origin(0, 40, 10, 10),
    }
    with rasterio.open(src, "w", **profile) as dst:
        dst.write(np.ones((1, 4, 4), dtype=np.uint8))
    tortilla = Tortilla.from_columns(["a", "b"], [str(src)] * 2, pa.table(metadata))
    taco = Taco(
        tortilla,
        id="tiny",
        dataset_version="1.0.0",
        description="tiny",
        licenses=["CC0-1.0"],
        providers=[{"name": "t"}],
        tasks=["classification"],
    )
    return taco_gdal.load(taco_gdal.create(taco, folder / "tiny.tacozip", quiet=True)[0])


def test_missing_or_null_grid_metadata_is_a_schema_error(tmp_path: Path) -> None:
    plain = _tiny_dataset(tmp_path / "plain", {"label": pa.array([1, 2])})
    with pytest.raises(TacoSchemaError, match="expected the STAC columns"):
        plain.to_xarray()
    gt = [0.0, 10.0, 0.0, 40.0, 0.0, -10.0]
    holes = _tiny_dataset(
        tmp_path / "holes",
        {
            "stac:tensor_shape": pa.array([[1, 4, 4], None], pa.list_(pa.int64())),
            "stac:geotransform": pa.array([gt, gt], pa.list_(pa.float64())),
        },
    )
    with pytest.raises(TacoSchemaError, match="None at sample 'b'"):
        holes.to_xarray()


def test_an_unknown_grid_crs_is_a_query_error(mixed: Path) -> None:
    with pytest.raises(TacoQueryError, match="crs='EPSG:999999'"):
        taco_gdal.load(mixed).to_xarray(crs="EPSG:999999", resolution=10)
