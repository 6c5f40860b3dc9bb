"""Copy one sample's bytes to a file: local, ``/vsisubfile/`` of a local file, or any VSI path.

Local copies stay in the kernel (``copy_file_range``); remote sources are streamed
through GDAL's VSI layer in large blocks, so memory does not grow with the sample.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from taco_gdal.errors import TacoIOError
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile, to_vsi
from taco_gdal.io.vsi import VSIFile, file_size

__all__ = ["BLOCK_SIZE", "copy_sample", "source_size"]

BLOCK_SIZE = 4 * 1024 * 1024


def source_size(source: str | None) -> int:
    """Size in bytes of a sample source (0 for a zero-byte sample given as None).

    Example:
        >>> source_size(None)
        0
    """
    if source is None:
        return 0
    path = to_vsi(source)
    if path.startswith(SUBFILE_PREFIX):
        return parse_subfile(path).size
    if path.startswith("/vsi"):
        return file_size(path)
    try:
        return os.stat(path).st_size
    except OSError as exc:
        raise TacoIOError(f"cannot stat sample source {source!r}: {exc}") from exc


def _copy_range(container: str, offset: int, size: int, dest: Path) -> None:
    with open(container, "rb") as src, open(dest, "xb") as dst:
        copied = 0
        while copied < size:
            n = os.copy_file_range(src.fileno(), dst.fileno(), size - copied, offset + copied)
            if n == 0:
                raise TacoIOError(
                    f"{container}: ends before byte {offset + size} while copying "
                    f"{size} bytes at offset {offset} to {dest}"
                )
            copied += n


def _copy_vsi(source: str, dest: Path) -> None:
    with VSIFile(source) as src, open(dest, "xb") as dst:
        size = src.size()
        offset = 0
        while offset < size:
            block = src.read_exact(offset, min(BLOCK_SIZE, size - offset), "sample data")
            dst.write(block)
            offset += len(block)


def copy_sample(source: str | None, dest: Path) -> int:
    """Copy ``source`` to the new file ``dest`` and return its size; None gives an empty file.

    Example:
        >>> copy_sample("/data/a.tif", Path("/out/DATA/a.tif"))  # doctest: +SKIP
        622
    """
    try:
        if source is None:
            dest.touch(exist_ok=False)
            return 0
        path = to_vsi(source)
        if path.startswith(SUBFILE_PREFIX):
            sub = parse_subfile(path)
            if not sub.container.startswith("/vsi"):
                _copy_range(sub.container, sub.offset, sub.size, dest)
                return sub.size
        if path.startswith("/vsi"):
            _copy_vsi(path, dest)
        else:
            shutil.copyfile(path, dest)
        return dest.stat().st_size
    except OSError as exc:
        if isinstance(exc, TacoIOError):
            raise
        raise TacoIOError(f"cannot copy sample {source!r} to {str(dest)!r}: {exc}") from exc
