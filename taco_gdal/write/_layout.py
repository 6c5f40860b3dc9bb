"""Where every sample of a :class:`MetadataPackage` goes inside a container.

The level tables of a package are grouped by parent (the children of level k
row 0 come first in level k+1, then those of row 1, ...), so the children of a
row are one contiguous slice of the next level.  ``Layout`` computes those
slices once, with NumPy, and answers the questions every writer asks: the path
of a sample under ``DATA/``, the depth-first order of FILE samples, and the
children of a FOLDER.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

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
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._tables import local_columns

__all__ = ["Layout", "SampleRef", "check_relative_path"]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class SampleRef:
    """One row of one level: ``levels[level][row]``."""

    level: int
    row: int


def check_relative_path(path: str, where: str) -> str:
    """``path`` if it is a safe relative path under ``DATA/``, else TacoFormatError.

    Refused: empty, absolute, backslashes, NUL, empty / ``.`` / ``..`` components.

    Example:
        >>> check_relative_path("tile0/s1/b0", "level2 row 0")
        'tile0/s1/b0'
    """
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
    starts = np.zeros(n_parents, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts, counts


class Layout:
    """Row relations and container paths of a package's level tables.

    Example:
        >>> layout = Layout(taco.metadata())  # taco: 4 FILE samples s000 .. s003
        >>> [layout.data_path(ref) for ref in layout.files_depth_first()]
        ['s000', 's001', 's002', 's003']
    """

    def __init__(self, package: MetadataPackage) -> None:
        if not package.levels or package.levels[0].num_rows == 0:
            raise TacoValidationError("a dataset needs at least one sample in level0")
        self.levels = package.levels
        self.ids: list[list[str]] = [t.column(ID).to_pylist() for t in self.levels]
        self.types: list[list[str]] = [t.column(TYPE).to_pylist() for t in self.levels]
        self.rel: list[list[str]] = [self._relative_paths(k) for k in range(len(self.levels))]
        self.sources: list[list[str | None]] = [
            t.column(PATH).to_pylist() if PATH in t.column_names else [None] * t.num_rows
            for t in self.levels
        ]
        self.starts: list[IntArray] = []
        self.counts: list[IntArray] = []
        for k in range(1, len(self.levels)):
            parent = np.asarray(self.levels[k].column(PARENT_ID).to_numpy(), dtype=np.int64)
            starts, counts = _child_slices(parent, self.levels[k - 1].num_rows, k)
            self.starts.append(starts)
            self.counts.append(counts)
        self._check_types()

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def sample_count(self) -> int:
        """Rows of every level: the samples a writer stores (FILEs and FOLDERs)."""
        return sum(len(ids) for ids in self.ids)

    def _relative_paths(self, level: int) -> list[str]:
        table = self.levels[level]
        if level == 0:
            paths = [
                f"{i}/" if t == FOLDER else i
                for i, t in zip(self.ids[0], self.types[0], strict=True)
            ]
        elif RELATIVE_PATH in table.column_names:
            paths = table.column(RELATIVE_PATH).to_pylist()
        else:
            raise TacoValidationError(f"level{level} has no {RELATIVE_PATH} column")
        for row, path in enumerate(paths):
            check_relative_path(path, f"level{level} row {row}")
        return paths

    def _check_types(self) -> None:
        for k, types in enumerate(self.types):
            for row, sample_type in enumerate(types):
                if sample_type not in (FILE, FOLDER):
                    raise TacoValidationError(
                        f"level{k} row {row}: type must be FILE or FOLDER, found {sample_type!r}"
                    )
                is_dir = self.rel[k][row].endswith("/")
                if is_dir != (sample_type == FOLDER):
                    raise TacoValidationError(
                        f"level{k} row {row}: {RELATIVE_PATH} {self.rel[k][row]!r} must end "
                        f"with '/' exactly when the sample is a FOLDER (type {sample_type})"
                    )
                if sample_type == FOLDER and (k == self.depth or self.counts[k][row] == 0):
                    raise TacoValidationError(
                        f"level{k} row {row} ({self.rel[k][row]!r}) is a FOLDER without children"
                    )

    # -- relations -------------------------------------------------------------
    def children(self, ref: SampleRef) -> range:
        """Rows of level ``ref.level + 1`` that are the children of ``ref``."""
        start = int(self.starts[ref.level][ref.row])
        return range(start, start + int(self.counts[ref.level][ref.row]))

    def is_folder(self, ref: SampleRef) -> bool:
        return self.types[ref.level][ref.row] == FOLDER

    def is_padding(self, ref: SampleRef) -> bool:
        """True for a ``__TACOPAD__N`` row without source (no bytes, no digest)."""
        return self.source(ref) is None and self.ids[ref.level][ref.row].startswith(PADDING_PREFIX)

    def file_order(self) -> tuple[IntArray, IntArray]:
        """``(levels, rows)`` of every FILE sample, depth first (the ZIP data member order).

        Computed with NumPy, without walking the tree: a sample's place in a
        depth-first walk is the lexicographic order of its ancestors' rows,
        level 0 first (rows of a level are grouped by parent in parent order, and
        a FILE has no descendants, so no two keys share a prefix).

        Example:
            >>> levels, rows = Layout(taco.metadata()).file_order()
            >>> levels.tolist(), rows.tolist()
            ([0, 0, 0, 0], [0, 1, 2, 3])
        """
        chains: list[list[IntArray]] = [[np.arange(len(self.ids[0]), dtype=np.int64)]]
        for k in range(1, len(self.levels)):
            parents = np.repeat(np.arange(len(self.ids[k - 1]), dtype=np.int64), self.counts[k - 1])
            own = np.arange(len(self.ids[k]), dtype=np.int64)
            chains.append([*(rows[parents] for rows in chains[k - 1]), own])
        keys: list[list[IntArray]] = [[] for _ in self.levels]
        levels: list[IntArray] = []
        rows: list[IntArray] = []
        for k, chain in enumerate(chains):
            files = np.flatnonzero(np.asarray(self.types[k], dtype=object) == FILE)
            levels.append(np.full(files.size, k, dtype=np.int64))
            rows.append(files)
            for j, key in enumerate(keys):
                key.append(chain[j][files] if j <= k else np.full(files.size, -1, np.int64))
        order = np.lexsort([np.concatenate(key) for key in reversed(keys)])
        return np.concatenate(levels)[order], np.concatenate(rows).astype(np.int64)[order]

    def files_depth_first(self) -> Iterator[SampleRef]:
        """Every FILE sample, depth first, in sample order (the ZIP data member order)."""
        levels, rows = self.file_order()
        for level, row in zip(levels.tolist(), rows.tolist(), strict=True):
            yield SampleRef(level, row)

    def folders(self, level: int) -> list[SampleRef]:
        """The FOLDER samples of one level, in row order."""
        return [SampleRef(level, row) for row, t in enumerate(self.types[level]) if t == FOLDER]

    def folders_bottom_up(self) -> Iterator[SampleRef]:
        """Every FOLDER sample, deepest level first, in row order within a level."""
        for level in reversed(range(self.depth)):
            yield from self.folders(level)

    # -- paths -------------------------------------------------------------------
    def data_path(self, ref: SampleRef) -> str:
        """Path under ``DATA/``: ``tile0/s1/b0`` (FILE) or ``tile0/s1/`` (FOLDER)."""
        return self.rel[ref.level][ref.row]

    def member_name(self, ref: SampleRef) -> str:
        """Container member that holds the sample: its file, or a FOLDER's ``__meta__``."""
        path = f"{DATA_DIR}/{self.data_path(ref)}"
        return path + LOCAL_META if self.is_folder(ref) else path

    def file_member(self, level: int, row: int) -> str:
        """Container member of FILE sample ``levels[level][row]``: ``DATA/<its path>``."""
        return f"{DATA_DIR}/{self.rel[level][row]}"

    def source(self, ref: SampleRef) -> str | None:
        """Where a FILE sample's bytes come from; None for a zero-byte (padding) sample."""
        return self.sources[ref.level][ref.row]

    def local_tables(self) -> Iterator[tuple[SampleRef, pa.Table]]:
        """Every FOLDER, deepest level first, with its ``__meta__`` table.

        The table holds the FOLDER's children, restricted to ``id``, ``type`` and
        the user columns (:func:`~taco_gdal.write._tables.local_columns`).
        """
        columns = [local_columns(t.column_names) for t in self.levels]
        for ref in self.folders_bottom_up():
            rows = self.children(ref)
            table = self.levels[ref.level + 1].select(columns[ref.level + 1])
            yield ref, table.slice(rows.start, len(rows))
