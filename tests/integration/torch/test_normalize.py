"""Normalize.from_dataset: the view's statistics as a transform, and its scale checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
import torch
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.extensions import GeotiffStats, Scaling
from taco_gdal.torch import Normalize, SampleDataset
from tests.support.stats_rasters import valid_pixels, write_stats_dataset

TRAIN = "SELECT * FROM data WHERE region IN ('north', 'south')"


@pytest.fixture(scope="module")
def rasters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("normalize")


@pytest.fixture(scope="module")
def dataset(rasters: Path) -> Path:
    return write_stats_dataset(rasters, "plain_values", GeotiffStats())


@pytest.fixture(scope="module")
def scaled(rasters: Path) -> Path:
    return write_stats_dataset(rasters, "reflectance", GeotiffStats(), scaling=Scaling(1e-4))


def _raw(root: Path, sample_id: str) -> np.ndarray:
    with rasterio.open(root / f"{sample_id}.tif") as src:
        return np.asarray(src.read(), dtype=np.float64)


def test_meanstd_output_equals_numpy_on_the_views_pixels(dataset: Path, rasters: Path) -> None:
    view = taco_gdal.load(str(dataset)).sql(TRAIN)
    ids = list(view.data["id"])
    mean = np.array([valid_pixels(rasters, ids, b).mean() for b in range(2)])[:, None, None]
    std = np.array([valid_pixels(rasters, ids, b).std() for b in range(2)])[:, None, None]
    norm = Normalize.from_dataset(view, bands=[0, 1])
    assert isinstance(norm, torch.nn.Module)
    assert set(norm.state_dict()) == {"shift", "scale"}
    assert norm.to("cpu") is norm  # a Module: buffers move with it
    items = SampleDataset(view, transform=norm)
    for index in range(len(items)):
        item = items[index]
        assert item["image"].dtype == torch.float32
        expected = (_raw(rasters, item["id"]) - mean) / std
        np.testing.assert_allclose(item["image"].numpy(), expected, rtol=1e-5, atol=1e-5)
    batch = next(iter(DataLoader(SampleDataset(view), batch_size=3)))
    first = (_raw(rasters, batch["id"][0]) - mean) / std
    np.testing.assert_allclose(norm(batch["image"])[0].numpy(), first, rtol=1e-5, atol=1e-5)


def test_percentile_stretch_uses_the_merged_percentiles(dataset: Path, rasters: Path) -> None:
    view = taco_gdal.load(str(dataset)).sql("SELECT * FROM data WHERE cloud_cover >= 30")
    ids = list(view.data["id"])
    stats = view.stats(q=(2, 98))  # its rank error bounds any merge of these sketches
    norm = Normalize.from_dataset(view, method="percentile", q=(2, 98))
    low = norm.shift.numpy()
    high = low + norm.scale.numpy()
    image = torch.as_tensor(_raw(rasters, ids[0]))
    expected = np.clip((image.numpy() - low) / (high - low), 0, 1)
    np.testing.assert_allclose(norm(image).numpy(), expected, rtol=1e-12)
    assert stats.rank_error is not None
    for band in range(2):
        pixels = valid_pixels(rasters, ids, band)
        for q, value in ((2, low[band, 0, 0]), (98, high[band, 0, 0])):
            below, at_or_below = np.mean(pixels < value), np.mean(pixels <= value)
            assert below - stats.rank_error <= q / 100 <= at_or_below + stats.rank_error


def test_refuses_statistics_on_another_scale(dataset: Path, scaled: Path) -> None:
    ds = taco_gdal.load(str(dataset))
    assert float(ds.stats_max().max()) > 1000
    with pytest.raises(TacoQueryError, match=r"in 0\.\.255 \(expected_range\), but the statistics"):
        Normalize.from_dataset(ds, expected_range=(0, 255))
    Normalize.from_dataset(ds, expected_range=(0, 65535))
    reflectance = taco_gdal.load(str(scaled))
    assert reflectance.stats(q=()).physical and not ds.stats(q=()).physical
    with pytest.raises(TacoQueryError, match=r"physical values .* pass physical=True"):
        Normalize.from_dataset(reflectance)
    with pytest.raises(TacoQueryError, match="under 1% of it: the values look already rescaled"):
        Normalize.from_dataset(reflectance, expected_range=(0, 10000), physical=True)
    ok = Normalize.from_dataset(reflectance, expected_range=(0, 10), physical=True)
    physical = ds.stats(q=())
    np.testing.assert_allclose(ok.shift.flatten().numpy(), physical.mean * 1e-4, rtol=1e-6)


def test_bad_arguments_and_images(dataset: Path) -> None:
    ds = taco_gdal.load(str(dataset))
    with pytest.raises(TacoQueryError, match="method expected 'meanstd' or 'percentile'"):
        Normalize.from_dataset(ds, method="minmax")  # type: ignore[arg-type]
    with pytest.raises(TacoQueryError, match=r"q expected \(low, high\) percentiles"):
        Normalize.from_dataset(ds, method="percentile", q=(98, 2))
    with pytest.raises(TacoQueryError, match=r"q expected \(low, high\) percentiles, found 5"):
        Normalize.from_dataset(ds, method="percentile", q=5)  # type: ignore[arg-type]
    with pytest.raises(TacoQueryError, match=r"expected_range expected \(low, high\)"):
        Normalize.from_dataset(ds, expected_range=("0", 255))  # type: ignore[arg-type]
    one = Normalize.from_dataset(ds, bands=1)
    with pytest.raises(TacoQueryError, match=r"1 bands on axis -3, found shape \(2, 4, 4\)"):
        one(torch.zeros(2, 4, 4))
    with pytest.raises(TacoQueryError, match="finite non-zero scales"):
        Normalize([0.0], [0.0])
