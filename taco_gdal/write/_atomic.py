"""Atomic, no-clobber outputs.

A ZIP or TACOCAT file is written to an *unnamed* file in the target folder
(``O_TMPFILE``) and linked to its final name only when complete: a crash or a
``kill -9`` mid-write leaves neither a file at the target path nor a stray
temporary file, because the kernel drops the unnamed inode.  Where ``O_TMPFILE``
is not available, a dot-named temporary in the same folder is used and removed
on any exception.  Linking refuses an existing target, so an output is never
clobbered unless ``overwrite=True`` was asked for.

Folder outputs are built under a dot-named sibling directory and renamed into
place; leftovers of a killed process are recognised by their PID and removed by
the next write into the same folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from taco_gdal.errors import TacoExistsError, TacoIOError

__all__ = ["atomic_directory", "atomic_file", "check_target"]

_TMP_TAG = ".taco-tmp-"


def check_target(target: Path, overwrite: bool) -> None:
    """Refuse an existing output unless ``overwrite``."""
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise TacoExistsError(
            f"output {str(target)!r} already exists; pass overwrite=True to replace it"
        )
    if not target.parent.is_dir():
        raise TacoIOError(f"output folder {str(target.parent)!r} does not exist")


def _link_into_place(fd: int, tmp_name: Path | None, target: Path, overwrite: bool) -> None:
    source = f"/proc/self/fd/{fd}" if tmp_name is None else str(tmp_name)
    if not overwrite:
        try:
            os.link(source, target, follow_symlinks=True)
        except FileExistsError as exc:
            raise TacoExistsError(
                f"output {str(target)!r} appeared while writing; not replacing it"
            ) from exc
        if tmp_name is not None:
            tmp_name.unlink()
        return
    if tmp_name is None:
        staged = target.with_name(f"{_TMP_TAG}{os.getpid()}-{target.name}")
        os.link(source, staged, follow_symlinks=True)
        os.replace(staged, target)
    else:
        os.replace(tmp_name, target)


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike[str], overwrite: bool = False) -> Iterator[BinaryIO]:
    """Yield a binary file that appears at ``target`` only if the block succeeds."""
    path = Path(target).absolute()
    check_target(path, overwrite)
    tmp_name: Path | None = None
    try:
        fd = os.open(path.parent, os.O_TMPFILE | os.O_RDWR, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            raise TacoIOError(
                f"cannot create a temporary file next to {str(path)!r}: {exc}"
            ) from exc
        tmp_name = path.with_name(f"{_TMP_TAG}{os.getpid()}-{path.name}")
        fd = os.open(tmp_name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    f = os.fdopen(fd, "w+b", buffering=1024 * 1024)
    try:
        yield f
        f.flush()
        os.fsync(f.fileno())
        _link_into_place(f.fileno(), tmp_name, path, overwrite)
    except BaseException:
        if tmp_name is not None:
            tmp_name.unlink(missing_ok=True)
        raise
    finally:
        f.close()


def _remove_stale(parent: Path) -> None:
    for entry in parent.glob(f"{_TMP_TAG}*"):
        pid_text = entry.name[len(_TMP_TAG) :].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        except PermissionError:
            continue


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike[str], overwrite: bool = False) -> Iterator[Path]:
    """Yield a fresh directory that is renamed to ``target`` only if the block succeeds."""
    path = Path(target).absolute()
    check_target(path, overwrite)
    _remove_stale(path.parent)
    staging = path.with_name(f"{_TMP_TAG}{os.getpid()}-{path.name}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        if path.exists() and overwrite:
            old = path.with_name(f"{_TMP_TAG}{os.getpid()}-old-{path.name}")
            os.rename(path, old)
            os.rename(staging, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            if path.exists():
                raise TacoExistsError(f"output {str(path)!r} appeared while writing")
            os.rename(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
