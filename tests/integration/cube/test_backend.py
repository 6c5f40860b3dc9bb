"""``xr.open_dataset(path, engine=...)``: the same data as ``to_xarray``, one variable per asset."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import xarray as xr

import taco_gdal
from taco_gdal.xarray_backend import TacoBackendEntrypoint

ROOT = Path(__file__).resolve().parents[3]


def test_flat_dataset_is_one_variable_equal_to_the_stack(mixed: Path) -> None:
    opened = xr.open_dataset(mixed, engine=TacoBackendEntrypoint)
    assert list(opened.data_vars) == ["pixels"]
    stack = taco_gdal.load(mixed).to_xarray()
    xr.testing.assert_identical(opened["pixels"].load(), stack.compute())


def test_one_variable_per_asset(nested: Path) -> None:
    ds = taco_gdal.load(nested)
    opened = xr.open_dataset(nested, engine=TacoBackendEntrypoint)
    assert sorted(opened.data_vars) == ["img", "mask"]
    assert opened["img"].dims == ("sample", "band", "y", "x")
    assert opened["mask"].dims == ("sample", "band_mask", "y_mask", "x_mask")  # its own grid
    np.testing.assert_array_equal(opened["img"].values, ds.to_xarray(asset="img").values)
    np.testing.assert_array_equal(opened["mask"].values, ds.to_xarray(asset="mask").values)
    only = xr.open_dataset(nested, engine=TacoBackendEntrypoint, drop_variables="img")
    assert list(only.data_vars) == ["mask"]


def test_chunks_give_dask_arrays(mixed: Path) -> None:
    opened = xr.open_dataset(mixed, engine=TacoBackendEntrypoint, chunks={"sample": 3})
    assert opened["pixels"].chunks is not None and opened["pixels"].chunks[0] == (3, 3, 3)
    expected = taco_gdal.load(mixed).to_xarray().values
    np.testing.assert_array_equal(opened["pixels"].values, expected)


def test_guess_can_open_by_name(mixed: Path) -> None:
    entry = TacoBackendEntrypoint()
    assert entry.guess_can_open(mixed) and entry.guess_can_open("s3://b/x.tacocat")
    assert not entry.guess_can_open("scene.nc")


def test_pyproject_registers_the_backend_as_taco() -> None:
    """The lead's editable install exposes it as ``engine="taco"`` once merged."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["xarray.backends"]["taco"]
    module, name = target.split(":")
    assert (module, name) == (TacoBackendEntrypoint.__module__, TacoBackendEntrypoint.__name__)
