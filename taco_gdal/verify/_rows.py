"""Rows of the level tables as the verifier needs them: names, ranges, digests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from taco_gdal.format.names import (
    CHECKSUM,
    CURRENT_ID,
    DATA_DIR,
    FOLDER,
    ID,
    LOCAL_META,
    OFFSET,
    PARENT_ID,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.verify.report import Failure, Scalar

__all__ = ["Collector", "Row", "iter_rows"]

MAX_FAILURES = 10_000
"""A report keeps at most this many failures (a broken file must not exhaust memory)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a level table, with what verify compares."""

    level: int
    index: int
    id: str
    type: str
    parent: int | None
    offset: int | None
    size: int | None
    relative_path: str | None
    source_file: str | None
    checksum: object

    @property
    def label(self) -> str:
        """``level1:4 (tile001/b03)``: how reports name the row."""
        return f"level{self.level}:{self.index} ({self.relative_path or self.id})"

    @property
    def is_folder(self) -> bool:
        return self.type == FOLDER

    @property
    def path(self) -> str:
        """Path under ``DATA/``: the relative path, or the id at level 0."""
        return (self.relative_path or self.id).rstrip("/")

    @property
    def member(self) -> str:
        """The archive member (or file under the dataset) holding the row's bytes."""
        if self.is_folder:
            return f"{DATA_DIR}/{self.path}/{LOCAL_META}"
        return f"{DATA_DIR}/{self.path}"


def _column(table: pa.Table, name: str) -> list[object]:
    if name not in table.column_names:
        return [None] * table.num_rows
    return list(table.column(name).to_pylist())


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def iter_rows(levels: Sequence[pa.Table]) -> Iterator[Row]:
    """Every row of every level, level 0 first."""
    for level, table in enumerate(levels):
        columns = [
            _column(table, name)
            for name in (ID, TYPE, PARENT_ID, OFFSET, SIZE, RELATIVE_PATH, SOURCE_FILE, CHECKSUM)
        ]
        current = _column(table, CURRENT_ID)
        for i, (rid, rtype, parent, off, size, rel, src, digest) in enumerate(
            zip(*columns, strict=True)
        ):
            index = _int(current[i])
            yield Row(
                level,
                i if index is None else index,
                str(rid),
                str(rtype),
                _int(parent),
                _int(off),
                _int(size),
                _str(rel),
                _str(src),
                digest,
            )


class Collector:
    """Failures found so far, bounded by :data:`MAX_FAILURES`."""

    def __init__(self) -> None:
        self.failures: list[Failure] = []
        self.dropped = 0

    def add(
        self,
        code: str,
        message: str,
        *,
        member: str | None = None,
        row: Row | str | None = None,
        expected: Scalar = None,
        found: Scalar = None,
        severity: str = "error",
    ) -> None:
        if len(self.failures) >= MAX_FAILURES:
            self.dropped += 1
            return
        row_id = row.label if isinstance(row, Row) else row
        self.failures.append(Failure(code, message, member, row_id, expected, found, severity))
