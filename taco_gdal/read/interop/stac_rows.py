"""The rows of one level of the current view, a batch at a time, for STAC export.

A million-sample export must not hold the level's rows as Python values, nor a
second copy of the level table: rows a filter kept come straight from the loaded
Arrow table (its GDAL paths built a batch at a time), and any other view is
streamed by DuckDB into a Parquet file in a temporary folder and read back in
batches.  FILE children of FOLDER samples are spooled the same way, sorted by
parent, and handed out with the batch of parents they belong to.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, FOLDER, PARENT_ID, TYPE
from taco_gdal.read.frames._direct import filtered_batches
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import descendants_sql, not_padding_mask, quote_ident

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = ["Children", "level_batches"]


def level_batches(state: QueryState, level: int, batch: int, what: str) -> Iterator[pa.Table]:
    """The current rows of ``level`` with every column (the GDAL path included), padding
    left out, at most ``batch`` rows per table.

    Raises:
        TacoQueryError: ``level`` is out of range, or the view dropped ``internal:current_id``.
    """
    state.check_level(level)
    direct = filtered_batches(state, batch) if level == 0 else None
    tables = direct if direct is not None else _spooled(state, level, batch, what)
    for table in tables:
        if CURRENT_ID not in table.column_names:
            raise TacoQueryError(
                f"{state.path}: {what} finds samples through {CURRENT_ID!r}, which the current "
                "view dropped (keep it in sql() queries)"
            )
        yield table.filter(not_padding_mask(table))


def _level_sql(state: QueryState, level: int) -> str:
    def columns_of(relation: str) -> list[str]:
        return [n for n, _ in _duck.columns(state.base, state.steps, relation)]

    return descendants_sql(state, level, columns_of)


def _spooled(state: QueryState, level: int, batch: int, what: str) -> Iterator[pa.Table]:
    """DuckDB's answer for the level's rows, through a Parquet file."""
    with tempfile.TemporaryDirectory(prefix="taco-stac-") as work:
        path = Path(work) / "rows.parquet"
        _spool(state, _level_sql(state, level), batch, what, path)
        yield from _read(path, batch)


def _spool(state: QueryState, sql: str, batch: int, what: str, path: Path) -> None:
    """Stream DuckDB's answer to ``sql`` into the Parquet file ``path``."""

    def write(session: _duck.Session) -> None:
        reader = session.conn.execute(sql).to_arrow_reader(batch)
        with pq.ParquetWriter(path, reader.schema) as writer:
            for part in reader:
                writer.write_batch(part, row_group_size=batch)

    _duck.run(state.base, state.steps, write, what=what)


def _read(path: Path, batch: int) -> Iterator[pa.Table]:
    for part in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=batch):
        yield pa.Table.from_batches([part])


class Children:
    """The FILE children of the current rows of ``level - 1``, sorted by parent, handed out
    for one batch of parents at a time: in step with the parents when they come in
    ascending position (as filters keep them), else by a filtered read of the spool."""

    def __init__(self, state: QueryState, level: int, batch: int, what: str) -> None:
        self._state, self._level, self._batch, self._what = state, level, batch, what
        self._work: tempfile.TemporaryDirectory[str] | None = None
        self._stream: Iterator[pa.Table] = iter(())
        self._held: pa.Table | None = None
        self._last = -1

    def close(self) -> None:
        """Remove the spool (also done when the object is collected)."""
        if self._work is not None:
            self._work.cleanup()

    def _path(self) -> Path:
        if self._work is None:  # spooled on the first FOLDER
            self._work = tempfile.TemporaryDirectory(prefix="taco-stac-")
            parent, current = quote_ident(PARENT_ID), quote_ident(CURRENT_ID)
            rows = _level_sql(self._state, self._level)
            sql = f"SELECT * FROM ({rows}) ORDER BY {parent}, {current}"
            path = Path(self._work.name) / "children.parquet"
            _spool(self._state, sql, self._batch, self._what, path)
            self._stream = _read(path, self._batch)
        return Path(self._work.name) / "children.parquet"

    def of(self, parents: np.ndarray) -> pa.Table:
        """The children of the parents at positions ``parents``, FOLDER children left out."""
        path = self._path()
        if parents.size == 0:
            return _files(pq.read_schema(path).empty_table())
        if parents[0] <= self._last or not bool(np.all(parents[1:] > parents[:-1])):
            table = pq.read_table(path, filters=[(PARENT_ID, "in", parents.tolist())])
            return _files(table)
        top = int(parents[-1])
        parts = [] if self._held is None else [self._held]
        while not parts or _max_parent(parts[-1]) <= top:
            part = next(self._stream, None)
            if part is None:
                break
            parts.append(part)
        held = pa.concat_tables(parts) if parts else pq.read_schema(path).empty_table()
        self._last = top
        keep = pc.less_equal(held[PARENT_ID], top)
        self._held = held.filter(pc.invert(keep))
        picked = held.filter(keep)
        return _files(picked.filter(_among(picked, parents)))


def _among(table: pa.Table, parents: np.ndarray) -> pa.ChunkedArray:
    kind = table.schema.field(PARENT_ID).type
    return pc.is_in(table[PARENT_ID], pa.array(parents).cast(kind))


def _max_parent(table: pa.Table) -> int:
    value = pc.max(table[PARENT_ID]).as_py() if table.num_rows else None
    return -1 if value is None else int(value)


def _files(table: pa.Table) -> pa.Table:
    if TYPE not in table.column_names:
        return table
    return table.filter(pc.not_equal(table[TYPE], FOLDER))
