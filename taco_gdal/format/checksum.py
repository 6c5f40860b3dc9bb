"""Checksums: the ZIP CRC-32 and the per-sample digest column ``taco_gdal:checksum``.

One module for both, used by the writers (computed on the buffers they write),
by ``verify`` and by sample reads that check a digest.

* CRC-32 (every ZIP member's): ISA-L's (``isal``, about 10 GB/s) when it is
  installed, zlib's otherwise (about 1 GB/s); both give the same value.
* Digests (:data:`~taco_gdal.format.names.CHECKSUM_ALGORITHMS`): ``crc32c``
  (google-crc32c, 8 hex digits), ``xxh3`` (xxhash's XXH3-64, 16 hex digits) and
  ``sha256`` (hashlib, 64 hex digits), stored as ``"<algorithm>:<lowercase hex>"``.
  Every hasher takes buffers incrementally, so a sample is digested while it
  streams, in bounded memory, and every one releases the GIL on large buffers
  (hashlib above 2 KiB, xxhash always, crc32c through google-crc32c's C library
  called with ctypes), so a digest can run in a thread beside the copy.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, TypeAlias

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

__all__ = [
    "Digest",
    "Hasher",
    "StreamingDigest",
    "check_algorithm",
    "crc32",
    "digest_bytes",
    "new_hasher",
    "parse_checksum",
]

Buffer: TypeAlias = bytes | bytearray | memoryview

try:  # ISA-L's CRC-32 is ~10x zlib's: it keeps the CRC off the copy's critical path
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency; zlib gives equal values
    from zlib import crc32 as _crc32

_HEX_DIGITS: Final = {"crc32c": 8, "xxh3": 16, "sha256": 64}
_VALUE: Final = re.compile(r"([a-z0-9]+):([0-9a-f]+)")


def crc32(data: Buffer, value: int = 0) -> int:
    """ZIP CRC-32 of ``data``, continuing from ``value``.

    Example:
        >>> hex(crc32(b"hello"))
        '0x3610a686'
    """
    return int(_crc32(data, value))


class Hasher(Protocol):
    """What every algorithm offers: ``update(buffer)`` and ``hexdigest()``."""

    def update(self, data: Buffer, /) -> None: ...

    def hexdigest(self) -> str: ...


_Extend: TypeAlias = Callable[[int, Buffer], int]


@functools.cache
def _crc32c_extend() -> _Extend:
    """google-crc32c's ``extend``, called through its C library when it ships one.

    The Python extension holds the GIL and accepts ``bytes`` only (one copy per
    block); ``crc32c_extend`` of the library it wraps, called with ctypes,
    releases the GIL and reads the buffer in place.  Same values either way.
    """
    import google_crc32c

    package = Path(google_crc32c.__file__).parent
    libraries = sorted(package.parent.glob("google_crc32c.libs/libcrc32c*.so*"))
    try:
        lib = ctypes.CDLL(str(libraries[0]))
        fn = lib.crc32c_extend
    except (IndexError, OSError, AttributeError):  # another build: the extension, with a copy
        slow: Callable[[int, bytes], int] = google_crc32c.extend
        return lambda crc, data: slow(crc, data if isinstance(data, bytes) else bytes(data))
    fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
    fn.restype = ctypes.c_uint32

    def extend(crc: int, data: Buffer) -> int:
        if isinstance(data, bytes):  # ctypes passes a bytes object's own buffer
            return int(fn(crc, data, len(data)))
        view = memoryview(data).cast("B")
        if view.readonly:  # a view of bytes or of a read-only mapping: one copy
            return int(fn(crc, view.tobytes(), view.nbytes))
        return int(fn(crc, (ctypes.c_char * view.nbytes).from_buffer(view), view.nbytes))

    return extend


class _Crc32c:
    def __init__(self) -> None:
        self._extend = _crc32c_extend()
        self._crc = 0

    def update(self, data: Buffer, /) -> None:
        self._crc = self._extend(self._crc, data)

    def hexdigest(self) -> str:
        return f"{self._crc:08x}"


def check_algorithm(algorithm: str | None) -> str | None:
    """``algorithm`` if it is None or a supported digest (a writer option), else an error.

    Raises:
        TacoValidationError: an unknown algorithm.

    Example:
        >>> check_algorithm("xxh3")
        'xxh3'
    """
    if algorithm is not None and algorithm not in _HEX_DIGITS:
        raise TacoValidationError(
            f"checksum must be one of {list(CHECKSUM_ALGORITHMS)} or None, found {algorithm!r}"
        )
    return algorithm


def new_hasher(algorithm: str) -> Hasher:
    """A fresh incremental hasher for ``algorithm``.

    Raises:
        TacoFormatError: the algorithm is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> h = new_hasher("sha256"); h.update(b"abc"); h.hexdigest()[:8]
        'ba7816bf'
    """
    if algorithm == "crc32c":
        return _Crc32c()
    if algorithm == "xxh3":
        import xxhash

        return xxhash.xxh3_64()
    if algorithm == "sha256":
        return hashlib.sha256()
    raise TacoFormatError(
        f"{CHECKSUM}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, found {algorithm!r}"
    )


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest value; ``str()`` gives its stored form.

    Example:
        >>> parse_checksum("crc32c:e3069283")
        Digest(algorithm='crc32c', hexdigest='e3069283')
    """

    algorithm: str
    hexdigest: str

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hexdigest}"


class StreamingDigest:
    """A digest fed with buffers as they are written; ``value()`` is the stored form.

    Args:
        algorithm: one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> d = StreamingDigest("sha256")
        >>> d.update(b"abc")
        >>> d.value()[:15]
        'sha256:ba7816bf'
    """

    def __init__(self, algorithm: str) -> None:
        check_algorithm(algorithm)
        self.algorithm = algorithm
        self._hasher = new_hasher(algorithm)

    def update(self, data: Buffer) -> None:
        self._hasher.update(data)

    def value(self) -> str:
        """``"<algorithm>:<lowercase hex>"``."""
        return f"{self.algorithm}:{self._hasher.hexdigest()}"


def parse_checksum(value: object, where: str = CHECKSUM) -> Digest:
    """Parse ``"<algorithm>:<lowercase hex>"``.

    Raises:
        TacoFormatError: not a string of that form, an unknown algorithm, or
            a digest of the wrong length for its algorithm.

    Example:
        >>> parse_checksum("xxh3:00000000000000ff").algorithm
        'xxh3'
    """
    if not isinstance(value, str):
        raise TacoFormatError(
            f"{where}: expected a string '<algorithm>:<lowercase hex>', found {value!r}"
        )
    match = _VALUE.fullmatch(value)
    if match is None:
        raise TacoFormatError(
            f"{where}: expected '<algorithm>:<lowercase hex>', found {value[:100]!r}"
        )
    algorithm, hexdigest = match.groups()
    digits = _HEX_DIGITS.get(algorithm)
    if digits is None:
        raise TacoFormatError(
            f"{where}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, found {algorithm!r}"
        )
    if len(hexdigest) != digits:
        raise TacoFormatError(
            f"{where}: a {algorithm} digest has {digits} hex digits, found {len(hexdigest)}"
        )
    return Digest(algorithm, hexdigest)


def digest_bytes(algorithm: str, data: Buffer) -> Digest:
    """The digest of ``data`` with ``algorithm``.

    Example:
        >>> str(digest_bytes("crc32c", b"123456789"))
        'crc32c:e3069283'
    """
    hasher = new_hasher(algorithm)
    hasher.update(data)
    return Digest(algorithm, hasher.hexdigest())
