"""MajorTOM: grid codes from sample centroids, identical to tacotoolbox 0.26.9's grid."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
import shapely

from taco_gdal.errors import TacoSchemaError, TacoValidationError
from taco_gdal.extensions import ISTAC, STAC, MajorTOM
from taco_gdal.model import Sample, Tortilla


def _located(sample_id: str, lon: float, lat: float) -> Sample:
    stac = STAC("EPSG:4326", (1, 2, 2), (lon - 0.001, 0.001, 0, lat + 0.001, 0, -0.001), 0)
    return Sample(sample_id, b"1").extend_with(stac)


def test_codes_from_stac_centroids_and_null_for_padding() -> None:
    tortilla = Tortilla([_located("a", 2.35, 48.85), _located("b", -74.0, 40.7)], pad_to=3)
    tortilla.extend_with(MajorTOM(dist_km=100))
    codes = tortilla.column("majortom:code").to_pylist()
    grid = MajorTOM(dist_km=100)
    assert codes == [grid.cell(48.85, 2.35), grid.cell(40.7, -74.0), None]
    assert codes[0] is not None and codes[0].startswith("0100km_")
    assert codes[0].split("_")[1].endswith("U") and codes[0].split("_")[2].endswith("R")
    assert codes[1] is not None and codes[1].endswith("L")


def test_istac_centroid_used_when_no_stac() -> None:
    geom = shapely.to_wkb(shapely.box(10, -30, 10.1, -29.9))
    sample = Sample("a", b"1").extend_with(ISTAC("EPSG:4326", geom, datetime(2020, 1, 1)))
    tortilla = Tortilla([sample]).extend_with(MajorTOM(dist_km=50, sep="-"))
    code = tortilla.column("majortom:code")[0].as_py()
    assert code == MajorTOM(dist_km=50, sep="-").cell(-29.95, 10.05)
    assert code.split("-")[1].endswith("D")


def test_needs_a_centroid_column() -> None:
    with pytest.raises(TacoSchemaError, match="needs a 'stac:centroid'"):
        Tortilla([Sample("a", b"1")]).extend_with(MajorTOM())
    with pytest.raises(TacoValidationError, match="positive"):
        MajorTOM(dist_km=0)


@pytest.mark.reference
@pytest.mark.parametrize(("dist", "lons"), [(100, (-180, 180)), (10, (-180, 180)), (50, (-20, 40))])
def test_same_grid_as_tacotoolbox(dist: float, lons: tuple[float, float]) -> None:
    from tacotoolbox.tortilla.extensions.majortom import MajorTOM as Reference

    rng = np.random.default_rng(7)
    lat = rng.uniform(-85, 85, 500)
    lon = rng.uniform(lons[0], lons[1], 500)
    reference = Reference(dist_km=dist, longitude_range=lons)
    rows, cols = reference.latlon2rowcol(lat, lon)
    expected = [f"{int(dist):04d}km_{r}_{c}" for r, c in zip(rows, cols, strict=True)]
    assert MajorTOM(dist_km=dist, longitude_range=lons).cells(lat, lon) == expected
