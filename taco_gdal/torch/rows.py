"""Resolve a dataset, a filtered view or a frame into plain, picklable rows.

:class:`SampleRows` is what a ``SampleDataset`` carries to its workers: one Arrow table
per level with each FOLDER row's children, and no DuckDB or GDAL handle.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.format.names import (
    CURRENT_ID,
    FOLDER,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    PARENT_ID,
    TYPE,
)

if TYPE_CHECKING:  # the reader (DuckDB, geopandas) never loads in a worker
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.frames.dataframe import TacoDataFrame

__all__ = ["LevelRows", "SampleRows", "plain_value", "resolve_rows"]

_REQUIRED = (ID, TYPE, GDAL_VSI)


def plain_value(value: Any) -> Any:
    """An Arrow/pandas value as something ``default_collate`` batches (times as ISO 8601).

    Example:
        >>> plain_value(dt.datetime(2024, 5, 1, 10, 30))
        '2024-05-01T10:30:00'
    """
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    return value


@dataclass(frozen=True)
class LevelRows:
    """The rows of one level; ``children_order[children_start[i]:children_stop[i]]`` are
    row ``i``'s children in the next level.  Python values are built once per process."""

    table: pa.Table
    children_order: np.ndarray
    children_start: np.ndarray
    children_stop: np.ndarray
    _plain: dict[str, list[Any]] = field(default_factory=dict, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_plain"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_plain", {})

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def _values(self) -> dict[str, list[Any]]:
        if not self._plain and self.table.num_columns:
            built = {name: self.table.column(name).to_pylist() for name in self.table.column_names}
            self._plain.update(built)  # one step under the GIL: threads never see half of it
        return self._plain

    def rows(self, positions: Sequence[int]) -> list[dict[str, Any]]:
        """The rows at ``positions`` as dicts of plain values (every column)."""
        values = self._values()
        return [{k: plain_value(column[p]) for k, column in values.items()} for p in positions]

    def children(self, position: int) -> np.ndarray:
        start, stop = self.children_start[position], self.children_stop[position]
        return self.children_order[start:stop]


@dataclass(frozen=True)
class SampleRows:
    """The resolved rows of a dataset: ``levels[0]`` are the samples, deeper the children."""

    levels: tuple[LevelRows, ...]
    where: str
    level: int

    def __len__(self) -> int:
        return len(self.levels[0])

    def column(self, name: str) -> pa.ChunkedArray:
        """A column of the top level (TacoQueryError when missing)."""
        table = self.levels[0].table
        if name not in table.column_names:
            raise TacoQueryError(
                f"{self.where}: expected a column {name!r} at level {self.level}, found "
                f"{[c for c in table.column_names if not c.startswith(INTERNAL_PREFIX)]}"
            )
        return table.column(name)

    def subset(self, positions: Sequence[int] | np.ndarray) -> SampleRows:
        """Only the samples at ``positions`` (in that order), their children kept.

        Example:
            >>> rows = resolve_rows(taco_gdal.load("tiles.tacozip"), level=1)
            >>> rows.subset([3, 0]).levels[0].table.num_rows
            2
        """
        index = np.asarray(positions, dtype=np.int64)
        top = self.levels[0]
        if index.size and (index.min() < -len(top) or index.max() >= len(top)):
            raise TacoQueryError(
                f"{self.where}: positions must be in 0..{len(top) - 1}, found "
                f"{int(index.min())}..{int(index.max())}"
            )
        index = index % max(len(top), 1)
        first = LevelRows(
            top.table.take(pa.array(index)),
            top.children_order,
            top.children_start[index],
            top.children_stop[index],
        )
        return SampleRows((first, *self.levels[1:]), self.where, self.level)


def _check_columns(table: pa.Table, where: str, level: int) -> None:
    missing = [c for c in _REQUIRED if c not in table.column_names]
    if missing:
        raise TacoQueryError(
            f"{where}: level {level} rows need the columns {list(_REQUIRED)} to be read as "
            f"samples; the view lacks {missing} (a sql() query must keep them)"
        )


def _link(table: pa.Table, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays: children of each row of ``table``, from each child's parent position."""
    order = np.argsort(parents, kind="stable")
    rows = np.arange(table.num_rows)
    sorted_parents = parents[order]
    start = np.searchsorted(sorted_parents, rows, side="left")
    stop = np.searchsorted(sorted_parents, rows, side="right")
    return order.astype(np.int64), start.astype(np.int64), stop.astype(np.int64)


def _has_folders(table: pa.Table) -> bool:
    return FOLDER in table.column(TYPE).to_pylist()


def _build(tables: list[pa.Table], parents: list[np.ndarray], where: str, level: int) -> SampleRows:
    levels = []
    for k, table in enumerate(tables):
        if k + 1 < len(tables):
            order, start, stop = _link(table, parents[k + 1])
        else:
            empty = np.zeros(table.num_rows, dtype=np.int64)
            order, start, stop = np.zeros(0, dtype=np.int64), empty, empty
        levels.append(LevelRows(table, order, start, stop))
    return SampleRows(tuple(levels), where, level)


def _parent_positions(parent: pa.Table, child: pa.Table, where: str, level: int) -> np.ndarray:
    for table, name in ((parent, CURRENT_ID), (child, PARENT_ID)):
        if name not in table.column_names:
            raise TacoQueryError(
                f"{where}: FOLDER samples at level {level} need {CURRENT_ID!r} and "
                f"{PARENT_ID!r} to find their children; the view lacks {name!r}"
            )
    current = np.asarray(parent.column(CURRENT_ID).to_numpy(), dtype=np.int64)
    wanted = np.asarray(child.column(PARENT_ID).to_numpy(), dtype=np.int64)
    sorter = np.argsort(current, kind="stable")
    found = np.searchsorted(current[sorter], wanted).clip(0, max(len(current) - 1, 0))
    ok = current[sorter][found] == wanted if len(current) else np.zeros(len(wanted), dtype=bool)
    return np.where(ok, sorter[found], -1).astype(np.int64)


def _from_dataset(source: TacoDataset, level: int) -> SampleRows:
    where = source.path
    tables = [source.to_arrow(level)]
    parents = [np.zeros(0, dtype=np.int64)]
    _check_columns(tables[0], where, level)
    while _has_folders(tables[-1]):
        deeper = level + len(tables)
        if deeper > source.max_depth:
            raise TacoFormatError(
                f"{where}: level {deeper - 1} has FOLDER samples but the dataset has no "
                f"level {deeper}"
            )
        child = source.to_arrow(deeper)
        _check_columns(child, where, deeper)
        parents.append(_parent_positions(tables[-1], child, where, deeper - 1))
        tables.append(child)
    return _build(tables, parents, where, level)


def _frame_table(frame: TacoDataFrame) -> pa.Table:
    """A frame as Arrow; shapely geometry columns become WKB bytes."""
    import pandas as pd

    columns: dict[str, Any] = {}
    for name in frame.columns:
        series = frame[name]
        if str(series.dtype) == "geometry":
            columns[str(name)] = pd.Series(series.to_wkb(), index=series.index, dtype=object)
        else:
            columns[str(name)] = series
    return pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False)


def _from_frame(source: TacoDataFrame, level: int, where: str) -> SampleRows:
    frames: list[TacoDataFrame] = [source]
    tables = [_frame_table(source)]
    parents = [np.zeros(0, dtype=np.int64)]
    _check_columns(tables[0], where, level)
    while _has_folders(tables[-1]):
        children: list[TacoDataFrame] = []
        positions: list[int] = []
        offset = 0
        for frame in frames:
            kinds = frame[TYPE].to_numpy()
            for i in np.flatnonzero(kinds == FOLDER):
                child = frame.read(int(i))  # one __meta__ read per FOLDER, in the parent
                assert not isinstance(child, str)
                children.append(child)
                positions += [offset + int(i)] * len(child)
            offset += len(frame)
        child_tables = [_frame_table(c) for c in children]
        tables.append(pa.concat_tables(child_tables, promote_options="default"))
        _check_columns(tables[-1], where, level + len(tables) - 1)
        parents.append(np.asarray(positions, dtype=np.int64))
        frames = children
    return _build(tables, parents, where, level)


def resolve_rows(source: TacoDataset | TacoDataFrame, level: int = 0) -> SampleRows:
    """Resolve ``source`` into :class:`SampleRows` (runs the query once, here).

    Args:
        source: a :class:`TacoDataset` (filtered or not), or a :class:`TacoDataFrame`
            taken as it is (then ``level`` must be 0; one ``__meta__`` read per FOLDER).
        level: the hierarchy level whose samples are the dataset's items.

    Raises:
        TacoQueryError: a column needed to read samples is missing, or bad ``level``.

    Example:
        >>> rows = resolve_rows(taco_gdal.load("tiles.tacozip"), level=1)
        >>> len(rows)  # 3 tiles of 3 bands
        9
    """
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.frames.dataframe import TacoDataFrame

    if isinstance(source, TacoDataset):
        return _from_dataset(source, level)
    if isinstance(source, TacoDataFrame):
        if level != 0:
            raise TacoQueryError(
                f"a TacoDataFrame is one level already: expected level=0, found level={level}; "
                f"pass the TacoDataset to pick a level"
            )
        return _from_frame(source, level, "a TacoDataFrame")
    raise TacoQueryError(
        f"expected a TacoDataset or a TacoDataFrame, found {type(source).__name__}"
    )
