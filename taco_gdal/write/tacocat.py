"""TACOCAT: the metadata of many TACO ZIPs consolidated for one query (spec 6.5).

Both forms are written side by side, so both generations of readers open the
result: ``__TACOCAT__`` (the spec's binary file: a 128-byte header, then the
level parquets and COLLECTION.json) and ``.tacocat/`` (the folder current
reference readers load). Every row gets ``internal:source_file``, the ZIP it
came from; offsets stay those of that ZIP.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    COLLECTION_FILE,
    SOURCE_FILE,
    TACOCAT_DIR,
    TACOCAT_FILE,
    level_file,
)
from taco_gdal.format.tacocat import TACOCAT_HEADER_SIZE, TacoCatHeader
from taco_gdal.model.collection import collection_json_bytes
from taco_gdal.write._atomic import atomic_directory, atomic_file, check_target
from taco_gdal.write._merge import collection_problems, merge_collections, raise_problems
from taco_gdal.write._parquet import TACOCAT_OPTIONS, parquet_bytes, parquet_options
from taco_gdal.write._progress import progress_bar
from taco_gdal.write._sources import DatasetMetadata, is_zip_path, read_zip_metadata

__all__ = ["create_tacocat", "write_tacocat"]

log = logging.getLogger(__name__)


def _schema_problems(metas: Sequence[DatasetMetadata], names: Sequence[str]) -> list[str]:
    problems = []
    ref = metas[0]
    for meta, name in zip(metas[1:], names[1:], strict=True):
        if len(meta.levels) != len(ref.levels):
            problems.append(f"{name}: {len(meta.levels)} levels, {names[0]} has {len(ref.levels)}")
        for level, (table, ref_table) in enumerate(zip(meta.levels, ref.levels, strict=False)):
            ref_types = {f.name: f.type for f in ref_table.schema}
            types = {f.name: f.type for f in table.schema}
            for column in ref_types.keys() - types.keys():
                problems.append(f"{name} level{level}: column {column!r} missing")
            for column in types.keys() - ref_types.keys():
                problems.append(f"{name} level{level}: extra column {column!r}")
            for column in ref_types.keys() & types.keys():
                if types[column] != ref_types[column]:
                    problems.append(
                        f"{name} level{level}: column {column!r} is {types[column]}, "
                        f"{names[0]} has {ref_types[column]}"
                    )
    return problems


def _consolidate(
    metas: Sequence[DatasetMetadata], names: Sequence[str], strict: bool
) -> list[pa.Table]:
    depth = max(len(m.levels) for m in metas)
    levels = []
    for level in range(depth):
        parts = [
            m.levels[level].append_column(
                SOURCE_FILE, pa.array([name] * m.levels[level].num_rows, pa.string())
            )
            for m, name in zip(metas, names, strict=True)
            if level < len(m.levels)
        ]
        levels.append(
            pa.concat_tables(parts, promote_options="default" if strict else "permissive")
        )
    return levels


def _output_folder(inputs: Sequence[Path], output: str | os.PathLike[str] | None) -> Path:
    if output is not None:
        folder = Path(output).absolute()
        return folder.parent if folder.name in (TACOCAT_DIR, TACOCAT_FILE) else folder
    parents = {p.parent for p in inputs}
    if len(parents) != 1:
        raise TacoValidationError(
            f"inputs live in {len(parents)} folders ({sorted(map(str, parents))}); "
            f"put them in one folder or pass output="
        )
    return parents.pop()


def _write_binary(target: Path, blobs: list[bytes], overwrite: bool) -> None:
    sizes = [len(blob) for blob in blobs]
    starts = itertools.accumulate(sizes, initial=TACOCAT_HEADER_SIZE)
    entries = [HeaderEntry(start, size) for start, size in zip(starts, sizes, strict=False)]
    header = TacoCatHeader(levels=tuple(entries[:-1]), collection=entries[-1])
    with atomic_file(target, overwrite) as f:
        f.write(header.pack())
        for blob in blobs:
            f.write(blob)


def create_tacocat(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str] | None = None,
    validate_schema: bool = True,
    overwrite: bool = False,
    quiet: bool = False,
    **parquet_kwargs: Any,
) -> list[Path]:
    """Consolidate the metadata of several TACO ZIPs into ``.tacocat/`` and ``__TACOCAT__``.

    Args:
        inputs: local TACO ZIP files (normally the parts ``create()`` split a dataset into).
        output: folder receiving both forms; by default the folder holding all inputs.
        validate_schema: refuse inputs whose level schemas, PIT structure or field
            schema differ from the first input's (TacoSchemaError lists each difference).
        **parquet_kwargs: overrides of the parquet settings (zstd level 19 by default).

    Returns:
        ``[<output>/.tacocat, <output>/__TACOCAT__]``.

    Example:
        >>> create_tacocat(["a.tacozip", "b.tacozip"])
        [PosixPath('/.../.tacocat'), PosixPath('/.../__TACOCAT__')]
    """
    if not inputs:
        raise TacoValidationError("create_tacocat needs at least one input ZIP, got none")
    paths = [Path(p).absolute() for p in inputs]
    for path in paths:
        if not is_zip_path(path):
            raise TacoValidationError(
                f"TACOCAT inputs must be .tacozip/.zip files, got {str(path)!r}"
            )
    folder = _output_folder(paths, output)
    names = [p.name for p in paths]
    if len(set(names)) != len(names):
        raise TacoValidationError(f"TACOCAT inputs need distinct file names, got {names}")
    targets = [folder / TACOCAT_DIR, folder / TACOCAT_FILE]
    for target in targets:
        if folder.is_dir():
            check_target(target, overwrite)
    with progress_bar(len(paths), "reading metadata", quiet, unit="file") as bar:
        metas = []
        for path in paths:
            metas.append(read_zip_metadata(path))
            bar.update(1)
    return write_tacocat(metas, names, folder, validate_schema, overwrite, **parquet_kwargs)


def write_tacocat(
    metas: Sequence[DatasetMetadata],
    names: Sequence[str],
    folder: Path,
    validate_schema: bool = True,
    overwrite: bool = False,
    **parquet_kwargs: Any,
) -> list[Path]:
    """Consolidate already-read part metadata into ``folder`` (the Dask writer reads nothing).

    Example:
        >>> metas = [read_zip_metadata("a.tacozip")]
        >>> write_tacocat(metas, ["a.tacozip"], Path("."))
        [PosixPath('.tacocat'), PosixPath('__TACOCAT__')]
    """
    targets = [folder / TACOCAT_DIR, folder / TACOCAT_FILE]
    options = parquet_options(TACOCAT_OPTIONS, parquet_kwargs)
    collections = [m.collection for m in metas]
    if validate_schema:
        raise_problems(_schema_problems(metas, names) + collection_problems(collections, names))
    levels = _consolidate(metas, names, validate_schema)
    blobs = [parquet_bytes(t, options) for t in levels]
    blobs.append(collection_json_bytes(merge_collections(collections, names)))
    log.info("writing TACOCAT of %d ZIPs into %s", len(metas), folder)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_directory(targets[0], overwrite) as staging:
        for level, blob in enumerate(blobs[:-1]):
            (staging / level_file(level)).write_bytes(blob)
        (staging / COLLECTION_FILE).write_bytes(blobs[-1])
    try:
        _write_binary(targets[1], blobs, overwrite)
    except BaseException:
        shutil.rmtree(targets[0], ignore_errors=True)
        raise
    return targets
