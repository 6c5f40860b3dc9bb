"""Where every sample of a :class:`MetadataPackage` goes inside a container.

Level tables are grouped by parent, so a row's children are one contiguous slice
of the next level. ``Layout`` computes those slices once with NumPy and answers
what every writer asks: a sample's path under ``DATA/``, the depth-first order of
FILE samples, a FOLDER's children. Per-row data stays columnar (Arrow strings,
NumPy booleans) and writers take Python strings a batch at a time, so memory
stays small for millions of samples.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format.names import (
    DATA_DIR,
    FILE,
    FOLDER,
    ID,
    LOCAL_META,
    PADDING_PREFIX,
    PARENT_ID,
    PATH,
    RELATIVE_PATH,
    TYPE,
)
from taco_gdal.model._arrow import flags, from_numpy, int64_values, string_array, string_scalar
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._tables import local_columns

__all__ = ["FileBatch", "Layout", "SampleRef", "check_relative_path"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

BATCH = 4096
"""Rows whose names and sources are turned into Python strings at once."""


@dataclass(frozen=True, slots=True)
class SampleRef:
    """One row of one level: ``levels[level][row]``."""

    level: int
    row: int


@dataclass(frozen=True, slots=True)
class FileBatch:
    """Consecutive FILE samples of the depth-first order, as Python values."""

    levels: list[int]
    rows: list[int]
    paths: list[str]
    """Paths under ``DATA/`` (``tile0/s1/b0``)."""
    sources: list[str | None]
    """Where the bytes come from; None for a zero-byte sample."""
    padding: list[bool]
    """True for a ``__TACOPAD__N`` row without source (no bytes, no digest)."""


def check_relative_path(path: str, where: str) -> str:
    """``path`` if it is a safe relative path under ``DATA/``, else TacoFormatError."""
    inner = "/" + path.rstrip("/") + "/"
    bad = (
        not path
        or path[0] == "/"
        or "\\" in path
        or "\x00" in path
        or "//" in inner
        or "/./" in inner
        or "/../" in inner
    )
    if bad:
        raise TacoFormatError(
            f"{where}: expected a relative path without '..', '.', empty parts, backslashes "
            f"or a leading '/', found {path!r}"
        )
    return path


def _check_relative_paths(paths: pa.Array, level: int) -> None:
    """:func:`check_relative_path` over a whole column: Arrow finds suspects, Python judges."""
    trimmed = pc.utf8_rtrim(paths, characters="/")
    suspect = pc.or_(
        pc.or_(pc.equal(trimmed, string_scalar("")), pc.starts_with(paths, "/")),
        pc.or_(
            pc.or_(pc.match_substring(paths, "\\"), pc.match_substring(paths, "\x00")),
            pc.match_substring_regex(trimmed, r"//|(^|/)\.\.?(/|$)"),
        ),
    )
    for row in np.flatnonzero(flags(suspect)).tolist():
        check_relative_path(paths[row].as_py(), f"level{level} row {row}")


def _strings(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    # one chunk: the table's own buffers (combine_chunks() would copy them)
    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return array.cast(pa.string()) if array.type != pa.string() else array


def _exclusive_cumsum(values: IntArray) -> IntArray:
    """``[0, v0, v0 + v1, ...]``: one element longer than ``values``."""
    out = np.zeros(values.size + 1, dtype=np.int64)
    np.cumsum(values, out=out[1:])
    return out


def _child_slices(parent_ids: IntArray, n_parents: int, level: int) -> tuple[IntArray, IntArray]:
    if parent_ids.size and (np.any(np.diff(parent_ids) < 0) or parent_ids.min() < 0):
        raise TacoValidationError(
            f"level{level}: rows must be grouped by parent in parent order "
            f"({PARENT_ID} non-decreasing and >= 0)"
        )
    if parent_ids.size and parent_ids.max() >= n_parents:
        raise TacoValidationError(
            f"level{level}: {PARENT_ID} {int(parent_ids.max())} points past the "
            f"{n_parents} rows of level{level - 1}"
        )
    counts = np.bincount(parent_ids, minlength=n_parents).astype(np.int64)
    return _exclusive_cumsum(counts)[:-1], counts


class Layout:
    """Row relations and container paths of a package's level tables."""

    def __init__(self, package: MetadataPackage) -> None:
        if not package.levels or package.levels[0].num_rows == 0:
            raise TacoValidationError("a dataset needs at least one sample in level0")
        self.levels = package.levels
        self.counts_per_level: list[int] = [t.num_rows for t in self.levels]
        types = [_strings(t, TYPE) for t in self.levels]
        folder = string_scalar(FOLDER)
        self.folder: list[BoolArray] = [flags(pc.equal(t, folder)) for t in types]
        """Per level, True where the row is a FOLDER."""
        self.rel: list[pa.Array] = [self._relative_paths(k) for k in range(len(self.levels))]
        """Per level, each row's path under ``DATA/`` (FOLDERs end with ``/``)."""
        self.sources: list[pa.Array | None] = [
            _strings(t, PATH) if PATH in t.column_names else None for t in self.levels
        ]
        """Per level, the ``path`` column (None when the tables have none)."""
        self.starts: list[IntArray] = []
        self.counts: list[IntArray] = []
        for k in range(1, len(self.levels)):
            parent = int64_values(self.levels[k].column(PARENT_ID))
            starts, counts = _child_slices(parent, self.levels[k - 1].num_rows, k)
            self.starts.append(starts)
            self.counts.append(counts)
        self._check_types(types)

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def sample_count(self) -> int:
        """Rows of every level: the samples a writer stores (FILEs and FOLDERs)."""
        return sum(self.counts_per_level)

    def rows(self, level: int) -> int:
        return self.counts_per_level[level]

    def _relative_paths(self, level: int) -> pa.Array:
        table = self.levels[level]
        if level == 0:
            ids = _strings(table, ID)
            paths = (
                pc.if_else(
                    from_numpy(self.folder[0]),
                    pc.binary_join_element_wise(ids, string_scalar("/"), string_scalar("")),
                    ids,
                )
                if self.folder[0].any()
                else ids  # FILE rows: the path is the id, no copy
            )
        elif RELATIVE_PATH in table.column_names:
            paths = _strings(table, RELATIVE_PATH)
        else:
            raise TacoValidationError(f"level{level} has no {RELATIVE_PATH} column")
        if paths.null_count:
            row = int(np.flatnonzero(flags(pc.is_null(paths)))[0])
            raise TacoFormatError(f"level{level} row {row}: expected a relative path, found null")
        _check_relative_paths(paths, level)
        return paths

    def _check_types(self, types: list[pa.Array]) -> None:
        for k, kinds in enumerate(types):
            known = flags(pc.is_in(kinds, value_set=string_array([FILE, FOLDER])))
            is_dir = flags(pc.ends_with(self.rel[k], "/"))
            bad = ~known | (is_dir != self.folder[k])
            if k == self.depth:
                bad |= self.folder[k]
            else:
                bad |= self.folder[k] & (self.counts[k] == 0)
            if not bad.any():
                continue
            row = int(np.flatnonzero(bad)[0])
            kind, path = kinds[row].as_py(), self.rel[k][row].as_py()
            if not known[row]:
                raise TacoValidationError(
                    f"level{k} row {row}: type must be FILE or FOLDER, found {kind!r}"
                )
            if is_dir[row] != self.folder[k][row]:
                raise TacoValidationError(
                    f"level{k} row {row}: {RELATIVE_PATH} {path!r} must end "
                    f"with '/' exactly when the sample is a FOLDER (type {kind})"
                )
            raise TacoValidationError(f"level{k} row {row} ({path!r}) is a FOLDER without children")

    def check_unique_members(self) -> None:
        """Raise TacoFormatError if two samples would get the same container member.

        Names are reduced to 64-bit hashes a batch at a time and only repeated hashes
        are compared, so no set or sorted copy of every name is kept.
        """
        hashes = np.empty(self.sample_count, dtype=np.int64)
        first = np.cumsum([0, *self.counts_per_level])
        for k in range(len(self.levels)):
            for start in range(0, self.rows(k), BATCH):
                names = self._member_batch(k, start)
                at = int(first[k]) + start
                hashes[at : at + len(names)] = np.fromiter(map(hash, names), dtype=np.int64)
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        for i in np.flatnonzero(ordered[1:] == ordered[:-1]).tolist():
            a, b = (self._member_at(int(order[j]), first) for j in (i, i + 1))
            if a == b:
                raise TacoFormatError(f"duplicate ZIP member name {DATA_DIR + '/' + a!r}")

    def _member_batch(self, level: int, start: int) -> list[str]:
        """Member names under ``DATA/`` of :data:`BATCH` rows of ``level`` from ``start``."""
        paths = self.rel[level].slice(start, BATCH).to_pylist()
        folder = self.folder[level][start : start + BATCH].tolist()
        return [p + LOCAL_META if f else p for p, f in zip(paths, folder, strict=True)]

    def _member_at(self, index: int, first: IntArray) -> str:
        """The member name of row ``index`` counted over every level (``first``: level starts)."""
        level = int(np.searchsorted(first, index, side="right")) - 1
        row = index - int(first[level])
        path = str(self.rel[level][row].as_py())
        return path + LOCAL_META if self.folder[level][row] else path

    def drop_sources(self) -> None:
        """Forget the ``path`` columns once every FILE is copied (in place in :attr:`levels`)."""
        self.sources = [None] * len(self.levels)
        for level, table in enumerate(self.levels):
            if PATH in table.column_names:
                self.levels[level] = table.drop_columns([PATH])

    def drop_level(self, level: int) -> None:
        """Forget ``level``'s rows once written (its table is emptied in place, schema kept)."""
        table = self.levels[level]
        self.levels[level] = pa.Table.from_batches([], schema=table.schema)  # no pandas import
        self.rel[level] = string_array([])
        self.sources[level] = None
        self.folder[level] = np.zeros(0, dtype=np.bool_)
        if level < len(self.starts):
            self.starts[level] = self.counts[level] = np.zeros(0, dtype=np.int64)

    def children(self, ref: SampleRef) -> range:
        """Rows of level ``ref.level + 1`` that are the children of ``ref``."""
        start = int(self.starts[ref.level][ref.row])
        return range(start, start + int(self.counts[ref.level][ref.row]))

    def padding_rows(self, level: int) -> BoolArray:
        """True for the ``__TACOPAD__N`` rows without source of ``level``."""
        sources = self.sources[level]
        if sources is None:
            no_source = np.ones(self.rows(level), dtype=np.bool_)
        else:
            no_source = flags(pc.is_null(sources))
        if not no_source.any():
            return no_source
        ids = _strings(self.levels[level], ID)
        return no_source & flags(pc.starts_with(ids, PADDING_PREFIX))

    def file_order(self) -> tuple[IntArray, IntArray]:
        """``(levels, rows)`` of every FILE sample, depth first (the ZIP data member order).

        Computed with NumPy from block sizes of FILE descendants, without walking the tree.
        """
        weights: list[IntArray] = [np.ones(self.rows(self.depth), dtype=np.int64)]
        for k in range(self.depth - 1, -1, -1):
            below = _exclusive_cumsum(weights[0])
            ends = self.starts[k] + self.counts[k]
            sums = below[ends] - below[self.starts[k]]
            weights.insert(0, np.where(self.folder[k], sums, 1))
        total = int(weights[0].sum())
        levels = np.empty(total, dtype=np.int64)
        rows = np.empty(total, dtype=np.int64)
        position = _exclusive_cumsum(weights[0])[:-1]
        for k in range(len(self.levels)):
            if k:
                before = _exclusive_cumsum(weights[k])
                first = position - before[self.starts[k - 1]]
                position = np.repeat(first, self.counts[k - 1]) + before[:-1]
            files = np.flatnonzero(~self.folder[k])
            levels[position[files]] = k
            rows[position[files]] = files
        return levels, rows

    def file_batches(self, size: int = BATCH) -> Iterator[FileBatch]:
        """The FILE samples in depth-first order, ``size`` at a time, as Python values."""
        levels, rows = self.file_order()
        padding = [self.padding_rows(k) for k in range(len(self.levels))]
        for start in range(0, levels.size, size):
            batch_levels, batch_rows = levels[start : start + size], rows[start : start + size]
            n = batch_levels.size
            paths: list[str] = [""] * n
            sources: list[str | None] = [None] * n
            pads: list[bool] = [False] * n
            # not np.unique: its first call imports numpy.ma
            for k in np.flatnonzero(np.bincount(batch_levels)).tolist():
                where = np.flatnonzero(batch_levels == k)
                chosen = batch_rows[where]
                taken = from_numpy(chosen)
                column = self.sources[k]
                level_sources = (
                    [None] * where.size if column is None else column.take(taken).to_pylist()
                )
                level_pads = padding[k][chosen].tolist()
                for i, path, source, pad in zip(
                    where.tolist(),
                    self.rel[k].take(taken).to_pylist(),
                    level_sources,
                    level_pads,
                    strict=True,
                ):
                    paths[i], sources[i], pads[i] = path, source, pad
            yield FileBatch(batch_levels.tolist(), batch_rows.tolist(), paths, sources, pads)

    def folder_rows(self, level: int) -> IntArray:
        return np.flatnonzero(self.folder[level]).astype(np.int64)

    def folders_bottom_up(self) -> Iterator[SampleRef]:
        """Every FOLDER sample, deepest level first, in row order within a level."""
        for level in reversed(range(self.depth)):
            for row in self.folder_rows(level).tolist():
                yield SampleRef(level, row)

    def data_path(self, ref: SampleRef) -> str:
        """Path under ``DATA/``: ``tile0/s1/b0`` (FILE) or ``tile0/s1/`` (FOLDER)."""
        return str(self.rel[ref.level][ref.row].as_py())

    def source_list(self, level: int) -> list[str | None]:
        """The sources of every row of ``level`` as Python strings (None: no bytes)."""
        column = self.sources[level]
        return [None] * self.rows(level) if column is None else column.to_pylist()

    def local_tables(self) -> Iterator[tuple[SampleRef, pa.Table]]:
        """Every FOLDER, deepest level first, with its ``__meta__`` table of children."""
        columns = [local_columns(t.column_names) for t in self.levels]
        for ref in self.folders_bottom_up():
            rows = self.children(ref)
            table = self.levels[ref.level + 1].select(columns[ref.level + 1])
            yield ref, table.slice(rows.start, len(rows))
