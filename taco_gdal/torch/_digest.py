"""Check a sample's bytes against its ``taco_gdal:checksum`` value.

The value format and the algorithms are :mod:`taco_gdal.format.checksum`'s
(imported on first check, so workers of a dataset without ``verify=True``
never load the verify package).
"""

from __future__ import annotations

from taco_gdal.errors import TacoChecksumError
from taco_gdal.format.names import CHECKSUM

__all__ = ["check_digest"]


def check_digest(data: bytes, stored: str, sample: str, where: str) -> None:
    """Raise unless ``data`` has the digest ``stored`` (``"<algorithm>:<hex>"``), the
    bytes of ``sample`` read from ``where`` (its GDAL path: ids repeat under
    different parents, the byte range does not).

    Raises:
        TacoChecksumError: the digests differ (names the sample, its path, both digests).
        TacoFormatError: ``stored`` is not ``"<algorithm>:<lowercase hex>"`` of a
            known algorithm.

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
