"""Checks every container runs on untrusted metadata before anything else uses it.

JSON size, nesting and number lengths (no ``RecursionError``, no quadratic int
parsing); level tables' column names, count and spec types; every row's byte
range inside its container; and COLLECTION values of known keys with a wrong type
dropped (logged), so that nothing downstream sees them.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import (
    CURRENT_ID,
    FIELD_SCHEMA_KEY,
    ID,
    OFFSET,
    PARENT_ID,
    PIT_SCHEMA_KEY,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)

__all__ = [
    "MAX_COLUMNS",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_NUMBER_DIGITS",
    "check_column_count",
    "check_columns",
    "check_ranges",
    "loads_json",
    "normalise_collection",
]

log = logging.getLogger(__name__)

MAX_JSON_BYTES: Final = 256 * 1024 * 1024
MAX_JSON_DEPTH: Final = 64
MAX_NUMBER_DIGITS: Final = 100
MAX_COLUMNS: Final = 10_000
"""Columns per level table: DuckDB's binding of far wider views would take minutes."""


def _json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside strings (linear scan, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_DIGITS:
            raise ValueError(f"a number of {len(text)} characters (limit {MAX_NUMBER_DIGITS})")
        return kind(text)

    return parse


def loads_json(text: str, where: str) -> Any:
    """``json.loads`` with size, depth and number limits (TacoFormatError beyond them)."""
    if len(text) > MAX_JSON_BYTES:
        raise TacoFormatError(
            f"{where}: expected at most {MAX_JSON_BYTES} bytes of JSON, found {len(text)}"
        )
    if "[" in text or "{" in text:
        depth = _json_depth(text) if len(text) > 2 * MAX_JSON_DEPTH else 0
        if depth > MAX_JSON_DEPTH:
            raise TacoFormatError(
                f"{where}: expected JSON nested at most {MAX_JSON_DEPTH} deep, found {depth}"
            )
    try:
        return json.loads(text, parse_int=_number(int), parse_float=_number(float))
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise TacoFormatError(f"{where}: expected UTF-8 JSON, cannot parse it: {exc}") from exc


def check_column_count(count: int, where: str) -> None:
    """Refuse a table with more than :data:`MAX_COLUMNS` (leaf) columns, before reading it."""
    if count > MAX_COLUMNS:
        raise TacoFormatError(
            f"{where}: expected at most {MAX_COLUMNS} columns in a level table, found {count}"
        )


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _is_integer_or_null(kind: pa.DataType) -> bool:
    return bool(pa.types.is_integer(kind) or pa.types.is_null(kind))


def _is_text_or_null(kind: pa.DataType) -> bool:
    return _is_text(kind) or bool(pa.types.is_null(kind))


_COLUMN_TYPES: Final = (
    (ID, _is_text, "text"),
    (TYPE, _is_text, "text"),
    (CURRENT_ID, _is_integer_or_null, "integers"),
    (PARENT_ID, _is_integer_or_null, "integers"),
    (OFFSET, _is_integer_or_null, "integers"),
    (SIZE, _is_integer_or_null, "integers"),
    (RELATIVE_PATH, _is_text_or_null, "text"),
    (SOURCE_FILE, _is_text_or_null, "text"),
)
"""The spec's columns and the Arrow types the reader accepts for them."""


def check_columns(table: pa.Table, where: str) -> None:
    """Refuse duplicate column names, absurd column counts and spec columns of the wrong type."""
    names = table.column_names
    check_column_count(len(names), where)
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(n for n in names if n in seen or seen.add(n))  # type: ignore[func-returns-value]
        raise TacoFormatError(f"{where}: column names must be unique, {dup!r} appears twice")
    schema = table.schema
    for name, accepts, expected in _COLUMN_TYPES:
        if name in names and not accepts(schema.field(name).type):
            raise TacoFormatError(
                f"{where}: column {name!r} must hold {expected}, found {schema.field(name).type}"
            )


def check_ranges(table: pa.Table, container_size: int, where: str, container: str) -> None:
    """Raise TacoFormatError unless every row's ``[offset, offset + size)`` is in the container."""
    if OFFSET not in table.column_names or SIZE not in table.column_names:
        return
    offsets, sizes = table.column(OFFSET), table.column(SIZE)
    for column, name in ((offsets, OFFSET), (sizes, SIZE)):
        if not pa.types.is_integer(column.type):
            raise TacoFormatError(f"{where}: column {name!r} must be integers, found {column.type}")
    offsets = offsets.cast(pa.int64(), safe=False) if offsets.type != pa.int64() else offsets
    sizes = sizes.cast(pa.int64(), safe=False) if sizes.type != pa.int64() else sizes
    ends = pc.add(offsets, sizes)  # no overflow: both < 2**62 after the checks below
    bad = pc.or_kleene(
        pc.or_kleene(pc.less(offsets, 0), pc.less(sizes, 0)),
        pc.or_kleene(
            pc.or_kleene(pc.greater(offsets, container_size), pc.greater(sizes, container_size)),
            pc.greater(ends, container_size),
        ),
    )
    bad = pc.or_kleene(bad, pc.or_kleene(pc.is_null(offsets), pc.is_null(sizes)))
    if not pc.any(bad).as_py():
        return
    row = pc.index(bad, True).as_py()
    ident = table.column(ID)[row].as_py() if ID in table.column_names else None
    raise TacoFormatError(
        f"{where}: row {row} (id {ident!r}) has {OFFSET} {offsets[row].as_py()} and {SIZE} "
        f"{sizes[row].as_py()}, expected a range inside {container} ({container_size} bytes)"
    )


_EXPECTED: Final[dict[str, tuple[type, ...]]] = {
    "id": (str,),
    "dataset_version": (str,),
    "description": (str,),
    "title": (str,),
    "taco_version": (str,),
    "licenses": (list,),
    "providers": (list,),
    "curators": (list,),
    "tasks": (list,),
    "keywords": (list,),
    "extent": (dict,),
    PIT_SCHEMA_KEY: (dict,),
    FIELD_SCHEMA_KEY: (dict,),
}
_OBJECT_LISTS: Final = ("providers", "curators")
_STRING_LISTS: Final = ("licenses", "tasks", "keywords")


def normalise_collection(collection: dict[str, Any], where: str) -> dict[str, Any]:
    """Drop values of known keys whose type is wrong (logged), keep everything else.

    Example:
        >>> normalise_collection({"providers": 3, "id": "x"}, "COLLECTION.json")
        {'providers': None, 'id': 'x'}
    """
    out = dict(collection)
    for key, types in _EXPECTED.items():
        value = out.get(key)
        if value is None:
            continue
        ok = isinstance(value, types)
        if ok and key in _OBJECT_LISTS:
            ok = all(isinstance(item, dict) for item in value)
        if ok and key in _STRING_LISTS:
            ok = all(isinstance(item, str) for item in value)
        if ok and key == "extent":
            ok = _extent_ok(value)
        if not ok:
            log.warning(
                "%s: %s should be a %s, found %r: ignored",
                where,
                key,
                "/".join(t.__name__ for t in types),
                repr(value)[:80],
            )
            out[key] = None
    return out


def _extent_ok(value: dict[str, Any]) -> bool:
    spatial = value.get("spatial")
    temporal = value.get("temporal")
    spatial_ok = spatial is None or (
        isinstance(spatial, list)
        and len(spatial) == 4
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in spatial)
    )
    temporal_ok = temporal is None or (
        isinstance(temporal, list) and all(isinstance(v, str | None) for v in temporal)
    )
    return spatial_ok and temporal_ok
