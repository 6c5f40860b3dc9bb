"""format/checksum.py: every digest equals its library's one-shot value, whatever buffer type
and however the bytes are split (the writers feed bytes, bytearrays and memoryview slices)."""

from __future__ import annotations

import itertools
import os
import zlib

import pytest

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format.checksum import (
    StreamingDigest,
    check_algorithm,
    crc32,
    digest_bytes,
    digest_value,
    new_hasher,
    parse_checksum,
)
from taco_gdal.format.names import CHECKSUM_ALGORITHMS
from taco_gdal.write._copy import Checksums
from tests.support.digests import independent_digest

DATA = os.urandom(300_001)
BUFFERS = [bytes, bytearray, lambda b: memoryview(bytearray(b)), lambda b: memoryview(b)]
BUFFER_IDS = ["bytes", "bytearray", "writable-view", "readonly-view"]


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("as_buffer", BUFFERS, ids=BUFFER_IDS)
def test_split_buffers_give_the_one_shot_digest(algorithm: str, as_buffer: object) -> None:
    digest = StreamingDigest(algorithm)
    cuts = [0, 1, 2047, 2048, 65_536, 262_144, len(DATA)]
    for start, end in itertools.pairwise(cuts):
        digest.update(as_buffer(DATA)[start:end])  # type: ignore[operator]
    assert digest.stored() == independent_digest(algorithm, DATA)


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_empty_input(algorithm: str) -> None:
    digest = StreamingDigest(algorithm)
    digest.update(b"")
    assert (
        digest.stored() == independent_digest(algorithm, b"") == str(digest_bytes(algorithm, b""))
    )


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("as_buffer", BUFFERS, ids=BUFFER_IDS)
def test_digest_value_is_the_library_value(algorithm: str, as_buffer: object) -> None:
    for size in (0, 1, 100, 4096, 300_001):
        data = DATA[:size]
        assert digest_value(algorithm, as_buffer(data)) == independent_digest(algorithm, data)  # type: ignore[operator]


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_the_copys_checksums_give_the_zip_crc_and_the_digest(algorithm: str) -> None:
    sums = Checksums(algorithm, zip_crc=True)
    for start, end in itertools.pairwise([0, 5, 70_000, len(DATA)]):
        sums.update(memoryview(bytearray(DATA[start:end])))
    assert sums.crc == zlib.crc32(DATA)
    assert sums.stored() == independent_digest(algorithm, DATA)
    assert Checksums(None, zip_crc=False).stored() is None


def test_crc32_is_zlibs_and_continues() -> None:
    assert crc32(DATA) == zlib.crc32(DATA)
    assert crc32(DATA[1000:], crc32(DATA[:1000])) == zlib.crc32(DATA)
    assert crc32(bytearray(b"")) == 0


def test_xxh3_is_the_64_bit_variant() -> None:
    assert digest_value("xxh3", b"") == "xxh3:2d06800538d394c2"
    assert digest_value("crc32c", b"123456789") == "crc32c:e3069283"


def test_an_unknown_algorithm_is_refused() -> None:
    with pytest.raises(TacoFormatError, match=r"expected an algorithm among .* found 'md5'"):
        digest_value("md5", b"x")
    with pytest.raises(TacoFormatError, match=r"expected an algorithm among .* found 'md5'"):
        new_hasher("md5")
    with pytest.raises(TacoValidationError, match=r"checksum must be one of .* found 'md5'"):
        check_algorithm("md5")
    assert check_algorithm(None) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, "expected a string"),
        ("sha256-00", "expected '<algorithm>:<lowercase hex>'"),
        ("md5:00", "found 'md5'"),
        ("crc32c:0000", "has 8 hex digits, found 4"),
        ("crc32c:E3069283", "expected '<algorithm>:<lowercase hex>'"),
    ],
)
def test_parse_checksum_refuses_malformed_values(value: object, message: str) -> None:
    with pytest.raises(TacoFormatError, match=message):
        parse_checksum(value, "row 3")
    assert str(parse_checksum("crc32c:e3069283")) == "crc32c:e3069283"
