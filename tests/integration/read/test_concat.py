"""concat(): modes, warnings, errors, ids renumbered per source, mixed containers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoSchemaError, TacoValidationError, TacoWarning
from taco_gdal.io.vsi import read_all
from taco_gdal.read import TacoDataFrame
from tests.integration.read.conftest import RefDataset

Reference = Callable[[str, str], RefDataset]


@pytest.mark.parametrize("fmt", ["zip", "folder", "tacocat", "tacocat-binary"])
def test_same_dataset_twice_has_no_duplicated_children(reference: Reference, fmt: str) -> None:
    ref = reference("2level", fmt)
    ds = reader.load(ref.path)
    both = reader.concat([ds, ds])
    assert both.data["id"].tolist() == [n.id for n in ref.level(0)] * 2
    assert both.frame(internal=True)["internal:current_id"].tolist() == list(range(6))
    pairs = both.sql(
        'SELECT p.id AS parent, p."internal:current_id" AS pid, c.id AS child FROM level0 p '
        'JOIN level1 c ON c."internal:parent_id" = p."internal:current_id"'
    ).data
    assert len(pairs) == 12
    assert sorted(pairs.groupby("pid").size().tolist()) == [2] * 6
    level1 = both.sql("SELECT * FROM level1").frame(internal=True)
    assert list(level1.columns).count("internal:gdal_vsi") == 1
    assert level1["internal:parent_id"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


def test_mixed_containers_keep_their_paths(reference: Reference) -> None:
    parts = [reference("3level", f) for f in ("zip", "folder", "tacocat")]
    both = reader.concat([reader.load(p.path) for p in parts])
    assert both.format == "mixed"
    frame = both.data
    assert len(frame) == 6
    for index, ref in enumerate(parts):
        region = frame.read(2 * index + 1)
        assert isinstance(region, TacoDataFrame)
        bands = region.read("s2")
        assert isinstance(bands, TacoDataFrame)
        path = bands.read("b1")
        assert isinstance(path, str)
        assert read_all(path) == ref.source_bytes[("region1", "s2", "b1")]


def test_filtered_inputs_are_respected(reference: Reference) -> None:
    ref = reference("2level", "zip")
    ds = reader.load(ref.path)
    only_b = ds.filter_bbox(5.0, -90, 6.0, 90, level=1)  # tile0/b (lon 5.4)
    first_two = ds.sql("SELECT * FROM data WHERE id IN ('tile0', 'tile1')")
    both = reader.concat([only_b, first_two])
    assert both.data["id"].tolist() == ["tile0", "tile0", "tile1"]
    level1 = both.sql("SELECT * FROM level1").frame(internal=True)
    assert level1["id"].tolist() == ["b", "a", "b", "a", "b"]
    assert level1["internal:parent_id"].tolist() == [0, 1, 1, 2, 2]
    assert both.data.read(0)["id"].tolist() == ["b"]
    assert both.data.read(1)["id"].tolist() == ["a", "b"]


def test_column_modes(reference: Reference) -> None:
    ds = reader.load(reference("flat", "zip").path)
    fewer = ds.sql("SELECT * EXCLUDE (score) FROM data")
    with pytest.warns(TacoWarning, match="dropping columns.*'score'"):
        inter = reader.concat([ds, fewer])
    assert "score" not in inter.data.columns
    with pytest.warns(TacoWarning, match="filling missing columns with nulls: 'score'"):
        filled = reader.concat([ds, fewer], column_mode="fill_missing")
    scores = filled.data["score"]
    assert scores.iloc[:5].notna().all() and scores.iloc[5:].isna().all()
    with pytest.raises(TacoSchemaError, match=r"strict.*Only in some.*score.*Common to all"):
        reader.concat([ds, fewer], column_mode="strict")
    same = reader.concat([ds, ds], column_mode="strict")
    assert len(same.data) == 10


def test_concat_errors(reference: Reference) -> None:
    flat = reader.load(reference("flat", "zip").path)
    nested = reader.load(reference("2level", "zip").path)
    with pytest.raises(TacoValidationError, match="at least 2"):
        reader.concat([flat])
    with pytest.raises(TacoValidationError, match="column_mode must be one of"):
        reader.concat([flat, flat], column_mode="union")  # type: ignore[arg-type]
    with pytest.raises(TacoSchemaError, match="different depths"):
        reader.concat([flat, nested])
    text = flat.sql("SELECT * REPLACE (CAST(score AS VARCHAR) || 'x' AS score) FROM data")
    with pytest.raises(TacoSchemaError, match="score"):
        reader.concat([flat, text])
    with pytest.raises(TacoSchemaError, match="lacks"):
        reader.concat([flat, flat.sql("SELECT id FROM data")])


def test_concat_collection(reference: Reference) -> None:
    ref = reference("2level", "folder")
    ds = reader.load(ref.path)
    both = reader.concat([ds, ds])
    assert both.pit_schema["root"]["n"] == 6
    assert both.pit_schema["hierarchy"]["1"][0]["n"] == 12
    assert both.collection["taco:sources"]["count"] == 2
