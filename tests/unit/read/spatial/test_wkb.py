"""The numpy WKB path of compute_footprints gives exactly what the shapely path gives.

``compute_footprints`` reads simple polygons (one closed ring, little-endian
2D WKB) straight from the Arrow buffer; those in another CRS than 4326 wait
in their own CRS with padded bounds of their reprojected vertices, and are
reprojected (as coordinates when straight enough) when asked for; every other
row goes through ``shapely.from_wkb`` and :func:`to_wgs84`.  These tests
build columns whose layout stresses the byte reader (offsets not multiples
of 8, sliced arrays, large binary, big-endian, Z, EWKB, holes, nulls,
unclosed rings) and compare every footprint with the shapely path,
coordinate for coordinate, and every bound with the footprint's own.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import shapely

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.spatial.bounds import PAD_LIMIT
from taco_gdal.read.spatial.footprints import Footprints, compute_footprints
from taco_gdal.read.spatial.reproject import to_wgs84

UTM30 = "EPSG:32630"


def _squares(n: int, largest: float = 20_000.0) -> list[shapely.Geometry]:
    rng = np.random.default_rng(3)
    x, y = rng.uniform(3e5, 7e5, n), rng.uniform(4.0e6, 4.6e6, n)
    size = rng.uniform(500.0, largest, n)
    return list(shapely.box(x, y, x + size, y + size))


def _mixed_wkb() -> tuple[list[bytes | None], list[str]]:
    """Rows of every kind, interleaved so that polygon bytes start at odd offsets."""
    squares = _squares(12)
    rows: list[bytes | None] = []
    crss: list[str] = []
    for k, square in enumerate(squares):
        rows.append(shapely.to_wkb(square))  # simple: the numpy path
        crss.append(UTM30)
        kind = k % 6
        if kind == 0:  # a point: 21 bytes, so the next polygon starts at residue 5
            rows.append(shapely.to_wkb(shapely.Point(4e5, 4.3e6)))
        elif kind == 1:
            rows.append(shapely.to_wkb(square, byte_order=0))  # big-endian
        elif kind == 2:
            rows.append(shapely.to_wkb(shapely.force_3d(square, 5.0)))  # Z
        elif kind == 3:
            rows.append(
                shapely.to_wkb(
                    shapely.set_srid(square, 32630), flavor="extended", include_srid=True
                )
            )
        elif kind == 4:
            rows.append(shapely.to_wkb(square.difference(square.centroid.buffer(100.0))))  # hole
        else:
            rows.append(None)
        crss.append(UTM30)
    # a simple ring of another size (rings of several lengths in one CRS)
    rows.append(
        shapely.to_wkb(
            shapely.Polygon(
                [
                    (4e5, 4.3e6),
                    (4.01e5, 4.3e6),
                    (4.02e5, 4.3005e6),
                    (4.01e5, 4.301e6),
                    (4e5, 4.301e6),
                ]
            )
        )
    )
    crss.append(UTM30)
    # a ring too wide to stay straight (densified) and lon/lat rows
    rows.append(shapely.to_wkb(shapely.box(166_021, 0, 834_000, 9.0e6)))
    crss.append(UTM30)
    rows += [shapely.to_wkb(shapely.box(-3.0, 40.0, -2.9, 40.1))]
    crss.append("EPSG:4326")
    rows += [shapely.to_wkb(shapely.box(179.9, 10.0, 180.1, 10.1))]  # past 180: cut
    crss.append("EPSG:4326")
    rows += [shapely.to_wkb(shapely.box(7.0e5, 8.2e6, 8.3e5, 8.3e6))]  # crosses 180 from UTM 60S
    crss.append("EPSG:32760")
    return rows, crss


def _shapely_path(values: list[bytes | None], crss: list[str]) -> np.ndarray:
    geoms = np.asarray(shapely.from_wkb(np.asarray(values, dtype=object)), dtype=object)
    out = np.full(len(geoms), None, dtype=object)
    for crs in sorted(set(crss)):
        rows = np.flatnonzero(np.asarray(crss) == crs)
        out[rows] = to_wgs84(geoms[rows], crs)
    return out


def _assert_bounds(footprints: Footprints, waited: np.ndarray, expected: np.ndarray) -> None:
    """Exact bounds, but for rows that ``waited``: those contain the exact ones, within the pad."""
    present = ~shapely.is_missing(expected)
    exact = shapely.bounds(expected[present])
    found = footprints.bounds[present]
    padded = waited[present]
    assert np.array_equal(found[~padded], exact[~padded])
    assert (found[padded, :2] <= exact[padded, :2]).all()
    assert (found[padded, 2:] >= exact[padded, 2:]).all()
    assert (np.abs(found[padded] - exact[padded]) <= PAD_LIMIT).all()
    assert np.isnan(footprints.bounds[~present]).all()


def _assert_same(found: np.ndarray, expected: np.ndarray) -> None:
    missing = shapely.is_missing(expected)
    assert np.array_equal(shapely.is_missing(found), missing)
    same = shapely.equals_exact(found[~missing], expected[~missing], tolerance=0.0)
    assert same.all(), np.flatnonzero(~same)
    assert [g.geom_type for g in found[~missing]] == [g.geom_type for g in expected[~missing]]


@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary()])
def test_every_row_kind_matches_the_shapely_path(kind: pa.DataType) -> None:
    values, crss = _mixed_wkb()
    table = pa.table({"istac:geometry": pa.array(values, kind), "istac:crs": crss})
    footprints = compute_footprints(table, "istac:geometry")
    assert footprints.waiting is not None
    waited = footprints.waiting >= 0
    assert waited.sum() == 13  # the 12 squares and the 5-point ring in UTM 30N
    expected = _shapely_path(values, crss)
    _assert_same(footprints.geometries, expected)
    assert not (footprints.waiting >= 0).any()  # every row was reprojected by .geometries
    _assert_bounds(footprints, waited, expected)


def test_simple_rows_stay_coordinates_until_asked() -> None:
    squares = _squares(50, largest=2_000.0)  # small tiles: straight enough in lon/lat
    table = pa.table({"istac:geometry": shapely.to_wkb(squares), "istac:crs": [UTM30] * 50})
    footprints = compute_footprints(table, "istac:geometry")
    assert footprints.stored is not None and footprints.waiting is not None
    assert shapely.is_missing(footprints.stored).all()  # no shapely object made yet
    assert (footprints.waiting >= 0).all()  # nor any reprojected ring
    _assert_same(footprints.take(np.array([7, 3])), to_wgs84(np.array(squares)[[7, 3]], UTM30))
    assert set(np.flatnonzero(footprints.waiting < 0)) == {3, 7}  # kept for the next filter
    _assert_same(footprints.take(np.array([3])), to_wgs84(np.array(squares)[[3]], UTM30))


def test_a_sliced_chunked_column_reads_the_right_bytes() -> None:
    values, crss = _mixed_wkb()
    whole = pa.table({"istac:geometry": pa.array(values, pa.binary()), "istac:crs": crss})
    sliced = pa.concat_tables([whole.slice(3, 10), whole.slice(20)])
    footprints = compute_footprints(sliced, "istac:geometry")
    keep = list(range(3, 13)) + list(range(20, len(values)))
    expected = _shapely_path([values[i] for i in keep], [crss[i] for i in keep])
    _assert_same(footprints.geometries, expected)


def test_an_unclosed_ring_is_refused_as_before() -> None:
    good = bytearray(shapely.to_wkb(shapely.box(4e5, 4.3e6, 4.1e5, 4.31e6)))
    good[-16:-8] = np.float64(4.05e5).tobytes()  # last vertex no longer equals the first
    table = pa.table({"istac:geometry": pa.array([bytes(good)], pa.binary()), "istac:crs": [UTM30]})
    with pytest.raises(TacoQueryError, match="invalid WKB"):
        compute_footprints(table, "istac:geometry")


def test_a_truncated_polygon_is_refused_as_before() -> None:
    cut = shapely.to_wkb(shapely.box(4e5, 4.3e6, 4.1e5, 4.31e6))[:-8]
    table = pa.table({"istac:geometry": pa.array([cut], pa.binary()), "istac:crs": [UTM30]})
    with pytest.raises(TacoQueryError, match="invalid WKB"):
        compute_footprints(table, "istac:geometry")
