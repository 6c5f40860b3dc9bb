"""A COLLECTION for a container that has none: id from the file name, honest defaults."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any, Final

import pyarrow as pa

from taco_gdal.format.names import TACO_VERSION
from taco_gdal.model.collection import field_schema, order_collection
from taco_gdal.model.pit import pit_schema

__all__ = ["UNKNOWN_VERSION", "core_fields", "dataset_id", "derived_collection"]

UNKNOWN_VERSION: Final = "unknown"
"""``dataset_version`` of a derived dataset: the source format records none."""

_NOT_ID: Final = re.compile(r"[^a-z0-9_-]+")


def dataset_id(path: str) -> str:
    """A valid dataset id from a file name: its stem, lowercased, other characters as ``-``.

    Example:
        >>> dataset_id("/data/Sentinel 2.caf")
        'sentinel-2'
    """
    stem = posixpath.basename(path.rstrip("/")).split(".", 1)[0]
    return _NOT_ID.sub("-", stem.lower()).strip("-") or "dataset"


def core_fields(path: str, label: str) -> dict[str, Any]:
    """The COLLECTION fields a user would normally supply, derived from ``path``.

    Args:
        path: the container's path (its file name gives the id).
        label: what the container is, for the description (``"CAF archive"``).

    Example:
        >>> core_fields("/data/x.caf", "CAF archive")["licenses"]
        ['other']
    """
    name = posixpath.basename(path.rstrip("/"))
    return {
        "id": dataset_id(path),
        "dataset_version": UNKNOWN_VERSION,
        "description": (
            f"Derived by taco_gdal from the {label} {name}: one FILE sample per member, "
            "with the member's name and byte range and no other metadata."
        ),
        "licenses": ["other"],
        "providers": [],
        "tasks": ["other"],
    }


def derived_collection(
    level0: pa.Table, path: str, label: str, descriptions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """COLLECTION.json content for a flat container described by ``level0``.

    Includes ``taco:pit_schema`` and ``taco:field_schema`` computed from the
    table, so the reader treats it like any stored COLLECTION.  ``descriptions``
    name the container's own columns and may reword internal ones (e.g. what
    ``internal:source_file`` names in this format).

    Example:
        >>> table = pa.table({"id": ["a"], "type": ["FILE"]})
        >>> derived_collection(table, "/data/x.caf", "CAF archive")["id"]
        'x'
    """
    core = {**core_fields(path, label), "taco_version": TACO_VERSION}
    wanted = dict(descriptions or {})
    fields = field_schema([level0], wanted)
    for entry in fields["level0"]:
        entry[2] = wanted.get(entry[0], entry[2])
    return order_collection(core, {}, pit_schema([level0]), fields)
