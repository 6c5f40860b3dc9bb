"""Checksums: the ZIP CRC-32 and the per-sample digest column ``taco_gdal:checksum``.

One module for both, used by the writers (on the buffers they write), by
``verify`` and by sample reads that check a digest.  Every value comes from a
well-kept library: CRC-32 from ISA-L (``isal``, zlib's gives the same values),
CRC-32C from ``google-crc32c``, XXH3 (XXH3-64) from ``xxhash`` and SHA-256 from
``hashlib``.  A digest is stored as ``"<algorithm>:<lowercase hex>"``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias

import google_crc32c
import xxhash

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

try:  # ISA-L's CRC-32 is several times zlib's; both give the same values
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32

__all__ = [
    "Digest",
    "Hasher",
    "StreamingDigest",
    "bytes_only",
    "check_algorithm",
    "crc32",
    "digest_bytes",
    "digest_value",
    "new_hasher",
    "parse_checksum",
]

Buffer: TypeAlias = bytes | bytearray | memoryview
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
    """An incremental digest: ``update()`` with buffers, then ``hexdigest()``."""

    def update(self, data: Buffer, /) -> None: ...

    def hexdigest(self) -> str: ...


class _Crc32c:
    """CRC-32C by ``google_crc32c.extend`` (which takes ``bytes`` only), as a :class:`Hasher`."""

    def __init__(self) -> None:
        self._crc = 0

    def update(self, data: Buffer, /) -> None:
        if type(data) is not bytes:
            data = bytes(data)
        self._crc = google_crc32c.extend(self._crc, data)

    def hexdigest(self) -> str:
        return f"{self._crc:08x}"


def check_algorithm(algorithm: str | None) -> str | None:
    """``algorithm`` if it is None or a supported digest, else TacoValidationError.

    Example:
        >>> check_algorithm("xxh3")
        'xxh3'
    """
    if algorithm is not None and algorithm not in _HEX_DIGITS:
        raise TacoValidationError(
            f"checksum must be one of {list(CHECKSUM_ALGORITHMS)} or None, found {algorithm!r}"
        )
    return algorithm


def bytes_only(algorithm: str | None) -> bool:
    """True when ``algorithm``'s library takes ``bytes`` only (google-crc32c), so a
    reused buffer would be copied into new ``bytes`` before each update; readers then
    return new ``bytes`` instead of filling their buffer.

    Example:
        >>> bytes_only("crc32c"), bytes_only("xxh3")
        (True, False)
    """
    return algorithm == "crc32c"


def new_hasher(algorithm: str) -> Hasher:
    """A fresh incremental hasher for ``algorithm`` (TacoFormatError if unknown).

    Example:
        >>> h = new_hasher("sha256"); h.update(b"abc"); h.hexdigest()[:8]
        'ba7816bf'
    """
    if algorithm == "crc32c":
        return _Crc32c()
    if algorithm == "xxh3":
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
    """A digest fed with buffers as they are written; ``stored()`` is the stored form.

    Example:
        >>> d = StreamingDigest("sha256")
        >>> d.update(b"abc")
        >>> d.stored()[:15]
        'sha256:ba7816bf'
    """

    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self._hasher = new_hasher(algorithm)

    def update(self, data: Buffer) -> None:
        self._hasher.update(data)

    def stored(self) -> str:
        """``"<algorithm>:<lowercase hex>"``."""
        return f"{self.algorithm}:{self._hasher.hexdigest()}"


def parse_checksum(value: object, where: str = CHECKSUM) -> Digest:
    """Parse ``"<algorithm>:<lowercase hex>"`` (TacoFormatError for any other form or length).

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


def digest_value(algorithm: str, data: Buffer) -> str:
    """The stored form of ``data``'s digest: ``"<algorithm>:<lowercase hex>"``.

    Example:
        >>> digest_value("xxh3", b"")
        'xxh3:2d06800538d394c2'
    """
    one_shot = _ONE_SHOT.get(algorithm)
    if one_shot is None:
        return str(digest_bytes(algorithm, data))  # raises for an unknown algorithm
    return one_shot(data)


_ONE_SHOT: Final[dict[str, Callable[[Buffer], str]]] = {
    "crc32c": lambda data: f"crc32c:{google_crc32c.value(bytes(data)):08x}",
    "xxh3": lambda data: "xxh3:" + xxhash.xxh3_64_hexdigest(data),
    "sha256": lambda data: "sha256:" + hashlib.sha256(data).hexdigest(),
}
"""Whole-buffer digests in one library call each: most samples are small."""
