"""Check a sample's bytes against its ``taco_gdal:checksum`` value."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Final

from taco_gdal.errors import TacoChecksumError, TacoFormatError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

__all__ = ["check_digest", "hex_digest"]


def _crc32c(data: bytes) -> str:
    import google_crc32c

    return f"{google_crc32c.value(data):08x}"


def _xxh3(data: bytes) -> str:
    import xxhash

    return xxhash.xxh3_64_hexdigest(data)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_HASHERS: Final[dict[str, Callable[[bytes], str]]] = {
    "crc32c": _crc32c,
    "xxh3": _xxh3,
    "sha256": _sha256,
}
assert tuple(_HASHERS) == CHECKSUM_ALGORITHMS


def hex_digest(algorithm: str, data: bytes) -> str:
    """The lowercase hex digest of ``data`` (crc32c: 8 digits, xxh3: XXH3-64, 16 digits).

    Raises:
        TacoFormatError: ``algorithm`` is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> hex_digest("sha256", b"abc")[:8]
        'ba7816bf'
    """
    hasher = _HASHERS.get(algorithm)
    if hasher is None:
        raise TacoFormatError(
            f"{CHECKSUM}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, "
            f"found {algorithm!r}"
        )
    return hasher(data)


def check_digest(data: bytes, stored: str, sample: str, container: str) -> None:
    """Raise unless ``data`` has the digest ``stored`` (``"<algorithm>:<hex>"``).

    Raises:
        TacoChecksumError: the digests differ (names sample, container, both digests).
        TacoFormatError: ``stored`` is not ``"<algorithm>:<hex>"``.

    Example:
        >>> check_digest(b"abc", "crc32c:364b3fb7", "s0", "/data/x.tacozip")
    """
    algorithm, sep, expected = stored.partition(":")
    if not sep:
        raise TacoFormatError(
            f"{container}: sample {sample!r} has {CHECKSUM} {stored!r}; expected "
            f"'<algorithm>:<lowercase hex>'"
        )
    found = hex_digest(algorithm, data)
    if found != expected.lower():
        raise TacoChecksumError(
            f"sample {sample!r} in {container}: {CHECKSUM} expected {algorithm}:{expected}, "
            f"the {len(data)} bytes read have {algorithm}:{found} (corrupted or replaced data)"
        )
