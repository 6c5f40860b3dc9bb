"""``export()``: write a (filtered) loaded dataset as a new TACO ZIP or FOLDER (spec 7.1.3).

The current level-0 rows are exported with their complete subtrees, so the
result is a valid Position-Invariant Tree whatever filter chose the roots.
Bytes are copied unchanged from ``internal:gdal_vsi``; COLLECTION keeps the
source's keys, recomputes schemas and extent, and adds ``taco:subset_of`` and
``taco:subset_date``.
"""

from __future__ import annotations

import copy
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.checksum import check_algorithm
from taco_gdal.format.names import (
    CURRENT_ID,
    FIELD_SCHEMA_KEY,
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    PARENT_ID,
    PATH,
    PIT_SCHEMA_KEY,
    RELATIVE_PATH,
    SIZE,
    SUBSET_DATE_KEY,
    SUBSET_OF_KEY,
    TYPE,
)
from taco_gdal.model.collection import field_schema
from taco_gdal.model.extent import extent_of_tables
from taco_gdal.model.package import MetadataPackage
from taco_gdal.model.pit import pit_schema
from taco_gdal.write.create import OutputFormat, resolve_format
from taco_gdal.write.folder_container import write_folder
from taco_gdal.write.zip_container import write_zip

if TYPE_CHECKING:
    from taco_gdal.read import TacoDataset

__all__ = ["export"]

_HIDDEN_PREFIX = "__taco_"
_NEEDED = (ID, TYPE, CURRENT_ID, GDAL_VSI)


def _fetch(dataset: TacoDataset, level: int | None = None) -> pa.Table:
    """Rows of the current view (``level=None``) or of a whole stored level, as Arrow."""
    if level is None:
        return _plain(dataset.to_arrow(0))
    return _plain(dataset.sql(f"SELECT * FROM level{int(level)}").to_arrow(0))


def _plain_type(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with list children named ``item`` again (DuckDB names them ``l``)."""
    if pa.types.is_list(data_type):
        return pa.list_(_plain_type(data_type.value_type))
    if pa.types.is_large_list(data_type):
        return pa.large_list(_plain_type(data_type.value_type))
    if pa.types.is_fixed_size_list(data_type):
        return pa.list_(_plain_type(data_type.value_type), data_type.list_size)
    if pa.types.is_struct(data_type):
        return pa.struct([f.with_type(_plain_type(f.type)) for f in data_type])
    return data_type


def _plain(table: pa.Table) -> pa.Table:
    schema = pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema])
    # pyarrow's type equality ignores list field names, so compare the spelled-out types
    same = [str(f.type) for f in schema] == [str(f.type) for f in table.schema]
    return table if same else table.cast(schema)


def _children(parents: pa.Table, level: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """Rows of ``level`` whose parent is in ``parents``, grouped in parent order."""
    position = {int(v): i for i, v in enumerate(parents.column(CURRENT_ID).to_pylist())}
    parent_ids = level.column(PARENT_ID).to_pylist()
    new_parent = np.fromiter(
        (position.get(int(p), -1) for p in parent_ids), np.int64, len(parent_ids)
    )
    current = np.asarray(level.column(CURRENT_ID).to_numpy(), dtype=np.int64)
    keep = np.flatnonzero(new_parent >= 0)
    order = keep[np.lexsort((current[keep], new_parent[keep]))]
    return level.take(pa.array(order, pa.int64())), new_parent[order]


def _user_columns(table: pa.Table) -> list[str]:
    return [
        c
        for c in table.column_names
        if c not in (ID, TYPE, PATH)
        and not c.startswith(INTERNAL_PREFIX)
        and not c.startswith(_HIDDEN_PREFIX)
    ]


def _package_table(
    table: pa.Table, level: int, parents: np.ndarray, parent_paths: list[str]
) -> tuple[pa.Table, list[str]]:
    ids = table.column(ID).to_pylist()
    kinds = table.column(TYPE).to_pylist()
    vsi = table.column(GDAL_VSI).to_pylist()
    sizes = table.column(SIZE).to_pylist() if SIZE in table.column_names else [None] * len(ids)
    paths = [
        None if kind != FILE or size == 0 else str(path)
        for kind, path, size in zip(kinds, vsi, sizes, strict=True)
    ]
    # imported here: the reader (pandas, DuckDB) is heavy for writers
    from taco_gdal.read.opening.containers._paths import check_sample_source

    for path in paths:
        if path is not None:
            check_sample_source(path, f"export level{level}")
    suffix = ["/" if kind == FOLDER else "" for kind in kinds]
    if level == 0:
        rel = [i + s for i, s in zip(ids, suffix, strict=True)]
    else:
        rel = [
            parent_paths[p] + i + s for p, i, s in zip(parents.tolist(), ids, suffix, strict=True)
        ]
    out = table.select([ID, TYPE, *_user_columns(table)])
    out = out.append_column(CURRENT_ID, pa.array(np.arange(len(ids), dtype=np.int64)))
    out = out.append_column(PARENT_ID, pa.array(parents, pa.int64()))
    if level > 0:
        out = out.append_column(RELATIVE_PATH, pa.array(rel, pa.string()))
    return out.append_column(PATH, pa.array(paths, pa.string())), rel


def _tables(dataset: TacoDataset) -> list[pa.Table]:
    roots = _fetch(dataset)
    missing = [c for c in _NEEDED if c not in roots.column_names]
    if missing:
        raise TacoValidationError(
            f"export needs the columns {list(_NEEDED)} in the dataset's view; {missing} are "
            f"missing (keep them in the SELECT of sql())"
        )
    if roots.num_rows == 0:
        raise TacoValidationError(f"export of {dataset.path}: the current view has no rows")
    ids = roots.column(ID).to_pylist()
    if len(set(ids)) != len(ids):
        raise TacoValidationError(
            f"export of {dataset.path}: level-0 ids repeat in the current view; they become "
            f"file names under DATA/ and must be unique"
        )
    stored = [roots]
    parents = np.arange(roots.num_rows, dtype=np.int64)
    table, rel = _package_table(roots, 0, parents, [])
    tables = [table]
    for level in range(1, dataset.max_depth + 1):
        children, parents = _children(stored[-1], _fetch(dataset, level))
        if children.num_rows == 0:
            break
        stored.append(children)
        table, rel = _package_table(children, level, parents, rel)
        tables.append(table)
    return tables


def _collection(dataset: TacoDataset, tables: list[pa.Table]) -> dict[str, Any]:
    source = dataset.collection
    collection = copy.deepcopy(source)
    descriptions = {
        field[0]: field[2]
        for level in (source.get(FIELD_SCHEMA_KEY) or {}).values()
        if isinstance(level, list)
        for field in level
        if isinstance(field, list) and len(field) >= 3
    }
    collection["extent"] = extent_of_tables(tables).to_dict()
    collection[PIT_SCHEMA_KEY] = pit_schema(tables)
    collection[FIELD_SCHEMA_KEY] = field_schema(tables, descriptions)
    collection[SUBSET_OF_KEY] = source.get("id", "unknown")
    collection[SUBSET_DATE_KEY] = datetime.now(UTC).isoformat()
    return collection


def export(
    dataset: TacoDataset,
    output: str | os.PathLike[str],
    output_format: OutputFormat = "auto",
    overwrite: bool = False,
    quiet: bool = False,
    checksum: str | None = None,
    **parquet_kwargs: Any,
) -> Path:
    """Write the current rows of a loaded dataset, with their subtrees, as a new dataset.

    Args:
        dataset: from :func:`taco_gdal.load`, possibly narrowed with ``sql()``,
            ``filter_bbox()`` or ``filter_datetime()``.
        output: ``*.tacozip`` / ``*.zip`` for a ZIP, anything else for a FOLDER.
        output_format: ``"auto"``, ``"zip"`` or ``"folder"``.
        checksum: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: store every FILE
            sample's digest computed while copying. None keeps the source's
            stored digests (the bytes are unchanged, so they still hold).

    Example:
        >>> ds = taco_gdal.load("tiles.tacozip").filter_bbox(-3.3, 40.5, -3.1, 40.7)
        >>> ds.data.id.tolist()
        ['tile000']
        >>> export(ds, "west.tacozip")
        PosixPath('/.../west.tacozip')
        >>> taco_gdal.load("west.tacozip").level_counts()  # the tile and its 3 bands
        [1, 3]
    """
    fmt = resolve_format(output, output_format)
    tables = _tables(dataset)
    package = MetadataPackage(levels=tables, collection=_collection(dataset, tables))
    writer = write_zip if fmt == "zip" else write_folder
    return writer(
        package,
        output,
        overwrite=overwrite,
        quiet=quiet,
        parquet_kwargs=parquet_kwargs,
        checksum=check_algorithm(checksum),
    )
