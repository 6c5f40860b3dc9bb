"""A filter that returns a few rows builds a frame of those rows only, not of the whole level.

Measured with ``tracemalloc`` (pandas, numpy and shapely allocations are traced):
the peak of a filtered ``.data`` is compared with the peak of the full ``.data``
of the same dataset with its footprints built (``.data`` builds them on first
use), in the same process.  No timing is involved.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import taco_gdal

BOX = (-3.0, 40.0, 3.0, 45.0)
SPAN = "2021-01-01/2021-06-30"


def _materialised(ds: taco_gdal.TacoDataset) -> Any:
    """The whole level as a frame with every footprint built (``.data`` builds them on use)."""
    frame = ds.data
    assert len(frame.total_bounds) == 4
    return frame


def _peak(fn: Callable[[], Any]) -> tuple[int, Any]:
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def test_filtered_data_does_not_materialise_the_other_rows(flat_zip: Path) -> None:
    geometry = "istac:centroid"
    ds = taco_gdal.load(flat_zip)
    narrow = ds.filter_bbox(*BOX, geometry_col=geometry).filter_datetime(SPAN)
    warm = narrow.data  # first use: spatial extension, per-dataset caches
    full_peak, full = _peak(lambda: _materialised(ds))
    del full
    narrow = ds.filter_bbox(*BOX, geometry_col=geometry).filter_datetime(SPAN)
    narrow_peak, frame = _peak(lambda: narrow.data)
    assert 0 < len(frame) == len(warm) < ds.level_counts()[0] // 20
    assert narrow_peak < full_peak // 10, (narrow_peak, full_peak)


def test_first_point_filter_does_not_materialise_the_level(flat_zip: Path) -> None:
    """The first filter of a load too (its per-load caches included), on a point column."""
    ds = taco_gdal.load(flat_zip)
    assert len(ds.filter_bbox(*BOX, geometry_col="istac:centroid").data)  # loads spatial
    full_peak, full = _peak(lambda: _materialised(ds))
    del full
    fresh = taco_gdal.load(flat_zip)
    first_peak, frame = _peak(
        lambda: fresh.filter_bbox(*BOX, geometry_col="istac:centroid").filter_datetime(SPAN).data
    )
    assert 0 < len(frame) < fresh.level_counts()[0] // 20
    assert first_peak < full_peak // 4, (first_peak, full_peak)
