"""Structured mutations the byte fuzzers rarely reach: JSON numbers and nesting, WKB type
codes, member names that are not UTF-8, Parquet pages beneath an intact footer.

Each mutator turns the same ``(position, value)`` pairs the byte fuzzers use into a
deterministic change of one document, so a seed replays exactly:

* :func:`mutate_json`: a node of the JSON tree becomes a 90-5,000 digit integer, an
  array or object nested 30-1,100 deep, a special float (``NaN``, ``1e999``), a lone
  surrogate escape, raw non-UTF-8 bytes, or a value of another type;
* :func:`mutate_wkb`: bytes of a row's WKB (the byte order, the type code, the
  coordinates) are overwritten, or the row is cut short;
* :func:`mutated_names`: bytes of tar member names are overwritten (GNU tar stores the
  raw bytes, so a name need not be UTF-8).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

__all__ = ["mutate_json", "mutate_wkb", "mutated_names", "parquet_pages"]

Mutation = Sequence[tuple[int, int]]
_SPECIAL = ("NaN", "Infinity", "-Infinity", "1e999", "-1e999", "-0.0", "1e-400", "0e0")
_TYPES: tuple[Any, ...] = (None, True, 0, -1, 2**63, 1.5, "", "x", [], {}, [None], {"": None})


def _slots(value: Any) -> Iterator[tuple[Any, Any]]:
    """``(container, key)`` of every node below ``value``, depth first."""
    stack = [value]
    while stack:
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, child in items:
            yield node, key
            if isinstance(child, dict | list):
                stack.append(child)


def _raw(position: int, value: int) -> str:
    """JSON text for one mutation, kept raw so that no Python limit stops it being written."""
    action = value % 7
    if action == 0:
        return "9" * (90 + (position * 37 + value) % 4_911)
    if action in (1, 2):
        depth = 30 + (position * 13 + value) % 1_071
        opening, closing = ("[", "]") if action == 1 else ('{"a":', "}")
        return opening * depth + "1" + closing * depth
    if action == 3:
        return _SPECIAL[position % len(_SPECIAL)]
    if action == 4:
        return '"\\ud800 lone surrogate"'
    if action == 5:
        return '"\x00NOT_UTF8\x00"'  # replaced by raw bytes after encoding
    return json.dumps(_TYPES[position % len(_TYPES)])


def mutate_json(text: str, mutation: Mutation) -> bytes:
    """The JSON document ``text`` with one node replaced per ``(position, value)`` pair."""
    document: Any = json.loads(text)
    raws: dict[str, str] = {}
    root: list[Any] = [document]
    for number, (position, value) in enumerate(mutation):
        slots = list(_slots(root))
        container, key = slots[position % len(slots)]
        marker = f"\x01MUTATION{number}\x01"
        raws[json.dumps(marker)] = _raw(position, value)
        container[key] = marker
    out = json.dumps(root[0], indent=4, ensure_ascii=False)
    for marker, raw in raws.items():
        out = out.replace(marker, raw)
    return out.encode("utf-8").replace(b"\x00NOT_UTF8\x00", b"\xff\xfe\xc3(")


WKB_POINT = 21
"""Bytes of a 2D WKB point: order (1), type (4), x (8), y (8)."""


def mutate_wkb(values: list[bytes | None], mutation: Mutation) -> pa.Array:
    """``values`` (WKB per row) with bytes overwritten; a pair with value 0 cuts the row short."""
    rows = [bytearray(v) if v is not None else None for v in values]
    for position, value in mutation:
        row = rows[position % len(rows)]
        if row is None or not row:
            continue
        at = (position // len(rows)) % min(len(row), 2 * WKB_POINT)
        if value == 0:
            del row[at:]
        elif position % 3 == 0:  # the type code, whole: 312, 0x80000001, 2**31 + 3, ...
            code = (position * 2_654_435_761 + value) % 2**32
            row[1:5] = code.to_bytes(4, "little" if row[0] == 1 else "big")
        else:
            row[at] = value
    return pa.array([bytes(r) if r is not None else None for r in rows], pa.binary())


def mutated_names(names: list[str], mutation: Mutation) -> list[str]:
    """Member names with bytes of their stem overwritten (``surrogateescape`` text: any byte).

    The stem is the part before the first dot: TARIDX keys a sample by it (the
    extension, the rest, is checked by the TARIDX writer already).
    """
    raw = [bytearray(name.encode()) for name in names]
    for position, value in mutation:
        name = raw[position % len(raw)]
        stem = max(1, name.find(b".")) if b"." in name else len(name)
        name[(position // len(raw)) % stem] = value if value not in (0, 0x2E, 0x2F) else 0xE9
    return [bytes(name).decode("utf-8", "surrogateescape") for name in raw]


def parquet_pages(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The byte region of the data pages of the Parquet file at ``data[start:end]``.

    Between the leading ``PAR1`` and the footer (Thrift metadata, its length, ``PAR1``):
    mutating there leaves the schema intact and the buffers beneath it wrong.
    """
    footer = int.from_bytes(data[end - 8 : end - 4], "little")
    return start + 4, end - 8 - footer
