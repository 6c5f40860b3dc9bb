"""Field maps shared between samples, and values kept as tuples beside them.

A million samples have a handful of schemas, so a sample points at one shared,
never-mutated, interned ``{field: type}`` map and keeps its values in a tuple in
its order.  Interned maps live for the process (at most :data:`MAX_INTERNED`), so
their ``id`` is a safe cache key for field positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol, TypeVar

import pyarrow as pa

__all__ = ["EMPTY", "FieldMap", "intern_fields", "position", "shared", "value_at", "values_of"]

T = TypeVar("T")

FieldMap = dict[str, pa.DataType]
"""``{field: Arrow type}`` in field order; shared maps are never mutated."""

MAX_INTERNED: Final = 4096

_BY_IDS: dict[tuple[tuple[str, int], ...], FieldMap] = {}
"""Interned maps by ``(name, id(type))``: types are mostly the same few objects."""
_BY_VALUE: dict[tuple[tuple[str, pa.DataType], ...], FieldMap] = {}
_POSITIONS: dict[int, dict[str, int]] = {}
"""``id`` of an interned map -> field positions (interned maps live forever)."""


def shared(cache: dict[T, T], value: T) -> T:
    """The object equal to ``value`` already in ``cache`` (at most :data:`MAX_INTERNED` kept)."""
    found = cache.get(value)
    if found is not None:
        return found
    if len(cache) < MAX_INTERNED:
        cache[value] = value
    return value


def intern_fields(fields: FieldMap) -> FieldMap:
    """The shared map equal to ``fields`` (``fields`` itself the first time).

    Example:
        >>> a = intern_fields({"k": pa.int64()})
        >>> a is intern_fields({"k": pa.int64()})
        True
    """
    quick = tuple((name, id(data_type)) for name, data_type in fields.items())
    found = _BY_IDS.get(quick)
    if found is not None:
        return found
    key = tuple(fields.items())
    found = _BY_VALUE.get(key)
    if found is None:
        if len(_BY_VALUE) >= MAX_INTERNED:
            return fields
        found = _BY_VALUE[key] = fields
        _POSITIONS[id(found)] = {name: i for i, name in enumerate(found)}
    if len(_BY_IDS) < MAX_INTERNED:
        _BY_IDS[quick] = found
    return found


EMPTY: Final[FieldMap] = intern_fields({})


def position(fields: FieldMap, name: str) -> int:
    """Index of ``name`` in ``fields``; -1 when absent."""
    known = _POSITIONS.get(id(fields))
    if known is not None:  # an interned map: alive forever, so its id is its own
        return known.get(name, -1)
    for index, field in enumerate(fields):
        if field == name:
            return index
    return -1


class _HasValues(Protocol):
    @property
    def _types(self) -> FieldMap: ...

    _vals: Any


def value_at(sample: _HasValues, index: int) -> Any:
    """Value at field position ``index`` (a sample with one field keeps the bare value)."""
    return sample._vals if len(sample._types) == 1 else sample._vals[index]


def values_of(samples: Sequence[_HasValues] | Iterable[_HasValues], name: str) -> list[Any]:
    """The value of ``name`` in every sample (None where absent); one lookup per shared map."""
    out: list[Any] = []
    append = out.append
    current: FieldMap | None = None
    index = -1
    for sample in samples:
        fields = sample._types
        if fields is not current:
            current, index = fields, position(fields, name)
        if index < 0:
            append(None)
        elif len(fields) == 1:
            append(sample._vals)
        else:
            append(sample._vals[index])
    return out
