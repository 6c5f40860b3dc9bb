"""``create()``: write a Taco as one or more TACO ZIPs, or as a TACO FOLDER (spec 7.1.3)."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import TACOCAT_DIR, TACOCAT_FILE
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import check_target
from taco_gdal.write._layout import Layout
from taco_gdal.write._partition import Part, plan_parts, subset_package
from taco_gdal.write._size import parse_size
from taco_gdal.write._sources import is_zip_path
from taco_gdal.write.folder_container import check_folder_name, write_folder
from taco_gdal.write.tacocat import create_tacocat
from taco_gdal.write.zip_container import write_layout, write_zip

__all__ = ["OutputFormat", "create", "resolve_format"]

log = logging.getLogger(__name__)

OutputFormat = Literal["auto", "zip", "folder"]
_FORMATS = ("auto", "zip", "folder")


def resolve_format(output: str | os.PathLike[str], output_format: str) -> Literal["zip", "folder"]:
    """``"zip"`` for ``.zip`` / ``.tacozip`` outputs under ``"auto"``, else ``"folder"``.

    Example:
        >>> resolve_format("data.tacozip", "auto")
        'zip'
    """
    if output_format not in _FORMATS:
        raise TacoValidationError(
            f"output_format must be one of {list(_FORMATS)}, got {output_format!r}"
        )
    if output_format == "auto":
        return "zip" if is_zip_path(output) else "folder"
    return "zip" if output_format == "zip" else "folder"


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


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


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
    **parquet_kwargs: Any,
) -> list[Path]:
    """Write a dataset to disk as TACO ZIP(s) or a TACO FOLDER.

    Args:
        taco: a :class:`~taco_gdal.model.Taco` (or the MetadataPackage of one).
        output: ``*.tacozip`` / ``*.zip`` for a ZIP, anything else for a FOLDER
            (unless ``output_format`` says otherwise).
        output_format: ``"auto"``, ``"zip"`` or ``"folder"``.
        split_size: ZIP only: the most sample data per file (``"4GB"`` =
            4 * 1024**3 bytes, level-0 samples packed greedily in order); larger
            datasets become ``{stem}_part0001{ext}``, ... ``None`` never splits.
        group_by: level-0 column(s): one dataset per distinct value,
            ``{stem}_{value}{ext}`` (``_partNNNN`` added if a group exceeds split_size).
        consolidate: when several ZIPs result, also write their TACOCAT
            (``.tacocat/`` and ``__TACOCAT__``) next to them.
        overwrite: replace existing outputs instead of raising TacoExistsError.
        quiet: no progress bars.
        **parquet_kwargs: parquet writer overrides (compression, compression_level,
            row_group_size, ...).

    Returns:
        The datasets written (one path per part).

    Raises:
        TacoExistsError: an output exists and ``overwrite`` is False (checked
            for every part before anything is written).
        TacoValidationError: bad format, split size, group column or folder name.

    Example:
        >>> create(taco, "dataset.tacozip")  # doctest: +SKIP
        [PosixPath('/abs/dataset.tacozip')]
        >>> create(taco, "dataset.tacozip", split_size="1GB")  # doctest: +SKIP
        [PosixPath('/abs/dataset_part0001.tacozip'), PosixPath('/abs/dataset_part0002.tacozip')]
    """
    fmt = resolve_format(output, output_format)
    target = Path(output).absolute()
    if fmt == "folder":
        if is_zip_path(target):
            target = target.with_suffix("")
        check_folder_name(target)
    max_size = parse_size(split_size) if split_size is not None and fmt == "zip" else None
    columns = [group_by] if isinstance(group_by, str) else group_by
    package = _package(taco)
    layout = Layout(package)
    parts = plan_parts(layout, target, max_size, columns)
    consolidating = consolidate and fmt == "zip" and len(parts) > 1
    _check_targets(parts, consolidating, overwrite)
    return _write_parts(
        package, layout, parts, fmt, consolidating, overwrite, quiet, parquet_kwargs
    )


def _write_parts(
    package: MetadataPackage,
    layout: Layout,
    parts: Sequence[Part],
    fmt: Literal["zip", "folder"],
    consolidating: bool,
    overwrite: bool,
    quiet: bool,
    parquet_kwargs: Mapping[str, Any],
) -> list[Path]:
    writer = write_zip if fmt == "zip" else write_folder
    written: list[Path] = []
    options: dict[str, Any] = {
        "overwrite": overwrite,
        "quiet": quiet,
        "parquet_kwargs": parquet_kwargs,
    }
    try:
        for index, part in enumerate(parts, start=1):
            log.info("part %d/%d: %s", index, len(parts), part.path.name)
            if part.rows is None and fmt == "zip":
                written.append(write_layout(layout, package, part.path, **options))
                continue
            subset = package if part.rows is None else subset_package(package, layout, part.rows)
            written.append(writer(subset, part.path, **options))
        if consolidating:
            create_tacocat(written, written[0].parent, overwrite=overwrite, quiet=quiet)
    except BaseException:
        for path in written:
            _remove(path)
        raise
    return written
