"""XXH64 (xxHash, 64-bit) in pure Python: the key hash of TARIDX rows.

TARIDX stores ``xxhash64(stem)`` with seed 0 as an integer.  Keys are short
(sample stems), so plain Python integers are fast enough and spare a compiled
dependency; the test suite checks this against published vectors.  Follows
the XXH64 algorithm of the xxHash specification (``doc/xxhash_spec.md``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["xxh64"]

_MASK: Final = 0xFFFFFFFFFFFFFFFF
_P1: Final = 0x9E3779B185EBCA87
_P2: Final = 0xC2B2AE3D27D4EB4F
_P3: Final = 0x165667B19E3779F9
_P4: Final = 0x85EBCA77C2B2AE63
_P5: Final = 0x27D4EB2F165667C5


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _MASK
    return (_rotl(acc, 31) * _P1) & _MASK


def _merge(acc: int, value: int) -> int:
    acc ^= _round(0, value)
    return (acc * _P1 + _P4) & _MASK


def _lane(data: bytes, at: int, width: int = 8) -> int:
    return int.from_bytes(data[at : at + width], "little")


def _stripes(data: bytes, seed: int) -> tuple[int, int]:
    """Accumulate every full 32-byte stripe; returns ``(acc, bytes consumed)``."""
    v1 = (seed + _P1 + _P2) & _MASK
    v2 = (seed + _P2) & _MASK
    v3 = seed
    v4 = (seed - _P1) & _MASK
    end = len(data) - len(data) % 32
    for at in range(0, end, 32):
        v1 = _round(v1, _lane(data, at))
        v2 = _round(v2, _lane(data, at + 8))
        v3 = _round(v3, _lane(data, at + 16))
        v4 = _round(v4, _lane(data, at + 24))
    acc = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
    for v in (v1, v2, v3, v4):
        acc = _merge(acc, v)
    return acc, end


def _tail(acc: int, data: bytes, at: int) -> int:
    """Mix the last ``len(data) - at`` (< 32) bytes into ``acc``."""
    while at + 8 <= len(data):
        acc ^= _round(0, _lane(data, at))
        acc = (_rotl(acc, 27) * _P1 + _P4) & _MASK
        at += 8
    if at + 4 <= len(data):
        acc ^= (_lane(data, at, 4) * _P1) & _MASK
        acc = (_rotl(acc, 23) * _P2 + _P3) & _MASK
        at += 4
    while at < len(data):
        acc ^= (data[at] * _P5) & _MASK
        acc = (_rotl(acc, 11) * _P1) & _MASK
        at += 1
    return acc


def _avalanche(acc: int) -> int:
    acc = ((acc ^ (acc >> 33)) * _P2) & _MASK
    acc = ((acc ^ (acc >> 29)) * _P3) & _MASK
    return acc ^ (acc >> 32)


def xxh64(data: bytes, seed: int = 0) -> int:
    """The XXH64 digest of ``data`` as an unsigned integer (``xxhash.xxh64_intdigest``).

    Example:
        >>> hex(xxh64(b"abc"))
        '0x44bc2cf5ad770999'
    """
    seed &= _MASK
    if len(data) >= 32:
        acc, at = _stripes(data, seed)
    else:
        acc, at = (seed + _P5) & _MASK, 0
    acc = (acc + len(data)) & _MASK
    return _avalanche(_tail(acc, data, at))
