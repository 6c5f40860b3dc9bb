"""A cube over 100k samples is built from metadata in under a second, with a small graph."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import taco_gdal
from tests.integration.cube._data import write_columns

pytestmark = [pytest.mark.slow]

SAMPLES = 100_000


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_columns(tmp_path_factory.mktemp("cube_many"), SAMPLES)


def test_100k_samples_in_under_a_second(many: Path) -> None:
    ds = taco_gdal.load(many)
    ds.to_xarray(dtype="uint8")  # the first call imports xarray, dask and odc-geo
    best = float("inf")
    for _ in range(3):  # best of three: the host is shared
        start = time.perf_counter()
        cube = ds.to_xarray(dtype="uint8")
        best = min(best, time.perf_counter() - start)
    assert best < 1.0, f"to_xarray over {SAMPLES} samples took {best:.2f} s"
    assert cube.sizes["sample"] == SAMPLES
    tasks = len(cube.data.__dask_graph__())
    assert 1 <= tasks <= SAMPLES // 16
    assert cube["id"].values[-1] == f"s{SAMPLES - 1:07d}"
    assert cube.isel(sample=-1).values.sum() == 64  # the tiny raster is all ones
