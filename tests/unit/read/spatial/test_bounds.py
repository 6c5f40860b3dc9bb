"""Vertex-only bounds of waiting rings contain the true reprojected outline.

Rings stored in a projected CRS get their 4326 bounds from their vertices
alone (reprojected by pyproj, or, when there are many, interpolated on a
reprojected grid), padded by the projection's measured curvature, and are
reprojected in full only when a filter's exact test or a frame needs them.
The true outline here is each ring densified to 400 points per edge and
reprojected with pyproj.  ``interpolate`` forces the grid on these small sets.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import shapely
from pyproj import Transformer

from taco_gdal.read.spatial import bounds
from taco_gdal.read.spatial.bounds import PAD_LIMIT, PAD_SHARE
from taco_gdal.read.spatial.footprints import compute_footprints


def _truth(rings: np.ndarray, crs: str) -> np.ndarray:
    """Each ring densified (400 points per edge) and reprojected: the curved outline."""
    transformer = Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    dense = [shapely.segmentize(r, max(shapely.length(r) / 1600.0, 1e-9)) for r in rings]
    return np.array(
        [
            shapely.transform(d, lambda c: np.column_stack(transformer.transform(c[:, 0], c[:, 1])))
            for d in dense
        ]
    )


def _table(rings: np.ndarray, crs: str) -> pa.Table:
    return pa.table({"istac:geometry": shapely.to_wkb(rings), "istac:crs": [crs] * len(rings)})


REGIONS = {  # CRS: x range, y range (source units) of the ring corners
    "EPSG:32630": ((2e5, 8e5), (3.9e6, 4.9e6)),  # Iberia in its own zone
    "EPSG:32629": ((1e5, 1.5e6), (3.9e6, 4.9e6)),  # up to 12 degrees off the central meridian
    "EPSG:32633": ((3e5, 7e5), (7.7e6, 8.9e6)),  # 69 to 80 N
    "EPSG:32722": ((2e5, 8e5), (6.0e6, 7.5e6)),  # southern hemisphere
    "EPSG:3035": ((2.5e6, 6.5e6), (1.5e6, 5.5e6)),  # LAEA Europe
    "EPSG:3857": ((-1.9e7, 1.9e7), (-1.5e7, 1.5e7)),  # Web Mercator, up to 80 degrees
}


@pytest.fixture(params=[False, True], ids=["pyproj", "grid"])
def interpolate(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param:
        monkeypatch.setattr(bounds, "INTERPOLATE_POINTS", 0)
        monkeypatch.setattr(bounds, "_NODES_PER_POINT", 1e9)
    return bool(request.param)


@pytest.mark.parametrize("crs", sorted(REGIONS))
@pytest.mark.parametrize("size", [1_000.0, 10_000.0, 40_000.0, 110_000.0])
def test_padded_vertex_bounds_contain_the_curved_outline(
    crs: str, size: float, interpolate: bool
) -> None:
    rng = np.random.default_rng(11)
    (x0, x1), (y0, y1) = REGIONS[crs]
    n = 60
    x, y = rng.uniform(x0, x1, n), rng.uniform(y0, y1, n)
    rings = shapely.box(x, y, x + size * rng.uniform(0.2, 1.0, n), y + size)
    rings[::7] = shapely.Polygon(  # rings of another point count: the general path
        [(x[0], y[0]), (x[0] + size, y[0]), (x[0] + size, y[0] + size / 2), (x[0], y[0])]
    )
    footprints = compute_footprints(_table(rings, crs), "istac:geometry")
    truth = shapely.bounds(_truth(rings, crs))
    waited = np.zeros(n, dtype=bool) if footprints.waiting is None else footprints.waiting >= 0
    if size <= 10_000.0:
        assert waited.mean() > 0.9  # reprojected when asked for
    found = footprints.bounds[waited]
    assert (found[:, :2] <= truth[waited, :2]).all()
    assert (found[:, 2:] >= truth[waited, 2:]).all()
    span = np.maximum(truth[:, 2] - truth[:, 0], truth[:, 3] - truth[:, 1])[waited]
    allowed = np.maximum(PAD_LIMIT, PAD_SHARE * span)[:, None]
    assert (np.abs(found - truth[waited]) <= allowed).all()


def test_small_and_large_rings_of_one_crs(interpolate: bool) -> None:
    """One step measures the curvature of a group whose rings range from 100 m to 200 km."""
    rng = np.random.default_rng(5)
    n = 80
    x, y = rng.uniform(3e5, 7e5, n), rng.uniform(7.5e6, 8.8e6, n)  # 67 to 79 N
    size = np.geomspace(100.0, 200_000.0, n)
    rings = shapely.box(x, y, x + size, y + size)
    footprints = compute_footprints(_table(rings, "EPSG:32633"), "istac:geometry")
    truth = shapely.bounds(_truth(rings, "EPSG:32633"))
    assert footprints.waiting is not None
    waited = footprints.waiting >= 0
    assert waited[size <= 110_000].all()  # up to Sentinel-2 tiles
    assert (footprints.bounds[waited, :2] <= truth[waited, :2]).all()
    assert (footprints.bounds[waited, 2:] >= truth[waited, 2:]).all()


def _bulging_tile() -> tuple[shapely.Polygon, np.ndarray, np.ndarray]:
    """A UTM 33N tile at 70 N whose top edge bulges north of its corners' chord in 4326.

    Returns the tile, the chord's midpoint and the bulge (curve midpoint - chord midpoint).
    """
    x0, y0, side = 620_000.0, 7_760_000.0, 20_000.0
    tile = shapely.box(x0, y0, x0 + side, y0 + side)
    to_lonlat = Transformer.from_crs("EPSG:32633", "EPSG:4326", always_xy=True)
    for y in (y0 + side, y0):  # top edge, then bottom edge
        left, right = (np.array(to_lonlat.transform(x, y)) for x in (x0, x0 + side))
        middle = np.array(to_lonlat.transform(x0 + side / 2, y))
        chord = (left + right) / 2
        outward = 1.0 if y > y0 else -1.0
        if outward * (middle[1] - chord[1]) > 0:
            return tile, chord, middle - chord
    raise AssertionError("neither edge bulges outward")


def test_a_box_in_the_bulge_of_an_edge_is_not_missed(interpolate: bool) -> None:
    tile, chord, bulge = _bulging_tile()
    assert np.hypot(*bulge) > 1e-5  # about a metre or more: a real bulge
    truth = _truth(np.array([tile]), "EPSG:32633")[0]
    corners = shapely.transform(
        tile,
        lambda c: np.column_stack(
            Transformer.from_crs("EPSG:32633", "EPSG:4326", always_xy=True).transform(
                c[:, 0], c[:, 1]
            )
        ),
    )
    half = 0.1 * np.abs(bulge).max()
    inside_bulge = shapely.box(*(chord + 0.5 * bulge - half), *(chord + 0.5 * bulge + half))
    beyond = shapely.box(*(chord + 2.0 * bulge - half), *(chord + 2.0 * bulge + half))
    assert truth.intersects(inside_bulge) and not corners.intersects(inside_bulge)
    assert not truth.intersects(beyond)
    footprints = compute_footprints(_table(np.array([tile]), "EPSG:32633"), "istac:geometry")
    assert footprints.waiting is not None and footprints.waiting[0] >= 0
    b = footprints.bounds[0]
    assert b[1] <= truth.bounds[1] and b[3] >= truth.bounds[3]
    assert list(footprints.matches(inside_bulge)) == [0]
    assert list(footprints.matches(beyond)) == []


def test_a_box_around_the_bounds_decides_without_reprojecting(interpolate: bool) -> None:
    rng = np.random.default_rng(2)
    x, y = rng.uniform(4e5, 6e5, 40), rng.uniform(4.4e6, 4.6e6, 40)
    rings = shapely.box(x, y, x + 5_000.0, y + 5_000.0)
    footprints = compute_footprints(_table(rings, "EPSG:32630"), "istac:geometry")
    every = shapely.box(-6.0, 38.0, 0.0, 43.0)  # Iberia: around every tile
    assert list(footprints.matches(every)) == list(range(40))
    assert footprints.waiting is not None and (footprints.waiting >= 0).all()
    assert shapely.is_missing(footprints.stored).all()
    truth = _truth(rings, "EPSG:32630")
    edge = shapely.box(-3.5, 39.0, -3.0, 41.0)  # some inside, some across, some out
    expected = np.flatnonzero(shapely.intersects(truth, edge))
    assert 0 < len(expected) < 40
    straddling = footprints.candidates(edge) & ~footprints.inside(edge)
    assert list(footprints.matches(edge)) == list(expected)
    made = int((footprints.waiting < 0).sum())
    assert made < int(straddling.sum())  # a tile with a corner in the box needs no outline


def test_interpolated_vertices_are_close_to_pyproj(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grid's values differ from pyproj's by less than the pad that covers them."""
    rng = np.random.default_rng(9)
    x, y = rng.uniform(2e5, 8e5, 20_000), rng.uniform(3.9e6, 4.9e6, 20_000)
    rings = shapely.box(x, y, x + 10_000.0, y + 10_000.0)
    table = _table(rings, "EPSG:32630")
    monkeypatch.setattr(bounds, "INTERPOLATE_POINTS", 10**12)
    exact = compute_footprints(table, "istac:geometry")
    monkeypatch.setattr(bounds, "INTERPOLATE_POINTS", 0)
    monkeypatch.setattr(bounds, "_NODES_PER_POINT", 1e9)
    grid = compute_footprints(table, "istac:geometry")
    assert not np.array_equal(grid.bounds, exact.bounds)  # the grid was used
    assert np.abs(grid.bounds - exact.bounds).max() < 1e-3  # a wider pad: about 20 m
    vertices = shapely.bounds(grid.take(np.arange(len(rings))))  # exact rings, on demand
    assert (grid.bounds[:, :2] <= vertices[:, :2]).all()
    assert (grid.bounds[:, 2:] >= vertices[:, 2:]).all()
    box = shapely.box(-4.0, 38.0, -2.0, 41.0)
    assert list(grid.matches(box)) == list(exact.matches(box))


def test_the_extent_is_exact_and_costs_a_few_rings(interpolate: bool) -> None:
    rng = np.random.default_rng(4)
    x, y = rng.uniform(2e5, 8e5, 400), rng.uniform(3.9e6, 4.9e6, 400)
    rings = shapely.box(x, y, x + 10_000.0, y + 10_000.0)
    table = _table(rings, "EPSG:32630")
    footprints = compute_footprints(table, "istac:geometry")
    exact = shapely.bounds(compute_footprints(table, "istac:geometry").geometries)
    expected = (*exact[:, :2].min(axis=0), *exact[:, 2:].max(axis=0))
    assert footprints.extent == tuple(float(v) for v in expected)
    assert footprints.waiting is not None
    assert (footprints.waiting < 0).sum() < 40  # only rings near an edge were made


def test_a_shape_decides_by_bounds_and_equals_the_ground_truth(interpolate: bool) -> None:
    """filter_geometry's shapes (and boxes in another CRS) are not boxes in 4326."""
    rng = np.random.default_rng(8)
    x, y = rng.uniform(3e5, 7e5, 300), rng.uniform(4.3e6, 4.7e6, 300)
    rings = shapely.box(x, y, x + 8_000.0, y + 8_000.0)
    footprints = compute_footprints(_table(rings, "EPSG:32630"), "istac:geometry")
    circle = shapely.Point(-3.0, 40.5).buffer(1.2)
    expected = np.flatnonzero(shapely.intersects(_truth(rings, "EPSG:32630"), circle))
    assert 30 < len(expected) < 300
    assert list(footprints.matches(circle)) == list(expected)
    assert footprints.waiting is not None
    made = int((footprints.waiting < 0).sum())
    assert made < len(expected) / 2  # rows well inside the circle were not reprojected
