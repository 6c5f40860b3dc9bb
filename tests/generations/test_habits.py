"""Requirement 5: a tacoreader user's habits: Arrow/Polars frames, protected columns, pit_schema."""

from __future__ import annotations

import sys
from typing import Any

import pyarrow as pa
import pytest

import taco_gdal
from taco_gdal.errors import TacoDependencyError, TacoError, TacoQueryError
from taco_gdal.read.frames.convert import PitSchema
from tests.generations.conftest import golden


@pytest.fixture
def nested() -> taco_gdal.TacoDataset:
    return taco_gdal.load(golden("v3/v3_nested.zip"))


def test_frames_as_arrow_and_polars(nested: taco_gdal.TacoDataset) -> None:
    import polars

    frame = nested.data
    table = frame.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.column("id").to_pylist() == list(frame["id"])
    assert table.column("geometry").type == pa.binary()  # a GeoDataFrame's geometry as WKB
    as_polars = frame.to_polars()
    assert isinstance(as_polars, polars.DataFrame)
    assert as_polars["id"].to_list() == list(frame["id"])
    level1 = nested.to_polars(1)
    assert level1.shape[0] == nested.to_arrow(1).num_rows == 9
    children = frame.read("pair_2")
    assert isinstance(children, taco_gdal.TacoDataFrame)
    assert children.to_arrow().column("id").to_pylist() == ["before", "after", "change.tif"]


def test_polars_is_optional(nested: taco_gdal.TacoDataset, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polars", None)  # what an environment without it sees
    with pytest.raises(TacoDependencyError, match=r"taco_gdal\[polars\]"):
        nested.to_polars()


@pytest.mark.parametrize("column", ["id", "type", "internal:offset", "internal:gdal_vsi"])
def test_protected_columns_refuse_assignment(nested: taco_gdal.TacoDataset, column: str) -> None:
    frame = nested.data.read("pair_0")
    assert isinstance(frame, taco_gdal.TacoDataFrame)
    with pytest.raises(TacoQueryError, match=f"column '{column}' is protected"):
        frame[column] = "x"
    with pytest.raises(TacoError):
        frame[["cloud_note", column]] = ["a", "b"]
    frame["cloud_note"] = "fine"  # other columns stay writable
    assert list(frame["cloud_note"]) == ["fine"] * 3


@pytest.mark.parametrize(
    "assign",
    [
        lambda f, c: f.loc.__setitem__((f.index[0], c), "x"),
        lambda f, c: f.loc.__setitem__((slice(None), [c, "cloud_note"]), "x"),
        lambda f, c: f.iloc.__setitem__((0, list(f.columns).index(c)), "x"),
        lambda f, c: f.at.__setitem__((f.index[0], c), "x"),
        lambda f, c: f.iat.__setitem__((0, list(f.columns).index(c)), "x"),
        lambda f, c: f.loc.__setitem__(f.index[0], f.iloc[1]),  # a whole row holds c too
    ],
    ids=["loc", "loc-list", "iloc", "at", "iat", "loc-row"],
)
def test_indexers_refuse_protected_columns(nested: taco_gdal.TacoDataset, assign: Any) -> None:
    frame = nested.data.read("pair_0")
    assert isinstance(frame, taco_gdal.TacoDataFrame)
    before = frame.copy()
    with pytest.raises(TacoQueryError, match="is protected"):
        assign(frame, "id")
    assert frame["id"].tolist() == before["id"].tolist()
    frame.loc[:, "cloud_note"] = "fine"  # other columns stay writable through indexers
    frame.iloc[0, list(frame.columns).index("cloud_note")] = "first"
    assert list(frame["cloud_note"]) == ["first", "fine", "fine"]


def test_pit_schema_is_typed_and_reads_like_the_dict(nested: taco_gdal.TacoDataset) -> None:
    pit = nested.pit_schema
    assert isinstance(pit, PitSchema)
    assert (pit.root_type, pit.root_count, pit.max_depth) == ("FOLDER", 3, 2)
    assert pit.children_per_level == (3, 2)
    assert pit.levels[0].ids == ("before", "after", "change.tif")
    assert pit.levels[0].types == ("FOLDER", "FOLDER", "FILE")
    stored = nested.collection["taco:pit_schema"]
    assert pit == stored and pit["root"] == stored["root"] and dict(pit) == stored
    assert pit.get("shape") == [3, 3, 2]
    with pytest.raises(AttributeError):
        pit.root_type = "FILE"  # type: ignore[misc]
    flat = taco_gdal.load(golden("v1/v1_flat.taco")).pit_schema
    assert (flat.root_type, flat.max_depth, flat.children_per_level) == ("FILE", 0, ())
