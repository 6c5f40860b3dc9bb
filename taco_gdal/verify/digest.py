"""Digest names for ``verify`` and sample readers, from :mod:`taco_gdal.format.checksum`.

Example:
    >>> str(digest_bytes("crc32c", b"123456789"))
    'crc32c:e3069283'
"""

from __future__ import annotations

from taco_gdal.format.checksum import Digest, Hasher, digest_bytes, new_hasher, parse_checksum

__all__ = ["Digest", "Hasher", "digest_bytes", "new_hasher", "parse_checksum"]
