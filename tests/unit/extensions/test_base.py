"""Extension base classes: schema checks on what _compute returns, schema_only."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoSchemaError
from taco_gdal.extensions import SampleExtension, TacoExtension, TortillaExtension
from taco_gdal.model import Sample, Tortilla


class _Ext(SampleExtension):
    def __init__(self, result: Any, schema_only: bool = False) -> None:
        self.result, self.schema_only = result, schema_only

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"a": pa.int16(), "b": pa.string()}

    def _compute(self, sample: Sample) -> pa.Table:
        assert not self.schema_only
        return self.result


def test_result_is_cast_to_the_declared_types() -> None:
    table = _Ext(pa.table({"a": [1], "b": ["x"]}))(Sample("s", b"1"))
    assert table.schema == pa.schema([("a", pa.int16()), ("b", pa.string())])


@pytest.mark.parametrize(
    ("result", "match"),
    [
        ({"a": [1]}, "must return a pyarrow.Table, found dict"),
        (pa.table({"a": [1, 2], "b": ["x", "y"]}), "expected 1 row"),
        (pa.table({"b": ["x"], "a": [1]}), r"expected columns \['a', 'b'\]"),
        (pa.table({"a": ["not a number"], "b": ["x"]}), "does not cast safely"),
    ],
)
def test_bad_results_rejected(result: object, match: str) -> None:
    with pytest.raises(TacoSchemaError, match=match):
        _Ext(result)(Sample("s", b"1"))


def test_schema_only_never_computes() -> None:
    table = _Ext(None, schema_only=True)(Sample("s", b"1"))
    assert table.to_pylist() == [{"a": None, "b": None}]
    assert table.schema.field("a").type == pa.int16()


class _Rows(TortillaExtension):
    schema_only = True

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"r": pa.float32()}

    def _compute(self, tortilla: Tortilla) -> pa.Table:
        raise AssertionError("not called")


def test_tortilla_schema_only_one_null_per_sample() -> None:
    tortilla = Tortilla([Sample("a", b"1"), Sample("b", b"2")]).extend_with(_Rows())
    assert tortilla.column("r").type == pa.float32()
    assert tortilla.column("r").to_pylist() == [None, None]


def test_abstract_classes_need_compute() -> None:
    class Half(TacoExtension):
        def get_schema(self) -> dict[str, pa.DataType]:
            return {}

    with pytest.raises(TypeError):
        Half()  # type: ignore[abstract]
