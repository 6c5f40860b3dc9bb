"""COLLECTION.json bytes, serialised the way the reference writer does."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["collection_bytes"]


def collection_bytes(collection: Mapping[str, Any]) -> bytes:
    """UTF-8 JSON, 4-space indent, non-ASCII kept, no trailing newline.

    Example:
        >>> collection_bytes({"id": "x"})
        b'{\\n    "id": "x"\\n}'
    """
    return json.dumps(collection, indent=4, ensure_ascii=False).encode("utf-8")
