"""Per-sample digests computed by libraries other than the one under test.

Tests check the writers' stored digests against values computed here directly,
with ``google_crc32c``, ``xxhash`` and ``hashlib``.
"""

from __future__ import annotations

import hashlib

import google_crc32c
import xxhash


def independent_digest(algorithm: str, data: bytes) -> str:
    """``"<algorithm>:<hex>"`` as ``taco_gdal:checksum`` stores it, from another library."""
    if algorithm == "crc32c":
        return f"crc32c:{google_crc32c.value(data):08x}"
    if algorithm == "xxh3":
        return f"xxh3:{xxhash.xxh3_64(data).hexdigest()}"
    return f"sha256:{hashlib.sha256(data).hexdigest()}"
