"""Split, Scaling, Labels, Publications, PixelType: values, types, validation."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions import (
    LabelClass,
    Labels,
    PixelType,
    Publication,
    Publications,
    Scaling,
    Split,
)
from taco_gdal.format.names import DATA_TYPE, NODATA
from taco_gdal.model import Sample, Taco, Tortilla


def test_split() -> None:
    sample = Sample("a", b"1").extend_with(Split("test"))
    assert sample["split"] == "test"
    with pytest.raises(TacoValidationError, match="must be one of train, test, validation"):
        Split("dev")  # type: ignore[arg-type]


def test_scaling_scalars_are_float32() -> None:
    table = Scaling(0.0001, -0.1, [0, 1, 2, 3])(Sample("a", b"1"))
    assert table.schema == pa.schema(
        [
            ("scaling:scale_factor", pa.float32()),
            ("scaling:scale_offset", pa.float32()),
            ("scaling:padding", pa.list_(pa.int32())),
        ]
    )
    assert table.column("scaling:padding").to_pylist() == [[0, 1, 2, 3]]


def test_scaling_per_band_lists() -> None:
    ext = Scaling([0.1, 0.2], 0.0)
    table = ext(Sample("a", b"1"))
    assert table.schema.field("scaling:scale_offset").type == pa.list_(pa.float32())
    assert table.column("scaling:scale_offset").to_pylist() == [[0.0]]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scale_factor": 0}, "must not be zero"),
        ({"scale_factor": [1.0, 0.0]}, "must not be zero"),
        ({"padding": [1, 2]}, "4 integers"),
        ({"scale_offset": "x"}, "expected a number or list"),
    ],
)
def test_scaling_invalid(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(TacoValidationError, match=match):
        Scaling(**kwargs)  # type: ignore[arg-type]


def _taco() -> Taco:
    return Taco(
        Tortilla([Sample("a", b"1")]),
        id="t",
        dataset_version="1",
        description="d",
        licenses=["MIT"],
        providers=[{"name": "p"}],
        tasks=["segmentation"],
    )


def test_labels_table_types() -> None:
    table = Labels([LabelClass("a", 1), {"name": "b", "category": "B", "description": "bee"}])(
        _taco()
    )
    assert table.schema.field("labels:classes").type == pa.list_(
        pa.struct([("name", pa.string()), ("category", pa.string()), ("description", pa.string())])
    )
    assert table.to_pylist()[0]["labels:classes"][1] == {
        "name": "b",
        "category": "B",
        "description": "bee",
    }
    assert table.column("labels:num_classes").to_pylist() == [2]


@pytest.mark.parametrize(
    ("classes", "match"),
    [
        ([], "at least one label class"),
        ([LabelClass("a", 0), LabelClass("a", 1)], "unique"),
        ([{"name": "a"}], "category"),
        ([3], "expected a LabelClass or dict"),
    ],
)
def test_labels_invalid(classes: list[object], match: str) -> None:
    with pytest.raises(TacoValidationError, match=match):
        Labels(classes)  # type: ignore[arg-type]


def test_publications() -> None:
    pubs = Publications(
        [Publication("10.1/a", "A (2020)", "intro"), {"doi": "10.1/b", "citation": "B"}]
    )
    table = pubs(_taco())
    assert table.to_pylist()[0]["publications"] == [
        {"doi": "10.1/a", "citation": "A (2020)", "summary": "intro"},
        {"doi": "10.1/b", "citation": "B", "summary": None},
    ]
    with pytest.raises(TacoValidationError, match=r"Publication\.doi"):
        Publication("", "x")


def test_taco_extension_keys_land_in_collection(tmp_path: Path) -> None:
    taco = _taco().extend_with(Labels([LabelClass("water", 0)], "from maps"))
    collection = taco.metadata().collection
    assert collection["labels:description"] == "from maps"
    assert collection["labels:classes"] == [{"name": "water", "category": "0", "description": None}]


def test_pixel_type_names_numpy_types_and_nodata_as_float64() -> None:
    table = PixelType("float32", -9999)(Sample("a", b"1"))
    assert table.schema == pa.schema([(DATA_TYPE, pa.string()), (NODATA, pa.float64())])
    assert table.to_pylist() == [{DATA_TYPE: "float32", NODATA: -9999.0}]
    assert PixelType("complex_int16").data_type == "complex64"  # rasterio's name for CInt16
    assert PixelType("uint8").nodata is None
    assert PixelType("uint8", schema_only=True)(Sample("a", b"1")).to_pylist() == [
        {DATA_TYPE: None, NODATA: None}
    ]


@pytest.mark.parametrize("bad", ["pixels", "str", "bool", None])
def test_pixel_type_refuses_what_is_not_a_raster_type(bad: object) -> None:
    with pytest.raises(TacoValidationError, match=rf"'uint16'\), found {re.escape(repr(bad))}"):
        PixelType(bad)  # type: ignore[arg-type]


def test_pixel_type_refuses_a_nodata_that_is_not_a_number() -> None:
    with pytest.raises(TacoValidationError, match="nodata: expected a number or None, found '0'"):
        PixelType("uint8", "0")  # type: ignore[arg-type]
    with pytest.raises(TacoValidationError, match="found True"):
        PixelType("uint8", True)
