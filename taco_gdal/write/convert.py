"""Container conversions: FOLDER -> ZIP and ZIP -> FOLDER (spec 7.1.4).

Both attach to every FILE row where its bytes are and hand the metadata to the
ZIP or FOLDER writer, which regenerates every ``__meta__`` and re-measures
every offset. Sample bytes are copied, never re-encoded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import (
    DATA_DIR,
    FILE,
    ID,
    OFFSET,
    PATH,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.format.vsi import build_subfile, join, to_vsi
from taco_gdal.format.zip import read_central_directory
from taco_gdal.io.vsi import VSIFile
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._layout import check_relative_path
from taco_gdal.write._sources import DatasetMetadata, read_folder_metadata, read_zip_metadata
from taco_gdal.write.folder_container import write_folder
from taco_gdal.write.zip_container import write_zip

__all__ = ["check_member_names", "folder2zip", "package_from_stored", "zip2folder"]

RowSource = Callable[[int, dict[str, Any]], str | None]
"""``(level, row) -> source`` of a FILE row's bytes."""

_DROPPED = (OFFSET, SIZE, SOURCE_FILE)


def package_from_stored(meta: DatasetMetadata, source: RowSource) -> MetadataPackage:
    """A writer's package from stored level tables: offsets dropped, ``path`` attached.

    Example:
        >>> package = package_from_stored(read_folder_metadata("tiles"), lambda k, r: None)
        >>> [table.num_rows for table in package.levels]
        [3, 9]
    """
    levels = []
    for level, table in enumerate(meta.levels):
        wanted = (ID, TYPE, RELATIVE_PATH, OFFSET, SIZE)
        rows = table.select([c for c in table.column_names if c in wanted]).to_pylist()
        paths = [source(level, row) if row[TYPE] == FILE else None for row in rows]
        dropped = [c for c in (*_DROPPED, PATH) if c in table.column_names]
        kept = table.drop_columns(dropped)
        levels.append(kept.append_column(PATH, pa.array(paths, pa.string())))
    return MetadataPackage(levels=levels, collection=meta.collection)


def _relative(level: int, row: dict[str, Any]) -> str:
    rel = str(row[ID]) if level == 0 else str(row[RELATIVE_PATH])
    return check_relative_path(rel, f"level{level} row {row[ID]!r}")


def folder2zip(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    overwrite: bool = False,
    quiet: bool = False,
    **parquet_kwargs: Any,
) -> Path:
    """Convert a TACO FOLDER into a TACO ZIP.

    Example:
        >>> folder2zip("tiles", "from_folder.tacozip")
        PosixPath('/.../from_folder.tacozip')
    """
    # imported here: the reader (pandas, DuckDB) is heavy for writers
    from taco_gdal.read.opening.containers._paths import check_folder_paths

    meta = read_folder_metadata(input)
    data = join(to_vsi(input), DATA_DIR)
    check_folder_paths(meta.levels, [f"{data}: level{i}" for i in range(len(meta.levels))], data)

    def source(level: int, row: dict[str, Any]) -> str:
        return join(data, _relative(level, row))

    package = package_from_stored(meta, source)
    return write_zip(
        package, output, overwrite=overwrite, quiet=quiet, parquet_kwargs=parquet_kwargs
    )


def check_member_names(path: str | os.PathLike[str]) -> None:
    """Refuse (TacoFormatError) a ZIP with an absolute, ``..``, backslash or NUL member name."""
    vsi = to_vsi(path)
    with VSIFile(vsi) as f:
        directory = read_central_directory(f.read_at, f.size(), vsi)
    for entry in directory.entries:
        name = entry.text_name
        parts = name.split("/")
        if (
            name.startswith("/")
            or "\\" in name
            or "\x00" in name
            or ".." in parts
            or (len(name) > 1 and name[1] == ":")
        ):
            raise TacoFormatError(
                f"{vsi}: member name {name!r} would escape the output folder (absolute path, "
                f"'..', drive letter or backslash); refusing to extract"
            )


def zip2folder(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    overwrite: bool = False,
    quiet: bool = False,
    **parquet_kwargs: Any,
) -> Path:
    """Convert a TACO ZIP into a TACO FOLDER (byte copies of every sample).

    Raises:
        TacoFormatError: a member name or sample path would escape ``output``.

    Example:
        >>> zip2folder("dataset.tacozip", "dataset")
        PosixPath('/.../dataset')
    """
    check_member_names(input)
    meta = read_zip_metadata(input)
    container = meta.path

    def source(level: int, row: dict[str, Any]) -> str | None:
        _relative(level, row)
        size = int(row[SIZE])
        return None if size == 0 else build_subfile(int(row[OFFSET]), size, container)

    package = package_from_stored(meta, source)
    return write_folder(
        package, output, overwrite=overwrite, quiet=quiet, parquet_kwargs=parquet_kwargs
    )
