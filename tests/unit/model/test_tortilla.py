"""Tortilla: schema uniformity, padding, duplicate ids, extensions, depth limit."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import (
    TacoNavigationError,
    TacoPITError,
    TacoSchemaError,
    TacoValidationError,
)
from taco_gdal.extensions import TortillaExtension
from taco_gdal.model import Sample, Tortilla


def test_strict_schema_names_sample_and_missing_columns(blob: Path) -> None:
    samples = [Sample("a", blob, x=1, y=2), Sample("b", blob, x=1), Sample("c", blob, x=1, z=3)]
    with pytest.raises(TacoSchemaError) as info:
        Tortilla(samples)
    message = str(info.value)
    assert "sample 1 ('b')" in message
    assert "missing columns ['y']" in message
    assert "strict_schema=False" in message


def test_strict_schema_names_extra_columns(blob: Path) -> None:
    with pytest.raises(TacoSchemaError, match=r"sample 1 \('b'\).*extra columns \['z'\]"):
        Tortilla([Sample("a", blob, x=1), Sample("b", blob, x=1, z=3)])


def test_strict_schema_names_differing_types(blob: Path) -> None:
    with pytest.raises(
        TacoSchemaError, match=r"sample 2 \('c'\).*column 'x' has type string but int64"
    ):
        Tortilla([Sample("a", blob, x=1), Sample("b", blob, x=2), Sample("c", blob, x="3")])


def test_null_valued_field_agrees_with_any_type(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, x=None), Sample("b", blob, x=2.5)])
    assert tortilla.column_types["x"] == pa.float64()
    assert tortilla.column("x").to_pylist() == [None, 2.5]


def test_column_order_is_insertion_order(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, zz=1, aa=2), Sample("b", blob, aa=3, zz=4)])
    assert list(tortilla.column_types) == ["zz", "aa"]


def test_non_strict_fills_missing_columns_with_typed_nulls(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, x=1), Sample("b", blob, y="s")], strict_schema=False)
    table = tortilla.export_metadata()
    assert table.column_names == ["id", "type", "path", "x", "y"]
    assert table.schema.field("x").type == pa.int64()
    assert table.schema.field("y").type == pa.string()
    assert table.column("x").to_pylist() == [1, None]
    assert table.column("y").to_pylist() == [None, "s"]


def test_non_strict_still_rejects_type_conflicts(blob: Path) -> None:
    with pytest.raises(TacoSchemaError, match="column 'x' has type double but int64"):
        Tortilla([Sample("a", blob, x=1), Sample("b", blob, x=1.5)], strict_schema=False)


def test_duplicate_ids_rejected(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match=r"duplicated: 'a' \(2x\)"):
        Tortilla([Sample("a", blob), Sample("b", blob), Sample("a", blob)])


def test_empty_and_non_sample_rejected(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match="at least one sample"):
        Tortilla([])
    with pytest.raises(TacoValidationError, match="item 1 must be a Sample"):
        Tortilla([Sample("a", blob), "b"])  # type: ignore[list-item]


def test_pad_to_appends_zero_byte_padding(blob: Path) -> None:
    tortilla = Tortilla([Sample(f"s{i}", blob, k=i) for i in range(5)], pad_to=4)
    assert len(tortilla) == 8
    assert tortilla.ids[5:] == ("__TACOPAD__0", "__TACOPAD__1", "__TACOPAD__2")
    pad = tortilla[5]
    assert (pad.type, pad.file_path, pad.size, pad.is_padding) == ("FILE", None, 0, True)
    assert tortilla.column("k").to_pylist() == [0, 1, 2, 3, 4, None, None, None]
    assert tortilla.column_types["k"] == pa.int64()


def test_pad_to_no_padding_when_divisible(blob: Path) -> None:
    assert len(Tortilla([Sample("a", blob), Sample("b", blob)], pad_to=2)) == 2


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_pad_to_must_be_positive_int(blob: Path, bad: object) -> None:
    with pytest.raises(TacoValidationError, match="pad_to must be a positive integer"):
        Tortilla([Sample("a", blob)], pad_to=bad)  # type: ignore[arg-type]


class _Rank(TortillaExtension):
    def __init__(self, rows: int | None = None, name: str = "rank") -> None:
        self.rows, self.name = rows, name

    def get_schema(self) -> dict[str, pa.DataType]:
        return {self.name: pa.int32()}

    def get_field_descriptions(self) -> dict[str, str]:
        return {self.name: "position"}

    def _compute(self, tortilla: Tortilla) -> pa.Table:
        n = len(tortilla) if self.rows is None else self.rows
        return pa.table({self.name: pa.array(range(n), pa.int32())})


def test_extend_with_tortilla_extension(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, k=1), Sample("b", blob, k=2)], pad_to=3)
    assert tortilla.extend_with(_Rank()) is tortilla
    assert list(tortilla.column_types) == ["k", "rank"]
    assert tortilla.column("rank").to_pylist() == [0, 1, 2]
    assert tortilla.field_descriptions == {"rank": "position"}
    assert tortilla.export_metadata().column_names == ["id", "type", "path", "k", "rank"]


def test_extension_row_count_must_match(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob), Sample("b", blob)])
    with pytest.raises(TacoSchemaError, match="expected 2 row"):
        tortilla.extend_with(_Rank(rows=3))


def test_extension_column_conflict_rejected(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, k=1)])
    with pytest.raises(TacoSchemaError, match="column 'k' already exists"):
        tortilla.extend_with(_Rank(name="k"))
    tortilla.extend_with(_Rank())
    with pytest.raises(TacoSchemaError, match="column 'rank' already exists"):
        tortilla.extend_with(_Rank())


def test_extend_with_needs_tortilla_extension(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match="expected a TortillaExtension"):
        Tortilla([Sample("a", blob)]).extend_with({"x": 1})  # type: ignore[arg-type]


def test_pop_extension_column(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob, k=1)]).extend_with(_Rank())
    assert tortilla.pop("rank").to_pylist() == [{"rank": 0}]
    assert list(tortilla.column_types) == ["k"]
    with pytest.raises(TacoValidationError, match="core or sample field"):
        tortilla.pop("k")
    with pytest.raises(TacoNavigationError, match="no extension column 'rank'"):
        tortilla.pop("rank")


def test_nested_tortilla_is_frozen(blob: Path) -> None:
    inner = Tortilla([Sample("a", blob)])
    Sample("f", inner)
    with pytest.raises(TacoValidationError, match="already the content"):
        inner.extend_with(_Rank())


def test_lookup_by_id_and_position(blob: Path) -> None:
    tortilla = Tortilla([Sample("a", blob), Sample("b", blob)])
    assert tortilla["b"].id == "b" and tortilla[0].id == "a"
    assert [s.id for s in tortilla] == ["a", "b"]
    with pytest.raises(TacoNavigationError):
        tortilla["zz"]
    with pytest.raises(TacoNavigationError):
        tortilla[5]


def _chain(blob: Path, depth: int) -> Tortilla:
    tortilla = Tortilla([Sample("leaf", blob)])
    for level in range(depth):
        tortilla = Tortilla([Sample(f"d{level}", tortilla)])
    return tortilla


def test_depth_limit(blob: Path) -> None:
    assert _chain(blob, 5).depth == 5  # levels 0..5: allowed
    with pytest.raises(TacoPITError, match="maximum depth 5"):
        _chain(blob, 6)


def test_samples_of_one_schema_share_one_type_map(blob: Path) -> None:
    a, b = Sample("a", blob, k=1), Sample("b", blob, k=2)
    odd = Sample("c", blob, k=None)  # null-typed field: agrees, but is not the same map
    t = Tortilla([a, b, odd])
    assert a._types is b._types is t._types
    assert odd._types is not t._types
    assert odd.schema == pa.schema([("k", pa.null())])
    assert [s.schema for s in (a, b)] == [pa.schema([("k", pa.int64())])] * 2
    assert t.column("k").to_pylist() == [1, 2, None]
    with pytest.raises(TacoValidationError):  # frozen: the shared map never changes
        a.extend_with({"x": 1})
    assert list(b.schema.names) == ["k"]
