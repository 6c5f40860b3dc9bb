"""The TARIDX key hash (XXH64) against published vectors and vectors from the C library."""

from __future__ import annotations

import pytest

from taco_taridx.xxh64 import xxh64

# Published: python-xxhash README ("Nobody inspects...", "xxhash" with seed 20141025),
# Fastly's digest.hash_xxh64 docs ("abc"), the xxHash sanity test (empty input).
PUBLISHED = [
    (b"", 0, 0xEF46DB3751D8E999),
    (b"abc", 0, 0x44BC2CF5AD770999),
    (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),
    (b"xxhash", 20141025, 0xB559B98D844E0635),
]
# From xxhash 4.1.0 (libxxhash 0.8.x); they cover the tail paths (1, 4 and 8-byte
# steps), exactly one 32-byte stripe, several stripes, and a non-zero seed.
GENERATED = [
    (b"a", 0, 0xD24EC4F1A98C6E5B),
    (b"message digest", 0, 0x066ED728FCEEB3BE),
    (b"abcdefghijklmnopqrstuvwxyz", 0, 0xCFE1F278FA89835C),
    (bytes(range(64)), 0, 0xF7C67301DB6713F0),
    (b"0123456789" * 10, 0, 0xF80E7B96315AFFFA),
    (b"", 2654435761, 0xAC75FDA2929B17EF),
    (b"a", 2654435761, 0x393DA8B78992279B),
    (b"abc", 2654435761, 0x1318DF30094A85FD),
    (b"Nobody inspects the spammish repetition", 2654435761, 0x56DB22DD5B051147),
    (bytes(range(64)), 2654435761, 0x6E545403B828CF8B),
]


@pytest.mark.parametrize(("data", "seed", "digest"), PUBLISHED + GENERATED)
def test_known_vectors(data: bytes, seed: int, digest: int) -> None:
    assert xxh64(data, seed) == digest


def test_digest_is_an_unsigned_64_bit_integer() -> None:
    values = {xxh64(bytes([i]) * i) for i in range(100)}
    assert len(values) == 100
    assert all(0 <= v < 2**64 for v in values)
