"""Position-Invariant Tree rules (spec 5.5) and ``taco:pit_schema`` (reference §3.2).

PIT-1: every root subtree has the same shape (ids and types per position, padding
included); PIT-2: one schema per level (column order from its first tortilla).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoPITError, TacoSchemaError
from taco_gdal.format.names import CURRENT_ID, FOLDER, ID, PARENT_ID, TYPE
from taco_gdal.model._arrow import flags, from_numpy, int64_values, string_scalar
from taco_gdal.model._levels import Level, folder_path
from taco_gdal.model._schema import diff_schema, merge_into
from taco_gdal.model.tortilla import Tortilla

__all__ = ["check_pit1", "check_pit2", "check_root_types", "pit_schema"]


def check_root_types(root: Tortilla) -> None:
    """All level-0 samples are FILE, or all are FOLDER (else TacoPITError)."""
    kinds = root.sample_types
    first = kinds[0]
    for position, kind in enumerate(kinds):
        if kind != first:
            raise TacoPITError(
                f"PIT: root sample {position} ({root.ids[position]!r}) is a {kind} but root "
                f"sample 0 ({root.ids[0]!r}) is a {first}; all root samples must have one type"
            )


def check_pit1(root: Tortilla) -> None:
    """PIT-1: every root sample's subtree is isomorphic to root sample 0's.

    Example:
        >>> from taco_gdal.model import Sample, Tortilla
        >>> a = Sample("a", Tortilla([Sample("x", b"1")]))
        >>> b = Sample("b", Tortilla([Sample("y", b"1")]))
        >>> check_pit1(Tortilla([a, b]))
        Traceback (most recent call last):
        ...
        taco_gdal.errors.TacoPITError: PIT-1: root sample 1 ('b'): child 0 has id 'y' ...
    """
    check_root_types(root)
    samples = root.samples
    reference = samples[0]
    if reference._tortilla is None:
        return
    for position in range(1, len(samples)):
        sample = samples[position]
        assert sample._tortilla is not None
        _compare(
            reference._tortilla,
            sample._tortilla,
            f"root sample {position} ({sample.id!r})",
            f"{reference.id}/",
            f"{sample.id}/",
        )


def _compare(ref: Tortilla, other: Tortilla, who: str, ref_path: str, path: str) -> None:
    if ref is other:
        return
    where = "" if path.count("/") == 1 else f"in '{path}', "
    ref_where = "" if not where else f" (in '{ref_path}')"
    if len(ref) != len(other):
        raise TacoPITError(
            f"PIT-1: {who}: {where}{len(other)} children but root sample 0 has "
            f"{len(ref)}{ref_where}"
        )
    if ref._ids != other._ids or ref._kinds != other._kinds:
        for child, (a, b) in enumerate(zip(ref._ids, other._ids, strict=True)):
            if a != b:
                raise TacoPITError(
                    f"PIT-1: {who}: {where}child {child} has id '{b}' but root sample 0 "
                    f"has '{a}'{ref_where}"
                )
        for child, (a, b) in enumerate(zip(ref._kinds, other._kinds, strict=True)):
            if a != b:
                raise TacoPITError(
                    f"PIT-1: {who}: {where}child {child} ('{other._ids[child]}') is a {b} but "
                    f"root sample 0 has a {a}{ref_where}"
                )
    for child, kind in enumerate(ref._kinds):
        if kind == FOLDER:
            ref_child = ref._samples[child]._tortilla
            other_child = other._samples[child]._tortilla
            assert ref_child is not None and other_child is not None
            child_id = ref._ids[child]
            _compare(ref_child, other_child, who, f"{ref_path}{child_id}/", f"{path}{child_id}/")


def check_pit2(levels: list[Level]) -> None:
    """PIT-2: one schema per level (else TacoSchemaError); sets ``Level.types``."""
    for level in levels:
        first = level.groups[0]
        merged = dict(first.column_types)
        for position in range(1, len(level.groups)):
            types = level.groups[position].column_types
            if types == merged:
                continue
            diff = diff_schema(types, merged, same_names=True)
            if diff:
                here = folder_path(levels, level.index - 1, level.group_parents[position])
                there = folder_path(levels, level.index - 1, level.group_parents[0])
                raise TacoSchemaError(
                    f"PIT-2: level {level.index}: the samples in '{here}' do not match the "
                    f"schema of those in '{there}': {diff.describe(repr(there))}; all samples "
                    "of one level need the same columns and types"
                )
            merge_into(merged, types)
        level.types = merged


# --- taco:pit_schema ---------------------------------------------------------------------
# Computed on NumPy id columns, taking only the rows a pattern shows: filtering whole
# level tables copied every column and set the writer's memory peak.  Columns that are
# not integers without nulls take the Arrow path.
IntArray = npt.NDArray[np.int64]


def _integers(table: pa.Table, name: str) -> IntArray | None:
    """Column ``name`` as int64 NumPy; None when it has nulls or is not an integer."""
    column = table.column(name)
    if column.null_count or not pa.types.is_integer(column.type) or column.type == pa.uint64():
        return None
    return int64_values(column if column.type == pa.int64() else column.cast(pa.int64()))


def _first_largest(parents: IntArray) -> int:
    """The parent with the most rows; on ties the one that appears first (``value_counts``)."""
    values, first, counts = np.unique(parents, return_index=True, return_counts=True)
    tied = counts == counts.max()
    return int(values[tied][np.argmin(first[tied])])


def _canonical_pattern(table: pa.Table, parents: IntArray, rows: IntArray) -> dict[str, Any]:
    """Pattern of ``rows`` (``parents`` their parent ids): ``n`` counts all, ids/types shown
    are those of the parent with the most children."""
    chosen = from_numpy(rows[parents == _first_largest(parents)])
    return _pattern(rows.size, table.select([ID, TYPE]).take(chosen))


def _canonical_group(table: pa.Table) -> pa.Table:
    """Rows of the parent with the most children (first such parent on ties)."""
    parents = table.column(PARENT_ID)
    counts = pc.value_counts(parents)
    values = counts.field("values")
    numbers = counts.field("counts")
    best = pc.index(numbers, pc.max(numbers)).as_py()
    return table.filter(pc.equal(parents, values[best]))


def _pattern(n: int, group: pa.Table) -> dict[str, Any]:
    return {"n": n, "type": group.column(TYPE).to_pylist(), "id": group.column(ID).to_pylist()}


def _folder_ids(patterns: list[dict[str, Any]]) -> list[str]:
    """FOLDER ids of ``patterns``, in order, each once."""
    found: dict[str, None] = {}
    for pattern in patterns:
        for child_id, kind in zip(pattern["id"], pattern["type"], strict=True):
            if kind == FOLDER:
                found.setdefault(child_id)
    return list(found)


def _patterns(table: pa.Table, parents: pa.Table, folder_ids: list[str]) -> list[dict[str, Any]]:
    """One pattern per folder id: all rows of ``table`` under parents with that id."""
    child_parents = _integers(table, PARENT_ID)
    parent_ids = _integers(parents, CURRENT_ID)
    if child_parents is None or parent_ids is None:
        return _table_patterns(table, parents, folder_ids)
    patterns = []
    for folder_id in folder_ids:
        matching = flags(pc.equal(parents.column(ID), string_scalar(folder_id)))
        if not matching.any():
            continue
        rows = np.flatnonzero(np.isin(child_parents, parent_ids[matching])).astype(np.int64)
        if rows.size:
            patterns.append(_canonical_pattern(table, child_parents[rows], rows))
    return patterns


def _table_patterns(
    table: pa.Table, parents: pa.Table, folder_ids: list[str]
) -> list[dict[str, Any]]:
    """:func:`_patterns` on Arrow tables (ids with nulls or of another type)."""
    patterns = []
    for folder_id in folder_ids:
        matching = parents.filter(pc.equal(parents.column(ID), string_scalar(folder_id)))
        if matching.num_rows == 0:
            continue
        mask = pc.is_in(table.column(PARENT_ID), value_set=matching.column(CURRENT_ID))
        children = table.filter(mask)
        if children.num_rows:
            patterns.append(_pattern(children.num_rows, _canonical_group(children)))
    return patterns


def _level_pattern(table: pa.Table) -> dict[str, Any]:
    """Depth 1's single pattern: every row counted, the largest parent's children shown."""
    parents = _integers(table, PARENT_ID)
    if parents is None:
        return _pattern(table.num_rows, _canonical_group(table))
    return _canonical_pattern(table, parents, np.arange(table.num_rows, dtype=np.int64))


def _max_children(table: pa.Table) -> int:
    parents = _integers(table, PARENT_ID)
    if parents is None:
        return int(pc.max(pc.value_counts(table.column(PARENT_ID)).field("counts")).as_py())
    return int(np.unique(parents, return_counts=True)[1].max())


def pit_schema(tables: list[pa.Table]) -> dict[str, Any]:
    """``taco:pit_schema`` of the level tables, the reference writer's algorithm.

    Like the reference, depth ``d >= 2`` follows the FOLDER ids of the *first*
    pattern of depth ``d-1``; where that one has none but the level has rows, the
    reference would drop the level, so all depth ``d-1`` patterns are used instead.

    Example:
        >>> t = pa.table({"id": ["a"], "type": ["FILE"]})
        >>> pit_schema([t])
        {'root': {'n': 1, 'type': 'FILE'}, 'shape': [1], 'hierarchy': {}}
    """
    level0 = tables[0]
    root = {"n": level0.num_rows, "type": level0.column(TYPE)[0].as_py()}
    shape = [level0.num_rows]
    hierarchy: dict[str, list[dict[str, Any]]] = {}
    for depth in range(1, len(tables)):
        table, parents = tables[depth], tables[depth - 1]
        if table.num_rows == 0:
            break
        shape.append(_max_children(table))
        if depth == 1:
            hierarchy["1"] = [_level_pattern(table)]
            continue
        previous = hierarchy.get(str(depth - 1), [])
        patterns = _patterns(table, parents, _folder_ids(previous[:1]))
        if not patterns:  # the first pattern has no folders, yet this level has rows
            patterns = _patterns(table, parents, _folder_ids(previous))
        if patterns:
            hierarchy[str(depth)] = patterns
    return {"root": root, "shape": shape, "hierarchy": hierarchy}
