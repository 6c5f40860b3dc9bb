"""Paths stored in metadata must stay inside the dataset.

A FOLDER row's ``internal:relative_path`` (or level-0 ``id``) and a TACOCAT row's
``internal:source_file`` are joined to the dataset's location: a ``..``
component, an absolute path, a drive, a backslash or (locally) a symlink would
make a reader or ``export()`` touch a file outside it.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import ID, RELATIVE_PATH
from taco_gdal.format.vsi import is_remote

__all__ = [
    "check_folder_paths",
    "check_inside",
    "check_sample_source",
    "escape_reason",
    "symlink_on_path",
]


def escape_reason(value: str) -> str | None:
    """Why ``value`` would leave the folder it is joined to (``None`` when it stays inside).

    Example:
        >>> escape_reason("tile0/b02"), escape_reason("../../x")
        (None, "a '..' component")
    """
    if not value:
        return "an empty path"
    if "\x00" in value:
        return "a NUL byte"
    if "\\" in value:
        return "a backslash"
    if value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        return "an absolute path"
    if value.startswith("/vsi") or "://" in value:
        return "a URL or GDAL virtual path"
    if ".." in value.rstrip("/").split("/") or posixpath.normpath(value).startswith(".."):
        return "a '..' component"
    return None


def symlink_on_path(root: str, relative: str) -> str | None:
    """The first symlink met walking ``relative`` below the local folder ``root``, if any."""
    if is_remote(root) or root.startswith("/vsi"):
        return None
    current = Path(root)
    for part in relative.rstrip("/").split("/"):
        current = current / part
        if os.path.islink(current):
            return str(current)
    return None


def check_inside(root: str, relative: str, what: str, where: str) -> None:
    """Raise :class:`TacoFormatError` unless ``root/relative`` stays inside ``root``."""
    reason = escape_reason(relative)
    if reason is not None:
        raise TacoFormatError(
            f"{where}: {what} must be a path inside the dataset, found {relative[:200]!r} "
            f"({reason})"
        )
    link = symlink_on_path(root, relative)
    if link is not None:
        raise TacoFormatError(
            f"{where}: {what} {relative[:200]!r} goes through the symlink {link!r}; "
            "symlinks inside a dataset are refused (they can point outside it)"
        )


def _suspects(values: pa.ChunkedArray) -> np.ndarray:
    """Rows that may fail :func:`escape_reason` (a superset, found by Arrow in a few passes):
    null or empty, or holding a NUL, a backslash, a colon or ``..``, or starting with ``/``."""
    text = values.cast(pa.string())
    flags = [
        pc.is_null(text),
        pc.equal(pc.utf8_length(text), 0),
        pc.starts_with(text, "/"),
        *(pc.match_substring(text, marker) for marker in ("\x00", "\\", ":", "..")),
    ]
    mask = flags[0]
    for flag in flags[1:]:
        mask = pc.or_(mask, pc.fill_null(flag, True))
    return np.flatnonzero(mask.to_numpy(zero_copy_only=False))


def _row_paths(levels: Sequence[pa.Table]) -> Iterator[tuple[int, int, str]]:
    """The rows whose path may leave the dataset, in order (the others cannot)."""
    for level, table in enumerate(levels):
        column = RELATIVE_PATH if level > 0 and RELATIVE_PATH in table.column_names else ID
        values = table.column(column)
        for row in _suspects(values).tolist():
            value = values[row].as_py()
            yield level, row, "" if value is None else str(value)


def _symlinks(root: str) -> Iterator[str]:
    """Every symlink below the local folder ``root`` (no link is followed)."""
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                yield entry.path
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)


def check_folder_paths(levels: Sequence[pa.Table], sources: Sequence[str], data_root: str) -> None:
    """Every FOLDER row's path stays under ``DATA/``, and (local) ``DATA/`` holds no symlink."""
    for level, row, value in _row_paths(levels):
        reason = escape_reason(value)
        if reason is not None:
            raise TacoFormatError(
                f"{sources[level]}: row {row} has path {value[:200]!r} ({reason}); every "
                "sample must be a path inside the dataset's DATA folder"
            )
    if is_remote(data_root) or data_root.startswith("/vsi"):
        return
    link = next(_symlinks(data_root), None)
    if link is not None:
        raise TacoFormatError(
            f"{data_root}: {link!r} is a symlink; symlinks inside a dataset are refused "
            "(they can point outside it)"
        )


def check_sample_source(path: str, where: str) -> None:
    """A local sample file under a dataset's ``DATA/`` must not go through a symlink (checked
    by ``export`` right before copying, so a link planted after the load is refused)."""
    marker = "/DATA/"
    if path.startswith("/vsi") or is_remote(path) or marker not in path:
        return
    cut = path.rindex(marker)
    check_inside(path[: cut + len(marker) - 1], path[cut + len(marker) :], "sample path", where)
