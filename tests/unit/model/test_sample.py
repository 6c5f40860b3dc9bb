"""Sample: paths of every kind, id rules, metadata fields and their Arrow types."""

from __future__ import annotations

import decimal
import gc
import os
import sys
import weakref
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from osgeo import gdal

from taco_gdal.errors import (
    TacoIOError,
    TacoNavigationError,
    TacoSchemaError,
    TacoValidationError,
)
from taco_gdal.extensions import SampleExtension, Split
from taco_gdal.model import Sample, Tortilla

STAC_CRS: dict[str, Any] = {"stac:crs": "EPSG:4326"}

# --- paths --------------------------------------------------------------------------------


def test_local_path_as_str_and_path(blob: Path) -> None:
    for given in (str(blob), blob):
        sample = Sample("a", given)
        assert sample.type == "FILE"
        assert sample.path == str(blob)
        assert sample.size == 5


def test_relative_path_becomes_absolute(blob: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(blob.parent)
    assert Sample("a", "blob.bin").path == str(blob)


def test_missing_path_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match=r"sample 'a': path .*nope\.tif.* does not exist"):
        Sample("a", tmp_path / "nope.tif")


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match="not a regular file"):
        Sample("a", tmp_path)


def test_broken_symlink_is_unreadable(tmp_path: Path) -> None:
    link = tmp_path / "link.tif"
    link.symlink_to(tmp_path / "gone.tif")
    with pytest.raises(TacoIOError, match="does not exist"):
        Sample("a", link)


def test_vsi_path_checked_with_gdal(vsimem_dir: str) -> None:
    path = f"{vsimem_dir}/x.tif"
    gdal.FileFromMemBuffer(path, b"12345678")
    sample = Sample("a", path)
    assert (sample.type, sample.path, sample.size) == ("FILE", path, 8)
    with pytest.raises(TacoIOError, match="sample 'b'"):
        Sample("b", f"{vsimem_dir}/missing.tif")


@pytest.mark.network
def test_http_path_checked_with_vsistatl(tmp_path: Path) -> None:
    from tests.support.servers.range_server import RangeServer

    (tmp_path / "x.tif").write_bytes(b"0123456789")
    with RangeServer(root=tmp_path) as server:
        sample = Sample("a", f"{server.url}/x.tif")
        assert sample.path == f"/vsicurl/{server.url}/x.tif"
        assert sample.size == 10
        assert server.log.count(method="HEAD") + server.log.count(method="GET") >= 1
        with pytest.raises(TacoIOError, match="sample 'b'"):
            Sample("b", f"{server.url}/missing.tif")


def test_bytes_become_a_temp_file_removed_by_cleanup(tmp_path: Path) -> None:
    sample = Sample("a", b"payload", temp_dir=tmp_path / "new")
    path = sample.path
    assert isinstance(path, str)
    assert Path(path).parent == tmp_path / "new"
    assert Path(path).read_bytes() == b"payload"
    assert sample.size == 7
    sample.cleanup()
    assert not os.path.exists(path)
    sample.cleanup()  # idempotent


def test_bytes_temp_file_removed_on_garbage_collection(tmp_path: Path) -> None:
    sample = Sample("a", b"payload", temp_dir=tmp_path)
    path = sample.path
    assert isinstance(path, str)
    ref = weakref.ref(sample)
    del sample
    gc.collect()
    assert ref() is None
    assert not os.path.exists(path)


def test_tortilla_path_is_a_folder(blob: Path) -> None:
    inner = Tortilla([Sample("x", blob), Sample("y", b"abc")])
    sample = Sample("f", inner)
    assert sample.type == "FOLDER"
    assert sample.path is inner and sample.tortilla is inner
    assert sample.file_path is None
    assert sample.size == 8


def test_explicit_type_must_match_path(blob: Path) -> None:
    assert Sample("a", blob, type="FILE").type == "FILE"
    with pytest.raises(TacoValidationError, match="does not match path"):
        Sample("a", blob, type="FOLDER")
    with pytest.raises(TacoValidationError, match="does not match path"):
        Sample("a", Tortilla([Sample("x", blob)]), type="FILE")
    with pytest.raises(TacoValidationError, match="must be one of"):
        Sample("a", blob, type="file")  # type: ignore[arg-type]


def test_path_of_unsupported_type(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match="path must be"):
        Sample("a", 42)  # type: ignore[arg-type]


# --- ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ("a/b", "'/'"),
        ("a\\b", "'\\\\\\\\'"),
        ("a:b", "':'"),
        ("__x", "must not start with '__'"),
        ("__TACOPAD__0", "must not start with '__'"),
        ("", "non-empty"),
        ("..", "not valid ids"),
    ],
)
def test_invalid_ids(blob: Path, bad: str, rule: str) -> None:
    with pytest.raises(TacoValidationError, match=rule):
        Sample(bad, blob)


def test_id_must_be_a_string(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match="expected a string"):
        Sample(3, blob)  # type: ignore[arg-type]


def test_valid_ids(blob: Path) -> None:
    for good in ("a", "tile_0", "x.tif", "_single", "ñandú", "a b"):
        assert Sample(good, blob).id == good


# --- metadata -------------------------------------------------------------------------------


def test_keyword_metadata_types_inferred(blob: Path) -> None:
    sample = Sample(
        "a",
        blob,
        cloud=1.5,
        n=3,
        ok=True,
        name="x",
        raw=b"\x00",
        shape=[1, 2],
        when=datetime(2024, 1, 1),
        none=None,
        **STAC_CRS,
    )
    types = dict(zip(sample.schema.names, sample.schema.types, strict=True))
    assert types == {
        "cloud": pa.float64(),
        "n": pa.int64(),
        "ok": pa.bool_(),
        "name": pa.string(),
        "raw": pa.binary(),
        "shape": pa.list_(pa.int64()),
        "when": pa.timestamp("us"),
        "none": pa.null(),
        "stac:crs": pa.string(),
    }
    assert sample.fields == tuple(types)
    assert sample["cloud"] == 1.5 and sample.get("missing", 7) == 7


def test_arrow_scalar_keeps_its_type(blob: Path) -> None:
    sample = Sample("a", blob, small=pa.scalar(3, pa.int8()))
    assert sample.schema.field("small").type == pa.int8()
    assert sample["small"] == 3


@pytest.mark.parametrize(
    "key", ["bad key", "a:b:c", "with-dash", "id", "type", "path", "internal:offset", ":x"]
)
def test_invalid_or_reserved_keys(blob: Path, key: str) -> None:
    with pytest.raises(TacoValidationError, match="key"):
        Sample("a", blob).extend_with({key: 1})
    if key not in ("id", "type", "path"):  # those names are Sample() parameters
        with pytest.raises(TacoValidationError, match="key"):
            kwargs: dict[str, Any] = {key: 1}
            Sample("a", blob, **kwargs)


def test_unrepresentable_value(blob: Path) -> None:
    with pytest.raises(TacoSchemaError, match="field 'obj'"):
        Sample("a", blob, obj=object())


def test_extend_with_dict(blob: Path) -> None:
    sample = Sample("a", blob).extend_with({"split": "train", "score": 0.5})
    assert sample.metadata == {"split": "train", "score": 0.5}


def test_extend_with_table_keeps_arrow_types(blob: Path) -> None:
    table = pa.table(
        {
            "i8": pa.array([1], pa.int8()),
            "u16": pa.array([2], pa.uint16()),
            "f32": pa.array([0.5], pa.float32()),
            "ts": pa.array([1], pa.timestamp("ns", tz="UTC")),
            "dict": pa.array(["x"], pa.dictionary(pa.int32(), pa.string())),
            "dec": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
            "lst": pa.array([[1.0]], pa.list_(pa.float32())),
            "st": pa.array([{"a": 1}], pa.struct([("a", pa.int16())])),
        }
    )
    sample = Sample("a", blob).extend_with(table)
    assert sample.schema.equals(table.schema)
    assert sample.export_metadata().select(table.column_names).equals(table)


def test_extend_with_multi_row_table_rejected(blob: Path) -> None:
    with pytest.raises(TacoSchemaError, match="exactly 1 row, found 2"):
        Sample("a", blob).extend_with(pa.table({"x": [1, 2]}))


def test_extend_with_conflicting_column_rejected(blob: Path) -> None:
    sample = Sample("a", blob, split="train")
    with pytest.raises(TacoSchemaError, match="field 'split' already exists"):
        sample.extend_with({"split": "test"})
    with pytest.raises(TacoSchemaError, match="already exists"):
        sample.extend_with(Split("test"))
    assert sample["split"] == "train"


def test_extend_is_atomic_on_error(blob: Path) -> None:
    sample = Sample("a", blob, b=1)
    with pytest.raises(TacoSchemaError):
        sample.extend_with({"a": 1, "b": 2})
    assert sample.fields == ("b",)


def test_extend_with_pydantic_model_is_namespaced(blob: Path) -> None:
    import pydantic

    class Quality(pydantic.BaseModel):
        score: float
        flag: bool

    sample = Sample("a", blob).extend_with(Quality(score=0.9, flag=True))
    assert sample.fields == ("quality:score", "quality:flag")
    sample.extend_with(Quality(score=0.1, flag=False), name="qa")
    assert sample["qa:score"] == 0.1


def test_extend_with_sample_extension_and_descriptions(blob: Path) -> None:
    sample = Sample("a", blob).extend_with(Split("validation"))
    assert sample["split"] == "validation"
    assert "partition" in sample.field_descriptions["split"]


def test_extend_with_schema_only_gives_typed_nulls(blob: Path) -> None:
    sample = Sample("a", blob).extend_with(Split(schema_only=True))
    assert sample["split"] is None
    assert sample.schema.field("split").type == pa.string()


class _Wrong(SampleExtension):
    def get_schema(self) -> dict[str, pa.DataType]:
        return {"x": pa.int64()}

    def _compute(self, sample: Sample) -> pa.Table:
        return pa.table({"y": [1]})


def test_extension_returning_other_columns_rejected(blob: Path) -> None:
    with pytest.raises(TacoSchemaError, match=r"expected columns \['x'\]"):
        Sample("a", blob).extend_with(_Wrong())


def test_extend_with_unsupported_object(blob: Path) -> None:
    with pytest.raises(TacoValidationError, match="found int"):
        Sample("a", blob).extend_with(5)


def test_pop_returns_typed_one_row_table(blob: Path) -> None:
    sample = Sample("a", blob, n=pa.scalar(4, pa.int16()), keep="x")
    popped = sample.pop("n")
    assert popped.schema == pa.schema([("n", pa.int16())])
    assert popped.to_pylist() == [{"n": 4}]
    assert sample.fields == ("keep",)
    with pytest.raises(TacoNavigationError, match="no field 'n'"):
        sample.pop("n")
    with pytest.raises(TacoValidationError, match="core field"):
        sample.pop("id")


def test_sample_is_frozen_once_in_a_tortilla(blob: Path) -> None:
    sample = Sample("a", blob, k=1)
    Tortilla([sample])
    with pytest.raises(TacoValidationError, match="already belongs to a Tortilla"):
        sample.extend_with({"x": 1})
    with pytest.raises(TacoValidationError, match="already belongs to a Tortilla"):
        sample.pop("k")


def test_export_metadata(blob: Path) -> None:
    table = Sample("a", blob, when=datetime(2024, 1, 1, tzinfo=UTC)).export_metadata()
    assert table.column_names == ["id", "type", "path", "when"]
    assert table.schema.field("when").type == pa.timestamp("us", tz="UTC")
    assert table.to_pylist()[0]["path"] == str(blob)


def test_getitem_missing_field(blob: Path) -> None:
    with pytest.raises(TacoNavigationError, match="no field 'x'"):
        Sample("a", blob)["x"]


def test_sample_is_80_bytes_and_shares_its_field_state(blob: Path) -> None:
    # the field map and the frozen flag live in a state most samples share
    a, b = Sample("a", blob, cloud=1.0), Sample("b", blob, cloud=2.0)
    assert sys.getsizeof(a) <= 80
    assert a._state is b._state
    Tortilla([a])
    assert a._state is not b._state  # frozen now, b is not
    b.extend_with({"k": 1})  # b's own change leaves a alone
    assert a.fields == ("cloud",) and b.fields == ("cloud", "k")


def test_descriptions_and_temp_files_stay_with_their_sample(blob: Path) -> None:
    plain = Sample("p", blob, k=1)
    described = Sample("d", blob).extend_with(pa.table({"k": [2]}))
    described._own_state().descriptions = {"k": "a number"}
    temp = Sample("t", b"xyz", k=3)
    assert plain.field_descriptions == {} and described.field_descriptions == {"k": "a number"}
    assert plain._state.finalizer is None and temp._state.finalizer is not None
    path = temp.file_path
    assert path is not None and Path(path).exists()
    Tortilla([plain, described, temp])
    assert described.field_descriptions == {"k": "a number"}
    temp.cleanup()
    assert not Path(path).exists()
