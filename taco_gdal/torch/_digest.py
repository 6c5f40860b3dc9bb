"""Check a sample's bytes against its ``taco_gdal:checksum`` value."""

from __future__ import annotations

from taco_gdal.errors import TacoChecksumError
from taco_gdal.format.names import CHECKSUM

__all__ = ["check_digest"]


def check_digest(data: bytes, stored: str, sample: str, where: str) -> None:
    """Raise unless ``data`` (``sample``'s bytes read from GDAL path ``where``) has digest
    ``stored`` (``"<algorithm>:<hex>"``).

    Raises:
        TacoChecksumError: the digests differ.
        TacoFormatError: ``stored`` is malformed or names an unknown algorithm.

    Example:
        >>> check_digest(b"123456789", "crc32c:e3069283", "s0", "/vsisubfile/0_9,/data/x.tacozip")
    """
    from taco_gdal.format.checksum import digest_bytes, parse_checksum

    expected = parse_checksum(stored, f"{where}: sample {sample!r}, {CHECKSUM}")
    found = digest_bytes(expected.algorithm, data)
    if found.hexdigest != expected.hexdigest:
        raise TacoChecksumError(
            f"sample {sample!r} in {where}: {CHECKSUM} expected {expected}, the "
            f"{len(data)} bytes read have {found} (corrupted or replaced data)"
        )
