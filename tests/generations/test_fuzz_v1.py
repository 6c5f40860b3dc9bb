"""Fuzzed TACO v1 headers and footers: only TacoFormatError (V1FormatError) comes out."""

from __future__ import annotations

import contextlib
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import taco_gdal
from taco_gdal.errors import TacoFormatError
from taco_v1.layout import HEADER_SIZE, TACO_HEADER_SIZE, V1FormatError, parse_header
from tests.generations.conftest import golden

FAST = settings(max_examples=300, deadline=None)
_REAL = golden("v1/v1_flat.taco").read_bytes()


@FAST
@given(st.binary(max_size=64), st.none() | st.integers(0, 2**20))
def test_random_headers_raise_only_format_errors(data: bytes, size: int | None) -> None:
    try:
        header = parse_header(data, "fuzz", size)
    except V1FormatError:
        return
    assert header.footer_offset >= HEADER_SIZE
    if size is not None:
        assert header.footer_end <= size


@FAST
@given(
    st.sampled_from([b"WX", b"#y"]),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
)
def test_structured_headers(magic: bytes, fo: int, fl: int, co: int, cl: int) -> None:
    data = magic + struct.pack("<QQQQQ", fo, fl, 1, co, cl)
    with contextlib.suppress(V1FormatError):
        header = parse_header(data, "fuzz", len(_REAL))
        assert header.footer_end <= len(_REAL)
        assert header.collection_offset is None or header.kind == "taco"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(2, TACO_HEADER_SIZE - 1) | st.integers(0, len(_REAL) - 1), st.integers(0, 255))
def test_mutated_files_load_or_fail_with_format_errors(
    tmp_path: Path, position: int, value: int
) -> None:
    data = bytearray(_REAL)
    data[position] = value
    target = tmp_path / "fuzz.taco"
    target.write_bytes(bytes(data))
    with contextlib.suppress(TacoFormatError):
        ds = taco_gdal.load(target)
        assert ds.to_arrow(0).num_rows >= 0


def test_bad_magic_is_named() -> None:
    with pytest.raises(V1FormatError, match="magic"):
        parse_header(b"PK" + bytes(40), "x.taco")
