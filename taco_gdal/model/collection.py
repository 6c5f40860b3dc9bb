"""COLLECTION.json: ``taco:field_schema``, key order and serialisation (reference §3.1, §3.3)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import pyarrow as pa

from taco_gdal.format.names import (
    CORE_FIELD_DESCRIPTIONS,
    FIELD_SCHEMA_KEY,
    INTERNAL_FIELD_DESCRIPTIONS,
    PATH,
    PIT_SCHEMA_KEY,
)
from taco_gdal.model._arrow import type_name

__all__ = ["CORE_KEYS", "collection_json_bytes", "field_schema", "order_collection"]

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

    Example:
        >>> collection_json_bytes({"id": "ñ"})
        b'{\\n    "id": "\\xc3\\xb1"\\n}'
    """
    return json.dumps(collection, indent=4, ensure_ascii=False).encode("utf-8")
