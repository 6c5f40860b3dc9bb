"""Walk a Tortilla tree level by level and build the level tables column-wise.

Level ``k`` concatenates, in parent order, the tortillas of level ``k-1``'s FOLDER
rows (the row order ``MetadataPackage`` documents).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.format.names import (
    CURRENT_ID,
    FILE,
    FOLDER,
    ID,
    PARENT_ID,
    PATH,
    RELATIVE_PATH,
    TYPE,
)
from taco_gdal.model._arrow import column_from_values, from_numpy, string_array, string_scalar
from taco_gdal.model._columns import ColumnSamples
from taco_gdal.model._fields import values_of
from taco_gdal.model.sample import Sample
from taco_gdal.model.tortilla import Tortilla

__all__ = ["Level", "build_tables", "relative_paths", "walk"]


@dataclass
class Level:
    """The rows of one hierarchy level and the tortillas they come from."""

    index: int
    samples: Sequence[Sample]
    groups: list[Tortilla]
    group_parents: list[int]
    """Row in the previous level of each group's FOLDER sample (level 0: ``[-1]``)."""
    types: dict[str, pa.DataType] = field(default_factory=dict)
    """Resolved metadata columns of the level (set by PIT-2)."""

    def parent_ids(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """``internal:parent_id`` of every row (level 0: the row itself)."""
        if self.index == 0:
            return np.arange(len(self.samples), dtype=np.int64)
        counts = [len(group) for group in self.groups]
        return np.repeat(np.asarray(self.group_parents, dtype=np.int64), counts)

    def ids(self) -> pa.Array:
        if isinstance(self.samples, ColumnSamples):
            return self.samples.ids
        return string_array([s.id for s in self.samples])

    def folder_mask(self) -> np.ndarray[Any, np.dtype[np.bool_]]:
        if isinstance(self.samples, ColumnSamples):
            return np.zeros(len(self.samples), dtype=np.bool_)
        return np.fromiter((s._tortilla is not None for s in self.samples), np.bool_)

    def file_paths(self) -> pa.Array:
        """The ``path`` column: where each FILE is read from (null for FOLDER and padding)."""
        if isinstance(self.samples, ColumnSamples):
            return self.samples.paths
        return string_array([s._path for s in self.samples])

    def file_sizes(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Bytes of each FILE row (0 for FOLDER rows)."""
        if isinstance(self.samples, ColumnSamples):
            return self.samples.sizes
        return np.fromiter(
            (0 if s._tortilla is not None else s._size for s in self.samples),
            dtype=np.int64,
            count=len(self.samples),
        )

    def column(self, name: str, data_type: pa.DataType) -> pa.Array:
        """Values of metadata column ``name`` over the whole level, as ``data_type``."""
        if isinstance(self.samples, ColumnSamples):
            return self.samples.column(name, data_type)
        if not any(group._ext for group in self.groups):
            return column_from_values(values_of(self.samples, name), data_type)
        chunks = [group._chunk(name, data_type) for group in self.groups]
        return pa.concat_arrays(chunks)


def walk(root: Tortilla) -> list[Level]:
    """Levels 0..depth of the tree under ``root``."""
    levels = [Level(0, root.samples, [root], [-1])]
    while not isinstance(levels[-1].samples, ColumnSamples):  # those are all FILEs
        previous = levels[-1]
        groups: list[Tortilla] = []
        parents: list[int] = []
        samples: list[Sample] = []
        for row, sample in enumerate(previous.samples):
            tortilla = sample._tortilla
            if tortilla is not None:
                groups.append(tortilla)
                parents.append(row)
                samples.extend(tortilla._samples)
        if not groups:
            return levels
        levels.append(Level(previous.index + 1, samples, groups, parents))
    return levels


def folder_path(levels: list[Level], level: int, row: int) -> str:
    """Path under ``DATA/`` of row ``row`` of ``level`` (``tile0/s1/`` for a FOLDER)."""
    parts: list[str] = []
    while level >= 0:
        sample = levels[level].samples[row]
        parts.append(sample.id + ("/" if sample.type == FOLDER else ""))
        if level == 0:
            break
        row = int(levels[level].parent_ids()[row])
        level -= 1
    return "".join(reversed(parts))


def relative_paths(
    ids: pa.Array, folder: pa.Array, parent_paths: pa.Array | None, parent_ids: pa.Array
) -> pa.Array:
    """``{parent path}{id}`` plus ``/`` for a FOLDER, computed by Arrow (no string per row)."""
    suffix = pc.if_else(folder, string_scalar("/"), string_scalar(""))
    parts = [ids, suffix] if parent_paths is None else [parent_paths.take(parent_ids), ids, suffix]
    return pc.binary_join_element_wise(*parts, string_scalar(""))


def build_tables(levels: list[Level]) -> list[pa.Table]:
    """The level tables, columns in ``MetadataPackage`` order.

    Example:
        >>> from taco_gdal.model import Sample, Tortilla
        >>> inner = Tortilla([Sample("b0", b"1")])
        >>> tables = build_tables(walk(Tortilla([Sample("t0", inner)])))
        >>> tables[1].column("internal:relative_path").to_pylist()
        ['t0/b0']
    """
    tables: list[pa.Table] = []
    parent_paths: pa.Array | None = None
    for level in levels:
        samples = level.samples
        ids = level.ids()
        folder = from_numpy(level.folder_mask())
        kinds = pc.if_else(folder, string_scalar(FOLDER), string_scalar(FILE))
        fields: list[tuple[str, pa.DataType]] = [(ID, pa.string()), (TYPE, pa.string())]
        arrays: list[pa.Array] = [ids, kinds]
        for name, data_type in level.types.items():
            fields.append((name, data_type))
            arrays.append(level.column(name, data_type))
        parent_ids = from_numpy(level.parent_ids())
        fields += [(CURRENT_ID, pa.int64()), (PARENT_ID, pa.int64())]
        arrays += [from_numpy(np.arange(len(samples), dtype=np.int64)), parent_ids]
        paths = relative_paths(ids, folder, parent_paths, parent_ids)
        if level.index > 0:
            fields.append((RELATIVE_PATH, pa.string()))
            arrays.append(paths)
        fields.append((PATH, pa.string()))
        arrays.append(level.file_paths())
        tables.append(pa.Table.from_arrays(arrays, schema=pa.schema(fields)))
        parent_paths = paths
    return tables
