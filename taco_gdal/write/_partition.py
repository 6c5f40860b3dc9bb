"""Split a dataset into parts: by data size, by the values of level-0 columns, or both.

A part is a set of level-0 rows with all their descendants, written as a complete
dataset (ids renumbered, its own ``taco:pit_schema`` and extent).
:func:`write_part` writes one part, in this process or in a Dask task; it lives
here because :mod:`.create` and :mod:`.dask` do not import each other.
"""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CURRENT_ID, PARENT_ID, PIT_SCHEMA_KEY
from taco_gdal.model._arrow import from_numpy
from taco_gdal.model.extent import extent_of_tables
from taco_gdal.model.package import MetadataPackage
from taco_gdal.model.pit import pit_schema
from taco_gdal.write._copy import source_size
from taco_gdal.write._layout import Layout
from taco_gdal.write.folder_container import write_folder
from taco_gdal.write.zip_container import write_layout, write_zip

__all__ = [
    "Part",
    "WriteOptions",
    "plan_partitions",
    "plan_parts",
    "remove_output",
    "root_sizes",
    "subset_package",
    "write_part",
]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Part:
    """One output of ``create()``: where it goes and which level-0 rows it holds."""

    path: Path
    rows: IntArray | None
    """Level-0 rows, or None for the whole dataset."""


def root_sizes(layout: Layout, known: Sequence[IntArray] | None = None) -> IntArray:
    """Bytes of sample data under each level-0 row; ``known`` source sizes spare a stat each."""
    if known is not None and len(known) == len(layout.levels):
        sizes = [np.array(k, dtype=np.int64) for k in known]
    else:
        sizes = [
            np.fromiter(
                (
                    0 if folder else source_size(src)
                    for src, folder in zip(
                        layout.source_list(k), layout.folder[k].tolist(), strict=True
                    )
                ),
                dtype=np.int64,
                count=layout.rows(k),
            )
            for k in range(len(layout.levels))
        ]
    for k in range(layout.depth, 0, -1):
        parents = np.repeat(np.arange(len(sizes[k - 1])), layout.counts[k - 1])
        np.add.at(sizes[k - 1], parents, sizes[k])
    return sizes[0]


def _split_by_size(rows: IntArray, sizes: IntArray, max_size: int) -> list[IntArray]:
    """Greedy, order-preserving chunks whose data stays under ``max_size`` when possible."""
    chunks: list[list[int]] = []
    current: list[int] = []
    total = 0
    for row in rows.tolist():
        size = int(sizes[row])
        if current and total + size > max_size:
            chunks.append(current)
            current, total = [], 0
        current.append(row)
        total += size
    if current:
        chunks.append(current)
    return [np.asarray(c, dtype=np.int64) for c in chunks]


def sanitize(text: str) -> str:
    r"""A value usable in a file name (reference rule: ``/\:*?"<>|'`` and spaces -> ``_``)."""
    cleaned = re.sub(r"[/\\:*?\"<>|']", "_", text)
    return re.sub(r"[_\s]+", "_", cleaned).strip("_")


def _groups(table: pa.Table, columns: Sequence[str]) -> dict[str, IntArray]:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise TacoValidationError(
            f"group_by column(s) {missing} not in level0; available: {sorted(table.column_names)}"
        )
    values = [table.column(c).to_pylist() for c in columns]
    keys: dict[str, list[int]] = {}
    raw_of: dict[str, str] = {}
    for row, parts in enumerate(zip(*values, strict=True)):
        raw = "_".join(str(v) for v in parts)
        key = sanitize(raw) or "none"
        if raw_of.setdefault(key, raw) != raw:
            raise TacoValidationError(
                f"group_by values {raw_of[key]!r} and {raw!r} give the same file name part {key!r}"
            )
        keys.setdefault(key, []).append(row)
    return {k: np.asarray(v, dtype=np.int64) for k, v in keys.items()}


def _named(base: Path, chunks: list[IntArray], whole: bool) -> list[Part]:
    if len(chunks) == 1:
        return [Part(base, None if whole else chunks[0])]
    return [
        Part(base.with_name(f"{base.stem}_part{i:04d}{base.suffix}"), chunk)
        for i, chunk in enumerate(chunks, start=1)
    ]


def plan_parts(
    layout: Layout,
    output: Path,
    max_size: int | None,
    group_by: Sequence[str] | None,
    known_sizes: Sequence[IntArray] | None = None,
) -> list[Part]:
    """The parts ``create()`` writes: one, ``_partNNNN`` by ``max_size``, ``_{value}`` per group."""
    everything = np.arange(layout.rows(0), dtype=np.int64)
    sizes = root_sizes(layout, known_sizes) if max_size is not None else None
    groups = {"": everything} if group_by is None else _groups(layout.levels[0], group_by)
    parts: list[Part] = []
    for key, rows in groups.items():
        base = output if not key else output.with_name(f"{output.stem}_{key}{output.suffix}")
        chunks = [rows] if sizes is None else _split_by_size(rows, sizes, max_size or 0)
        parts.extend(_named(base, chunks, whole=group_by is None))
    return parts


def plan_partitions(layout: Layout, output: Path, count: int) -> list[Part]:
    """``count`` parts of consecutive level-0 rows, as equal in row count as possible."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise TacoValidationError(f"partitions must be a positive integer, found {count!r}")
    rows = np.arange(layout.rows(0), dtype=np.int64)
    chunks = [c for c in np.array_split(rows, min(count, len(rows))) if c.size]
    return _named(output, chunks, whole=False)


def _subset_levels(layout: Layout, rows0: IntArray) -> list[pa.Table]:
    tables: list[pa.Table] = []
    rows = rows0
    for k, table in enumerate(layout.levels):
        if k == 0:
            parents = np.arange(len(rows), dtype=np.int64)
        else:
            starts, counts = layout.starts[k - 1][rows], layout.counts[k - 1][rows]
            parents = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
            first = np.repeat(np.cumsum(counts) - counts, counts)
            rows = np.repeat(starts, counts) + (np.arange(int(counts.sum())) - first)
        subset = table.take(from_numpy(np.asarray(rows, dtype=np.int64)))
        renumbered = (
            (CURRENT_ID, np.arange(subset.num_rows, dtype=np.int64)),
            (PARENT_ID, parents),
        )
        for name, values in renumbered:
            subset = subset.set_column(
                subset.schema.get_field_index(name), name, from_numpy(values)
            )
        tables.append(subset)
    return tables


def subset_package(package: MetadataPackage, layout: Layout, rows0: IntArray) -> MetadataPackage:
    """The dataset of level-0 rows ``rows0`` and their descendants (schema, extent recomputed)."""
    tables = _subset_levels(layout, rows0)
    collection = copy.deepcopy(package.collection)
    collection["extent"] = extent_of_tables(tables).to_dict()
    collection[PIT_SCHEMA_KEY] = pit_schema(tables)
    return MetadataPackage(levels=tables, collection=collection)


def remove_output(path: Path) -> None:
    """Delete a written part (file or folder); missing is fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class WriteOptions:
    """How every part of one ``create()`` call is written (picklable, sent to Dask tasks)."""

    fmt: Literal["zip", "folder"]
    overwrite: bool
    quiet: bool
    parquet_kwargs: dict[str, Any]
    checksum: str | None

    def writer_kwargs(self) -> dict[str, Any]:
        return {
            "overwrite": self.overwrite,
            "quiet": self.quiet,
            "parquet_kwargs": self.parquet_kwargs,
            "checksum": self.checksum,
        }


def write_part(
    package: MetadataPackage,
    layout: Layout,
    part: Part,
    options: WriteOptions,
    path: Path | None = None,
    last_use: bool = False,
) -> Path:
    """Write one part at ``path`` (default: its own); ``last_use`` drops tables once written."""
    target = part.path if path is None else path
    kwargs = options.writer_kwargs()
    if part.rows is None and options.fmt == "zip":
        return write_layout(layout, package, target, last_use=last_use, **kwargs)
    subset = package if part.rows is None else subset_package(package, layout, part.rows)
    writer = write_zip if options.fmt == "zip" else write_folder
    return writer(subset, target, **kwargs)
