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
    "check_schemas",
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
        isinstance(temporal, list)
        and len(temporal) == 2
        and all(isinstance(v, str | None) for v in temporal)
    )
    return spatial_ok and temporal_ok


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {repr(value)[:60]}"


def _check_pattern(pattern: Any, where: str) -> None:
    if not isinstance(pattern, dict):
        raise TacoFormatError(
            f"{where}: expected an object {{n, type, id}}, found {_kind(pattern)}"
        )
    count = pattern.get("n")
    if count is not None and not _is_int(count):
        raise TacoFormatError(f"{where}.n: expected an integer, found {_kind(count)}")
    for key in ("type", "id"):
        value = pattern.get(key)
        if value is not None and not _strings(value):
            raise TacoFormatError(
                f"{where}.{key}: expected a list of strings, found {_kind(value)}"
            )


def _check_pit_schema(pit: dict[str, Any], where: str) -> None:
    root = pit.get("root")
    if root is not None:
        if not isinstance(root, dict):
            raise TacoFormatError(
                f"{where}.root: expected an object {{n, type}}, found {_kind(root)}"
            )
        if root.get("n") is not None and not _is_int(root["n"]):
            raise TacoFormatError(f"{where}.root.n: expected an integer, found {_kind(root['n'])}")
        if root.get("type") is not None and not isinstance(root["type"], str):
            raise TacoFormatError(f"{where}.root.type: expected text, found {_kind(root['type'])}")
    hierarchy = pit.get("hierarchy")
    if hierarchy is None:
        return
    if not isinstance(hierarchy, dict):
        raise TacoFormatError(
            f"{where}.hierarchy: expected an object of level numbers, found {_kind(hierarchy)}"
        )
    for depth, patterns in hierarchy.items():
        if not (isinstance(depth, str) and depth.isdigit() and len(depth) <= 2):
            raise TacoFormatError(f"{where}.hierarchy: expected level numbers, found key {depth!r}")
        if not isinstance(patterns, list):
            raise TacoFormatError(
                f"{where}.hierarchy[{depth!r}]: expected a list of patterns, "
                f"found {_kind(patterns)}"
            )
        for at, pattern in enumerate(patterns):
            _check_pattern(pattern, f"{where}.hierarchy[{depth!r}][{at}]")


def _check_field_schema(fields: dict[str, Any], where: str) -> None:
    for level, columns in fields.items():
        if not isinstance(columns, list):
            raise TacoFormatError(
                f"{where}[{level!r}]: expected a list of [name, type, description], "
                f"found {_kind(columns)}"
            )
        for at, column in enumerate(columns):
            if not (isinstance(column, list) and len(column) >= 2 and _strings(column)):
                raise TacoFormatError(
                    f"{where}[{level!r}][{at}]: expected [name, type, description] as text, "
                    f"found {_kind(column)}"
                )


def check_schemas(collection: dict[str, Any], where: str) -> None:
    """Refuse a ``taco:pit_schema`` or ``taco:field_schema`` whose structure is not the spec's.

    Every container's COLLECTION passes here at load, so the views built on these
    schemas (``pit_schema``, the HTML summary, ``export``) never meet a wrong type.

    Example:
        >>> check_schemas({PIT_SCHEMA_KEY: {"hierarchy": 5}}, "COLLECTION.json")
        Traceback (most recent call last):
        ...
        taco_gdal.errors.TacoFormatError: COLLECTION.json: taco:pit_schema.hierarchy: expected ...
    """
    for key, check in (
        (PIT_SCHEMA_KEY, _check_pit_schema),
        (FIELD_SCHEMA_KEY, _check_field_schema),
    ):
        value = collection.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise TacoFormatError(f"{where}: {key}: expected an object, found {_kind(value)}")
        check(value, f"{where}: {key}")
