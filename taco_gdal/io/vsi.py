"""Read byte ranges of any GDAL path with ``VSIFOpenL`` / ``VSIFSeekL`` / ``VSIFReadL``."""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from taco_gdal._osgeo import gdal
from taco_gdal.errors import TacoFormatError, TacoIOError
from taco_gdal.format.vsi import is_remote
from taco_gdal.io import pinning
from taco_gdal.io.profile import metadata_env

__all__ = ["VSIFile", "file_size", "read_all", "read_range"]

log = logging.getLogger(__name__)

MAX_OFFSET: Final = 2**63 - 1
"""Largest offset or size GDAL's VSI API takes (``vsi_l_offset`` through a signed binding)."""
LARGE_READ: Final = 64 * 1024 * 1024
"""Reads larger than this are first clamped to the file's size (no huge allocation)."""
READ_ATTEMPTS: Final = 3
"""Attempts at a remote range read whose connection broke mid-body (HTTP status
errors are retried by GDAL itself, see :mod:`taco_gdal.io.profile`)."""


_NO_RANGE: Final = "Range downloading not supported"
"""What GDAL's /vsicurl/ says of a server that answers a Range request with the whole file."""
NO_RANGE_HINT: Final = (
    " (the server ignores HTTP Range requests, and taco_gdal reads a dataset by byte "
    "ranges: serve it from a server that supports Range, e.g. any object store, or "
    "download it and open the local copy)"
)


def _gdal_message() -> str:
    msg = gdal.GetLastErrorMsg()
    if not msg:
        return ""
    return f": {msg}{NO_RANGE_HINT if _NO_RANGE in msg else ''}"


@contextmanager
def _quiet_gdal() -> Iterator[None]:
    """GDAL's errors are not printed to stderr (this thread): they go into TacoIOErrors."""
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        yield
    finally:
        gdal.PopErrorHandler()


def is_plain_local(path: str) -> bool:
    """A path of the local file system that GDAL would read as it is (no ``/vsi`` prefix).

    Example:
        >>> is_plain_local("/data/x.tacozip"), is_plain_local("/vsicurl/http://h/x.tacozip")
        (True, False)
    """
    return not path.startswith("/vsi") and not is_remote(path)


def _open_local(path: str, mode: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TacoIOError(f"cannot open {path!r} (mode {mode!r}): {exc.strerror}") from exc
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise TacoIOError(f"cannot open {path!r} (mode {mode!r}): it is a folder, not a file")
    return fd


def _pread(fd: int, offset: int, size: int, path: str) -> bytes:
    """Up to ``size`` bytes at ``offset`` (fewer only at the end of the file)."""
    parts: list[bytes] = []
    done = 0
    while done < size:
        try:
            part = os.pread(fd, size - done, offset + done)
        except OSError as exc:
            raise TacoIOError(
                f"cannot read {size} bytes at offset {offset} of {path!r}: {exc.strerror}"
            ) from exc
        if not part:
            break
        parts.append(part)
        done += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class VSIFile:
    """An open GDAL virtual file.  Use as a context manager.

    Example:
        >>> with VSIFile("/vsimem/x.bin", "wb") as f:
        ...     f.write_at(0, b"abc")
        >>> with VSIFile("/vsimem/x.bin") as f:
        ...     f.size(), f.read_at(1, 2)
        (3, b'bc')
        >>> from osgeo import gdal
        >>> gdal.Unlink("/vsimem/x.bin")
        0
    """

    def __init__(self, path: str, mode: str = "rb") -> None:
        self.path = path
        self.mode = mode
        self.remote = is_remote(path)
        self._handle: Any = None
        self._fd: int | None = None
        if mode == "rb" and is_plain_local(path):  # the operating system reads it: no GDAL
            self._fd = _open_local(path, mode)
            return
        if self.remote and mode == "rb":
            pinning.verify(path)  # TacoChangedError if the container is not the one pinned
        gdal.ErrorReset()
        with self._scope():
            try:
                handle = gdal.VSIFOpenL(path, mode)
            except RuntimeError as exc:  # raised instead of returning None under UseExceptions()
                self._forget_remote()
                raise TacoIOError(f"cannot open {path!r} (mode {mode!r}): {exc}") from exc
        if handle is None:
            message = _gdal_message()
            self._forget_remote()
            raise TacoIOError(f"cannot open {path!r} (mode {mode!r}){message}")
        self._handle = handle

    @contextmanager
    def _scope(self) -> Iterator[None]:
        """Around every GDAL call: quiet errors; on a remote file, retry/timeout options."""
        if self._fd is not None:  # read by the operating system: GDAL is not even imported
            yield
            return
        with _quiet_gdal():
            if not self.remote:
                yield
                return
            with metadata_env():
                yield

    def _forget_remote(self) -> None:
        """Drop what GDAL cached about this remote file (a failure, or partial bytes)."""
        if self.remote:
            gdal.VSICurlPartialClearCache(pinning.container_of(self.path))

    def __enter__(self) -> VSIFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._handle is not None:
            gdal.VSIFCloseL(self._handle)
            self._handle = None
            if self.remote and self.mode != "rb":  # we changed it: its old pin is void
                pinning.pins.forget(pinning.container_of(self.path))

    @property
    def is_local(self) -> bool:
        """Read by the operating system (a plain local file opened ``"rb"``), not by GDAL."""
        return self._fd is not None

    def size(self) -> int:
        """Size of the file in bytes (seek to the end)."""
        if self._fd is not None:
            return os.fstat(self._fd).st_size
        with self._scope():
            self._seek(0, 2)
            return int(gdal.VSIFTellL(self._handle))

    def _seek(self, offset: int, whence: int = 0) -> None:
        if gdal.VSIFSeekL(self._handle, offset, whence) != 0:
            raise TacoIOError(f"cannot seek to byte {offset} of {self.path!r}{_gdal_message()}")

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer only at the end of the file).

        A remote read that comes back short although the file is long enough
        (the connection broke mid-body) is retried with GDAL's cache of the file
        cleared; if every attempt is short, :class:`TacoIOError` names the URL.
        Partial bytes are never returned.
        """
        if size == 0:
            return b""
        if not (0 <= offset <= MAX_OFFSET and 0 <= size <= MAX_OFFSET):
            raise TacoFormatError(
                f"{self.path}: a read needs an offset and a size in 0..{MAX_OFFSET}, found "
                f"offset {offset} and size {size}"
            )
        if size > LARGE_READ:  # never allocate more than the file can give
            size = max(0, min(size, self.size() - offset))
            if size == 0:
                return b""
        with self._scope():
            for attempt in range(1, READ_ATTEMPTS + 1):
                data = self._read_once(offset, size)
                expected = size if len(data) == size else min(size, self.size() - offset)
                if len(data) >= expected:
                    return data
                self._forget_remote()  # GDAL keeps the partial block otherwise
                if not self.remote or attempt == READ_ATTEMPTS:
                    break
                log.warning(
                    "short read of %s (%d of %d bytes at %d), retrying",
                    self.path,
                    len(data),
                    expected,
                    offset,
                )
                time.sleep(0.2 * 2 ** (attempt - 1))
        raise TacoIOError(
            f"reading {size} bytes at offset {offset} of {self.path!r}: expected {expected} "
            f"bytes, the read delivered {len(data)} (connection broken mid-body?) "
            f"after {attempt} attempt(s){_gdal_message()}"
        )

    def _read_once(self, offset: int, size: int) -> bytes:
        if self._fd is not None:
            return _pread(self._fd, offset, size, self.path)
        self._seek(offset)
        gdal.ErrorReset()
        try:
            data = gdal.VSIFReadL(1, size, self._handle)
        except RuntimeError as exc:
            raise TacoIOError(
                f"cannot read {size} bytes at offset {offset} of {self.path!r}: {exc}"
            ) from exc
        if data is None:
            data = b""
        if len(data) < size and gdal.GetLastErrorType() >= gdal.CE_Failure:
            raise TacoIOError(
                f"reading {size} bytes at offset {offset} of {self.path!r} failed after "
                f"{len(data)} bytes{_gdal_message()}"
            )
        return bytes(data)

    def read_into(self, offset: int, view: memoryview, what: str = "data") -> None:
        """Fill ``view`` (writable bytes) with the file's bytes at ``offset``.

        A local file is read by ``preadv`` straight into ``view`` (no copy, the
        GIL released); any other through :meth:`read_exact`.

        Raises:
            TacoFormatError: the file ends before ``view`` is full.

        Example:
            >>> from pathlib import Path
            >>> _ = Path("ten.bin").write_bytes(bytes(range(10)))
            >>> out = bytearray(3)
            >>> with VSIFile("ten.bin") as f:
            ...     f.read_into(4, memoryview(out))
            >>> bytes(out)
            b'\\x04\\x05\\x06'
        """
        size = len(view)
        if self._fd is None:
            view[:] = self.read_exact(offset, size, what)
            return
        done = 0
        while done < size:
            try:
                n = os.preadv(self._fd, [view[done:]], offset + done)
            except OSError as exc:
                raise TacoIOError(
                    f"cannot read {size} bytes at offset {offset} of {self.path!r}: {exc.strerror}"
                ) from exc
            if n == 0:
                raise TacoFormatError(
                    f"{self.path}: {what} expected {size} bytes at offset {offset}, the file "
                    f"ends after {done} (truncated file or wrong offset)"
                )
            done += n

    def read_exact(self, offset: int, size: int, what: str = "data") -> bytes:
        """Exactly ``size`` bytes at ``offset``, or a TacoFormatError saying the file is short."""
        data = self.read_at(offset, size)
        if len(data) != size:
            raise TacoFormatError(
                f"{self.path}: {what} expected {size} bytes at offset {offset}, the file "
                f"ends after {len(data)} (truncated file or wrong offset)"
            )
        return data

    def flush(self) -> None:
        """Hand buffered writes to the operating system (``VSIFFlushL``)."""
        gdal.VSIFFlushL(self._handle)

    def write_at(self, offset: int, data: bytes) -> None:
        self._seek(offset)
        written = gdal.VSIFWriteL(data, 1, len(data), self._handle)
        if written != len(data):
            raise TacoIOError(
                f"wrote {written} of {len(data)} bytes at offset {offset} of {self.path!r}"
                f"{_gdal_message()}"
            )


def read_range(path: str, offset: int, size: int, what: str = "data") -> bytes:
    """Exactly ``size`` bytes at ``offset`` of ``path`` through GDAL's VSI layer."""
    log.debug("read %s bytes at %s of %s", size, offset, path)
    with VSIFile(path) as f:
        return f.read_exact(offset, size, what)


def read_all(path: str) -> bytes:
    """Every byte of ``path``."""
    with VSIFile(path) as f:
        return f.read_exact(0, f.size(), "whole file")


def file_size(path: str) -> int:
    """Size of ``path`` in bytes (``VSIStatL``)."""
    gdal.ErrorReset()
    try:
        with _quiet_gdal():
            stat = gdal.VSIStatL(path)
    except RuntimeError as exc:
        raise TacoIOError(f"cannot stat {path!r}: {exc}") from exc
    if stat is None:
        raise TacoIOError(f"{path!r} does not exist or cannot be reached{_gdal_message()}")
    return int(stat.size)
