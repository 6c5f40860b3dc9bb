"""Per-sample digests computed by libraries other than the one under test.

The writer and ``format/checksum.py`` compute CRC-32C through the project's own C
extension, ISA-L or google-crc32c by ctypes; tests check them against
``google_crc32c``'s Python extension, ``xxhash`` and ``hashlib``.
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
