"""geotiff:stats aggregations in DuckDB equal numpy over the pooled valid pixels."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from taco_gdal.errors import TacoQueryError
from taco_gdal.extensions.geotiff_stats import _categorical, _continuous
from taco_gdal.read.query.stats import aggregate_stats


def _bands(seed: int, shape: tuple[int, int]) -> list[np.ma.MaskedArray]:
    rng = np.random.default_rng(seed)
    out = []
    for band in range(2):
        data = rng.normal(100 * (band + 1) + seed, 10 + seed, size=shape)
        out.append(np.ma.masked_array(data, mask=rng.random(shape) < 0.1 * seed))
    return out


def _fetcher(table: pa.Table):
    con = duckdb.connect()
    con.register("rows", table)
    return lambda sql: con.sql(sql).arrow().read_all()


SHAPES = [(8, 8), (16, 4), (5, 7)]


def test_continuous_aggregations_equal_numpy_on_all_valid_pixels() -> None:
    samples = [_bands(i, shape) for i, shape in enumerate(SHAPES)]
    table = pa.table(
        {
            "geotiff:stats": [[_continuous(b) for b in bands] for bands in samples],
            "stac:tensor_shape": [[2, *shape] for shape in SHAPES],
        }
    )
    fetch = _fetcher(table)
    for band in range(2):
        pixels = np.concatenate([s[band].compressed() for s in samples])
        got = {
            stat: aggregate_stats(fetch, "SELECT * FROM rows", table.column_names, stat, band)
            for stat in ("min", "max", "mean", "std", "p50")
        }
        assert got["min"] == pytest.approx(pixels.min())
        assert got["max"] == pytest.approx(pixels.max())
        assert got["mean"] == pytest.approx(pixels.mean())
        assert got["std"] == pytest.approx(pixels.std())
        assert pixels.min() < got["p50"] < pixels.max()
    every = aggregate_stats(fetch, "SELECT * FROM rows", table.column_names, "mean")
    assert every.shape == (2,)
    only_first = aggregate_stats(
        fetch, "SELECT * FROM rows LIMIT 1", table.column_names, "mean", [0, 1]
    )
    assert only_first[0] == pytest.approx(samples[0][0].mean())


def test_categorical_fractions_are_pixel_weighted() -> None:
    rng = np.random.default_rng(3)
    arrays = [np.ma.masked_array(rng.integers(0, 3, size=s)) for s in SHAPES]
    table = pa.table(
        {
            "geotiff:stats": [[_categorical(a, (0, 1, 2))] for a in arrays],
            "stac:tensor_shape": [[1, *s] for s in SHAPES],
        }
    )
    got = aggregate_stats(_fetcher(table), "SELECT * FROM rows", table.column_names, "categorical")
    pixels = np.concatenate([a.ravel() for a in arrays])
    assert got.shape == (1, 3)
    assert got[0] == pytest.approx([np.mean(pixels == k) for k in range(3)])
    with pytest.raises(TacoQueryError, match=r"categorical .* stats_mean\(\) does not apply"):
        aggregate_stats(_fetcher(table), "SELECT * FROM rows", table.column_names, "mean")


def test_errors_name_what_is_wrong() -> None:
    table = pa.table({"geotiff:stats": [[[0, 1, 0.5, 0.1, 100, 0, 0, 1, 1]]]})
    fetch = _fetcher(table)
    with pytest.raises(TacoQueryError, match=r"band must be 0\.\.0"):
        aggregate_stats(fetch, "SELECT * FROM rows", table.column_names, "mean", 3)
    with pytest.raises(TacoQueryError, match="stat must be one of"):
        aggregate_stats(fetch, "SELECT * FROM rows", table.column_names, "median")
    with pytest.raises(TacoQueryError, match="found none"):
        aggregate_stats(fetch, "SELECT * FROM rows WHERE false", table.column_names, "mean")
    with pytest.raises(TacoQueryError, match="expected a 'geotiff:stats' column"):
        aggregate_stats(fetch, "SELECT 1", ["id"], "mean")
