"""Shared by the containers: coalesced range reads, parquet and JSON from bytes."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import ID, MAX_DEPTH, PIT_SCHEMA_KEY, TYPE
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read.containers._limits import (
    check_column_count,
    check_columns,
    loads_json,
    normalise_collection,
)

__all__ = [
    "collection_depth",
    "parse_collection",
    "parse_level",
    "parse_metadata",
    "read_entries",
]

log = logging.getLogger(__name__)

_MAX_GAP = 4 * 1024 * 1024
"""Entries further apart than this are read separately rather than in one range."""


def _groups(entries: Sequence[HeaderEntry]) -> list[list[int]]:
    order = sorted(range(len(entries)), key=lambda i: entries[i].offset)
    groups: list[list[int]] = []
    end = -1
    for i in order:
        if groups and entries[i].offset - end <= _MAX_GAP:
            groups[-1].append(i)
            end = max(end, entries[i].end)
        else:
            groups.append([i])
            end = entries[i].end
    return groups


def read_entries(
    f: VSIFile, entries: Sequence[HeaderEntry], labels: Sequence[str]
) -> list[pa.Buffer]:
    """The bytes of every entry, with as few range reads as possible.

    Adjacent entries (TACO metadata is contiguous at the end of the archive)
    come back from one read; each entry is a zero-copy slice of it.

    Raises:
        TacoFormatError: an entry reaches past the end of the file; the message
            names the entry, its byte range and the file size.
    """
    out: list[pa.Buffer | None] = [None] * len(entries)
    size = f.size()
    for entry, label in zip(entries, labels, strict=True):
        if entry.end > size:  # checked before any read or allocation
            raise TacoFormatError(
                f"{f.path}: {label} should occupy bytes {entry.offset}..{entry.end} but the "
                f"file has only {size} bytes (truncated file, or a header pointing past the end)"
            )
    for group in _groups(entries):
        start = min(entries[i].offset for i in group)
        stop = max(entries[i].end for i in group)
        log.debug("read %s bytes at %s of %s", stop - start, start, f.path)
        data = f.read_at(start, stop - start)  # a local file: one pread (see VSIFile)
        if len(data) < stop - start:
            size = f.size()
            bad = next(i for i in group if entries[i].end > size)
            raise TacoFormatError(
                f"{f.path}: {labels[bad]} should occupy bytes {entries[bad].offset}.."
                f"{entries[bad].end} but the file has only {size} bytes (truncated file, "
                "or a header pointing past the end)"
            )
        buffer = pa.py_buffer(data)
        for i in group:
            out[i] = buffer.slice(entries[i].offset - start, entries[i].length)
    return [b for b in out if b is not None]


def parse_level(data: pa.Buffer | bytes, where: str) -> pa.Table:
    """A level table from parquet bytes; ``id`` and ``type`` must be there.

    Raises:
        TacoFormatError: not parquet, or a required column is missing.
    """
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        check_column_count(parquet.metadata.num_columns, where)  # before reading any column
        table = parquet.read()  # one chunk per column: takes of a few rows stay O(rows taken)
        table.validate(full=True)  # e.g. invalid UTF-8 in a string column
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TacoFormatError(f"{where}: expected a parquet file, cannot parse it: {exc}") from exc
    check_columns(table, where)
    missing = [name for name in (ID, TYPE) if name not in table.column_names]
    if missing:
        raise TacoFormatError(
            f"{where}: required column {missing[0]!r} is missing; the table has columns "
            f"{table.column_names}"
        )
    return table


def parse_collection(data: pa.Buffer | bytes, where: str) -> dict[str, Any]:
    """COLLECTION.json from bytes.

    Raises:
        TacoFormatError: not UTF-8 JSON, or not a JSON object.
    """
    try:
        text = memoryview(data).tobytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TacoFormatError(f"{where}: expected UTF-8 JSON, cannot parse it: {exc}") from exc
    value = loads_json(text, where)
    if not isinstance(value, dict):
        raise TacoFormatError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return normalise_collection(value, where)


def parse_metadata(
    buffers: Sequence[pa.Buffer], labels: Sequence[str], path: str
) -> tuple[list[pa.Table], dict[str, Any], list[str]]:
    """Level tables and COLLECTION.json from the buffers :func:`read_entries` returned.

    ``buffers`` hold the level parquet files in order, then COLLECTION.json;
    ``labels`` name each entry in messages (as ``"{path}: {label}"``).

    Returns:
        The level tables, the collection, and where each level table came from.

    Raises:
        TacoFormatError: a level is not parquet or lacks ``id``/``type``, or the
            collection is not a JSON object.
    """
    sources = [f"{path}: {label}" for label in labels]
    levels = [
        parse_level(buffer, where) for buffer, where in zip(buffers[:-1], sources[:-1], strict=True)
    ]
    return levels, parse_collection(buffers[-1], sources[-1]), sources[:-1]


def collection_depth(collection: dict[str, Any], where: str) -> int | None:
    """Deepest level index according to ``taco:pit_schema`` (``None`` when absent)."""
    pit = collection.get(PIT_SCHEMA_KEY)
    if not isinstance(pit, dict):
        return None
    hierarchy = pit.get("hierarchy") or {}
    if not isinstance(hierarchy, dict):
        raise TacoFormatError(
            f"{where}: {PIT_SCHEMA_KEY}.hierarchy must be an object, found "
            f"{type(hierarchy).__name__}"
        )
    try:
        depth = max((int(key) for key in hierarchy), default=0)
    except (TypeError, ValueError) as exc:
        raise TacoFormatError(
            f"{where}: {PIT_SCHEMA_KEY}.hierarchy keys must be level numbers, found "
            f"{list(hierarchy)}"
        ) from exc
    if not 0 <= depth <= MAX_DEPTH:
        raise TacoFormatError(
            f"{where}: {PIT_SCHEMA_KEY} describes depth {depth}, expected 0..{MAX_DEPTH}"
        )
    return depth
