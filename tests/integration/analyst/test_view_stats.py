"""ds.stats(): merged KLL percentiles and exact pooled moments of a view's valid pixels.

Real GeoTIFFs (rasterio) with mixed nodata: some rasters declare nodata and have
masked pixels, some declare none, one has a band without any valid pixel.  Every
number is checked against numpy over the pixels the view's rows hold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.errors import TacoApproximationWarning, TacoQueryError, TacoWarning
from taco_gdal.extensions import GeotiffStats
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

N = 12
SIZE = 48
REGIONS = ("north", "south", "east")
VIEWS = {
    "all": "SELECT * FROM data",
    "north": "SELECT * FROM data WHERE region = 'north'",
    "clear": "SELECT * FROM data WHERE cloud_cover < 40",
    "south_or_cloudy": "SELECT * FROM data WHERE region = 'south' OR cloud_cover >= 70",
}
QS = (0, 2, 10, 25, 50, 75, 90, 98, 100)


def _raster(path: Path, index: int) -> None:
    """Two uint16 bands whose distribution differs per sample; nodata in two of three."""
    rng = np.random.default_rng(index)
    scale = 100 * (1 + index % 5)
    data = np.stack(
        [
            rng.gamma(2.0, scale, (SIZE, SIZE)),
            rng.normal(3000 + 400 * index, 50 + 20 * index, (SIZE, SIZE)),
        ]
    ).clip(1, 60000)
    data = data.astype(np.uint16)
    nodata = None if index % 3 == 0 else 0
    if nodata is not None:
        data[:, rng.random((SIZE, SIZE)) < 0.05 * (index % 7)] = 0
        if index == 4:
            data[1] = 0  # a band without valid pixels: null statistics, no sketch
    profile = {
        "driver": "GTiff",
        "width": SIZE,
        "height": SIZE,
        "count": 2,
        "dtype": "uint16",
        "crs": "EPSG:4326",
        "transform": from_origin(-3.7 + 0.1 * index, 40.4, 0.001, 0.001),
        "nodata": nodata,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def _write(root: Path, name: str, extension: GeotiffStats) -> Path:
    samples = []
    for i in range(N):
        path = root / f"r{i:02d}.tif"
        if not path.exists():
            _raster(path, i)
        sample = Sample(f"r{i:02d}", str(path), region=REGIONS[i % 3], cloud_cover=float(9 * i))
        with pytest.warns(TacoWarning, match="no valid pixels") if i == 4 else _nothing():
            samples.append(sample.extend_with(extension))
    taco = Taco(
        Tortilla(samples),
        id=name,
        dataset_version="1.0.0",
        description="ds.stats test rasters",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["regression"],
    )
    return create(taco, root / f"{name}.tacozip", quiet=True)[0]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


@pytest.fixture(scope="module")
def rasters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("view_stats")


@pytest.fixture(scope="module")
def sketched(rasters: Path) -> Path:
    return _write(rasters, "sketched", GeotiffStats())


@pytest.fixture(scope="module")
def plain(rasters: Path) -> Path:
    return _write(rasters, "plain", GeotiffStats(sketch=False))


def _pixels(root: Path, ids: list[str], band: int) -> np.ndarray:
    values = []
    for sample_id in ids:
        with rasterio.open(root / f"{sample_id}.tif") as src:
            values.append(src.read(band + 1, masked=True).compressed().astype(np.float64))
    return np.concatenate(values)


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
        pixels = _pixels(rasters, ids, band)
        for q, value in zip(QS, result.percentiles[band], strict=True):
            _assert_rank(pixels, value, q, result.rank_error)
        assert result.mean[band] == pytest.approx(pixels.mean(), rel=1e-9)
        assert result.std[band] == pytest.approx(pixels.std(), rel=1e-9)
        assert (result.min[band], result.max[band]) == (pixels.min(), pixels.max())
        assert result.percentile(0)[band] == pixels.min()
        assert result.percentile(100)[band] == pixels.max()


def test_one_band_and_the_stats_methods_are_thin_calls(sketched: Path, rasters: Path) -> None:
    ds = taco_gdal.load(str(sketched)).sql(VIEWS["clear"])
    pixels = _pixels(rasters, list(ds.data["id"]), 1)
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
    pixels = _pixels(rasters, list(ds.data["id"]), 1)
    merged = ds.stats(band=1, q=(95,))
    assert merged.rank_error is not None
    _assert_rank(pixels, float(merged.percentile(95)), 95, merged.rank_error)
    with pytest.warns(TacoApproximationWarning):
        averaged = float(taco_gdal.load(str(plain)).stats_p95(1))
    assert abs(np.mean(pixels <= averaged) - 0.95) > 10 * merged.rank_error


def test_datasets_without_sketches_warn_and_approximate(plain: Path, rasters: Path) -> None:
    ds = taco_gdal.load(str(plain)).sql(VIEWS["north"])
    pixels = _pixels(rasters, list(ds.data["id"]), 0)
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
