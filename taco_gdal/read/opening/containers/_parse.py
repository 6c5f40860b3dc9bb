"""Shared by the containers: coalesced range reads, parquet and JSON from bytes.

A large level of a local file is decoded from the file over its byte range
(:class:`StreamedLevel`), a column group at a time (:func:`decode_parquet`), and
its binary columns are left in the file until asked for
(:mod:`taco_gdal.read.opening.containers._deferred`): the peak memory is then the
decoded table plus one group's bytes, not a copy of the whole file beside it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import ID, MAX_DEPTH, PIT_SCHEMA_KEY, TYPE
from taco_gdal.io.arrowbuf import owned_reader
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read.opening.containers._chunks import read_columns
from taco_gdal.read.opening.containers._deferred import DeferredColumns, RangeFile, deferrable
from taco_gdal.read.opening.containers._limits import (
    check_column_count,
    check_columns,
    loads_json,
    normalise_collection,
)

__all__ = [
    "GROUP_BYTES",
    "STREAM_BYTES",
    "LevelSource",
    "StreamedLevel",
    "check_column_chunks",
    "collection_depth",
    "column_groups",
    "decode_parquet",
    "parse_collection",
    "parse_level",
    "parse_level_deferring",
    "parse_level_file_deferring",
    "parse_metadata_deferring",
    "read_entries",
    "stream_bytes",
    "without_views",
]

log = logging.getLogger(__name__)

_MAX_GAP = 4 * 1024 * 1024
"""Entries further apart than this are read separately rather than in one range."""

STREAM_BYTES = 32 * 1024 * 1024
"""A level of a local file at least this large is streamed, its binary columns deferred."""


def stream_bytes() -> int:
    """:data:`STREAM_BYTES`, read when called (so that a test may lower it)."""
    return STREAM_BYTES


GROUP_BYTES = 48 * 1024 * 1024
"""Columns are decoded in groups of about this many uncompressed bytes (:func:`column_groups`)."""

MAX_GROUPS = 8
"""At most this many groups: each one walks every row group's footer entries again."""


@dataclass(frozen=True)
class StreamedLevel:
    """A level in ``[offset, offset + length)`` of an open local file; parse it before it closes."""

    file: VSIFile
    offset: int
    length: int

    def open(self) -> pa.NativeFile:
        """A file object over the level's bytes, for the parquet reader."""
        return pa.PythonFile(RangeFile(self.file, self.offset, self.length), mode="r")

    def defer(
        self, schema: pa.Schema, names: list[str], rows: int, where: str, groups: list[int]
    ) -> DeferredColumns:
        """Where columns ``names`` of this level are (``groups``: rows per row group)."""
        path = os.path.abspath(self.file.path)
        at = (path, self.offset, self.length)
        return DeferredColumns.of(*at, schema, names, rows, where, groups)


LevelSource: TypeAlias = pa.Buffer | StreamedLevel
"""The bytes of a level parquet file: in memory, or a range of a local file."""


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
    f: VSIFile,
    entries: Sequence[HeaderEntry],
    labels: Sequence[str],
    *,
    stream_from: int | None = None,
) -> list[LevelSource]:
    """The bytes of every entry, with as few range reads as possible (zero-copy slices);
    a level entry of ``stream_from`` bytes or more in a local file as a :class:`StreamedLevel`."""
    out: list[LevelSource | None] = [None] * len(entries)
    size = f.size()
    for entry, label in zip(entries, labels, strict=True):
        if entry.end > size:  # checked before any read or allocation
            raise TacoFormatError(
                f"{f.path}: {label} should occupy bytes {entry.offset}..{entry.end} but the "
                f"file has only {size} bytes (truncated file, or a header pointing past the end)"
            )
    if stream_from is not None and f.is_local:
        for i, entry in enumerate(entries[:-1]):
            if entry.length >= stream_from:
                out[i] = StreamedLevel(f, entry.offset, entry.length)
    pending = [i for i in range(len(entries)) if out[i] is None]
    for picked in _groups([entries[i] for i in pending]):
        group = [pending[i] for i in picked]
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


def column_groups(
    parquet: pq.ParquetFile, budget: int = GROUP_BYTES, columns: Sequence[str] | None = None
) -> list[list[str]]:
    """The top-level columns of ``parquet`` (or ``columns`` of them) in groups to decode in turn.

    Columns are dealt, largest first, to the group holding the fewest bytes; sizes
    come from the footer, which, if it lies, costs memory, never correctness.
    """
    names = parquet.schema_arrow.names if columns is None else list(columns)
    meta = parquet.metadata
    total = sum(max(meta.row_group(g).total_byte_size, 0) for g in range(meta.num_row_groups))
    if len(names) <= 1 or total <= budget:  # one group, without any column chunk's metadata
        return [names] if names else []
    # the first row group's shares stand for the whole; other chunks are checked by the decode
    check_column_chunks(parquet, row_groups=[0])
    first = meta.row_group(0)
    shares = dict.fromkeys(names, 0)
    whole = 0
    for i in range(first.num_columns):
        chunk = first.column(i)
        size = max(chunk.total_uncompressed_size, 0)
        whole += size
        top = chunk.path_in_schema.split(".", 1)[0]
        if top in shares:
            shares[top] += size
    sizes = {name: share * total // max(whole, 1) for name, share in shares.items()}
    wanted = -(-sum(sizes.values()) // max(budget, 1))
    count = min(len(names), MAX_GROUPS, max(1, wanted))
    groups: list[list[str]] = [[] for _ in range(count)]
    held = [0] * count
    for name in sorted(names, key=lambda n: -sizes[n]):
        emptiest = held.index(min(held))
        groups[emptiest].append(name)
        held[emptiest] += sizes[name]
    return [sorted(group, key=names.index) for group in groups if group]


_VIEWS: Final = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}
"""Arrow's view types, and what a level holds instead."""


def without_views(table: pa.Table) -> pa.Table:
    """``table`` with its top-level ``string_view`` / ``binary_view`` columns made large ones.

    A stored Arrow schema can make any column a view, which pyarrow cannot ``take``.

    Example:
        >>> without_views(pa.table({"a": pa.array(["x"], pa.string_view())})).schema.types
        [DataType(large_string)]
    """
    for i, field in enumerate(table.schema):
        plain = _VIEWS.get(field.type)
        if plain is not None:
            table = table.set_column(i, field.with_type(plain), table.column(i).cast(plain))
    return table


def check_column_chunks(parquet: pq.ParquetFile, row_groups: Sequence[int]) -> None:
    """Build the column chunks' metadata of ``row_groups`` where a bad one raises ``OSError``
    (``RowGroupMetaData.column`` would end the process with ``std::terminate``).

    Example:
        >>> import io, pyarrow as pa, pyarrow.parquet as pq
        >>> sink = io.BytesIO()
        >>> pq.write_table(pa.table({"a": [1, 2]}), sink, row_group_size=1)
        >>> check_column_chunks(pq.ParquetFile(pa.BufferReader(sink.getvalue())), [0, 1])
    """
    for group in row_groups:
        batches = parquet.iter_batches(batch_size=1, row_groups=[group], use_threads=False)
        next(batches, None)


def decode_parquet(
    parquet: pq.ParquetFile,
    budget: int = GROUP_BYTES,
    *,
    use_threads: bool = True,
    columns: Sequence[str] | None = None,
    group_file: Callable[[list[str]], pq.ParquetFile] | None = None,
) -> pa.Table:
    """``parquet.read()`` (or of ``columns``), decoded a column group at a time for a lower
    peak; ``group_file(names)``, if given, is the file each group is read from."""
    schema = parquet.schema_arrow
    names = schema.names
    if len(set(names)) != len(names):
        return parquet.read(use_threads=use_threads)  # check_columns names the duplicate
    if columns is not None:
        names = list(columns)
        schema = pa.schema([schema.field(name) for name in names], schema.metadata)
    groups = column_groups(parquet, budget, names)
    if len(groups) == 1 and group_file is None:  # one chunk per column: few-row takes stay cheap
        return parquet.read(columns=columns, use_threads=use_threads)
    decoded: dict[str, pa.ChunkedArray] = {}
    pool = pa.default_memory_pool()
    for group in groups:
        source = parquet if group_file is None else group_file(group)
        part = source.read(columns=group, use_threads=use_threads)
        del source
        decoded.update(zip(part.column_names, part.columns, strict=True))
        del part
        pool.release_unused()  # the group's freed buffers go back before the next group grows
    return pa.Table.from_arrays([decoded[name] for name in names], schema=schema)


def parse_level(data: LevelSource | bytes, where: str) -> pa.Table:
    """A level table from parquet bytes or a local file's range; ``id`` and ``type`` required."""
    return parse_level_deferring(data, where, defer=False)[0]


def parse_level_deferring(
    data: LevelSource | bytes, where: str, *, defer: bool = True
) -> tuple[pa.Table, DeferredColumns | None]:
    """:func:`parse_level`, leaving a streamed level's binary columns in the file; also
    returns where they are (``None`` when none were left out)."""
    streamed = isinstance(data, StreamedLevel)
    try:
        source = data.open() if isinstance(data, StreamedLevel) else owned_reader(data)
        parquet = pq.ParquetFile(source)
        schema = parquet.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TacoFormatError(f"{where}: expected a parquet file, cannot parse it: {exc}") from exc
    check_column_count(parquet.metadata.num_columns, where)  # before reading any column
    # deferred columns too; not schema.empty_table(), which imports pandas
    check_columns(pa.Table.from_batches([], schema=schema), where)
    later = [f.name for f in schema if deferrable(f)] if defer and streamed else []
    kept = [name for name in schema.names if name not in later]
    if not kept:
        later = []
    try:
        table = _decode_kept(data, parquet, kept, where) if later else None
        if table is None:
            # a file Python reads returns Python-owned buffers: decoded on this thread only
            columns = kept if later else None
            table = decode_parquet(parquet, use_threads=not streamed, columns=columns)
        table.validate(full=True)  # e.g. invalid UTF-8 in a string column
        table = without_views(table)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TacoFormatError(f"{where}: expected a parquet file, cannot parse it: {exc}") from exc
    check_columns(table, where)
    missing = [name for name in (ID, TYPE) if name not in table.column_names]
    if missing:
        raise TacoFormatError(
            f"{where}: required column {missing[0]!r} is missing; the table has columns "
            f"{table.column_names}"
        )
    if not later:
        return table, None
    assert isinstance(data, StreamedLevel)
    meta = parquet.metadata
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    return table, data.defer(schema, later, table.num_rows, where, groups)


def _decode_kept(
    level: LevelSource | bytes, parquet: pq.ParquetFile, kept: list[str], where: str
) -> pa.Table | None:
    """Columns ``kept`` of a streamed level, decoded from their chunks in memory (no GIL held);
    None when that fails, for the decode from the file to report what is wrong."""
    if not isinstance(level, StreamedLevel):
        return None
    metadata = parquet.metadata

    def group_file(names: list[str]) -> pq.ParquetFile:
        data = read_columns(level.file, level.offset, level.length, metadata, names, where)
        return pq.ParquetFile(pa.BufferReader(data), metadata=metadata)

    try:
        # one thread: Arrow's threads would raise the peak, and load() imports beside it
        return decode_parquet(parquet, use_threads=False, columns=kept, group_file=group_file)
    except (pa.ArrowException, OSError, ValueError):
        return None


def parse_level_file_deferring(
    path: str, where: str, stream_from: int | None = None, *, defer: bool = True
) -> tuple[pa.Table, DeferredColumns | None]:
    """:func:`parse_level_deferring` of a whole file (streamed when local and at least
    ``stream_from`` bytes, default :data:`STREAM_BYTES`)."""
    threshold = stream_bytes() if stream_from is None else stream_from
    with VSIFile(path) as f:
        size = f.size()
        if f.is_local and size >= threshold:
            return parse_level_deferring(StreamedLevel(f, 0, size), where, defer=defer)
        data = f.read_exact(0, size, "whole file")
    return parse_level_deferring(data, where, defer=defer)


def parse_collection(data: pa.Buffer | bytes, where: str) -> dict[str, Any]:
    """COLLECTION.json from bytes (TacoFormatError unless a UTF-8 JSON object)."""
    try:
        text = memoryview(data).tobytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TacoFormatError(f"{where}: expected UTF-8 JSON, cannot parse it: {exc}") from exc
    value = loads_json(text, where)
    if not isinstance(value, dict):
        raise TacoFormatError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return normalise_collection(value, where)


def parse_metadata_deferring(
    buffers: Sequence[LevelSource], labels: Sequence[str], path: str, *, defer: bool = True
) -> tuple[list[pa.Table], dict[str, Any], list[str], list[DeferredColumns | None]]:
    """Level tables, COLLECTION.json, each level's source and :class:`DeferredColumns` (or
    None), from the buffers :func:`read_entries` returned."""
    sources = [f"{path}: {label}" for label in labels]
    parsed = [
        parse_level_deferring(buffer, where, defer=defer)
        for buffer, where in zip(buffers[:-1], sources[:-1], strict=True)
    ]
    collection = buffers[-1]
    if isinstance(collection, StreamedLevel):  # read_entries never streams the last entry
        raise TypeError(f"{sources[-1]}: COLLECTION.json must come as bytes")
    levels = [table for table, _ in parsed]
    deferred = [later for _, later in parsed]
    return levels, parse_collection(collection, sources[-1]), sources[:-1], deferred


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
