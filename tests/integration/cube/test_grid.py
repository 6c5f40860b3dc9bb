"""``to_xarray(crs=..., resolution=... | like=GeoBox)``: values equal gdal.Warp of the same
samples into the same grid, one sample at a time, mosaicked first-valid here in NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import odc.geo.xr  # noqa: F401  (registers .odc)
import pytest
import rioxarray  # noqa: F401  (registers .rio)
from odc.geo.geobox import GeoBox
from osgeo import gdal

import taco_gdal
from taco_gdal import Env
from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import GDAL_VSI
from tests.integration.cube._data import NODATA
from tests.support.servers.remote import Remote

BOX = GeoBox.from_bbox((493_000, 4_425_000, 502_000, 4_433_500), "EPSG:32630", resolution=150)


def _warp_one(path: str, box: GeoBox) -> np.ndarray:
    """One sample warped alone into ``box`` (nearest, nodata kept as nodata)."""
    left, bottom, right, top = box.extent.boundingbox
    with Env():
        out = gdal.Warp(
            "", path, format="MEM", outputBounds=(left, bottom, right, top),
            width=box.shape.x, height=box.shape.y, dstSRS=box.crs.to_wkt(),
            srcNodata=NODATA, dstNodata=NODATA, resampleAlg="nearest",
        )  # fmt: skip
        return np.asarray(out.ReadAsArray())


def _first_valid(arrays: list[np.ndarray]) -> np.ndarray:
    result = np.full_like(arrays[0], NODATA)
    for array in arrays:  # first valid wins: fill only what is still nodata
        empty = result == NODATA
        result[empty] = array[empty]
    return result


def _truth(ds: taco_gdal.TacoDataset, box: GeoBox, key: str) -> tuple[np.ndarray, list[str]]:
    """Slots grouped by ``key`` (a frame column), samples by time then view order."""
    frame = ds.data.reset_index(drop=True)
    frame["order"] = np.arange(len(frame))
    frame["day"] = frame["stac:time_start"].dt.floor("D")  # 3 W: solar time is UTC - 12 min
    frame = frame.sort_values(["stac:time_start", "order"])
    slots, names = [], []
    for _, group in frame.groupby(key, sort=True):
        slots.append(_first_valid([_warp_one(p, box) for p in group[GDAL_VSI]]))
        names.append(",".join(group["id"]))
    return np.stack(slots), names


def test_grid_equals_gdal_warp_grouped_by_time(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    cube = ds.to_xarray(like=BOX)
    assert cube.dims == ("time", "band", "y", "x")
    expected, names = _truth(ds, BOX, "stac:time_start")
    assert names[0] == "d0_utm30,d0_geo" and len(names) == 6
    np.testing.assert_array_equal(cube.values, expected)
    # the mosaic matters: somewhere the second scene of a slot fills the first's nodata
    first = _warp_one(ds.data.set_index("id").loc["d0_utm30", GDAL_VSI], BOX)
    assert ((first == NODATA) & (cube.values[0] != NODATA)).any()
    assert cube.odc.geobox == BOX
    assert cube.rio.crs.to_epsg() == 32630


def test_solar_day_puts_a_day_in_one_slot(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    cube = ds.to_xarray(like=BOX, groupby="solar_day")
    assert cube.sizes["time"] == 3
    expected, names = _truth(ds, BOX, "day")
    assert names[1] == "d1_utm30,d1_geo,d1_utm31"
    np.testing.assert_array_equal(cube.values, expected)


def test_groupby_none_is_one_slot_per_sample(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    cube = ds.to_xarray(crs="EPSG:32630", resolution=150, bounds=BOX.extent.boundingbox,
                        groupby=None, bands=[2], dtype="float32")  # fmt: skip
    frame = ds.data.sort_values("stac:time_start", kind="stable")
    assert cube.sizes["time"] == 9 and cube.dtype == np.float32
    per_two = ds.to_xarray(like=BOX, groupby=None, chunks={"time": 2})
    assert len(per_two.data.__dask_graph__()) == 5
    np.testing.assert_array_equal(per_two.values.astype(np.float32)[:, [1]], cube.values)
    expected = np.stack([_warp_one(p, BOX)[[1]] for p in frame[GDAL_VSI]]).astype(np.float32)
    np.testing.assert_array_equal(cube.values, expected)


def test_default_bounds_cover_every_sample(mixed: Path) -> None:
    import rasterio
    from rasterio.warp import transform_bounds

    ds = taco_gdal.load(mixed)
    left, bottom, right, top = ds.to_xarray(
        crs="EPSG:32630", resolution=300
    ).odc.geobox.extent.boundingbox
    for path in ds.data[GDAL_VSI]:
        with rasterio.open(path) as src:
            x0, y0, x1, y1 = transform_bounds(src.crs, "EPSG:32630", *src.bounds, densify_pts=0)
        assert left <= x0 and bottom <= y0 and x1 <= right and y1 <= top


@pytest.mark.network
def test_remote_grid_equals_local_gdal_warp(http_remote: Remote, mixed: Path) -> None:
    local = taco_gdal.load(mixed)
    expected, _ = _truth(local, BOX, "stac:time_start")
    remote = taco_gdal.load(http_remote.publish(mixed))
    np.testing.assert_array_equal(remote.to_xarray(like=BOX).values, expected)


def test_grid_arguments_are_checked(mixed: Path) -> None:
    ds = taco_gdal.load(mixed)
    with pytest.raises(TacoQueryError, match="crs= and resolution="):
        ds.to_xarray(crs="EPSG:32630")
    with pytest.raises(TacoQueryError, match="groupby expected one of"):
        ds.to_xarray(like=BOX, groupby="month")
    with pytest.raises(TacoQueryError, match="expected an odc-geo GeoBox"):
        ds.to_xarray(like="EPSG:4326")
    with pytest.raises(TacoQueryError, match="min < max"):
        ds.to_xarray(crs="EPSG:32630", resolution=10, bounds=(1, 1, 0, 0))
