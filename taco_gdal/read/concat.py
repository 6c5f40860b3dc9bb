"""``concat()``: several datasets as one, with row ids that stay correct.

Each row keeps the ``internal:gdal_vsi`` its own container built, so formats mix; ids
are renumbered to row positions in the concatenated levels, so a child is never
joined with another source's parent.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoSchemaError, TacoValidationError, TacoWarning
from taco_gdal.format.names import (
    CURRENT_ID,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    PARENT_ID,
    PIT_SCHEMA_KEY,
    PROTECTED_COLUMNS,
    SOURCES_KEY,
    TYPE,
)
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query import _duck
from taco_gdal.read.query.state import LevelTables, QueryState, level_view

if TYPE_CHECKING:  # imported when called: the package imports this module, light
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["COLUMN_MODES", "ColumnMode", "concat"]

ColumnMode = Literal["intersection", "fill_missing", "strict"]
COLUMN_MODES: tuple[ColumnMode, ...] = ("intersection", "fill_missing", "strict")
_REQUIRED = (ID, TYPE, CURRENT_ID, PARENT_ID, GDAL_VSI)


def _is_protected(column: str) -> bool:
    return column in PROTECTED_COLUMNS or column.startswith(INTERNAL_PREFIX)


def _pit_signature(pit: Mapping[str, Any]) -> tuple[Any, ...]:
    root = (pit.get("root") or {}).get("type")
    levels = tuple(
        (
            str(depth),
            tuple((tuple(p.get("type") or []), tuple(p.get("id") or [])) for p in patterns),
        )
        for depth, patterns in sorted(
            (pit.get("hierarchy") or {}).items(), key=lambda kv: int(kv[0])
        )
    )
    return root, levels


def _check_compatible(datasets: Sequence[TacoDataset], names: Sequence[str]) -> None:
    depths = {name: ds.max_depth for name, ds in zip(names, datasets, strict=True)}
    if len(set(depths.values())) > 1:
        raise TacoSchemaError(f"concat: datasets have different depths: {depths}")
    signatures = [_pit_signature(ds.pit_schema) for ds in datasets]
    for name, signature in zip(names[1:], signatures[1:], strict=True):
        if signature != signatures[0]:
            raise TacoSchemaError(
                f"concat: {PIT_SCHEMA_KEY} of {name} differs from {names[0]} (root type, child "
                f"ids or types): {signature} vs {signatures[0]}"
            )


def _materialize(ds: TacoDataset, name: str) -> list[pa.Table]:
    """The dataset's surviving rows at every level, ``internal:gdal_vsi`` included."""
    tables: list[pa.Table] = []
    state = ds.state
    for level in range(ds.max_depth + 1):
        relation = state.relation(level)
        present = [c for c, _ in _duck.columns(state.base, state.steps, relation)]
        missing = [c for c in _REQUIRED if c not in present]
        if missing:
            raise TacoSchemaError(
                f"concat: {name} level {level} lacks {missing} (a sql() query dropped them); "
                f"concatenation needs {list(_REQUIRED)}"
            )
        tables.append(ds.to_arrow(level))
    return tables


def _renumber(per_dataset: list[list[pa.Table]]) -> list[list[pa.Table]]:
    """New current/parent ids: row positions in the concatenated levels."""
    depth = len(per_dataset[0])
    offsets = [0] * depth
    out: list[list[pa.Table]] = []
    for tables in per_dataset:
        renumbered: list[pa.Table] = []
        for level, table in enumerate(tables):
            n = table.num_rows
            new_ids = np.arange(offsets[level], offsets[level] + n, dtype=np.int64)
            if level == 0:
                new_parents = new_ids
            else:
                import pandas as pd

                old = pd.Index(tables[level - 1].column(CURRENT_ID).to_numpy())
                position = old.get_indexer(table.column(PARENT_ID).to_numpy())
                new_parents = offsets[level - 1] - tables[level - 1].num_rows + position
            for name, values in ((CURRENT_ID, new_ids), (PARENT_ID, new_parents)):
                index = table.column_names.index(name)
                table = table.set_column(index, name, pa.array(values, pa.int64()))
            renumbered.append(table)
            offsets[level] += n
        out.append(renumbered)
    return out


def _columns(
    tables: Sequence[pa.Table], names: Sequence[str], mode: ColumnMode, level: int
) -> list[str]:
    sets = [[c for c in t.column_names if not _is_protected(c)] for t in tables]
    union = list(dict.fromkeys(c for columns in sets for c in columns))
    common = [c for c in union if all(c in s for s in sets)]
    partial = {
        c: [n for n, s in zip(names, sets, strict=True) if c in s] for c in union if c not in common
    }
    if partial and mode == "strict":
        schemas = "; ".join(f"{n}: {s}" for n, s in zip(names, sets, strict=True))
        raise TacoSchemaError(
            f"concat(column_mode='strict'): level {level} columns differ. Per dataset: {schemas}. "
            f"Only in some: {partial}. Common to all: {common}"
        )
    if partial:
        if mode == "intersection":
            found = ", ".join(f"{c!r} (only in {where})" for c, where in partial.items())
            message = f"dropping columns not present in every dataset: {found}"
        else:
            lacking = {c: [n for n in names if n not in where] for c, where in partial.items()}
            found = ", ".join(f"{c!r} in {where}" for c, where in lacking.items())
            message = f"filling missing columns with nulls: {found}"
        warnings.warn(f"concat: level {level}: {message}", TacoWarning, stacklevel=3)
    chosen = common if mode == "intersection" else union
    internal = list(dict.fromkeys(c for t in tables for c in t.column_names if _is_protected(c)))
    core = [c for c in (ID, TYPE) if c in internal]
    rest = [c for c in internal if c not in core and c != GDAL_VSI]
    return [*core, *chosen, *rest, GDAL_VSI]


def _combine(
    tables: Sequence[pa.Table], columns: list[str], names: Sequence[str], level: int
) -> pa.Table:
    aligned = []
    for table in tables:
        arrays = []
        for column in columns:
            if column in table.column_names:
                arrays.append(table.column(column))
            else:
                kind = next(t.schema.field(column).type for t in tables if column in t.column_names)
                arrays.append(pa.nulls(table.num_rows, kind))
        aligned.append(pa.table(arrays, names=columns))
    try:
        return pa.concat_tables(aligned, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        types = {
            c: {
                n: str(t.schema.field(c).type)
                for n, t in zip(names, tables, strict=True)
                if c in t.column_names
            }
            for c in columns
        }
        conflicts = {c: t for c, t in types.items() if len(set(t.values())) > 1}
        raise TacoSchemaError(
            f"concat: level {level} column types disagree: {conflicts}: {exc}"
        ) from exc


def _collection(
    datasets: Sequence[TacoDataset], names: Sequence[str], tables: Sequence[pa.Table]
) -> dict[str, Any]:
    collection = copy.deepcopy(dict(datasets[0].state.collection))
    pit = collection.get(PIT_SCHEMA_KEY)
    if isinstance(pit, dict):
        if isinstance(pit.get("root"), dict):
            pit["root"]["n"] = tables[0].num_rows
        for depth, patterns in (pit.get("hierarchy") or {}).items():
            if len(patterns) == 1 and int(depth) < len(tables):
                patterns[0]["n"] = tables[int(depth)].num_rows
    boxes = [(ds.extent or {}).get("spatial") for ds in datasets]
    spans = [(ds.extent or {}).get("temporal") for ds in datasets]
    extent: dict[str, Any] = dict(collection.get("extent") or {})
    from taco_gdal.model.extent import union_boxes  # load() never imports the model

    box = union_boxes(boxes)  # the antimeridian-aware union, not a min/max of corners
    if box is None:
        extent.pop("spatial", None)
    else:
        extent["spatial"] = list(box)
    if all(spans):
        extent["temporal"] = [min(s[0] for s in spans), max(s[1] for s in spans)]  # type: ignore[index]
    collection["extent"] = extent
    collection[SOURCES_KEY] = {
        "count": len(datasets),
        "ids": [ds.id for ds in datasets],
        "files": list(names),
    }
    return collection


def concat(
    datasets: Sequence[TacoDataset],
    column_mode: ColumnMode = "intersection",
    *,
    sql_external_access: bool | None = None,
) -> TacoDataset:
    """One dataset over the rows of several (their current filtered state).

    ``id``, ``type`` and ``internal:*`` columns are always kept (null where missing).

    Args:
        datasets: two or more datasets with the same hierarchy (PIT schema).
        column_mode: ``intersection`` keeps the columns every dataset has,
            ``fill_missing`` every column (null where missing), both with a
            :class:`~taco_gdal.errors.TacoWarning` naming the others;
            ``strict`` raises on any difference.
        sql_external_access: let ``sql()`` on the result read files and URLs
            (default: only when every input allows it; see
            :meth:`TacoDataset.with_sql_external_access`).

    Raises:
        TacoValidationError: fewer than two datasets, or an unknown mode.
        TacoSchemaError: different hierarchies, column mismatch in ``strict``
            mode, incompatible column types, or a view that lost ``id``/``type``/ids.

    Example:
        >>> a, b = taco_gdal.load("a.tacozip"), taco_gdal.load("b.tacozip")
        >>> both = taco_gdal.concat([a, b])
        >>> both.data.id.tolist()
        ['s000', 's001', 's000', 's001']
        >>> both.data.read(0), both.data.read(2)
        ('/vsisubfile/196_622,.../a.tacozip', '/vsisubfile/196_622,.../b.tacozip')
    """
    if column_mode not in COLUMN_MODES:
        raise TacoValidationError(
            f"column_mode must be one of {list(COLUMN_MODES)}, got {column_mode!r}"
        )
    datasets = list(datasets)
    if len(datasets) < 2:
        raise TacoValidationError(f"concat needs at least 2 datasets, got {len(datasets)}")
    names = [f"dataset {i} ({ds.path})" for i, ds in enumerate(datasets)]
    _check_compatible(datasets, names)
    per_dataset = _renumber(
        [_materialize(ds, name) for ds, name in zip(datasets, names, strict=True)]
    )
    levels: list[pa.Table] = []
    for level in range(datasets[0].max_depth + 1):
        tables = [tables[level] for tables in per_dataset]
        columns = _columns(tables, names, column_mode, level)
        levels.append(_combine(tables, columns, names, level))
    where = "concat(" + ", ".join(ds.path for ds in datasets) + ")"
    if sql_external_access is None:
        sql_external_access = all(ds.state.base.sql_external_access for ds in datasets)
    base = LevelTables(tuple(levels), VsiRule("stored"), where, sql_external_access)
    formats = {ds.format for ds in datasets}
    state = QueryState(
        base,
        _collection(datasets, [ds.path for ds in datasets], levels),
        formats.pop() if len(formats) == 1 else "mixed",
        # __meta__ files list every child; the concatenated levels hold the survivors
        level_views=tuple((level, level_view(level)) for level in range(1, len(levels))),
    )
    _duck.columns(base, (), level_view(0))  # build the views now, as load() does
    from taco_gdal.read.dataset import TacoDataset

    return TacoDataset(state)
