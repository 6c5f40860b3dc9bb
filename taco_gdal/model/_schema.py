"""Merging per-sample schemas into one (Tortilla) and per-tortilla schemas into one (PIT-2).

A field whose only values so far were ``None`` has Arrow type ``null``; it carries
no type information, so it agrees with any type and takes the other side's type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from taco_gdal.model._arrow import is_null_type

__all__ = ["SchemaDiff", "diff_schema", "merge_into"]


@dataclass
class SchemaDiff:
    """How a schema differs from a reference schema."""

    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, pa.DataType, pa.DataType]] = field(default_factory=list)
    """(column, type here, type in the reference)."""

    def describe(self, reference: str) -> str:
        """One sentence per kind of difference, naming columns and types."""
        parts = []
        if self.missing:
            parts.append(f"missing columns {self.missing} (present in {reference})")
        if self.extra:
            parts.append(f"extra columns {self.extra} (absent from {reference})")
        for name, here, there in self.conflicts:
            parts.append(f"column {name!r} has type {here} but {there} in {reference}")
        return "; ".join(parts)

    def __bool__(self) -> bool:
        return bool(self.missing or self.extra or self.conflicts)


def diff_schema(
    types: Mapping[str, pa.DataType], reference: Mapping[str, pa.DataType], *, same_names: bool
) -> SchemaDiff:
    """Differences from ``reference`` (order ignored, null agrees; names if ``same_names``)."""
    diff = SchemaDiff()
    if same_names:
        diff.missing = [name for name in reference if name not in types]
        diff.extra = [name for name in types if name not in reference]
    for name, data_type in types.items():
        ref_type = reference.get(name)
        if ref_type is None or ref_type == data_type:
            continue
        if not (is_null_type(ref_type) or is_null_type(data_type)):
            diff.conflicts.append((name, data_type, ref_type))
    return diff


def merge_into(merged: dict[str, pa.DataType], types: Mapping[str, pa.DataType]) -> None:
    """Add ``types``'s new columns to ``merged``, replacing ``null`` types (no conflicts left)."""
    for name, data_type in types.items():
        current = merged.get(name)
        if current is None or (is_null_type(current) and not is_null_type(data_type)):
            merged[name] = data_type
