"""GeotiffStats: continuous and categorical statistics of real GeoTIFFs."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from taco_gdal.errors import TacoIOError, TacoValidationError, TacoWarning
from taco_gdal.extensions import GeotiffStats, Scaling
from taco_gdal.model import Sample, Tortilla
from tests.unit.extensions.conftest import WriteTiff


def test_continuous_statistics_per_band(write_tiff: WriteTiff) -> None:
    data = np.stack(
        [np.arange(100, dtype=np.float32).reshape(10, 10), np.full((10, 10), 7, np.float32)]
    )
    sample = Sample("a", write_tiff("a.tif", data)).extend_with(GeotiffStats())
    stats = sample["geotiff:stats"]
    assert sample.schema.field("geotiff:stats").type == pa.list_(pa.list_(pa.float32()))
    values = np.arange(100)
    expected = [0, 99, values.mean(), values.std(), 100, *np.percentile(values, [25, 50, 75, 95])]
    assert stats[0] == pytest.approx(expected, rel=1e-6)
    assert stats[1] == pytest.approx([7, 7, 7, 0, 100, 7, 7, 7, 7])


def test_nodata_pixels_are_excluded(write_tiff: WriteTiff) -> None:
    data = np.arange(16, dtype=np.int16).reshape(1, 4, 4)
    data[0, 0, :] = -9999
    stats = Sample("a", write_tiff("n.tif", data, nodata=-9999)).extend_with(GeotiffStats())
    low, high, _, _, valid, *_ = stats["geotiff:stats"][0]
    assert (low, high, valid) == (4, 15, 75.0)


def test_scaling_gives_physical_values(write_tiff: WriteTiff) -> None:
    data = np.array([[[0, 100], [200, 300]]], dtype=np.uint16)
    sample = Sample("a", write_tiff("s.tif", data)).extend_with(Scaling(0.01, 1.0))
    sample.extend_with(GeotiffStats())
    low, high, mean, std, valid, *_ = sample["geotiff:stats"][0]
    assert (low, high, mean, valid) == pytest.approx((1.0, 4.0, 2.5, 100))
    assert std == pytest.approx(np.std([0, 100, 200, 300]) * 0.01)


def test_categorical_fractions(write_tiff: WriteTiff) -> None:
    data = np.array([[[0, 0, 1, 2]]], dtype=np.uint8)
    ext = GeotiffStats(categorical=True, class_values=[0, 1, 2, 3])
    sample = Sample("a", write_tiff("c.tif", data)).extend_with(ext)
    assert sample["geotiff:stats"] == [[0.5, 0.25, 0.25, 0.0]]


def test_categorical_needs_class_values() -> None:
    with pytest.raises(TacoValidationError, match="needs class_values"):
        GeotiffStats(categorical=True)


def test_band_without_valid_pixels_is_null_with_a_warning(write_tiff: WriteTiff) -> None:
    data = np.full((1, 2, 2), -1, dtype=np.int16)
    sample = Sample("a", write_tiff("e.tif", data, nodata=-1))
    with pytest.warns(TacoWarning, match="no valid pixels"):
        sample.extend_with(GeotiffStats())
    assert sample["geotiff:stats"] == [None]


def test_folder_and_unreadable_samples(write_tiff: WriteTiff) -> None:
    folder = Sample("f", Tortilla([Sample("x", b"1")]))
    with pytest.raises(TacoValidationError, match="is not a file"):
        folder.extend_with(GeotiffStats())
    gone = write_tiff("gone.tif", np.zeros((1, 2, 2), np.uint8))
    sample = Sample("g", gone)
    os.unlink(gone)
    with pytest.raises(TacoIOError, match="cannot read"):
        sample.extend_with(GeotiffStats())


def test_sketch_column_holds_exact_moments_and_a_kll_sketch(write_tiff: WriteTiff) -> None:
    from datasketches import kll_floats_sketch

    from taco_gdal.extensions.geotiff_stats import SKETCH_K, SKETCH_TYPE
    from taco_gdal.format.names import STATS_SKETCH

    rng = np.random.default_rng(5)
    data = rng.integers(1, 5000, size=(2, 64, 64)).astype(np.int16)
    data[:, :8, :] = -1
    data[1] = -1
    path = write_tiff("k.tif", data, nodata=-1)
    with pytest.warns(TacoWarning, match="band 2 .* no valid pixels"):
        sample = Sample("k", path).extend_with(Scaling(0.5, 10.0)).extend_with(GeotiffStats())
    assert sample.schema.field(STATS_SKETCH).type == SKETCH_TYPE
    first, second = sample[STATS_SKETCH]
    assert second is None
    valid = data[0, 8:, :].ravel().astype(np.float64) * 0.5 + 10.0  # physical values
    assert first["count"] == valid.size
    assert first["mean"] == pytest.approx(valid.mean(), rel=1e-12)
    assert first["m2"] == pytest.approx(valid.var() * valid.size, rel=1e-12)
    sketch = kll_floats_sketch.deserialize(first["kll"])
    assert (sketch.k, sketch.n) == (SKETCH_K, valid.size)
    assert (sketch.get_min_value(), sketch.get_max_value()) == (valid.min(), valid.max())
    error = sketch.normalized_rank_error(False)
    assert error <= 0.01
    median = sketch.get_quantile(0.5)
    assert np.mean(valid < median) - error <= 0.5 <= np.mean(valid <= median) + error


def test_no_sketch_when_categorical_or_declined(write_tiff: WriteTiff) -> None:
    from taco_gdal.format.names import STATS_SKETCH

    path = write_tiff("d.tif", np.zeros((1, 4, 4), np.uint8))
    declined = Sample("a", path).extend_with(GeotiffStats(sketch=False))
    categorical = Sample("b", path).extend_with(GeotiffStats(categorical=True, class_values=[0]))
    for sample in (declined, categorical):
        assert STATS_SKETCH not in sample.schema.names
        assert "geotiff:stats" in sample.schema.names
