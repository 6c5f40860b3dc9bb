"""Hypothesis: random PIT-valid hierarchies validate; any one of three mutations is rejected.

A hierarchy is ``n`` root FOLDERs (or FILEs) sharing one *template* subtree, with one
set of typed columns per level.  Mutations touch one root sample only: remove one
child of a folder, rename one node, or give one sample's column a value of another
type.  The first two break PIT-1 (TacoPITError naming the root sample), the third
breaks schema uniformity (TacoSchemaError from the Tortilla or from PIT-2).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from taco_gdal.errors import TacoPITError, TacoSchemaError
from taco_gdal.model import Sample, Taco, Tortilla

KINDS = ("int", "float", "str", "bool", "time")
OTHER = {"int": "str", "float": "bool", "str": "int", "bool": "float", "time": "int"}
BLOB = Path(__file__).with_name("_pit_blob.bin")


@pytest.fixture(scope="module", autouse=True)
def _blob() -> Iterator[None]:
    BLOB.write_bytes(b"x")
    yield
    BLOB.unlink()


@dataclass
class Node:
    id: str
    children: list[Node] | None = None  # None: FILE
    bad_column: str | None = None  # set by the type mutation

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Node]]:
        yield depth, self
        for child in self.children or []:
            yield from child.walk(depth + 1)


@dataclass
class Dataset:
    roots: list[Node]
    columns: list[dict[str, str]] = field(default_factory=list)  # per level: name -> kind


def _value(kind: str, seed: int) -> Any:
    if kind == "int":
        return seed
    if kind == "float":
        return seed * 0.5
    if kind == "str":
        return f"v{seed}"
    if kind == "bool":
        return seed % 2 == 0
    return datetime(2020, 1, 1) + timedelta(seconds=seed)


@st.composite
def _template(draw: st.DrawFn, depth_left: int) -> list[Node]:
    ids = draw(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=3, unique=True))
    nodes = []
    for node_id in ids:
        folder = depth_left > 0 and draw(st.booleans())
        nodes.append(Node(node_id, draw(_template(depth_left - 1)) if folder else None))
    return nodes


@st.composite
def datasets(draw: st.DrawFn) -> Dataset:
    depth = draw(st.integers(0, 3))
    count = draw(st.integers(2, 4))
    template = draw(_template(depth - 1)) if depth > 0 else None
    roots = [Node(f"r{i}", copy.deepcopy(template)) for i in range(count)]
    levels = 1 + max(d for root in roots for d, _ in root.walk())
    names = st.sampled_from(["x", "y", "stac:z", "w_1"])
    columns = [
        draw(st.dictionaries(names, st.sampled_from(KINDS), max_size=3)) for _ in range(levels)
    ]
    return Dataset(roots, columns)


def _build(node: Node, depth: int, data: Dataset, seed: list[int]) -> Sample:
    seed[0] += 1
    values = {}
    for name, kind in data.columns[depth].items():
        values[name] = _value(OTHER[kind] if name == node.bad_column else kind, seed[0])
    if node.children is None:
        return Sample(node.id, BLOB, **values)
    children = [_build(child, depth + 1, data, seed) for child in node.children]
    return Sample(node.id, Tortilla(children), **values)


def _taco(data: Dataset) -> Taco:
    seed = [0]
    root = Tortilla([_build(node, 0, data, seed) for node in data.roots])
    return Taco(
        root,
        id="prop",
        dataset_version="1",
        description="property test",
        licenses=["MIT"],
        providers=[{"name": "hypothesis"}],
        tasks=["other"],
    )


@given(datasets())
def test_valid_hierarchies_validate_and_describe_themselves(data: Dataset) -> None:
    package = _taco(data).metadata()
    per_level: dict[int, list[Node]] = {}
    for root in data.roots:
        for depth, node in root.walk():
            per_level.setdefault(depth, []).append(node)
    assert len(package.levels) == len(per_level)
    for depth, table in enumerate(package.levels):
        assert table.column("id").to_pylist() == [n.id for n in per_level[depth]]
        assert table.column_names[2 : 2 + len(data.columns[depth])] == list(data.columns[depth])
        parents = table.column("internal:parent_id").to_pylist()
        assert parents == sorted(parents)
        if depth:
            paths = table.column("internal:relative_path").to_pylist()
            assert len(set(paths)) == len(paths)
    pit = package.collection["taco:pit_schema"]
    assert pit["root"]["n"] == len(data.roots)
    assert pit["shape"][0] == len(data.roots)
    assert [int(k) for k in pit["hierarchy"]] == list(range(1, len(package.levels)))


def _folders(node: Node) -> list[Node]:
    return [n for _, n in node.walk() if n.children is not None]


@given(datasets(), st.data())
def test_removing_one_child_breaks_pit1(data: Dataset, draw: st.DataObject) -> None:
    target = draw.draw(st.integers(0, len(data.roots) - 1), label="root")
    candidates = [f for f in _folders(data.roots[target]) if len(f.children or []) >= 2]
    assume(candidates)
    folder = draw.draw(st.sampled_from(candidates), label="folder")
    assert folder.children is not None
    folder.children.pop(draw.draw(st.integers(0, len(folder.children) - 1), label="child"))
    with pytest.raises(TacoPITError) as info:
        _taco(data)
    named = f"root sample {target} ('r{target}')" if target else "root sample 1 ('r1')"
    assert named in str(info.value)


@given(datasets(), st.data())
def test_renaming_one_node_breaks_pit1(data: Dataset, draw: st.DataObject) -> None:
    target = draw.draw(st.integers(0, len(data.roots) - 1), label="root")
    nodes = [n for d, n in data.roots[target].walk() if d > 0]
    assume(nodes)
    draw.draw(st.sampled_from(nodes), label="node").id = "renamed"
    with pytest.raises(TacoPITError, match="has id") as info:
        _taco(data)
    named = f"root sample {target} ('r{target}')" if target else "root sample 1 ('r1')"
    assert named in str(info.value)


@given(datasets(), st.data())
def test_changing_one_column_type_is_rejected(data: Dataset, draw: st.DataObject) -> None:
    target = draw.draw(st.integers(0, len(data.roots) - 1), label="root")
    nodes = [(d, n) for d, n in data.roots[target].walk() if data.columns[d]]
    assume(nodes)
    depth, node = draw.draw(st.sampled_from(nodes), label="node")
    node.bad_column = draw.draw(st.sampled_from(sorted(data.columns[depth])), label="column")
    with pytest.raises(TacoSchemaError) as info:
        _taco(data)
    assert not isinstance(info.value, TacoPITError)
    assert f"'{node.bad_column}' has type" in str(info.value)
