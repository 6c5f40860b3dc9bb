"""JSON Schemas (draft 2020-12) of what ``taco <verb> --json`` prints.

Scripts can rely on these shapes (the CLI tests check every ``--json`` output);
:data:`VERB_SCHEMA` maps each verb to its schema (``--format jsonl`` lines follow
``row``).  ``python -m taco_gdal.cli.schema`` prints them all as one document.

Example:
    >>> sorted(SCHEMAS)
    ['index', 'info', 'open', 'report', 'row', 'rows', 'written']
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["SCHEMAS", "VERB_SCHEMA", "schema_document"]

_DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
_STR_OR_NULL: Final = {"type": ["string", "null"]}
_INT_OR_NULL: Final = {"type": ["integer", "null"]}
_PATHS: Final = {"type": "array", "items": {"type": "string"}}

_ROW: Final[dict[str, Any]] = {
    "type": "object",
    "description": "One row: column name -> value (times ISO 8601, WKB geometry as WKT).",
    "additionalProperties": True,
}

_LEVEL: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["level", "samples", "files", "folders", "padding", "file_bytes", "columns"],
    "properties": {
        "level": {"type": "integer", "minimum": 0, "maximum": 5},
        "samples": {"type": "integer", "minimum": 0},
        "files": {"type": "integer", "minimum": 0},
        "folders": {"type": "integer", "minimum": 0},
        "padding": {"type": "integer", "minimum": 0},
        "file_bytes": _INT_OR_NULL,
        "columns": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": False,
}

SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "info": {
        "$schema": _DRAFT,
        "title": "taco info",
        "type": "object",
        "required": ["path", "id", "container", "max_depth", "pit_schema", "levels", "extent"],
        "properties": {
            "path": {"type": "string"},
            "id": _STR_OR_NULL,
            "title": _STR_OR_NULL,
            "version": _STR_OR_NULL,
            "description": _STR_OR_NULL,
            "licenses": {"type": "array", "items": {"type": "string"}},
            "tasks": {"type": "array", "items": {"type": "string"}},
            "container": {
                "type": "object",
                "required": ["format", "taco_version", "bytes", "parts"],
                "properties": {
                    "format": {"type": "string"},
                    "taco_version": _STR_OR_NULL,
                    "bytes": _INT_OR_NULL,
                    "parts": {
                        "oneOf": [
                            {"type": "null"},
                            {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["path", "samples", "bytes"],
                                    "properties": {
                                        "path": {"type": "string"},
                                        "samples": {"type": "integer", "minimum": 0},
                                        "bytes": {"type": "integer", "minimum": 0},
                                    },
                                },
                            },
                        ]
                    },
                },
            },
            "max_depth": {"type": "integer", "minimum": 0, "maximum": 5},
            "pit_schema": {"type": "object"},
            "levels": {"type": "array", "minItems": 1, "items": _LEVEL},
            "extent": {"type": ["object", "null"]},
        },
    },
    "rows": {
        "$schema": _DRAFT,
        "title": "taco ls / taco sql --format json",
        "type": "object",
        "required": ["path", "count", "columns", "rows"],
        "properties": {
            "path": {"type": "string"},
            "level": {"type": "integer", "minimum": 0},
            "query": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "columns": {"type": "array", "items": {"type": "string"}},
            "rows": {"type": "array", "items": _ROW},
        },
    },
    "row": {"$schema": _DRAFT, "title": "taco ls / sql --format jsonl (one line)", **_ROW},
    "open": {
        "$schema": _DRAFT,
        "title": "taco open --json",
        "type": "object",
        "required": ["path", "sample", "type", "location"],
        "properties": {
            "path": {"type": "string"},
            "sample": {"type": "string"},
            "type": {"enum": ["FILE", "FOLDER"]},
            "location": {"type": "string", "pattern": "^/vsi|^/"},
        },
        "additionalProperties": False,
    },
    "written": {
        "$schema": _DRAFT,
        "title": "taco create / export / convert / cat / stac --json",
        "type": "object",
        "required": ["written"],
        "properties": {
            "written": {**_PATHS, "minItems": 1},
            "samples": {"type": "integer", "minimum": 0},
            "parts": {"type": "integer", "minimum": 1},
            "from": {"type": "string"},
        },
    },
    "index": {
        "$schema": _DRAFT,
        "title": "taco index --json",
        "type": "object",
        "required": ["written", "layer", "features", "vrt", "gti"],
        "properties": {
            "written": {**_PATHS, "minItems": 1, "maxItems": 1},
            "layer": {"type": "string"},
            "features": {"type": "integer", "minimum": 1},
            "vrt": _PATHS,
            "gti": _PATHS,
        },
        "additionalProperties": False,
    },
    "report": {
        "$schema": _DRAFT,
        "title": "taco validate / verify --json",
        "type": "object",
        "required": ["path", "check", "level", "ok", "checked", "failures"],
        "properties": {
            "path": {"type": "string"},
            "check": {"enum": ["verify", "validate"]},
            "level": {"type": "string"},
            "ok": {"type": "boolean"},
            "checked": {"type": "object", "additionalProperties": {"type": "integer"}},
            "failures": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["code", "message", "member", "row_id", "expected", "found"],
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "member": _STR_OR_NULL,
                        "row_id": _STR_OR_NULL,
                        "expected": {"type": ["string", "number", "boolean", "null"]},
                        "found": {"type": ["string", "number", "boolean", "null"]},
                        "severity": {"enum": ["error", "warning"]},
                    },
                },
            },
        },
    },
}
"""Schema name -> JSON Schema."""

VERB_SCHEMA: Final = {
    "info": "info",
    "ls": "rows",
    "sql": "rows",
    "open": "open",
    "create": "written",
    "export": "written",
    "convert": "written",
    "cat": "written",
    "index": "index",
    "stac": "written",
    "validate": "report",
    "verify": "report",
    "croissant": "written",
}
"""Verb -> the schema its ``--json`` output follows."""


def schema_document() -> str:
    """Every schema and the verb mapping, as one JSON text.

    Example:
        >>> '"info"' in schema_document()
        True
    """
    return json.dumps({"verbs": VERB_SCHEMA, "schemas": SCHEMAS}, indent=2)


if __name__ == "__main__":  # pragma: no cover
    print(schema_document())
