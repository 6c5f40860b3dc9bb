"""Copy one sample's bytes to a file: local, ``/vsisubfile/`` of a local file, or any VSI path.

Without a digest, local copies stay in the kernel (``copy_file_range``); with one
(``digest="xxh3"``...), and for remote sources streamed through GDAL's VSI layer,
blocks pass through one reused buffer where the digest is computed before the
block is written, so the source is read once and memory does not grow with the
sample.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import StreamingDigest, check_algorithm
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile, to_vsi
from taco_gdal.io.vsi import VSIFile, file_size

__all__ = ["BLOCK_SIZE", "Copied", "copy_sample", "source_size"]

BLOCK_SIZE = 8 * 1024 * 1024
"""Block of a remote (VSI) copy."""
_LOCAL_BLOCK = 256 * 1024
"""Block of a hashed local copy (stays in the CPU cache between read, hash and write)."""


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_sample` wrote: the size and, when asked, the digest of the bytes."""

    size: int
    digest: str | None = None


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


def _copy_local_hashed(
    path: str, offset: int, size: int | None, dest: Path, h: StreamingDigest
) -> int:
    """Copy ``size`` bytes (None: to the end) from ``offset`` through one buffer, hashing it."""
    buffer = memoryview(bytearray(_LOCAL_BLOCK))
    copied = 0
    with open(path, "rb", buffering=0) as src, open(dest, "xb", buffering=0) as dst:
        src.seek(offset)
        while size is None or copied < size:
            want = _LOCAL_BLOCK if size is None else min(_LOCAL_BLOCK, size - copied)
            n = src.readinto(buffer[:want]) or 0
            if n == 0:
                if size is None:
                    break
                raise TacoIOError(
                    f"{path}: ends before byte {offset + size} while copying "
                    f"{size} bytes at offset {offset} to {dest}"
                )
            block = buffer[:n]
            h.update(block)
            written = 0
            while written < n:
                written += dst.write(block[written:]) or 0
            copied += n
    return copied


def _copy_vsi(source: str, dest: Path, h: StreamingDigest | None) -> int:
    with VSIFile(source) as src, open(dest, "xb") as dst:
        size = src.size()
        offset = 0
        while offset < size:
            block = src.read_exact(offset, min(BLOCK_SIZE, size - offset), "sample data")
            if h is not None:
                h.update(block)
            dst.write(block)
            offset += len(block)
    return size


def _copy(path: str, dest: Path, h: StreamingDigest | None) -> int:
    if path.startswith(SUBFILE_PREFIX):
        sub = parse_subfile(path)
        if not sub.container.startswith("/vsi"):
            if h is None:
                _copy_range(sub.container, sub.offset, sub.size, dest)
            else:
                _copy_local_hashed(sub.container, sub.offset, sub.size, dest, h)
            return sub.size
    if path.startswith("/vsi"):
        return _copy_vsi(path, dest, h)
    if h is not None:
        return _copy_local_hashed(path, 0, None, dest, h)
    shutil.copyfile(path, dest)
    return dest.stat().st_size


def copy_sample(source: str | None, dest: Path, digest: str | None = None) -> Copied:
    """Copy ``source`` to the new file ``dest``; None gives an empty file (and its digest).

    Args:
        source: a local path or any GDAL path (``/vsisubfile/`` ranges of a local
            container are copied in the kernel when no digest is asked).
        dest: the file to create (must not exist).
        digest: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: also return the digest of
            the copied bytes, computed from the buffers that were written.

    Example:
        >>> Path("out").mkdir()
        >>> copy_sample("src/s000.tif", Path("out/a.tif"), digest="xxh3")
        Copied(size=622, digest='xxh3:...')
    """
    h = None if check_algorithm(digest) is None else StreamingDigest(digest or "")
    try:
        if source is None:
            dest.touch(exist_ok=False)
            return Copied(0, None if h is None else h.value())
        size = _copy(to_vsi(source), dest, h)
        return Copied(size, None if h is None else h.value())
    except OSError as exc:
        if isinstance(exc, TacoIOError):
            raise
        raise TacoIOError(f"cannot copy sample {source!r} to {str(dest)!r}: {exc}") from exc
