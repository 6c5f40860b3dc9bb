"""Per-sample digests: the ``taco_gdal:checksum`` column, ``"<algorithm>:<lowercase hex>"``.

Algorithms (:data:`~taco_gdal.format.names.CHECKSUM_ALGORITHMS`): ``crc32c``
(google-crc32c, 8 hex digits), ``xxh3`` (xxhash's XXH3-64, 16 hex digits) and
``sha256`` (hashlib, 64 hex digits).  Every hasher takes bytes incrementally so
a sample is digested while it streams, in bounded memory.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

__all__ = ["Digest", "Hasher", "digest_bytes", "new_hasher", "parse_checksum"]

_HEX_DIGITS: Final = {"crc32c": 8, "xxh3": 16, "sha256": 64}
_VALUE: Final = re.compile(r"([a-z0-9]+):([0-9a-f]+)")


class Hasher(Protocol):
    """What every algorithm offers: ``update(bytes)`` and ``hexdigest()``."""

    def update(self, data: bytes | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


class _Crc32c:
    def __init__(self) -> None:
        import google_crc32c

        self._extend: Callable[[int, bytes], int] = google_crc32c.extend
        self._crc = 0

    def update(self, data: bytes | memoryview, /) -> None:
        self._crc = self._extend(self._crc, bytes(data) if isinstance(data, memoryview) else data)

    def hexdigest(self) -> str:
        return f"{self._crc:08x}"


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
    """A parsed checksum value.

    Example:
        >>> parse_checksum("crc32c:e3069283")
        Digest(algorithm='crc32c', hexdigest='e3069283')
    """

    algorithm: str
    hexdigest: str

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hexdigest}"


def parse_checksum(value: object, where: str = CHECKSUM) -> Digest:
    """Parse ``"<algorithm>:<lowercase hex>"``.

    Raises:
        TacoFormatError: not a string of that form, an unknown algorithm, or
            a digest of the wrong length for its algorithm.
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


def digest_bytes(algorithm: str, data: bytes | memoryview) -> Digest:
    """The digest of ``data`` with ``algorithm``.

    Example:
        >>> str(digest_bytes("crc32c", b"123456789"))
        'crc32c:e3069283'
    """
    hasher = new_hasher(algorithm)
    hasher.update(data)
    return Digest(algorithm, hasher.hexdigest())
