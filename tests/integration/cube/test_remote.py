"""Over the Range server on 127.0.0.1: the same values, and laziness counted in requests.

Building a cube reads nothing (its shape, grid and times come from the metadata
the load read); computing it reads each selected sample with one GET.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
import xarray as xr

import taco_gdal
from taco_gdal.format.names import DATA_TYPE, GDAL_VSI
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.xarray_backend import TacoBackendEntrypoint
from tests.support.servers.log import RequestRecord
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network]


def _span(path: str) -> tuple[int, int]:
    sample = parse_subfile(path)
    return sample.offset, sample.offset + sample.size


def _bounds(record: RequestRecord) -> tuple[int, int]:
    assert record.range is not None and record.range.startswith("bytes="), record
    first, last = record.range.removeprefix("bytes=").split("-")
    return int(first), int(last) + 1


def _samples_read(records: list[RequestRecord], spans: list[tuple[int, int]]) -> list[int]:
    """The sample each GET was for: the one it holds most bytes of (GDAL aligns a range
    to its 16 KB chunks, so a GET may start inside the previous sample)."""
    hits = []
    for record in records:
        lo, hi = _bounds(record)
        overlaps = [min(hi, b) - max(lo, a) for a, b in spans]
        hits.append(int(np.argmax(overlaps)))
    return hits


def test_remote_stack_equals_local_rasterio_reads(http_remote: Remote, mixed: Path) -> None:
    local = taco_gdal.load(mixed)
    remote = taco_gdal.load(http_remote.publish(mixed))
    expected = []
    for path in local.data[GDAL_VSI]:
        with rasterio.open(path) as src:
            expected.append(src.read())
    np.testing.assert_array_equal(remote.to_xarray().values, np.stack(expected))


def test_laziness_in_requests(http_remote: Remote, mixed: Path) -> None:
    url = http_remote.publish(mixed)
    ds = taco_gdal.load(url)
    paths = list(ds.data[GDAL_VSI])
    spans = [_span(p) for p in paths]
    assert min(b - a for a, b in spans) > 16384  # a GET names one sample
    http_remote.server.reset()  # the log from here on

    cube = ds.to_xarray(dtype="uint16")
    assert http_remote.log.records() == [], "building the cube read something"

    # dask fuses a slice or a position into the block's read: only those samples
    three = cube.isel(sample=3).compute()
    seven = cube.isel(sample=slice(7, 8)).compute()
    values = np.stack([three.values, seven.values[0]])
    gets = http_remote.log.records(method="GET")
    assert len(http_remote.log.records()) == 2 and len(gets) == 2
    assert sorted(_samples_read(gets, spans)) == [3, 7]
    with rasterio.open(paths[3]) as a, rasterio.open(paths[7]) as b:
        np.testing.assert_array_equal(values, np.stack([a.read(), b.read()]))


def _files_pixel_type(dataset: Path) -> tuple[np.dtype, float | None]:
    """The one (dtype, nodata) rasterio reports for band 1 of every file of ``dataset``."""
    found = set()
    for path in taco_gdal.load(dataset).data[GDAL_VSI]:
        with rasterio.open(path) as src:
            found.add((np.dtype(src.dtypes[0]), src.nodata))
    assert len(found) == 1, found
    return found.pop()


@pytest.mark.parametrize("name", ["mixed", "series_float"])
def test_pixel_type_columns_make_building_a_cube_request_free(
    http_remote: Remote, request: pytest.FixtureRequest, name: str
) -> None:
    dataset: Path = request.getfixturevalue(name)
    kind, nodata = _files_pixel_type(dataset)
    assert nodata is not None
    ds = taco_gdal.load(http_remote.publish(dataset))
    http_remote.server.reset()
    stack = ds.to_xarray()
    grid = ds.to_xarray(crs="EPSG:32630", resolution=200)
    assert http_remote.log.records() == [], "building the cube read something"
    assert stack.dtype == kind and grid.dtype == kind
    assert stack.attrs["nodata"] == nodata and grid.attrs["nodata"] == nodata
    expected = []
    for path in taco_gdal.load(dataset).data[GDAL_VSI]:
        with rasterio.open(path) as src:
            expected.append(src.read())
    np.testing.assert_array_equal(stack.values, np.stack(expected))


def test_without_pixel_type_columns_the_first_header_is_the_one_read(
    http_remote: Remote, mixed_plain: Path
) -> None:
    ds = taco_gdal.load(http_remote.publish(mixed_plain))
    assert DATA_TYPE not in ds.data.columns
    spans = [_span(p) for p in ds.data[GDAL_VSI]]
    http_remote.server.reset()
    cube = ds.to_xarray()
    assert cube.dtype == np.uint16
    gets = http_remote.log.records()
    assert len(gets) == 1 and _samples_read(gets, spans) == [0]


def test_backend_selection_reads_exactly_the_selected_samples(
    http_remote: Remote, mixed: Path
) -> None:
    ds = taco_gdal.load(http_remote.publish(mixed))
    spans = [_span(p) for p in ds.data[GDAL_VSI]]
    http_remote.server.reset()
    opened = xr.open_dataset(ds, engine=TacoBackendEntrypoint, dtype="uint16")
    assert http_remote.log.records() == []
    two = opened["pixels"].isel(sample=[3, 7]).values
    gets = http_remote.log.records()
    assert len(gets) == 2 and sorted(_samples_read(gets, spans)) == [3, 7]
    assert two.shape == (2, 2, 96, 96)


@pytest.mark.slow
def test_dask_distributed_client_computes_the_cube(http_remote: Remote, mixed: Path) -> None:
    """Tasks pickle to a worker process, which reads with the GDAL options of the Env the
    cube was built in (the test's timeouts) and the loader's pin."""
    from distributed import Client, LocalCluster

    ds = taco_gdal.load(http_remote.publish(mixed))
    cube = ds.to_xarray(dtype="uint16", chunks=4)
    expected = cube.compute(scheduler="sync").values
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        result = client.compute(cube.data).result()
    np.testing.assert_array_equal(result, expected)
