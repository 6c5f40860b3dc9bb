"""One part of a ``create()``: how it is written, by this process or by a Dask task.

Shared by :mod:`taco_gdal.write.create` and :mod:`taco_gdal.write.dask`, so neither
imports the other.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._layout import Layout
from taco_gdal.write._partition import Part, subset_package
from taco_gdal.write.folder_container import write_folder
from taco_gdal.write.zip_container import write_layout, write_zip

__all__ = ["WriteOptions", "remove_output", "write_part"]


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
    """Write one part of a dataset at ``path`` (default: the part's own path).

    ``last_use``: nothing reads ``layout`` or ``package.levels`` after this part,
    so a ZIP of the whole dataset drops each table as soon as it is written
    (see :func:`~taco_gdal.write.zip_container.write_layout`).

    Example:
        >>> from taco_gdal.write._layout import Layout
        >>> from taco_gdal.write._partition import plan_partitions
        >>> package = taco.metadata()
        >>> layout = Layout(package)
        >>> parts = plan_partitions(layout, Path("w.tacozip").absolute(), 2)
        >>> options = WriteOptions("zip", False, True, parquet_kwargs={}, checksum=None)
        >>> write_part(package, layout, parts[0], options)
        PosixPath('/.../w_part0001.tacozip')
    """
    target = part.path if path is None else path
    kwargs = options.writer_kwargs()
    if part.rows is None and options.fmt == "zip":
        return write_layout(layout, package, target, last_use=last_use, **kwargs)
    subset = package if part.rows is None else subset_package(package, layout, part.rows)
    writer = write_zip if options.fmt == "zip" else write_folder
    return writer(subset, target, **kwargs)
