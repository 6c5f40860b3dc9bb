"""Reprojection split over two threads gives the very numbers one thread gives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import shapely

from taco_gdal.read.spatial import reproject
from taco_gdal.read.spatial.footprints import compute_footprints


def _table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    x = rng.uniform(200_000, 800_000, rows)
    y = rng.uniform(4_000_000, 5_000_000, rows)
    size = rng.uniform(100, 50_000, rows)  # small and big squares: some get densified
    boxes = shapely.box(x, y, x + size, y + size)
    crs = rng.choice(["EPSG:32629", "EPSG:32630", "EPSG:32631", "EPSG:4326"], rows)
    lonlat = crs == "EPSG:4326"
    boxes[lonlat] = shapely.box(
        x[lonlat] / 1e5 - 5, y[lonlat] / 1e5 - 5, x[lonlat] / 1e5 - 4.9, y[lonlat] / 1e5 - 4.9
    )
    return pa.table({"istac:geometry": shapely.to_wkb(boxes), "istac:crs": crs})


def test_two_threads_reproject_exactly_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(2_000)
    monkeypatch.setattr(reproject, "PARALLEL_POINTS", 10**12)
    one = compute_footprints(table, "istac:geometry")
    monkeypatch.setattr(reproject, "PARALLEL_POINTS", 16)  # every call splits
    two = compute_footprints(table, "istac:geometry")
    assert np.array_equal(one.bounds, two.bounds)
    assert all(
        shapely.equals_exact(a, b, tolerance=0.0)
        for a, b in zip(one.geometries, two.geometries, strict=True)
    )
