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
import ctypes
import errno
import functools
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

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


_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_LINK_UNSUPPORTED = frozenset({errno.ENOENT, errno.EPERM, errno.EINVAL, errno.EXDEV, errno.ENOSYS})


@functools.cache
def _linkat() -> Callable[[int, bytes, int, bytes, int], int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).linkat
    except (OSError, AttributeError):  # pragma: no cover - not glibc/musl
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    fn.restype = ctypes.c_int
    return cast(Callable[[int, bytes, int, bytes, int], int], fn)


def _link_fd(fd: int, dest: Path) -> None:
    """Give the unnamed (``O_TMPFILE``) file ``fd`` the name ``dest``; never replaces.

    ``linkat(fd, "", AT_EMPTY_PATH)`` first (needs CAP_DAC_READ_SEARCH), then the
    ``/proc/self/fd`` link, then a copy into a named temporary as a last resort.
    """
    linkat = _linkat()
    if linkat is not None:
        if linkat(fd, b"", _AT_FDCWD, os.fsencode(dest), _AT_EMPTY_PATH) == 0:
            return
        err = ctypes.get_errno()
        if err not in _LINK_UNSUPPORTED:
            raise OSError(err, os.strerror(err), str(dest))
    try:
        os.link(f"/proc/self/fd/{fd}", dest, follow_symlinks=True)
        return
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _LINK_UNSUPPORTED:
            raise
    _copy_fd_to(fd, dest)


def _copy_fd_to(fd: int, dest: Path) -> None:
    """Copy ``fd`` into a named temporary next to ``dest``, then link it to ``dest``."""
    tmp = dest.with_name(f"{_TMP_TAG}{os.getpid()}-copy-{dest.name}")
    out = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        size, copied = os.fstat(fd).st_size, 0
        while copied < size:
            n = os.copy_file_range(fd, out, size - copied, copied, copied)
            if n == 0:
                raise TacoIOError(f"copy of the temporary file for {str(dest)!r} stopped early")
            copied += n
        os.fsync(out)
        os.link(tmp, dest)
    finally:
        os.close(out)
        tmp.unlink(missing_ok=True)


def _link_into_place(fd: int, tmp_name: Path | None, target: Path, overwrite: bool) -> None:
    if not overwrite:
        try:
            if tmp_name is None:
                _link_fd(fd, target)
            else:
                os.link(tmp_name, target)
        except FileExistsError as exc:
            raise TacoExistsError(
                f"output {str(target)!r} appeared while writing; not replacing it"
            ) from exc
        if tmp_name is not None:
            tmp_name.unlink()
        return
    if tmp_name is None:
        staged = target.with_name(f"{_TMP_TAG}{os.getpid()}-{target.name}")
        staged.unlink(missing_ok=True)
        _link_fd(fd, staged)
        os.replace(staged, target)
    else:
        os.replace(tmp_name, target)


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
def atomic_file(target: str | os.PathLike[str], overwrite: bool = False) -> Iterator[BinaryIO]:
    """Yield a binary file that appears at ``target`` only if the block succeeds.

    Example:
        >>> with atomic_file("/tmp/out.bin", overwrite=True) as f:  # doctest: +SKIP
        ...     f.write(b"complete or absent")
    """
    path = Path(target).absolute()
    check_target(path, overwrite)
    _remove_stale(path.parent)
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
