"""Fuzzed CoZIP headers and indexes: the parsers raise CozipFormatError (a TacoFormatError) only."""

from __future__ import annotations

import contextlib
import struct
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import taco_gdal
from taco_cozip.layout import (
    INDEX_OFFSET,
    CozipFormatError,
    CozipHeader,
    fnv1a64,
    hash_ranges,
    parse_header,
    parse_index,
)
from taco_gdal.errors import TacoFormatError
from tests.generations.conftest import golden

FAST = settings(max_examples=300, deadline=None)
_REAL_HEAD = golden("v3/v3_nested.zip").read_bytes()[:4096]


def _index(names: list[bytes], offsets: list[int], sizes: list[int], profile: int) -> bytes:
    count = len(names)
    return (
        b"CZIP"
        + struct.pack("<HBI", 1, profile, count)
        + struct.pack(f"<{count}H", *[len(n) for n in names])
        + b"".join(names)
        + struct.pack(f"<{count}Q", *offsets)
        + struct.pack(f"<{count}Q", *sizes)
    )


@FAST
@given(st.binary(max_size=200))
def test_random_headers_raise_only_format_errors(data: bytes) -> None:
    try:
        header = parse_header(data, "fuzz")
    except CozipFormatError:
        return
    assert 0 < header.index_size < 0xFFFFFFFF


@FAST
@given(st.integers(0, INDEX_OFFSET - 1), st.integers(0, 255))
def test_mutated_real_header_raises_only_format_errors(position: int, value: int) -> None:
    data = bytearray(_REAL_HEAD[:INDEX_OFFSET])
    data[position] = value
    with contextlib.suppress(TacoFormatError):
        parse_header(bytes(data), "fuzz")


@FAST
@given(st.binary(max_size=400))
def test_random_indexes_raise_only_format_errors(data: bytes) -> None:
    for payload in (data, b"CZIP" + data):
        with contextlib.suppress(CozipFormatError):
            parse_index(payload, "fuzz")


@FAST
@given(
    st.lists(st.binary(min_size=0, max_size=12), max_size=5),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.integers(0, 255),
    st.integers(0, 40),
)
def test_structured_indexes_parse_or_fail_cleanly(
    names: list[bytes], offset: int, size: int, profile: int, cut: int
) -> None:
    payload = _index(names, [offset] * len(names), [size] * len(names), profile)
    for candidate in (payload, payload[: max(0, len(payload) - cut)]):
        try:
            index = parse_index(candidate, "fuzz")
        except CozipFormatError:
            continue
        assert index.profile == profile
        assert [e.name.encode() for e in index.entries] == names


@FAST
@given(st.integers(1, 2**32), st.integers(0, 2**20))
def test_hash_ranges_are_inside_the_archive_or_refused(index_size: int, size: int) -> None:
    try:
        ranges = hash_ranges(CozipHeader(index_size, 0), size, "fuzz")
    except CozipFormatError:
        return
    assert all(INDEX_OFFSET <= lo < hi <= size for lo, hi in ranges)


def test_fnv1a64_vectors() -> None:
    # published FNV-1a 64 test vectors
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


_ARCHIVE = golden("v3/v3_flat.zip").read_bytes()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 200), st.integers(0, 255), st.booleans())
def test_mutated_archives_load_or_fail_with_format_errors(
    tmp_path: Path, position: int, value: int, in_tail: bool
) -> None:
    data = bytearray(_ARCHIVE)
    at = len(data) - 1 - position if in_tail else position
    data[at] = value
    target = tmp_path / "fuzz.zip"
    target.write_bytes(bytes(data))
    try:
        ds = taco_gdal.load(target)
    except TacoFormatError:
        return
    # what loads: an unchanged byte, or one the CoZIP check does not cover (ZIP time/CRC
    # fields of the index header, local headers of data entries), never the index or the tail
    index_end = INDEX_OFFSET + parse_header(_ARCHIVE[:INDEX_OFFSET], "fixture").index_size
    hashed = in_tail or INDEX_OFFSET <= at < index_end
    assert bytes(data) == _ARCHIVE or not hashed
    assert ds.to_arrow(0).num_rows == 4
