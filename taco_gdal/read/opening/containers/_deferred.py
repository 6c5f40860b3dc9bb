"""Binary columns of a large level, left in the file until something asks for them.

WKB footprints and centroids can be over half of a level's decoded bytes, yet
``load``, ``len``, time filters, navigation and ``.data`` (whose binary columns
are lazy arrays) never look inside them.  So a streamed level
(:mod:`taco_gdal.read.opening.containers._parse`) is decoded without them,
:class:`DeferredColumns` records where they are, and :class:`LoadedLevels` decodes
them once, on first need.  A file changed since the load (size or modification
time) raises :class:`~taco_gdal.errors.TacoChangedError`.

Example:
    >>> import io, pyarrow as pa, pyarrow.parquet as pq
    >>> sink = io.BytesIO()
    >>> pq.write_table(pa.table({"id": ["a"], "wkb": [b"\\x01"]}), sink)
    >>> from pathlib import Path
    >>> _ = Path("level.parquet").write_bytes(sink.getvalue())
    >>> deferred = DeferredColumns.of("level.parquet", 0, len(sink.getvalue()),
    ...     pa.schema([("id", pa.string()), ("wkb", pa.binary())]), ["wkb"], 1, "level.parquet")
    >>> levels = LoadedLevels((pa.table({"id": ["a"]}),), (deferred,))
    >>> levels.light(0).column_names, levels.pending(0)
    (['id'], ('wkb',))
    >>> levels.table(0).column_names, levels.pending(0)
    (['id', 'wkb'], ())
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.errors import TacoChangedError, TacoFormatError, TacoIOError
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read._types import is_binary
from taco_gdal.read.opening.containers._chunks import read_columns

__all__ = [
    "DeferredColumns",
    "LoadedLevels",
    "RangeFile",
    "deferrable",
    "file_stamp",
    "insert_columns",
]


def deferrable(field: pa.Field) -> bool:
    """Whether a column may stay in the file: binary values (WKB, blobs).

    Example:
        >>> deferrable(pa.field("wkb", pa.binary())), deferrable(pa.field("id", pa.string()))
        (True, False)
    """
    return is_binary(field.type)


def file_stamp(path: str) -> tuple[int, int]:
    """``(size, modification time in ns)`` of a local file."""
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise TacoIOError(
            f"{path}: expected the dataset file still in place to read its deferred columns, "
            f"cannot stat it: {exc}"
        ) from exc
    return stat.st_size, stat.st_mtime_ns


class RangeFile(io.RawIOBase):
    """A read-only Python file over ``[offset, offset + length)`` of an open :class:`VSIFile`.

    Example:
        >>> from pathlib import Path
        >>> _ = Path("ten.bin").write_bytes(bytes(range(10)))
        >>> with VSIFile("ten.bin") as f:
        ...     RangeFile(f, 2, 5).read()
        b'\\x02\\x03\\x04\\x05\\x06'
    """

    def __init__(self, f: VSIFile, offset: int, length: int) -> None:
        super().__init__()
        self._f, self._offset, self._length, self._pos = f, offset, length, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._length}[whence]
        self._pos = min(max(base + pos, 0), self._length)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        left = self._length - self._pos
        size = left if size is None or size < 0 else min(size, left)
        data = self._f.read_at(self._offset + self._pos, size)
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)


@dataclass(frozen=True)
class DeferredColumns:
    """Where a level's deferred columns are (a byte range of ``path``) and what they must be
    (``schema``: the whole stored one; ``stamp``: :func:`file_stamp` at load)."""

    path: str
    offset: int
    length: int
    stamp: tuple[int, int]
    schema: pa.Schema
    names: tuple[str, ...]
    rows: int
    where: str
    group_rows: tuple[int, ...] = ()

    @classmethod
    def of(
        cls,
        path: str,
        offset: int,
        length: int,
        schema: pa.Schema,
        names: Sequence[str],
        rows: int,
        where: str,
        group_rows: Sequence[int] = (),
    ) -> DeferredColumns:
        """Deferred ``names`` of the level at ``path[offset:offset + length]``, stamped now."""
        stamp, groups = file_stamp(path), tuple(group_rows)
        return cls(path, offset, length, stamp, schema, tuple(names), rows, where, groups)

    def fields(self) -> list[pa.Field]:
        return [self.schema.field(name) for name in self.names]

    def read(self, names: Sequence[str] | None = None) -> pa.Table:
        """The deferred columns (or ``names`` of them), decoded now, one at a time; a changed
        file is a TacoChangedError, columns that no longer decode a TacoFormatError."""
        self._check_stamp()
        wanted = list(self.names if names is None else names)
        with VSIFile(self.path) as f:  # TacoIOError if it cannot be opened
            table = self._decode(f, wanted)
        expected = pa.schema([self.schema.field(name) for name in wanted])
        if table.num_rows != self.rows or not table.schema.equals(expected):
            raise TacoFormatError(
                f"{self.where}: columns {wanted} should decode to {self.rows} rows of "
                f"{expected}, found {table.num_rows} rows of {table.schema}"
            )
        return table

    def read_rows(self, name: str, positions: np.ndarray) -> pa.Array | None:
        """Column ``name`` at row ``positions``, decoding only the row groups holding them
        (``None`` when they lie in more than a quarter of the row groups)."""
        sizes = np.asarray(self.group_rows, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        if not len(sizes) or starts[-1] != self.rows:
            return None
        group_of = np.searchsorted(starts, positions, side="right") - 1
        groups = np.unique(group_of)
        if len(groups) * 4 > len(sizes):
            return None
        self._check_stamp()
        with VSIFile(self.path) as f:
            source = pa.PythonFile(RangeFile(f, self.offset, self.length), mode="r")
            try:
                part = pq.ParquetFile(source).read_row_groups(
                    groups.tolist(), columns=[name], use_threads=False
                )
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise TacoFormatError(
                    f"{self.where}: expected column {name!r} in row groups {groups.tolist()}, "
                    f"cannot decode it: {exc}"
                ) from exc
        expected = int(sizes[groups].sum())
        column = part.column(0)
        if part.num_rows != expected or column.type != self.schema.field(name).type:
            raise TacoFormatError(
                f"{self.where}: row groups {groups.tolist()} of column {name!r} should hold "
                f"{expected} rows of {self.schema.field(name).type}, found {part.num_rows} of "
                f"{column.type}"
            )
        read_start = np.concatenate([[0], np.cumsum(sizes[groups])])[:-1]
        local = positions - starts[group_of] + read_start[np.searchsorted(groups, group_of)]
        return column.take(pa.array(local, pa.int64())).combine_chunks()

    def _check_stamp(self) -> None:
        found = file_stamp(self.path)
        if found != self.stamp:
            raise TacoChangedError(
                f"{self.where}: the file changed since it was loaded (expected size "
                f"{self.stamp[0]} and mtime_ns {self.stamp[1]}, found {found[0]} and "
                f"{found[1]}); load it again to read columns {list(self.names)}"
            )

    def _decode(self, f: VSIFile, names: list[str]) -> pa.Table:
        """Each column from its own column chunks, read into memory."""
        source = pa.PythonFile(RangeFile(f, self.offset, self.length), mode="r")
        columns: list[pa.ChunkedArray] = []
        pool = pa.default_memory_pool()
        try:
            metadata = pq.ParquetFile(source).metadata  # the footer only
            for name in names:
                data = read_columns(f, self.offset, self.length, metadata, [name], self.where)
                part = pq.ParquetFile(pa.BufferReader(data), metadata=metadata).read(
                    columns=[name], use_threads=False
                )
                del data
                column = part.column(0)
                if column.num_chunks > 1:  # one chunk per column, as at load
                    column = pa.chunked_array([column.combine_chunks()], column.type)
                column.validate(full=True)
                columns.append(column)
                del part
                pool.release_unused()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise TacoFormatError(
                f"{self.where}: expected columns {names} in the parquet file, cannot "
                f"decode them: {exc}"
            ) from exc
        return pa.Table.from_arrays(columns, names=names)


def insert_columns(table: pa.Table, deferred: DeferredColumns, columns: pa.Table) -> pa.Table:
    """``table`` (the level without its deferred columns) with ``columns`` back in stored order."""
    stored = deferred.schema.names
    for name in deferred.names:
        after = stored[stored.index(name) + 1 :]
        following = next((n for n in after if n in table.column_names), None)
        position = table.num_columns if following is None else table.column_names.index(following)
        table = table.add_column(position, deferred.schema.field(name), columns.column(name))
    return table


class LoadedLevels:
    """The level tables of one load, each with its deferred columns decoded on first need
    (thread-safe; pickles as what is decoded so far and where the rest is)."""

    def __init__(
        self, decoded: Sequence[pa.Table], deferred: Sequence[DeferredColumns | None] = ()
    ) -> None:
        self._decoded = tuple(decoded)
        self._deferred = tuple(deferred) or (None,) * len(self._decoded)
        if len(self._deferred) != len(self._decoded):
            raise ValueError(
                f"LoadedLevels: expected one deferral per level ({len(self._decoded)}), "
                f"found {len(self._deferred)}"
            )
        self._complete: dict[int, pa.Table] = {}
        self._columns: dict[tuple[int, str], pa.ChunkedArray] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._decoded)

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {
                "decoded": self._decoded,
                "deferred": self._deferred,
                "complete": dict(self._complete),
                "columns": dict(self._columns),
            }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._decoded, self._deferred = state["decoded"], state["deferred"]
        self._complete, self._columns = state["complete"], state["columns"]
        self._lock = threading.Lock()

    def pending(self, level: int) -> tuple[str, ...]:
        """Deferred columns of ``level`` (``()`` once the level is whole, or when none were)."""
        deferred = self._deferred[level]
        if deferred is None or level in self._complete:
            return ()
        return deferred.names

    def light(self, level: int) -> pa.Table:
        """``level`` without its deferred columns until :meth:`table` made it whole."""
        return self._complete.get(level, self._decoded[level])

    def table(self, level: int) -> pa.Table:
        """``level`` whole (its deferred columns are decoded now if they were not)."""
        complete = self._complete.get(level)
        if complete is not None:
            return complete
        deferred = self._deferred[level]
        if deferred is None:
            return self._decoded[level]
        with self._lock:
            if level not in self._complete:
                missing = [n for n in deferred.names if (level, n) not in self._columns]
                if missing:
                    read = deferred.read(missing)
                    for name in missing:
                        self._columns[(level, name)] = read.column(name)
                columns = pa.table({n: self._columns.pop((level, n)) for n in deferred.names})
                self._complete[level] = insert_columns(self._decoded[level], deferred, columns)
            return self._complete[level]

    def schema(self, level: int) -> pa.Schema:
        """``level``'s whole schema, without decoding anything."""
        deferred = self._deferred[level]
        if deferred is None or level in self._complete:
            return self.light(level).schema
        empty = pa.schema(deferred.fields()).empty_table()
        return insert_columns(self._decoded[level].slice(0, 0), deferred, empty).schema

    def take(self, level: int, name: str, positions: np.ndarray) -> pa.Array | pa.ChunkedArray:
        """Column ``name`` of ``level`` at ``positions``; a few rows of a column still in the
        file are read from their row groups only (not kept)."""
        deferred = self._deferred[level]
        held = (level, name) in self._columns
        if deferred is not None and name in self.pending(level) and not held:
            values = deferred.read_rows(name, np.asarray(positions, dtype=np.int64))
            if values is not None:
                return values
        return self.column(level, name).take(pa.array(positions, pa.int64()))

    def column(self, level: int, name: str) -> pa.ChunkedArray:
        """One column of ``level``; a deferred one is decoded alone (once)."""
        if name not in self.pending(level):
            return self.light(level).column(name)
        known = self._columns.get((level, name))
        if known is not None:
            return known
        deferred = self._deferred[level]
        assert deferred is not None
        with self._lock:
            if level in self._complete:
                return self._complete[level].column(name)
            if (level, name) not in self._columns:
                self._columns[(level, name)] = deferred.read([name]).column(0)
            return self._columns[(level, name)]

    @property
    def nbytes(self) -> int:
        """Bytes of the tables held in memory (deferred columns count once decoded)."""
        held = sum(int(self.light(level).nbytes) for level in range(len(self)))
        return held + sum(int(column.nbytes) for column in list(self._columns.values()))
