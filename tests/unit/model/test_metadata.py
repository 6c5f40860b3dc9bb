"""Taco.metadata(): the MetadataPackage contract, pit_schema, field_schema, COLLECTION bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from taco_gdal.model import MetadataPackage, Sample, Taco, Tortilla, collection_json_bytes
from tests.unit.model._trees import tree

MakeTaco = Callable[..., Taco]

SENSORS = [("s1", ["b0", "b1"]), ("s2", ["b0", "b1", "b2"]), "thumb"]


def _three_level(blob: Path) -> Tortilla:
    tiles = []
    for t in range(2):
        sensors = []
        for sensor_id, bands in (("s1", 2), ("s2", 3)):
            children = [Sample(f"b{b}", blob, q=float(b), zz=b) for b in range(bands)]
            sensors.append(Sample(sensor_id, Tortilla(children), zz=1, aa="x"))
        sensors.append(Sample("thumb", blob, zz=2, aa="y"))
        tiles.append(Sample(f"tile{t}", Tortilla(sensors), cloud=0.5 * t, zz="z"))
    return Tortilla(tiles)


def test_flat_package_columns_and_rows(blob: Path, make_taco: MakeTaco) -> None:
    root = Tortilla([Sample("a", blob, zz=1, aa="x"), Sample("b", b"123", zz=2, aa="y")])
    package = make_taco(root).metadata()
    assert isinstance(package, MetadataPackage) and package.depth == 0
    level0 = package.levels[0]
    assert level0.column_names == [
        "id",
        "type",
        "zz",
        "aa",
        "internal:current_id",
        "internal:parent_id",
        "path",
    ]
    assert level0.schema.field("internal:current_id").type == pa.int64()
    assert level0.column("internal:current_id").to_pylist() == [0, 1]
    assert level0.column("internal:parent_id").to_pylist() == [0, 1]
    assert level0.column("path").to_pylist()[0] == str(blob)


def test_three_level_package_order_and_paths(blob: Path, make_taco: MakeTaco) -> None:
    package = make_taco(_three_level(blob)).metadata()
    assert package.depth == 2
    level1, level2 = package.levels[1], package.levels[2]
    assert level1.column_names == [
        "id",
        "type",
        "zz",
        "aa",
        "internal:current_id",
        "internal:parent_id",
        "internal:relative_path",
        "path",
    ]
    assert level2.column_names[:4] == ["id", "type", "q", "zz"]  # insertion order, not sorted
    assert level1.column("id").to_pylist() == ["s1", "s2", "thumb"] * 2
    assert level1.column("internal:parent_id").to_pylist() == [0, 0, 0, 1, 1, 1]
    assert level1.column("internal:relative_path").to_pylist() == [
        "tile0/s1/",
        "tile0/s2/",
        "tile0/thumb",
        "tile1/s1/",
        "tile1/s2/",
        "tile1/thumb",
    ]
    assert level1.column("path").to_pylist() == [None, None, str(blob)] * 2
    assert level2.column("internal:parent_id").to_pylist() == [0, 0, 1, 1, 1, 3, 3, 4, 4, 4]
    assert level2.column("internal:relative_path").to_pylist()[:5] == [
        "tile0/s1/b0",
        "tile0/s1/b1",
        "tile0/s2/b0",
        "tile0/s2/b1",
        "tile0/s2/b2",
    ]
    assert level2.column("internal:current_id").to_pylist() == list(range(10))
    assert package.levels[0].column("path").to_pylist() == [None, None]


def test_pit_schema(blob: Path, make_taco: MakeTaco) -> None:
    pit = make_taco(_three_level(blob)).metadata().collection["taco:pit_schema"]
    assert pit == {
        "root": {"n": 2, "type": "FOLDER"},
        "shape": [2, 3, 3],
        "hierarchy": {
            "1": [{"n": 6, "type": ["FOLDER", "FOLDER", "FILE"], "id": ["s1", "s2", "thumb"]}],
            "2": [
                {"n": 4, "type": ["FILE", "FILE"], "id": ["b0", "b1"]},
                {"n": 6, "type": ["FILE", "FILE", "FILE"], "id": ["b0", "b1", "b2"]},
            ],
        },
    }


def test_field_schema(blob: Path, make_taco: MakeTaco) -> None:
    fields = make_taco(_three_level(blob)).metadata().collection["taco:field_schema"]
    assert list(fields) == ["level0", "level1", "level2"]
    level2 = fields["level2"]
    assert [f[0] for f in level2] == [
        "id",
        "type",
        "q",
        "zz",
        "internal:current_id",
        "internal:parent_id",
        "internal:relative_path",
    ]
    assert [f[1] for f in level2][:4] == ["string", "string", "double", "int64"]
    assert level2[0][2].startswith("Unique sample identifier")
    assert level2[2][2] == ""


def test_field_schema_descriptions_from_extensions(blob: Path, make_taco: MakeTaco) -> None:
    from taco_gdal.extensions import Split

    taco = make_taco(Tortilla([Sample("a", blob).extend_with(Split("train"))]))
    fields = taco.metadata().collection["taco:field_schema"]["level0"]
    assert ["split", "string", "Dataset partition: train, test or validation."] in fields


def test_padding_rows_in_package(blob: Path, make_taco: MakeTaco) -> None:
    groups = [Tortilla([Sample("a", blob, k=1)], pad_to=2) for _ in range(2)]
    package = make_taco(Tortilla([Sample(f"g{i}", t) for i, t in enumerate(groups)])).metadata()
    level1 = package.levels[1]
    assert level1.column("id").to_pylist() == ["a", "__TACOPAD__0"] * 2
    assert level1.column("type").to_pylist() == ["FILE"] * 4
    assert level1.column("k").to_pylist() == [1, None, 1, None]
    assert level1.column("path").to_pylist() == [str(blob), None, str(blob), None]
    assert level1.column("internal:relative_path").to_pylist()[1] == "g0/__TACOPAD__0"


def test_typed_metadata_survives_into_level_tables(blob: Path, make_taco: MakeTaco) -> None:
    row = pa.table({"small": pa.array([1], pa.int8()), "f": pa.array([0.5], pa.float32())})
    samples = [Sample(f"s{i}", blob).extend_with(row) for i in range(3)]
    level0 = make_taco(Tortilla(samples)).metadata().levels[0]
    assert level0.schema.field("small").type == pa.int8()
    assert level0.schema.field("f").type == pa.float32()


def test_metadata_is_repeatable_and_collection_independent(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(Tortilla([Sample("a", blob)]))
    first, second = taco.metadata(), taco.metadata()
    first.collection["licenses"].append("MIT")
    assert second.collection["licenses"] == ["CC-BY-4.0"]
    assert first.levels[0].equals(second.levels[0])


def test_collection_json_bytes(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(Tortilla([Sample("a", blob)]), description="café ñandú")
    data = collection_json_bytes(taco.metadata().collection)
    assert data.startswith(b'{\n    "id": "demo",\n    "dataset_version"')
    assert "café ñandú".encode() in data
    assert not data.endswith(b"\n")
    assert json.loads(data) == taco.metadata().collection


# --- side by side with tacotoolbox 0.26.9 ---------------------------------------------------


def _reference_three_level(blob: Path) -> Any:
    from tacotoolbox.datamodel import Sample as RSample
    from tacotoolbox.datamodel import Taco as RTaco
    from tacotoolbox.datamodel import Tortilla as RTortilla

    tiles = []
    for t in range(2):
        sensors = []
        for sensor_id, bands in (("s1", 2), ("s2", 3)):
            children = [RSample(id=f"b{b}", path=blob, q=float(b), zz=b) for b in range(bands)]
            sensors.append(RSample(id=sensor_id, path=RTortilla(children), zz=1, aa="x"))
        sensors.append(RSample(id="thumb", path=blob, zz=2, aa="y"))
        tiles.append(RSample(id=f"tile{t}", path=RTortilla(sensors), cloud=0.5 * t, zz="z"))
    return RTaco(
        tortilla=RTortilla(tiles),
        id="demo",
        dataset_version="1.0.0",
        description="a dataset for tests",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "Test Lab"}],
        tasks=["classification"],
    )


@pytest.mark.reference
def test_same_rows_and_pit_schema_as_tacotoolbox(blob: Path, make_taco: MakeTaco) -> None:
    import warnings

    from tacotoolbox._metadata import MetadataGenerator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = MetadataGenerator(_reference_three_level(blob)).generate_all_levels()
    ours = make_taco(_three_level(blob)).metadata()
    assert ours.collection["taco:pit_schema"] == reference.pit_schema
    for mine, theirs in zip(ours.levels, reference.levels, strict=True):
        for name in theirs.column_names:
            assert mine.column(name).to_pylist() == theirs.column(name).to_pylist(), name
        assert set(theirs.column_names) == set(mine.column_names) - {"path"}
    ref_fields = reference.field_schema
    for level, fields in ours.collection["taco:field_schema"].items():
        assert sorted((n, t) for n, t, _ in fields) == sorted(
            (n, t) for n, t, _ in ref_fields[level]
        )


def test_pit_schema_keeps_a_level_the_first_pattern_does_not_reach(
    blob: Path, make_taco: MakeTaco
) -> None:
    shape = [("a", ["x"]), ("b", [("y", ["z"])])]  # depth 3 only under 'b'
    root = tree(blob, [("r0", shape), ("r1", shape)])
    pit = make_taco(root).metadata().collection["taco:pit_schema"]
    assert pit["shape"] == [2, 2, 1, 1]
    assert pit["hierarchy"]["2"] == [
        {"n": 2, "type": ["FILE"], "id": ["x"]},
        {"n": 2, "type": ["FOLDER"], "id": ["y"]},
    ]
    # tacotoolbox 0.26.9 follows only hierarchy["2"][0] (no FOLDER) and drops depth 3
    assert pit["hierarchy"]["3"] == [{"n": 2, "type": ["FILE"], "id": ["z"]}]
