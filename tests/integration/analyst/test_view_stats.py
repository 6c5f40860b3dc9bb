"""ds.stats(): merged KLL percentiles and exact pooled moments of a view's valid pixels.

Real GeoTIFFs (rasterio) with mixed nodata: some rasters declare nodata and have
masked pixels, some declare none, one has a band without any valid pixel.  Every
number is checked against numpy over the pixels the view's rows hold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import taco_gdal
from taco_gdal.errors import TacoApproximationWarning, TacoQueryError
from taco_gdal.extensions import GeotiffStats
from tests.support.stats_rasters import valid_pixels, write_stats_dataset

VIEWS = {
    "all": "SELECT * FROM data",
    "north": "SELECT * FROM data WHERE region = 'north'",
    "clear": "SELECT * FROM data WHERE cloud_cover < 40",
    "south_or_cloudy": "SELECT * FROM data WHERE region = 'south' OR cloud_cover >= 70",
}
QS = (0, 2, 10, 25, 50, 75, 90, 98, 100)


@pytest.fixture(scope="module")
def rasters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("view_stats")


@pytest.fixture(scope="module")
def sketched(rasters: Path) -> Path:
    return write_stats_dataset(rasters, "sketched", GeotiffStats())


@pytest.fixture(scope="module")
def plain(rasters: Path) -> Path:
    return write_stats_dataset(rasters, "plain", GeotiffStats(sketch=False))


def _assert_rank(pixels: np.ndarray, value: float, q: float, error: float) -> None:
    below, at_or_below = np.mean(pixels < value), np.mean(pixels <= value)
    assert below - error <= q / 100 <= at_or_below + error, (q, value, below, at_or_below)


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_percentiles_are_within_the_stated_rank_error(
    sketched: Path, rasters: Path, view: str
) -> None:
    ds = taco_gdal.load(str(sketched)).sql(VIEWS[view])
    ids = list(ds.data["id"])
    result = ds.stats(q=QS)
    assert result.q == QS and result.percentiles.shape == (2, len(QS))
    assert result.rank_error is not None and 0 < result.rank_error <= 0.01
    for band in range(2):
        pixels = valid_pixels(rasters, ids, band)
        for q, value in zip(QS, result.percentiles[band], strict=True):
            _assert_rank(pixels, value, q, result.rank_error)
        assert result.mean[band] == pytest.approx(pixels.mean(), rel=1e-9)
        assert result.std[band] == pytest.approx(pixels.std(), rel=1e-9)
        assert (result.min[band], result.max[band]) == (pixels.min(), pixels.max())
        assert result.percentile(0)[band] == pixels.min()
        assert result.percentile(100)[band] == pixels.max()


def test_one_band_and_the_stats_methods_are_thin_calls(sketched: Path, rasters: Path) -> None:
    ds = taco_gdal.load(str(sketched)).sql(VIEWS["clear"])
    pixels = valid_pixels(rasters, list(ds.data["id"]), 1)
    one = ds.stats(band=1, q=(5, 95))
    assert one.percentiles.shape == (2,) and one.mean.shape == ()
    assert one.rank_error is not None
    for q in (5, 95):
        _assert_rank(pixels, float(one.percentile(q)), q, one.rank_error)
    assert ds.stats_mean(1) == pytest.approx(pixels.mean(), rel=1e-9)
    assert ds.stats_std([1])[0] == pytest.approx(pixels.std(), rel=1e-9)
    assert (ds.stats_min(1), ds.stats_max(1)) == (pixels.min(), pixels.max())
    for q, method in ((25, ds.stats_p25), (75, ds.stats_p75), (95, ds.stats_p95)):
        _assert_rank(pixels, float(method(1)), q, one.rank_error)
    _assert_rank(pixels, float(ds.stats_percentile(33.3, 1)), 33.3, one.rank_error)


def test_pooled_percentiles_differ_from_averaged_ones(
    sketched: Path, plain: Path, rasters: Path
) -> None:
    """The samples' distributions differ: the old average misses by more than the bound."""
    ds = taco_gdal.load(str(sketched))
    pixels = valid_pixels(rasters, list(ds.data["id"]), 1)
    merged = ds.stats(band=1, q=(95,))
    assert merged.rank_error is not None
    _assert_rank(pixels, float(merged.percentile(95)), 95, merged.rank_error)
    with pytest.warns(TacoApproximationWarning):
        averaged = float(taco_gdal.load(str(plain)).stats_p95(1))
    assert abs(np.mean(pixels <= averaged) - 0.95) > 10 * merged.rank_error


def test_datasets_without_sketches_warn_and_approximate(plain: Path, rasters: Path) -> None:
    ds = taco_gdal.load(str(plain)).sql(VIEWS["north"])
    pixels = valid_pixels(rasters, list(ds.data["id"]), 0)
    assert "taco_gdal:stats_sketch" not in ds.data.columns
    assert ds.stats_mean(0) == pytest.approx(pixels.mean(), rel=1e-6)  # float32 stats
    with pytest.warns(TacoApproximationWarning, match="not a percentile of the data"):
        old = ds.stats(band=0, q=(25, 95))
    assert old.rank_error is None and old.percentiles.shape == (2,)
    assert pixels.min() < old.percentile(25) < old.percentile(95) < pixels.max()
    with pytest.raises(TacoQueryError, match=r"only q in \(25, 50, 75, 95\) .* found \[2\]"):
        ds.stats(q=(2,))


def test_bad_arguments_name_what_is_wrong(sketched: Path) -> None:
    ds = taco_gdal.load(str(sketched))
    with pytest.raises(TacoQueryError, match=r"q expected numbers in 0..100, found -1"):
        ds.stats(q=(-1,))
    with pytest.raises(TacoQueryError, match=r"q expected numbers in 0..100, found '5'"):
        ds.stats(q=("5",))  # type: ignore[arg-type]
    with pytest.raises(TacoQueryError, match=r"band must be 0..1 \(0-based\), got 2"):
        ds.stats(band=2)
    with pytest.raises(TacoQueryError, match=r"expected q in \(50,\) .*found 60"):
        ds.stats(q=(50,)).percentile(60)
    with pytest.raises(TacoQueryError, match="no rows after the filters"):
        ds.sql("SELECT * FROM data WHERE cloud_cover > 1000").stats()
