"""Hand-built MetadataPackages, for writer tests that do not need the data model.

A tree is a list of nodes; a node is ``(id, source)`` for a FILE (``source`` a
path, a VSI path or None for a zero-byte sample) or ``(id, [children])`` for a
FOLDER.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from taco_gdal.format import names
from taco_gdal.model.package import MetadataPackage

Node = tuple[str, "str | list[Node] | None"]


def _collection(levels: list[pa.Table]) -> dict[str, Any]:
    return {
        "id": "handmade",
        "dataset_version": "1",
        "description": "hand-built package for writer tests",
        "licenses": ["CC0-1.0"],
        "providers": [],
        "tasks": ["other"],
        "taco_version": names.TACO_VERSION,
        "extent": {"spatial": [-180, -90, 180, 90], "temporal": None},
        names.PIT_SCHEMA_KEY: {
            "root": {"n": levels[0].num_rows, "type": levels[0].column("type")[0].as_py()},
            "hierarchy": {},
        },
        names.FIELD_SCHEMA_KEY: {},
    }


def package_from_tree(tree: list[Node]) -> MetadataPackage:
    """Level tables in the MetadataPackage contract, plus a ``tag`` user column."""
    levels: list[pa.Table] = []
    current: list[tuple[Node, int, str]] = [(node, 0, "") for node in tree]
    level = 0
    while current:
        rows: dict[str, list[Any]] = {
            "id": [], "type": [], "tag": [], names.CURRENT_ID: [], names.PARENT_ID: [],
            names.RELATIVE_PATH: [], names.PATH: [],
        }  # fmt: skip
        nxt: list[tuple[Node, int, str]] = []
        for row, ((sample_id, payload), parent, prefix) in enumerate(current):
            is_folder = isinstance(payload, list)
            rel = f"{prefix}{sample_id}" + ("/" if is_folder else "")
            rows["id"].append(sample_id)
            rows["type"].append(names.FOLDER if is_folder else names.FILE)
            rows["tag"].append(f"tag:{rel}")
            rows[names.CURRENT_ID].append(row)
            rows[names.PARENT_ID].append(row if level == 0 else parent)
            rows[names.RELATIVE_PATH].append(rel)
            rows[names.PATH].append(None if is_folder else payload)
            if isinstance(payload, list):
                nxt.extend((child, row, rel) for child in payload)
        if level == 0:
            del rows[names.RELATIVE_PATH]
        types = {names.CURRENT_ID: pa.int64(), names.PARENT_ID: pa.int64()}
        levels.append(
            pa.table({k: pa.array(v, types.get(k, pa.string())) for k, v in rows.items()})
        )
        current = nxt
        level += 1
    return MetadataPackage(levels=levels, collection=_collection(levels))
