"""The ``taco_gdal:stats_sketch`` column is an extension tacoreader 2.4.21 ignores safely.

A dataset written with ``GeotiffStats()`` (sketches) loads in tacoreader, which
shows the column as one more metadata column, navigates to every sample's bytes,
and computes its own ``stats_*`` from ``geotiff:stats`` as for a dataset without
sketches.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

import taco_gdal
from taco_gdal.extensions import GeotiffStats
from taco_gdal.format.names import STATS_SKETCH
from tests.support.stats_rasters import write_stats_dataset


def _reference_stats(tacoreader_module: Any, path: pathlib.Path) -> np.ndarray:
    ds = tacoreader_module.load(str(path))
    try:
        return np.array([ds.stats_mean(band=[0, 1]), ds.stats_max(band=[0, 1])])
    finally:
        ds.close()


def test_tacoreader_reads_a_dataset_with_sketches(
    tacoreader_module: Any, tacoreader_view: Any, tmp_path: pathlib.Path
) -> None:
    # four rasters: tacoreader cannot aggregate a null band (raster 4), sketch or not
    sketched = write_stats_dataset(tmp_path, "sketched", GeotiffStats(), n=4)
    plain = write_stats_dataset(tmp_path, "plain", GeotiffStats(sketch=False), n=4)
    with_sketch, without = tacoreader_view(sketched, []), tacoreader_view(plain, [])
    assert with_sketch["columns"]["0"] == [*without["columns"]["0"], STATS_SKETCH]
    files = [(row["id"], row["sha256"]) for row in with_sketch["tree"]]
    assert files == [(row["id"], row["sha256"]) for row in without["tree"]]
    reference = _reference_stats(tacoreader_module, sketched)
    np.testing.assert_array_equal(reference, _reference_stats(tacoreader_module, plain))
    # the reference weights means by all pixels, taco_gdal by valid ones; extremes agree
    np.testing.assert_array_equal(reference[1], taco_gdal.load(str(sketched)).stats_max())
