"""format/checksum.py: every digest equals its library's one-shot value, whatever buffer type
and however the bytes are split (the writer feeds bytes, bytearrays and memoryview slices)."""

from __future__ import annotations

import hashlib
import itertools
import os

import google_crc32c
import pytest
import xxhash

from taco_gdal.format.checksum import StreamingDigest, digest_bytes
from taco_gdal.format.names import CHECKSUM_ALGORITHMS

DATA = os.urandom(300_001)


def reference(algorithm: str, data: bytes) -> str:
    if algorithm == "crc32c":
        return f"crc32c:{google_crc32c.value(data):08x}"
    if algorithm == "xxh3":
        return f"xxh3:{xxhash.xxh3_64(data).hexdigest()}"
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize(
    "as_buffer",
    [bytes, bytearray, lambda b: memoryview(bytearray(b)), lambda b: memoryview(b)],
    ids=["bytes", "bytearray", "writable-view", "readonly-view"],
)
def test_split_buffers_give_the_one_shot_digest(algorithm: str, as_buffer: object) -> None:
    digest = StreamingDigest(algorithm)
    cuts = [0, 1, 2047, 2048, 65_536, 262_144, len(DATA)]
    for start, end in itertools.pairwise(cuts):
        digest.update(as_buffer(DATA)[start:end])  # type: ignore[operator]
    assert digest.value() == reference(algorithm, DATA)


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_empty_input(algorithm: str) -> None:
    digest = StreamingDigest(algorithm)
    digest.update(memoryview(bytearray()))
    assert digest.value() == reference(algorithm, b"") == str(digest_bytes(algorithm, b""))
