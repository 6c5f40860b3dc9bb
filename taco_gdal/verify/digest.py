"""Per-sample digests for verification: the names of :mod:`taco_gdal.format.checksum`.

The ``taco_gdal:checksum`` column, its algorithms and the hashers are defined once,
in :mod:`taco_gdal.format.checksum`, which the writers use too; this module keeps
the names ``verify`` and the sample readers import.

Example:
    >>> str(digest_bytes("crc32c", b"123456789"))
    'crc32c:e3069283'
"""

from __future__ import annotations

from taco_gdal.format.checksum import Digest, Hasher, digest_bytes, new_hasher, parse_checksum

__all__ = ["Digest", "Hasher", "digest_bytes", "new_hasher", "parse_checksum"]
