"""Merge the COLLECTION.json of several datasets into one (TACOLLECTION, TACOCAT).

Rules (spec 6.6): the first input is the base, PIT counts are summed, extents
are unioned, and ``taco:sources`` keeps each input's id, file and extent.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from taco_gdal.errors import TacoSchemaError
from taco_gdal.format.names import FIELD_SCHEMA_KEY, PIT_SCHEMA_KEY, SOURCES_KEY
from taco_gdal.model.extent import union_boxes

__all__ = ["check_collections", "collection_problems", "merge_collections", "raise_problems"]


def _pit(collection: dict[str, Any], name: str) -> dict[str, Any]:
    pit = collection.get(PIT_SCHEMA_KEY)
    if not isinstance(pit, dict) or "root" not in pit:
        raise TacoSchemaError(f"{name}: COLLECTION.json has no {PIT_SCHEMA_KEY} with a 'root'")
    return pit


def _structure(pit: dict[str, Any]) -> tuple[Any, dict[str, list[tuple[Any, Any]]]]:
    hierarchy = pit.get("hierarchy") or {}
    return pit["root"].get("type"), {
        depth: [(p.get("type"), p.get("id")) for p in patterns]
        for depth, patterns in hierarchy.items()
    }


def collection_problems(collections: Sequence[dict[str, Any]], names: Sequence[str]) -> list[str]:
    """Every way an input's PIT structure or field schema differs from the first input's.

    Counts (``n``) may differ; types and ids per depth, and the field schema, may not.
    """
    ref_root, ref_tree = _structure(_pit(collections[0], names[0]))
    ref_fields = collections[0].get(FIELD_SCHEMA_KEY)
    problems = []
    for collection, name in zip(collections[1:], names[1:], strict=True):
        root, tree = _structure(_pit(collection, name))
        if root != ref_root:
            problems.append(f"{name}: root type {root!r}, {names[0]} has {ref_root!r}")
        if tree != ref_tree:
            problems.append(
                f"{name}: PIT hierarchy (types/ids per depth) {tree}, {names[0]} has {ref_tree}"
            )
        fields = collection.get(FIELD_SCHEMA_KEY)
        if fields != ref_fields:
            problems.append(f"{name}: {FIELD_SCHEMA_KEY} differs from {names[0]}'s")
    return problems


def raise_problems(problems: Sequence[str]) -> None:
    """TacoSchemaError with one line per problem, if there are any."""
    if problems:
        raise TacoSchemaError(
            "inputs do not share one schema (pass validate_schema=False to merge anyway):\n  "
            + "\n  ".join(problems)
        )


def check_collections(collections: Sequence[dict[str, Any]], names: Sequence[str]) -> None:
    """Raise TacoSchemaError listing every input whose PIT structure or field schema differs."""
    raise_problems(collection_problems(collections, names))


def _summed_pit(collections: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    pits = [_pit(c, n) for c, n in zip(collections, names, strict=True)]
    result = copy.deepcopy(pits[0])
    result["root"]["n"] = sum(int(p["root"].get("n", 0)) for p in pits)
    for depth, patterns in (result.get("hierarchy") or {}).items():
        for index, pattern in enumerate(patterns):
            pattern["n"] = sum(
                int(p.get("hierarchy", {}).get(depth, [])[index].get("n", 0))
                for p in pits
                if index < len(p.get("hierarchy", {}).get(depth, []))
            )
    if isinstance(result.get("shape"), list) and result["shape"]:
        shapes = [p["shape"] for p in pits if isinstance(p.get("shape"), list)]
        result["shape"] = [result["root"]["n"]] + [
            max(s[i] for s in shapes if i < len(s)) for i in range(1, len(result["shape"]))
        ]
    return result


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _merged_extent(extents: list[dict[str, Any]]) -> dict[str, Any]:
    """The union of the parts' extents; ``spatial`` left out when no part has one."""
    box = union_boxes([e.get("spatial") for e in extents])
    spans = [e["temporal"] for e in extents if e.get("temporal")]
    temporal = (
        [min((s[0] for s in spans), key=_parse_time), max((s[1] for s in spans), key=_parse_time)]
        if spans
        else None
    )
    merged: dict[str, Any] = {} if box is None else {"spatial": list(box)}
    merged["temporal"] = temporal
    return merged


def merge_collections(
    collections: Sequence[dict[str, Any]], files: Sequence[str]
) -> dict[str, Any]:
    """One COLLECTION for many datasets: summed PIT counts, union extent, ``taco:sources``."""
    extents = [c.get("extent") or {} for c in collections]
    merged = copy.deepcopy(dict(collections[0]))
    merged["extent"] = _merged_extent(extents)
    merged[PIT_SCHEMA_KEY] = _summed_pit(collections, files)
    merged.pop(SOURCES_KEY, None)
    merged[SOURCES_KEY] = {
        "count": len(collections),
        "ids": [c.get("id", "unknown") for c in collections],
        "files": list(files),
        "extents": [
            {
                "file": name,
                "id": c.get("id", "unknown"),
                "spatial": e.get("spatial"),
                "temporal": e.get("temporal"),
            }
            for c, e, name in zip(collections, extents, files, strict=True)
        ],
    }
    return merged
