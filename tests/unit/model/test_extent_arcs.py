"""The longitude arithmetic of extents: covering arcs, containment, unions of part boxes."""

from __future__ import annotations

import numpy as np
import pytest

from taco_gdal.model._bounds import covering_arc
from taco_gdal.model.extent import Extent, box_contains, union_boxes


@pytest.mark.parametrize(
    ("wests", "easts", "expected"),
    [
        ([-2.0, 1.01], [-1.0, 2.01], (-2.0, 2.01)),  # Greenwich: not the wider side alone
        ([178.0, -179.0], [179.0, -178.0], (178.0, -178.0)),  # across the antimeridian
        ([179.5], [-179.5], (179.5, -179.5)),  # one footprint that crosses it
        ([-1.0, 170.0, 179.0], [1.0, 175.0, -179.0], (-1.0, -179.0)),  # both: 182 degrees
        ([-180.0], [180.0], (-180.0, 180.0)),  # the whole circle
        ([-180.0, 0.0], [0.0, 180.0], (-180.0, 180.0)),  # two halves that touch
        ([10.0], [10.0], (10.0, 10.0)),  # a point
    ],
)
def test_covering_arc(
    wests: list[float], easts: list[float], expected: tuple[float, float]
) -> None:
    assert covering_arc(np.array(wests), np.array(easts)) == expected


def test_box_contains_across_the_antimeridian() -> None:
    outer = (170.0, -10.0, -170.0, 10.0)
    assert box_contains(outer, (175.0, 0.0, 179.0, 1.0))
    assert box_contains(outer, (-175.0, 0.0, -171.0, 1.0))
    assert box_contains(outer, (179.0, 0.0, -179.0, 1.0))
    assert not box_contains(outer, (0.0, 0.0, 1.0, 1.0))
    assert not box_contains(outer, (175.0, 0.0, 179.0, 11.0))
    assert box_contains((-180.0, -90.0, 180.0, 90.0), outer)
    assert not box_contains((-2.0, 40.0, 2.0, 41.0), outer)


def test_union_boxes_of_parts() -> None:
    assert union_boxes([]) is None and union_boxes([None]) is None
    parts = [(170.0, 0.0, 175.0, 1.0), (-178.0, -1.0, -170.0, 0.5), (179.0, 0.0, -179.0, 2.0)]
    union = union_boxes(parts)
    assert union == (170.0, -1.0, -170.0, 2.0)
    assert all(box_contains(union, part) for part in parts)
    Extent(union)  # a valid extent: west > east is allowed


def test_extent_without_spatial() -> None:
    assert Extent().to_dict() == {"temporal": None}
    assert Extent.from_value({"temporal": None}).spatial is None
    with pytest.raises(ValueError, match=r"\[west, south, east, north\] numbers"):
        Extent(("a", 0, 1, 1))


def test_grid_footprint_with_nested_shapes_is_a_validation_error() -> None:
    # Found by the long tacocat fuzz run (seed 4801, mutation [(836467, 69)]): a mutated
    # stac:tensor_shape nested one level deeper made export() raise numpy's ValueError
    # ("operands could not be broadcast") while boxing the extent.
    import pyarrow as pa

    from taco_gdal.errors import TacoValidationError
    from taco_gdal.model._bounds import footprint_box

    columns = {
        "stac:crs": pa.array(["EPSG:32630"]),
        "stac:geotransform": pa.array([[500000.0, 10.0, 0.0, 4500000.0, 0.0, -10.0]]),
        "stac:tensor_shape": pa.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]),
    }
    with pytest.raises(TacoValidationError, match="stac:tensor_shape"):
        footprint_box(columns.get)
