"""Checksums computed while sample bytes are copied: the ZIP CRC-32 and the per-sample digest.

The CRC-32 every ZIP member needs and the optional per-sample digest
(``taco_gdal:checksum``, see :data:`~taco_gdal.format.names.CHECKSUM`) are fed
the same buffers, the ones that are written to the output, so the source is
read once and what is checksummed is what was written.

CRC-32 uses ISA-L (``isal``, about 10 GB/s with PCLMULQDQ) when it is installed,
zlib's otherwise (about 1 GB/s); both give the same value.  Digests:
``crc32c`` (``google-crc32c``), ``xxh3`` (``xxhash``, XXH3 64-bit) and
``sha256`` (``hashlib``); a digest is written ``"<algorithm>:<lowercase hex>"``.
"""

from __future__ import annotations

import hashlib
from typing import Final, Protocol, TypeAlias

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

__all__ = [
    "Digest",
    "check_algorithm",
    "crc32",
    "format_digest",
    "new_digest",
    "parse_digest",
]

Buffer: TypeAlias = bytes | bytearray | memoryview

try:  # ISA-L's CRC-32 is ~10x zlib's: it keeps the CRC off the copy's critical path
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency; zlib gives equal values
    from zlib import crc32 as _crc32


def crc32(data: Buffer, value: int = 0) -> int:
    """ZIP CRC-32 of ``data``, continuing from ``value``.

    Example:
        >>> hex(crc32(b"hello"))
        '0x3610a686'
    """
    return int(_crc32(data, value))


class Digest(Protocol):
    """An incremental digest: ``update`` with buffers, then ``value()``."""

    @property
    def algorithm(self) -> str: ...

    def update(self, data: Buffer) -> None: ...

    def value(self) -> str:
        """``"<algorithm>:<lowercase hex>"``."""
        ...


def format_digest(algorithm: str, hex_value: str) -> str:
    """The stored form of a digest.

    Example:
        >>> format_digest("xxh3", "00ff")
        'xxh3:00ff'
    """
    return f"{algorithm}:{hex_value.lower()}"


def parse_digest(text: str, where: str) -> tuple[str, str]:
    """``(algorithm, hex)`` of a stored digest; TacoValidationError when malformed.

    Example:
        >>> parse_digest("sha256:ab01", "row 0")
        ('sha256', 'ab01')
    """
    algorithm, sep, hex_value = text.partition(":")
    if not sep or algorithm not in CHECKSUM_ALGORITHMS or not hex_value:
        raise TacoValidationError(
            f"{where}: expected a {CHECKSUM} value '<algorithm>:<hex>' with an algorithm in "
            f"{list(CHECKSUM_ALGORITHMS)}, found {text!r}"
        )
    return algorithm, hex_value


class _Crc32c:
    algorithm: Final = "crc32c"

    def __init__(self) -> None:
        import google_crc32c

        self._extend = google_crc32c.extend
        self._crc = 0

    def update(self, data: Buffer) -> None:
        # google_crc32c's C extension accepts bytes only: one copy per block
        self._crc = self._extend(self._crc, data if isinstance(data, bytes) else bytes(data))

    def value(self) -> str:
        return format_digest(self.algorithm, f"{self._crc:08x}")


class _Xxh3:
    algorithm: Final = "xxh3"

    def __init__(self) -> None:
        import xxhash

        self._h = xxhash.xxh3_64()

    def update(self, data: Buffer) -> None:
        self._h.update(data)

    def value(self) -> str:
        return format_digest(self.algorithm, self._h.hexdigest())


class _Sha256:
    algorithm: Final = "sha256"

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, data: Buffer) -> None:
        self._h.update(data)

    def value(self) -> str:
        return format_digest(self.algorithm, self._h.hexdigest())


_DIGESTS: Final[dict[str, type[_Crc32c] | type[_Xxh3] | type[_Sha256]]] = {
    "crc32c": _Crc32c,
    "xxh3": _Xxh3,
    "sha256": _Sha256,
}


def check_algorithm(algorithm: str | None) -> str | None:
    """``algorithm`` if it is None or one of the supported digests, else TacoValidationError.

    Example:
        >>> check_algorithm("xxh3")
        'xxh3'
    """
    if algorithm is not None and algorithm not in _DIGESTS:
        raise TacoValidationError(
            f"checksum must be one of {list(CHECKSUM_ALGORITHMS)} or None, found {algorithm!r}"
        )
    return algorithm


def new_digest(algorithm: str) -> Digest:
    """A fresh incremental digest.

    Example:
        >>> d = new_digest("sha256")
        >>> d.update(b"abc")
        >>> d.value()[:15]
        'sha256:ba7816bf'
    """
    check_algorithm(algorithm)
    return _DIGESTS[algorithm]()
