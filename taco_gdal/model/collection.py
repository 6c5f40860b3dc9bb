"""COLLECTION.json: ``taco:field_schema``, key order and serialisation (reference §3.1, §3.3)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import (
    CHECKSUM,
    CHECKSUM_DESCRIPTION,
    CORE_FIELD_DESCRIPTIONS,
    FIELD_SCHEMA_KEY,
    INTERNAL_FIELD_DESCRIPTIONS,
    INTERNAL_PREFIX,
    PATH,
    PIT_SCHEMA_KEY,
)
from taco_gdal.model._arrow import type_name

__all__ = [
    "CORE_KEYS",
    "collection_json_bytes",
    "declare_checksum",
    "field_schema",
    "order_collection",
]

CORE_KEYS: Final = (
    "id",
    "dataset_version",
    "description",
    "licenses",
    "providers",
    "tasks",
    "taco_version",
    "title",
    "curators",
    "keywords",
    "extent",
)
"""COLLECTION.json keys in the order the reference writer emits them."""


def field_schema(tables: list[pa.Table], descriptions: Mapping[str, str]) -> dict[str, Any]:
    """``{"level0": [[name, type, description], ...], ...}`` in column order.

    ``path`` is left out (never stored); ``internal:offset``/``internal:size`` do
    not exist yet (the ZIP writer adds them), so ZIP and FOLDER agree.  Unknown
    descriptions are ``""``; core and internal columns use the fixed texts of
    :mod:`taco_gdal.format.names`.

    Example:
        >>> field_schema([pa.table({"id": ["a"], "type": ["FILE"]})], {})["level0"][0][:2]
        ['id', 'string']
    """
    known = {**descriptions, **CORE_FIELD_DESCRIPTIONS, **INTERNAL_FIELD_DESCRIPTIONS}
    return {
        f"level{index}": [
            [item.name, type_name(item.type), known.get(item.name, "")]
            for item in table.schema
            if item.name != PATH
        ]
        for index, table in enumerate(tables)
    }


def declare_checksum(collection: Mapping[str, Any], algorithm: str | None) -> dict[str, Any]:
    """``collection`` whose ``taco:field_schema`` declares the ``taco_gdal:checksum`` column.

    The writers add that column to every level table when asked for digests, after
    :meth:`~taco_gdal.model.Taco.metadata` computed the field schema; declaring it
    here keeps what is written and what ``validate`` expects in agreement.  The
    entry goes before the ``internal:*`` columns, where the column is stored; an
    existing entry (a dataset exported from one with digests) is replaced.  With
    ``algorithm`` None the collection is returned unchanged (a shallow copy).

    Example:
        >>> fields = {"level0": [["id", "string", ""], ["internal:parent_id", "int64", ""]]}
        >>> declared = declare_checksum({"taco:field_schema": fields}, "xxh3")
        >>> [entry[0] for entry in declared["taco:field_schema"]["level0"]]
        ['id', 'taco_gdal:checksum', 'internal:parent_id']
    """
    out = dict(collection)
    fields = out.get(FIELD_SCHEMA_KEY)
    if algorithm is None or not isinstance(fields, Mapping):
        return out
    declared: dict[str, Any] = {}
    for level, entries in fields.items():
        kept = [e for e in entries if not (isinstance(e, list) and e and e[0] == CHECKSUM)]
        at = next(
            (
                i
                for i, e in enumerate(kept)
                if isinstance(e, list) and e and str(e[0]).startswith(INTERNAL_PREFIX)
            ),
            len(kept),
        )
        declared[level] = [*kept[:at], [CHECKSUM, "string", CHECKSUM_DESCRIPTION], *kept[at:]]
    out[FIELD_SCHEMA_KEY] = declared
    return out


def order_collection(
    core: Mapping[str, Any],
    extras: Mapping[str, Any],
    pit_schema: dict[str, Any],
    fields: dict[str, Any],
) -> dict[str, Any]:
    """Core keys (reference order), extras in insertion order, then the two schemas."""
    collection = {key: core.get(key) for key in CORE_KEYS}
    collection.update(extras)
    collection[PIT_SCHEMA_KEY] = pit_schema
    collection[FIELD_SCHEMA_KEY] = fields
    return collection


def collection_json_bytes(collection: Mapping[str, Any]) -> bytes:
    """COLLECTION.json bytes as the reference writes them.

    ``json.dumps(indent=4, ensure_ascii=False)`` in UTF-8, no trailing newline.

    Raises:
        TacoValidationError: a string holds a lone surrogate (not encodable as UTF-8).

    Example:
        >>> collection_json_bytes({"id": "ñ"})
        b'{\\n    "id": "\\xc3\\xb1"\\n}'
    """
    text = json.dumps(collection, indent=4, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. read from a "\ud800" escape
        found = text[max(0, exc.start - 40) : exc.end + 40]
        raise TacoValidationError(
            f"COLLECTION.json: expected valid Unicode text, found a lone surrogate "
            f"{text[exc.start : exc.end]!r} at character {exc.start}: ...{found!r}..."
        ) from exc
