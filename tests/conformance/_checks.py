"""Assertions shared by the conformance tests."""

from __future__ import annotations

from typing import Any

from taco_gdal import TacoWarning
from tests.conformance._tgview import TgReading

__all__ = ["check_warnings", "collection_core"]

CORE_COLLECTION_KEYS = (
    "id",
    "dataset_version",
    "description",
    "licenses",
    "tasks",
    "title",
    "keywords",
    "extent",
)


def check_warnings(reading: TgReading, misplaced: bool) -> None:
    """No warning at all, or, for a file with misplaced offsets, exactly one TacoWarning."""
    messages = [f"{w.category.__name__}: {w.message}" for w in reading.warnings]
    if not misplaced:
        assert messages == []
        return
    taco = [w for w in reading.warnings if issubclass(w.category, TacoWarning)]
    assert len(taco) == 1, messages
    assert len(reading.warnings) == 1, messages
    assert "offset" in str(taco[0].message).lower()


def collection_core(collection: dict[str, Any]) -> dict[str, Any]:
    """The COLLECTION.json keys both writers must agree on."""
    return {k: collection.get(k) for k in CORE_COLLECTION_KEYS}
