"""``validate(path)``: the TACO specification's rules, checked on an existing dataset.

Unlike the model (which refuses a bad dataset before writing it), validate
reads what is on disk, whoever wrote it, and reports every broken rule with a
stable code (:mod:`taco_gdal.verify.codes`) and the rows concerned.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoError
from taco_gdal.format.names import (
    CURRENT_ID,
    FIELD_SCHEMA_KEY,
    FOLDER,
    ID,
    INTERNAL_PREFIX,
    MAX_DEPTH,
    PADDING_PREFIX,
    PARENT_ID,
    PIT_SCHEMA_KEY,
    SAMPLE_TYPES,
    TACO_VERSION,
    TYPE,
)
from taco_gdal.model import _collection_rules as rules
from taco_gdal.model._arrow import type_name
from taco_gdal.model.pit import pit_schema
from taco_gdal.read.query.prepared import prepare_levels
from taco_gdal.verify import codes
from taco_gdal.verify._rows import Collector
from taco_gdal.verify._verify import locate, try_open
from taco_gdal.verify.report import Report

__all__ = ["validate"]

_VERSION = re.compile(r"\d+\.\d+\.\d+([.+-][0-9A-Za-z.+-]*)?")
_LIST_FIELD = re.compile(r"<(item|element): ")
_END_COLUMNS = (("istac:time_start", "istac:time_end"), ("stac:time_start", "stac:time_end"))


def _row(level: int, index: int, table: pa.Table) -> str:
    ident = table.column(ID)[index].as_py() if ID in table.column_names else None
    return f"level{level}:{index} ({ident})"


def _check_collection(collection: dict[str, Any], out: Collector) -> None:
    checks: list[tuple[str, Callable[[object], object]]] = [
        ("id", rules.check_dataset_id),
        ("dataset_version", lambda v: rules.check_text("dataset_version", v)),
        ("description", lambda v: rules.check_text("description", v)),
        ("licenses", rules.check_licenses),
        ("tasks", rules.check_tasks),
    ]
    for key, check in checks:
        if key not in collection:
            out.add(
                codes.COLLECTION_FIELD, f"required COLLECTION field {key!r} is missing", member=key
            )
            continue
        try:
            check(collection[key])
        except TacoError as exc:
            out.add(codes.COLLECTION_FIELD, str(exc), member=key, found=repr(collection[key])[:200])
    providers = collection.get("providers")
    if not isinstance(providers, list) or not all(isinstance(p, dict) for p in providers):
        out.add(
            codes.COLLECTION_FIELD,
            "providers: expected a list of objects",
            member="providers",
            found=repr(providers)[:200],
        )
    version = collection.get("taco_version")
    if not isinstance(version, str) or _VERSION.fullmatch(version) is None:
        out.add(
            codes.TACO_VERSION,
            "taco_version must be a version string like the writers emit",
            member="taco_version",
            expected=TACO_VERSION,
            found=repr(version)[:100],
        )
    for key in (PIT_SCHEMA_KEY, FIELD_SCHEMA_KEY, "extent"):
        if not isinstance(collection.get(key), dict):
            out.add(
                codes.COLLECTION_FIELD,
                f"required COLLECTION field {key!r} must be an object",
                member=key,
                found=repr(collection.get(key))[:200],
            )


def _check_tree(levels: Sequence[pa.Table], out: Collector) -> None:
    """Types, parents, sibling ids, PIT-1 (every parent's children look like the first's)."""
    if len(levels) > MAX_DEPTH + 1:
        out.add(
            codes.DEPTH,
            f"at most {MAX_DEPTH + 1} levels",
            expected=MAX_DEPTH + 1,
            found=len(levels),
        )
    for level, table in enumerate(levels):
        types = table.column(TYPE).to_pylist()
        ids = table.column(ID).to_pylist()
        for i, kind in enumerate(types):
            if kind not in SAMPLE_TYPES:
                out.add(
                    codes.BAD_TYPE,
                    "type must be FILE or FOLDER",
                    row=_row(level, i, table),
                    expected="FILE|FOLDER",
                    found=repr(kind),
                )
        if level == 0:
            if len(set(types)) > 1:
                out.add(
                    codes.PIT_STRUCTURE,
                    "level-0 samples must all have the same type",
                    found=", ".join(sorted(map(str, set(types)))),
                )
            _unique(ids, {0: list(range(len(ids)))}, level, table, out)
            continue
        parents_table = levels[level - 1]
        parent_types = parents_table.column(TYPE).to_pylist()
        if PARENT_ID not in table.column_names:
            continue
        groups: dict[int, list[int]] = defaultdict(list)
        for i, parent in enumerate(table.column(PARENT_ID).to_pylist()):
            if not isinstance(parent, int) or not 0 <= parent < len(parent_types):
                out.add(
                    codes.BAD_PARENT,
                    "internal:parent_id names no row of the level above",
                    row=_row(level, i, table),
                    found=repr(parent),
                )
                continue
            if parent_types[parent] != FOLDER:
                out.add(
                    codes.BAD_TYPE,
                    "the parent of this row is not a FOLDER",
                    row=_row(level, i, table),
                    found=parent_types[parent],
                )
            groups[parent].append(i)
        _unique(ids, groups, level, table, out)
        _pit1(types, ids, groups, level, table, parents_table.column(ID).to_pylist(), out)


def _unique(
    ids: list[Any], groups: dict[int, list[int]], level: int, table: pa.Table, out: Collector
) -> None:
    for rows in groups.values():
        seen: dict[Any, int] = {}
        for i in rows:
            if ids[i] in seen:
                out.add(
                    codes.DUPLICATE_ID,
                    f"id {ids[i]!r} already used by a sibling (row {seen[ids[i]]})",
                    row=_row(level, i, table),
                )
            else:
                seen[ids[i]] = i


def _same_ids(a: list[Any], b: list[Any]) -> bool:
    """Ids agree position by position, padding samples (``__TACOPAD__*``) matching anything."""
    return all(
        x == y or str(x).startswith(PADDING_PREFIX) or str(y).startswith(PADDING_PREFIX)
        for x, y in zip(a, b, strict=True)
    )


def _pit1(
    types: list[Any],
    ids: list[Any],
    groups: dict[int, list[int]],
    level: int,
    table: pa.Table,
    parent_ids: list[Any],
    out: Collector,
) -> None:
    """PIT-1: the children of every root (level 1), or of every FOLDER with the same id
    (deeper), have the same types and ids in the same order as the first such parent's."""
    first: dict[Any, tuple[int, list[Any], list[Any]]] = {}
    for parent, rows in sorted(groups.items()):
        shape = [types[i] for i in rows]
        names = [ids[i] for i in rows]
        key = None if level == 1 else parent_ids[parent]
        if key not in first:
            first[key] = (parent, shape, names)
            continue
        ref_parent, ref_shape, ref_names = first[key]
        if shape != ref_shape:
            what, expected, found = "types", ref_shape, shape
        elif not _same_ids(names, ref_names):
            what, expected, found = "ids", ref_names, names
        else:
            continue
        out.add(
            codes.PIT_STRUCTURE,
            f"the children {what} of parent {parent} differ from those of parent "
            f"{ref_parent} (PIT-1)",
            row=_row(level, rows[0], table),
            expected=str(expected)[:200],
            found=str(found)[:200],
        )


def _check_pit_schema(
    collection: dict[str, Any], levels: Sequence[pa.Table], out: Collector, consolidated: bool
) -> None:
    stored = collection.get(PIT_SCHEMA_KEY)
    if not isinstance(stored, dict):
        return
    try:
        computed = pit_schema(list(levels))
    except (TacoError, pa.ArrowException, KeyError, IndexError, ValueError) as exc:
        out.add(codes.PIT_SCHEMA, f"taco:pit_schema cannot be computed from the tables: {exc}")
        return
    if consolidated and isinstance(stored.get("shape"), list):
        # TACOCAT writers keep one part's level-0 count in shape[0]; the rest must agree
        computed["shape"] = [*stored["shape"][:1], *computed["shape"][1:]]
    for key in ("root", "shape", "hierarchy"):
        if key in stored and stored.get(key) != computed.get(key):
            out.add(
                codes.PIT_SCHEMA,
                f"taco:pit_schema.{key} disagrees with the level tables",
                member=PIT_SCHEMA_KEY,
                expected=str(computed.get(key))[:200],
                found=str(stored.get(key))[:200],
            )
    hierarchy = stored.get("hierarchy")
    depth = len(hierarchy) if isinstance(hierarchy, dict) else -1
    if depth != len(levels) - 1:
        out.add(
            codes.PIT_SCHEMA,
            "taco:pit_schema.hierarchy does not describe every level",
            member=PIT_SCHEMA_KEY,
            expected=len(levels) - 1,
            found=depth,
        )


def _check_field_schema(
    collection: dict[str, Any], levels: Sequence[pa.Table], out: Collector
) -> None:
    stored = collection.get(FIELD_SCHEMA_KEY)
    if not isinstance(stored, dict):
        return
    for level, table in enumerate(levels):
        entries = stored.get(f"level{level}")
        if not isinstance(entries, list):
            out.add(
                codes.FIELD_SCHEMA,
                f"taco:field_schema has no list for level{level}",
                member=FIELD_SCHEMA_KEY,
            )
            continue
        declared: dict[str, Any] = {}
        for entry in entries:
            if isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], str):
                declared[entry[0]] = entry[1]
            else:
                out.add(
                    codes.FIELD_SCHEMA,
                    f"taco:field_schema level{level} entry is not [name, type, description]",
                    found=repr(entry)[:200],
                )
        actual = {f.name: _type(type_name(f.type)) for f in table.schema}
        for name, kind in declared.items():
            if name not in actual:
                if not name.startswith(INTERNAL_PREFIX):
                    out.add(
                        codes.FIELD_SCHEMA,
                        f"column {name!r} declared for level{level} is not in the Parquet",
                        member=f"level{level}",
                        expected=name,
                    )
            elif _type(str(kind)) != actual[name]:
                out.add(
                    codes.FIELD_SCHEMA,
                    f"column {name!r} of level{level} has another type than declared",
                    member=f"level{level}",
                    expected=str(kind),
                    found=actual[name],
                )
        for name in actual:
            if name not in declared and not name.startswith(INTERNAL_PREFIX):
                out.add(
                    codes.FIELD_SCHEMA,
                    f"column {name!r} of level{level} is not declared in taco:field_schema",
                    member=f"level{level}",
                    found=name,
                )


def _type(name: str) -> str:
    """A type name without the list field name (``item`` and ``element`` are both written)."""
    return _LIST_FIELD.sub("<", name)


def _parse_time(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _check_times(levels: Sequence[pa.Table], out: Collector) -> None:
    for level, table in enumerate(levels):
        for start, end in _END_COLUMNS:
            if start not in table.column_names or end not in table.column_names:
                continue
            try:
                bad = pc.less(table.column(end), table.column(start))
            except pa.ArrowException:
                continue
            for i, flag in enumerate(bad.to_pylist()):
                if flag:
                    out.add(codes.TIME_ORDER, f"{end} is before {start}", row=_row(level, i, table))


def _legacy_tacocat(fmt: str, levels: Sequence[pa.Table]) -> bool:
    """A TACOCAT consolidated before tacotoolbox 0.21 (no ``internal:current_id`` at level 0).

    That generation copied the first part's ``extent`` into the consolidated
    COLLECTION instead of merging the parts' extents (the golden fixture
    ``v0180_two_bincat`` shows it); readers use the rows, not that extent.
    """
    return fmt == "tacocat" and bool(levels) and CURRENT_ID not in levels[0].column_names


def _check_extent(
    collection: dict[str, Any], levels: Sequence[pa.Table], out: Collector, legacy: bool = False
) -> None:
    """``extent`` well formed and containing every row (a warning for a legacy TACOCAT)."""
    severity = "warning" if legacy else "error"
    because = (
        " (a known defect of TACOCATs consolidated before tacotoolbox 0.21: they carry the "
        "first part's extent; readers use the rows)"
        if legacy
        else ""
    )
    extent = collection.get("extent")
    if not isinstance(extent, dict):
        return
    spatial = extent.get("spatial")
    if spatial is not None and not (
        isinstance(spatial, list)
        and len(spatial) == 4
        and all(isinstance(v, int | float) for v in spatial)
    ):
        out.add(
            codes.EXTENT,
            "extent.spatial must be [west, south, east, north]",
            member="extent",
            found=repr(spatial)[:200],
        )
        return
    from taco_gdal.model.extent import box_contains, extent_of_tables

    try:
        computed = extent_of_tables(list(levels), footprints=False)
    except (TacoError, pa.ArrowException, ValueError) as exc:
        out.add(codes.EXTENT, f"the rows' extent cannot be computed: {exc}")
        return
    if computed.spatial is not None and not (
        spatial is not None and box_contains(spatial, computed.spatial)
    ):
        out.add(
            codes.EXTENT,
            "extent.spatial does not contain every row's centroid" + because,
            member="extent",
            expected=str(list(computed.spatial)),
            found=str(spatial),
            severity=severity,
        )
    temporal = extent.get("temporal")
    if computed.temporal is not None and temporal is not None:
        pair = temporal if isinstance(temporal, list) and len(temporal) == 2 else [None, None]
        low, high = (_parse_time(v) for v in pair)
        row_low, row_high = (_parse_time(v) for v in computed.temporal)
        if low is None or high is None:
            out.add(
                codes.EXTENT,
                "extent.temporal must be [start, end] ISO 8601 times",
                member="extent",
                found=repr(temporal)[:200],
            )
        elif row_low is not None and row_high is not None and (row_low < low or row_high > high):
            out.add(
                codes.EXTENT,
                "extent.temporal does not contain every row's time" + because,
                member="extent",
                expected=str(list(computed.temporal)),
                found=str(temporal),
                severity=severity,
            )


def validate(path: str | os.PathLike[str]) -> Report:
    """Check the TACO specification's rules on an existing dataset, whoever wrote it.

    Rules: PIT-1 (children alike under every parent) and PIT-2 (``taco:pit_schema``
    agrees with the tables), required COLLECTION fields and their types,
    ``taco:field_schema`` agrees with the Parquet columns and types, the extent
    contains every row, ids are unique among siblings, end times are not before
    start times, ``taco_version``.

    Returns:
        A :class:`~taco_gdal.verify.report.Report` (``check="validate"``).

    Raises:
        TacoIOError: the location does not exist.

    Example:
        >>> report = taco_gdal.validate("tiles.tacozip")
        >>> report.ok, sorted(report.codes), report.checked
        (True, [], {'levels': 2, 'rows': 12})
    """
    given, probe, container_class = locate(path)
    out = Collector()
    opened = try_open(container_class, probe, out)
    if opened is None:
        return Report(given, "validate", "rules", tuple(out.failures))
    levels, collection = list(opened.levels), opened.collection
    _check_collection(collection, out)
    _check_field_schema(collection, levels, out)
    try:
        prepared = prepare_levels(levels, opened.sources)
    except TacoError as exc:
        out.add(codes.BAD_PARENT, f"the rows' parents cannot be resolved: {exc}")
        prepared = []
    if prepared:
        _check_tree(prepared, out)
        _check_pit_schema(collection, prepared, out, container_class.format == "tacocat")
    _check_times(levels, out)
    _check_extent(collection, levels, out, _legacy_tacocat(container_class.format, levels))
    counts = {"levels": len(levels), "rows": sum(t.num_rows for t in levels)}
    return Report(given, "validate", "rules", tuple(out.failures), counts)
