"""Samples share their field maps and keep values in field order (memory per sample)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from taco_gdal.model import Sample, Tortilla


def test_equal_fields_share_one_map_and_ids_repeat_as_one_string(blob: Path) -> None:
    a = Sample("b0", blob, cloud=1.0)
    b = Sample("".join(["b", "0"]), blob, cloud=2.0)
    assert a._types is b._types
    assert a.id is b.id
    assert (a["cloud"], b["cloud"]) == (1.0, 2.0)


def test_one_field_sample_reads_like_many(blob: Path) -> None:
    one = Sample("a", blob, cloud=0.5)
    assert one.fields == ("cloud",)
    assert dict(one.metadata) == {"cloud": 0.5}
    assert one.get("missing", 7) == 7
    one.extend_with({"split": "train", "n": 3})
    assert dict(one.metadata) == {"cloud": 0.5, "split": "train", "n": 3}
    assert one.pop("split").to_pylist() == [{"split": "train"}]
    assert dict(one.metadata) == {"cloud": 0.5, "n": 3}
    assert one.pop("cloud").to_pylist() == [{"cloud": 0.5}]
    assert one["n"] == 3 and one.fields == ("n",)


def test_tuple_values_are_kept_whole(blob: Path) -> None:
    s = Sample("a", blob, pair=(1, 2))
    assert s["pair"] == (1, 2)
    assert s.export_metadata().column("pair").to_pylist() == [[1, 2]]


def test_columns_follow_each_samples_own_field_order(blob: Path) -> None:
    first = Sample("a", blob, x=1, y="p")
    second = Sample("b", blob, y="q", x=2)  # same fields, other order: another map
    assert first._types is not second._types
    t = Tortilla([first, second])
    assert t.column("x").to_pylist() == [1, 2]
    assert t.column("y").to_pylist() == ["p", "q"]
    assert t.column("x").type == pa.int64()


def test_string_array_equals_pyarrow_at_any_size() -> None:
    from taco_gdal.model._arrow import string_array

    values: list[str | None] = ["a", None, "ñé", ""] * 20_000 + [f"/p/{i}" for i in range(70_000)]
    built = string_array(values)
    built.validate(full=True)
    assert built.equals(pa.array(values, pa.string()))
    assert built.null_count == 20_000


def test_ascii_rows_array_is_the_string_array_of_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    from taco_gdal.model import _arrow

    rows = np.frombuffer(b"".join(b"v%04d" % i for i in range(1000)), np.uint8).reshape(1000, 5)
    valid = np.arange(1000) % 3 != 0
    expected = [f"v{i:04d}" if i % 3 else None for i in range(1000)]
    built = _arrow.ascii_rows_array(rows, valid)
    built.validate(full=True)
    assert built.type == pa.string() and built.to_pylist() == expected
    assert built.null_count == 334
    everything = _arrow.ascii_rows_array(rows, np.ones(1000, np.bool_))
    assert everything.null_count == 0 and everything.to_pylist()[999] == "v0999"
    # past 32-bit offsets the general builder takes over (tried with a lower limit)
    monkeypatch.setattr(_arrow, "_INT32_MAX", 100)
    assert _arrow.ascii_rows_array(rows, valid).to_pylist() == expected
