"""XXH64 (xxHash, 64-bit): the key hash of TARIDX rows, from the ``xxhash`` library.

TARIDX stores ``xxhash64(stem)`` with seed 0 as an unsigned integer.
"""

from __future__ import annotations

import xxhash

__all__ = ["xxh64"]


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` with ``seed``, as an unsigned 64-bit integer.

    Example:
        >>> hex(xxh64(b"abc"))
        '0x44bc2cf5ad770999'
    """
    return int(xxhash.xxh64_intdigest(data, seed))
