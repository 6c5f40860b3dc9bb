"""Atomic, no-clobber outputs.

Files are written unnamed (``O_TMPFILE``, else a dot-named temporary) and linked
to their name only when complete, never over an existing target unless
``overwrite=True``. Folders are built in a dot-named sibling and renamed into
place (``RENAME_EXCHANGE`` to overwrite on Linux; elsewhere the old dataset is
moved aside first and a kill in between is undone by the next write, which
also cleans what dead writers left).
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
from taco_gdal.io._faults import pause_point

__all__ = ["atomic_directory", "atomic_file", "check_target", "commit", "fsync_directory"]

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
    """Name the unnamed file ``fd`` ``dest`` (never replaces): ``linkat``, ``/proc``, or a copy."""
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


_OLD_TAG = "-~old-"


def _dead(pid_text: str) -> bool:
    if not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _remove_stale(parent: Path) -> None:
    """Finish what killed writers left: restore an old dataset with no target, drop the rest."""
    for entry in sorted(parent.glob(f"{_TMP_TAG}*")):
        pid_text, _, rest = entry.name[len(_TMP_TAG) :].partition("-")
        if not _dead(pid_text):
            continue
        if entry.is_dir() and rest.startswith(_OLD_TAG[1:]):
            target = parent / rest[len(_OLD_TAG) - 1 :]
            if not target.exists() and not target.is_symlink():
                os.rename(entry, target)  # the swap was cut between its two renames
                continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # glibc < 2.28, musl, not Linux
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return cast(Callable[[int, bytes, int, bytes, int], int], fn)


def _rename2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False when the call or the flag is unsupported here."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    if err == errno.EEXIST:
        raise FileExistsError(err, os.strerror(err), str(dst))
    raise OSError(err, os.strerror(err), str(dst))


def _swap_into_place(staging: Path, path: Path, overwrite: bool) -> None:
    """Move the complete ``staging`` folder to ``path`` (see the module docstring)."""
    if not (path.exists() or path.is_symlink()):
        try:
            if not _rename2(staging, path, _RENAME_NOREPLACE):
                if path.exists():
                    raise FileExistsError(str(path))
                os.rename(staging, path)
        except FileExistsError as exc:
            raise TacoExistsError(f"output {str(path)!r} appeared while writing") from exc
        pause_point()
        return
    if not overwrite:
        raise TacoExistsError(f"output {str(path)!r} appeared while writing")
    if _rename2(staging, path, _RENAME_EXCHANGE):
        pause_point()  # the target is the new dataset; the old one is under the staging name
        shutil.rmtree(staging, ignore_errors=True)
        return
    old = path.with_name(f"{_TMP_TAG}{os.getpid()}{_OLD_TAG}{path.name}")
    os.rename(path, old)
    pause_point()  # no target now: the next write renames ``old`` back if this process dies
    os.rename(staging, path)
    pause_point()
    shutil.rmtree(old, ignore_errors=True)


def commit(temporary: Path, target: Path, overwrite: bool) -> None:
    """Give a complete temporary file or folder in ``target``'s folder its final name."""
    if temporary.is_dir():
        _swap_into_place(temporary, target, overwrite)
    else:
        _link_into_place(-1, temporary, target, overwrite)


def fsync_directory(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike[str], overwrite: bool = False) -> Iterator[BinaryIO]:
    """Yield a binary file that appears at ``target`` only if the block succeeds."""
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
        fsync_directory(path.parent)  # the new name is durable too, as after cp + sync
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
        _swap_into_place(staging, path, overwrite)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
