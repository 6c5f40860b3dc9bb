"""The legacy binary ``__TACOCAT__`` file: a 128-byte header, then data.

Layout (little-endian), as the TACO specification 6.5 describes and tacotoolbox
0.18 wrote it:

====== ==== =================================================================
offset size field
====== ==== =================================================================
0      8    magic ``b"TACOCAT\\x00"``
8      4    uint32 format version (1)
12     4    uint32 max depth (0..5)
16     96   six (uint64 offset, uint64 size) pairs: level0..level5, (0, 0) if absent
112    16   (uint64 offset, uint64 size) of COLLECTION.json (always slot 6)
128    ...  level parquet files back to back, then COLLECTION.json
====== ==== =================================================================
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import MAX_DEPTH, MAX_LEVELS

__all__ = ["MAGIC", "TACOCAT_HEADER_SIZE", "TACOCAT_VERSION", "TacoCatHeader"]

MAGIC: Final = b"TACOCAT\x00"
TACOCAT_VERSION: Final = 1
TACOCAT_HEADER_SIZE: Final = 128
_FIXED = struct.Struct("<8sII")
_PAIR = struct.Struct("<QQ")


@dataclass(frozen=True, slots=True)
class TacoCatHeader:
    """Decoded ``__TACOCAT__`` header: one entry per level present, plus COLLECTION.json."""

    levels: tuple[HeaderEntry, ...]
    collection: HeaderEntry
    version: int = TACOCAT_VERSION

    @property
    def max_depth(self) -> int:
        return len(self.levels) - 1

    def pack(self) -> bytes:
        if not 1 <= len(self.levels) <= MAX_LEVELS:
            raise TacoFormatError(
                f"__TACOCAT__ holds 1..{MAX_LEVELS} levels, got {len(self.levels)}"
            )
        slots = list(self.levels) + [HeaderEntry(0, 0)] * (MAX_LEVELS - len(self.levels))
        out = _FIXED.pack(MAGIC, self.version, self.max_depth)
        out += b"".join(_PAIR.pack(e.offset, e.length) for e in slots)
        out += _PAIR.pack(self.collection.offset, self.collection.length)
        assert len(out) == TACOCAT_HEADER_SIZE
        return out

    @classmethod
    def unpack(cls, buffer: bytes, where: str = "__TACOCAT__") -> TacoCatHeader:
        if len(buffer) < TACOCAT_HEADER_SIZE:
            raise TacoFormatError(
                f"{where}: a __TACOCAT__ header needs {TACOCAT_HEADER_SIZE} bytes, "
                f"only {len(buffer)} available"
            )
        magic, version, max_depth = _FIXED.unpack_from(buffer)
        if magic != MAGIC:
            raise TacoFormatError(f"{where}: expected magic {MAGIC!r} at byte 0, found {magic!r}")
        if version != TACOCAT_VERSION:
            raise TacoFormatError(
                f"{where}: unsupported __TACOCAT__ version {version} (expected {TACOCAT_VERSION})"
            )
        if max_depth > MAX_DEPTH:
            raise TacoFormatError(
                f"{where}: max depth must be 0..{MAX_DEPTH}, found {max_depth} at byte 12"
            )
        pairs = [HeaderEntry(*_PAIR.unpack_from(buffer, 16 + 16 * i)) for i in range(7)]
        collection = pairs[6]
        if collection.length == 0:
            raise TacoFormatError(f"{where}: COLLECTION.json entry (slot 6) is empty")
        return cls(tuple(pairs[: max_depth + 1]), collection, version)
