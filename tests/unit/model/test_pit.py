"""PIT rules at Taco construction: root types, PIT-1 isomorphism, PIT-2 schemas per level."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoPITError, TacoSchemaError
from taco_gdal.format.names import CURRENT_ID, ID, PARENT_ID, TYPE
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.model.pit import pit_schema
from tests.unit.model._trees import tree

MakeTaco = Callable[..., Taco]


def test_root_samples_must_share_one_type(blob: Path, make_taco: MakeTaco) -> None:
    root = tree(blob, [("f", ["x"]), "g"])
    with pytest.raises(TacoPITError, match=r"root sample 1 \('g'\) is a FILE but root sample 0"):
        make_taco(root)


def test_pit1_violation_in_third_root_sample_names_it(blob: Path, make_taco: MakeTaco) -> None:
    root = tree(
        blob,
        [("tile_0", ["a", "c"]), ("tile_1", ["a", "c"]), ("tile_2", ["a", "b"])],
    )
    with pytest.raises(TacoPITError) as info:
        make_taco(root)
    assert type(info.value) is TacoPITError
    assert "root sample 2 ('tile_2'): child 1 has id 'b' but root sample 0 has 'c'" in str(
        info.value
    )


def test_pit1_child_count(blob: Path, make_taco: MakeTaco) -> None:
    root = tree(blob, [("t0", ["a", "b"]), ("t1", ["a", "b", "c"])])
    with pytest.raises(
        TacoPITError, match=r"root sample 1 \('t1'\): 3 children but root sample 0 has 2"
    ):
        make_taco(root)


def test_pit1_child_type(blob: Path, make_taco: MakeTaco) -> None:
    root = tree(blob, [("t0", ["a", ("b", ["x"])]), ("t1", ["a", "b"])])
    with pytest.raises(
        TacoPITError, match=r"child 1 \('b'\) is a FILE but root sample 0 has a FOLDER"
    ):
        make_taco(root)


def test_pit1_deeper_level_names_the_folder(blob: Path, make_taco: MakeTaco) -> None:
    good = [("s1", ["b0", "b1"]), ("s2", ["b0"])]
    bad = [("s1", ["b0", "b1"]), ("s2", ["b9"])]
    root = tree(blob, [("tile_0", good), ("tile_1", good), ("tile_2", bad)])
    with pytest.raises(TacoPITError) as info:
        make_taco(root)
    message = str(info.value)
    assert "root sample 2 ('tile_2')" in message
    assert "in 'tile_2/s2/', child 0 has id 'b9' but root sample 0 has 'b0'" in message
    assert "'tile_0/s2/'" in message


def test_pit1_deeper_child_count(blob: Path, make_taco: MakeTaco) -> None:
    root = tree(blob, [("t0", [("s", ["a", "b"])]), ("t1", [("s", ["a"])])])
    with pytest.raises(TacoPITError, match=r"in 't1/s/', 1 children but root sample 0 has 2"):
        make_taco(root)


def test_padding_makes_irregular_folders_isomorphic(blob: Path, make_taco: MakeTaco) -> None:
    full = Tortilla([Sample("a", blob), Sample("b", blob)], pad_to=2)
    short = Tortilla([Sample("a", blob)], pad_to=2)
    assert short.ids == ("a", "__TACOPAD__0")
    with pytest.raises(
        TacoPITError, match="child 1 has id '__TACOPAD__0' but root sample 0 has 'b'"
    ):
        make_taco(Tortilla([Sample("t0", full), Sample("t1", short)]))
    padded_a = Tortilla([Sample("a", blob)], pad_to=2)
    padded_b = Tortilla([Sample("a", blob)], pad_to=2)
    taco = make_taco(Tortilla([Sample("t0", padded_a), Sample("t1", padded_b)]))
    assert taco.metadata().collection["taco:pit_schema"]["hierarchy"]["1"][0]["id"] == [
        "a",
        "__TACOPAD__0",
    ]


def test_pit2_columns_differ_between_folders(blob: Path, make_taco: MakeTaco) -> None:
    first = Tortilla([Sample("a", blob, x=1)])
    second = Tortilla([Sample("a", blob, y=1)])
    with pytest.raises(TacoSchemaError) as info:
        make_taco(Tortilla([Sample("t0", first), Sample("t1", second)]))
    assert type(info.value) is TacoSchemaError
    message = str(info.value)
    assert "PIT-2: level 1" in message
    assert "'t1/'" in message and "'t0/'" in message
    assert "missing columns ['x']" in message and "extra columns ['y']" in message


def test_pit2_non_strict_tortillas_still_need_one_schema_per_level(
    blob: Path, make_taco: MakeTaco
) -> None:
    first = Tortilla([Sample("a", blob, x=1), Sample("b", blob)], strict_schema=False)
    second = Tortilla([Sample("a", blob), Sample("b", blob, y=2)], strict_schema=False)
    with pytest.raises(TacoSchemaError, match="PIT-2"):
        make_taco(Tortilla([Sample("t0", first), Sample("t1", second)]))
    filled = Tortilla([Sample("a", blob, x=None), Sample("b", blob)], strict_schema=False)
    taco = make_taco(
        Tortilla(
            [
                Sample(
                    "t0", Tortilla([Sample("a", blob, x=1), Sample("b", blob)], strict_schema=False)
                ),
                Sample("t1", filled),
            ]
        )
    )
    level1 = taco.metadata().levels[1]
    assert level1.schema.field("x").type == pa.int64()
    assert level1.column("x").to_pylist() == [1, None, None, None]


def test_pit2_type_differs(blob: Path, make_taco: MakeTaco) -> None:
    first = Tortilla([Sample("a", blob, x=1)])
    second = Tortilla([Sample("a", blob, x=1.0)])
    with pytest.raises(TacoSchemaError, match="column 'x' has type double but int64"):
        make_taco(Tortilla([Sample("t0", first), Sample("t1", second)]))


def test_pit2_null_column_takes_the_level_type(blob: Path, make_taco: MakeTaco) -> None:
    first = Tortilla([Sample("a", blob, x=None)])
    second = Tortilla([Sample("a", blob, x=2)])
    levels = make_taco(Tortilla([Sample("t0", first), Sample("t1", second)])).metadata().levels
    assert str(levels[1].schema.field("x").type) == "int64"
    assert levels[1].column("x").to_pylist() == [None, 2]


def test_shared_subtree_is_isomorphic_to_itself(blob: Path, make_taco: MakeTaco) -> None:
    shared = Tortilla([Sample("a", blob), Sample("b", blob)])
    taco = make_taco(Tortilla([Sample("t0", shared), Sample("t1", shared)]))
    assert taco.metadata().levels[1].column("internal:relative_path").to_pylist() == [
        "t0/a",
        "t0/b",
        "t1/a",
        "t1/b",
    ]


def _random_levels(seed: int) -> list[pa.Table]:
    """Level tables of a random hierarchy: ragged folders, repeated ids, shuffled parents."""
    rng = random.Random(seed)
    depth = rng.randint(2, 4)
    kinds = ["FOLDER"] * rng.randint(1, 6)
    current = [3 * i + 5 for i in range(len(kinds))] if seed % 2 else list(range(len(kinds)))
    ids = [f"r{i}" for i in range(len(kinds))]
    levels = [pa.table({ID: ids, TYPE: kinds, CURRENT_ID: current, PARENT_ID: current})]
    for level in range(1, depth):
        rows: list[tuple[str, str, int]] = []
        for parent, kind in zip(current, kinds, strict=True):
            if kind == "FOLDER":
                for child in range(rng.randint(1, 4)):
                    deeper = level < depth - 1 and rng.random() < 0.7
                    name = rng.choice("abcde") + str(child)
                    rows.append((name, "FOLDER" if deeper else "FILE", parent))
        if not rows:
            break
        if seed % 3 == 0:
            rng.shuffle(rows)
        ids, kinds, parents = (list(column) for column in zip(*rows, strict=True))
        current = [2 * i + 1 for i in range(len(rows))] if seed % 2 else list(range(len(rows)))
        int_type = pa.int32() if seed % 4 == 0 else pa.int64()
        levels.append(
            pa.table(
                {
                    ID: ids,
                    TYPE: kinds,
                    CURRENT_ID: pa.array(current, int_type),
                    PARENT_ID: pa.array(parents, int_type),
                }
            )
        )
    return levels


def _as_float_ids(table: pa.Table) -> pa.Table:
    """``table`` with its id columns as float64 (pit_schema then takes its Arrow path)."""
    for name in (CURRENT_ID, PARENT_ID):
        position = table.schema.get_field_index(name)
        table = table.set_column(position, name, table.column(name).cast(pa.float64()))
    return table


@pytest.mark.parametrize("seed", range(40))
def test_pit_schema_numpy_path_equals_arrow_path(seed: int) -> None:
    # integer id columns take NumPy; the same tables with float ids take the Arrow
    # table filters pit_schema used before (value_counts order, first parent on ties)
    levels = _random_levels(seed)
    assert pit_schema(levels) == pit_schema([_as_float_ids(t) for t in levels])
    assert len(pit_schema(levels)["shape"]) == len(levels)
