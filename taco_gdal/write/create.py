"""``create()``: write a Taco as one or more TACO ZIPs, or as a TACO FOLDER (spec 7.1.3)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from taco_gdal._memory import release_memory
from taco_gdal.errors import TacoValidationError
from taco_gdal.format.checksum import check_algorithm
from taco_gdal.format.names import TACOCAT_DIR, TACOCAT_FILE
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import check_target
from taco_gdal.write._layout import Layout
from taco_gdal.write._partition import (
    Part,
    WriteOptions,
    plan_partitions,
    plan_parts,
    remove_output,
    write_part,
)
from taco_gdal.write._size import parse_size
from taco_gdal.write._sources import is_zip_path
from taco_gdal.write.dask import write_parts_dask
from taco_gdal.write.folder_container import check_folder_name
from taco_gdal.write.tacocat import create_tacocat

__all__ = [
    "OutputFormat",
    "WriteOptions",
    "create",
    "remove_output",
    "resolve_format",
    "write_part",
]

log = logging.getLogger(__name__)

OutputFormat = Literal["auto", "zip", "folder"]
_FORMATS = ("auto", "zip", "folder")


def resolve_format(output: str | os.PathLike[str], output_format: str) -> Literal["zip", "folder"]:
    """``"zip"`` for ``.zip`` / ``.tacozip`` outputs under ``"auto"``, else ``"folder"``."""
    if output_format not in _FORMATS:
        raise TacoValidationError(
            f"output_format must be one of {list(_FORMATS)}, got {output_format!r}"
        )
    wants_zip = is_zip_path(output) if output_format == "auto" else output_format == "zip"
    return "zip" if wants_zip else "folder"


def _package(taco: object) -> MetadataPackage:
    if isinstance(taco, MetadataPackage):
        return taco
    metadata = getattr(taco, "metadata", None)
    if not callable(metadata):
        raise TacoValidationError(
            f"create() needs a Taco (or a MetadataPackage), got {type(taco).__name__}"
        )
    package = metadata()
    if not isinstance(package, MetadataPackage):
        raise TacoValidationError(
            f"{type(taco).__name__}.metadata() must return a MetadataPackage, "
            f"got {type(package).__name__}"
        )
    return package


def _check_targets(parts: Sequence[Part], consolidating: bool, overwrite: bool) -> None:
    for part in parts:
        check_target(part.path, overwrite)
    if consolidating:
        folder = parts[0].path.parent
        for name in (TACOCAT_DIR, TACOCAT_FILE):
            check_target(folder / name, overwrite)


def create(
    taco: object,
    output: str | os.PathLike[str],
    output_format: OutputFormat = "auto",
    split_size: str | int | None = "4GB",
    group_by: str | Sequence[str] | None = None,
    consolidate: bool = True,
    overwrite: bool = False,
    quiet: bool = False,
    checksum: str | None = None,
    partitions: int | None = None,
    client: Any = None,
    retries: int = 3,
    **parquet_kwargs: Any,
) -> list[Path]:
    """Write a dataset to disk as TACO ZIP(s) or a TACO FOLDER.

    Args:
        taco: a :class:`~taco_gdal.model.Taco` (or the MetadataPackage of one).
        output: ``*.tacozip`` / ``*.zip`` for a ZIP, anything else for a FOLDER
            (unless ``output_format`` says otherwise).
        output_format: ``"auto"``, ``"zip"`` or ``"folder"``.
        split_size: ZIP only: the most sample data per file (``"4GB"``; level-0
            samples packed greedily in order); larger datasets become
            ``{stem}_part0001{ext}``, ... ``None`` never splits.
        group_by: level-0 column(s): one dataset per distinct value,
            ``{stem}_{value}{ext}`` (``_partNNNN`` added if a group exceeds split_size).
        consolidate: when several ZIPs result, also write their TACOCAT next to them.
        checksum: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: store a digest of every
            FILE sample in ``taco_gdal:checksum``, computed in the same pass as the
            ZIP CRC-32. ``"crc32c"`` costs least; ``"sha256"`` resists deliberate
            tampering. None (default) stores no digest.
        partitions: split the level-0 rows into this many consecutive parts of
            equal row count instead of by ``split_size``; not with ``group_by``.
        client: a ``dask.distributed.Client``: write the parts as Dask tasks
            (see :mod:`taco_gdal.write.dask`; needs the ``dask`` extra).
        retries: with ``client``, how many times Dask re-runs a failed part task.
        **parquet_kwargs: parquet writer overrides (compression, compression_level,
            row_group_size, ...).

    Raises:
        TacoExistsError: an output exists and ``overwrite`` is False (checked
            for every part before anything is written).
        TacoValidationError: bad format, split size, group column or folder name.

    Example:
        >>> create(taco, "new.tacozip")
        [PosixPath('/.../new.tacozip')]
        >>> create(taco, "parts.tacozip", split_size=1500)  # bytes; or "1GB"
        [PosixPath('/.../parts_part0001.tacozip'), PosixPath('/.../parts_part0002.tacozip')]
    """
    fmt = resolve_format(output, output_format)
    check_algorithm(checksum)
    if partitions is not None and group_by is not None:
        raise TacoValidationError(
            f"create(): expected partitions or group_by, found both "
            f"(partitions={partitions!r}, group_by={group_by!r})"
        )
    target = Path(output).absolute()
    if fmt == "folder":
        if is_zip_path(target):
            target = target.with_suffix("")
        check_folder_name(target)
    max_size = parse_size(split_size) if split_size is not None and fmt == "zip" else None
    columns = [group_by] if isinstance(group_by, str) else group_by
    options = WriteOptions(fmt, overwrite, quiet, dict(parquet_kwargs), checksum)
    return _create(
        taco, target, options, max_size, columns, consolidate, partitions, client, retries
    )


def _create(
    taco: object,
    target: Path,
    options: WriteOptions,
    max_size: int | None,
    columns: Sequence[str] | None,
    consolidate: bool,
    partitions: int | None,
    client: Any,
    retries: int,
) -> list[Path]:
    """:func:`create` once its arguments are checked."""
    # a list of tables of our own, which a single write may empty as it goes
    given = _package(taco)
    package = replace(given, levels=list(given.levels))
    del given
    release_memory()  # what building the level tables freed, before the layout's arrays
    layout = Layout(package)
    if partitions is not None:
        parts = plan_partitions(layout, target, partitions)
    else:
        parts = plan_parts(layout, target, max_size, columns, package.file_sizes)
    package = replace(package, file_sizes=None)  # planned: the sizes are not needed again
    consolidating = consolidate and options.fmt == "zip" and len(parts) > 1
    _check_targets(parts, consolidating, options.overwrite)
    if client is not None:
        return write_parts_dask(client, package, layout, parts, options, consolidating, retries)
    return _write_parts(package, layout, parts, options, consolidating)


def _write_parts(
    package: MetadataPackage,
    layout: Layout,
    parts: Sequence[Part],
    options: WriteOptions,
    consolidating: bool,
) -> list[Path]:
    written: list[Path] = []
    try:
        for index, part in enumerate(parts, start=1):
            log.info("part %d/%d: %s", index, len(parts), part.path.name)
            last_use = len(parts) == 1 and not consolidating
            written.append(write_part(package, layout, part, options, last_use=last_use))
        if consolidating:
            create_tacocat(
                written, written[0].parent, overwrite=options.overwrite, quiet=options.quiet
            )
    except BaseException:
        for path in written:
            remove_output(path)
        raise
    return written
