"""Write one TACO FOLDER from a :class:`MetadataPackage`.

Layout (reference writer)::

    <out>/DATA/<id>                   FILE samples, copied
    <out>/DATA/<folder>/__meta__      one per FOLDER: its direct children, no offsets
    <out>/METADATA/levelN.parquet     consolidated levels, no offsets
    <out>/COLLECTION.json

The folder is built under a hidden sibling and renamed into place when complete.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.checksum import check_algorithm
from taco_gdal.format.names import (
    COLLECTION_FILE,
    DATA_DIR,
    LOCAL_META,
    METADATA_DIR,
    RESERVED_OUTPUT_NAMES,
    level_file,
)
from taco_gdal.model._arrow import from_numpy
from taco_gdal.model.collection import collection_json_bytes, declare_checksum
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import atomic_directory
from taco_gdal.write._copy import copy_sample
from taco_gdal.write._layout import Layout
from taco_gdal.write._parquet import (
    LEVEL_OPTIONS,
    MetaOptions,
    local_meta_options,
    parquet_options,
)
from taco_gdal.write._progress import progress_bar
from taco_gdal.write._tables import stored_level, with_checksums

__all__ = ["check_folder_name", "write_folder"]

log = logging.getLogger(__name__)


def check_folder_name(target: Path) -> None:
    """Refuse output folder names the layout reserves (``DATA``, ``METADATA``, ``.tacocat``)."""
    if target.name in RESERVED_OUTPUT_NAMES:
        raise TacoValidationError(
            f"output folder name {target.name!r} is reserved by the TACO layout "
            f"(reserved: {sorted(RESERVED_OUTPUT_NAMES)}); choose another name for {str(target)!r}"
        )


def _make_dirs(root: Path, layout: Layout) -> None:
    (root / DATA_DIR).mkdir()
    for level in range(layout.depth):
        for path in layout.rel[level].filter(from_numpy(layout.folder[level])).to_pylist():
            (root / DATA_DIR / path).mkdir()


def _write_tree(
    root: Path, layout: Layout, options: MetaOptions, quiet: bool, digest: str | None
) -> list[list[str | None]] | None:
    """Copy the FILE samples and write the ``__meta__`` files; the digests per level, if asked."""
    data = root / DATA_DIR
    digests: list[list[str | None]] | None = None
    if digest is not None:
        digests = [[None] * n for n in layout.counts_per_level]
    with progress_bar(layout.sample_count, f"writing {root.name}", quiet, unit="sample") as bar:
        for batch in layout.file_batches():
            files = zip(
                batch.levels, batch.rows, batch.paths, batch.sources, batch.padding, strict=True
            )
            for level, row, member, source, padding in files:
                copied = copy_sample(source, data / member, None if padding else digest)
                if digests is not None:
                    digests[level][row] = copied.digest
                bar.update(1)
        for ref, table in layout.local_tables():
            if digests is not None:
                rows = layout.children(ref)
                table = with_checksums(table, digests[ref.level + 1][rows.start : rows.stop])
            path = data / layout.data_path(ref) / LOCAL_META
            pq.write_table(table, path, **options.for_rows(table.num_rows))
            bar.update(1)
    return digests


def write_folder(
    package: MetadataPackage,
    output: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    quiet: bool = False,
    parquet_kwargs: Mapping[str, Any] | None = None,
    checksum: str | None = None,
) -> Path:
    """Write ``package`` as a TACO FOLDER at ``output``, atomically.

    Args:
        package: the dataset's metadata; FILE rows carry their source in ``path``.
        output: the folder to create (its name must not be DATA, METADATA or .tacocat).
        checksum: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: store a per-sample digest
            (``taco_gdal:checksum``) computed while copying; None stores none.

    Example:
        >>> write_folder(taco.metadata(), "new")
        PosixPath('/.../new')
    """
    target = Path(output).absolute()
    check_folder_name(target)
    layout = Layout(package)
    level_options = parquet_options(LEVEL_OPTIONS, parquet_kwargs)
    meta_options = local_meta_options(parquet_kwargs)
    log.info("writing folder %s", target)
    with atomic_directory(target, overwrite) as root:
        _make_dirs(root, layout)
        digests = _write_tree(root, layout, meta_options, quiet, check_algorithm(checksum))
        (root / METADATA_DIR).mkdir()
        for level, table in enumerate(layout.levels):
            stored = stored_level(
                with_checksums(table, None if digests is None else digests[level])
            )
            pq.write_table(stored, root / METADATA_DIR / level_file(level), **level_options)
        (root / COLLECTION_FILE).write_bytes(
            collection_json_bytes(declare_checksum(package.collection, checksum))
        )
    return target
