"""TACO_HEADER parsing: every error condition of the spec maps to TacoFormatError."""

from __future__ import annotations

import pytest

from taco_gdal.errors import TacoError, TacoFormatError
from taco_gdal.format import header as hdr


def _valid() -> bytes:
    return hdr.serialize_header(hdr.TacoHeader((hdr.HeaderEntry(200, 10), hdr.HeaderEntry(210, 5))))


def test_byte_layout_matches_spec():
    raw = _valid()
    assert raw[0:4] == b"PK\x03\x04"
    assert int.from_bytes(raw[4:6], "little") == 20
    assert raw[6:10] == b"\0\0\0\0"  # flags 0, method STORE
    assert int.from_bytes(raw[18:22], "little") == 116
    assert int.from_bytes(raw[22:26], "little") == 116
    assert int.from_bytes(raw[26:28], "little") == 11
    assert int.from_bytes(raw[28:30], "little") == 0
    assert raw[30:41] == b"TACO_HEADER"
    assert raw[41] == 2
    assert int.from_bytes(raw[45:53], "little") == 200
    assert int.from_bytes(raw[53:61], "little") == 10


def test_short_buffer():
    with pytest.raises(TacoFormatError, match=r"needs 157 bytes, only 156 available"):
        hdr.parse_header(_valid()[:156], "x.tacozip")


def test_wrong_signature_names_what_was_found():
    raw = b"PK\x05\x06" + _valid()[4:]
    with pytest.raises(TacoFormatError, match=r"x.tacozip: not a TACO ZIP.*found 0x06054b50"):
        hdr.parse_header(raw, "x.tacozip")


def test_wrong_name():
    raw = bytearray(_valid())
    raw[30:41] = b"TACO_GHOST_"
    with pytest.raises(TacoFormatError, match=r"expected member name b'TACO_HEADER'.*TACO_GHOST_"):
        hdr.parse_header(bytes(raw))


def test_count_above_seven():
    raw = bytearray(_valid())
    raw[41] = 8
    with pytest.raises(TacoFormatError, match=r"count must be 0..7, found 8"):
        hdr.parse_header(bytes(raw))


def test_serialize_refuses_eight_entries():
    with pytest.raises(TacoFormatError, match="at most 7"):
        hdr.serialize_payload([hdr.HeaderEntry(0, 0)] * 8)


def test_entry_must_fit_in_uint64():
    with pytest.raises(TacoFormatError, match="unsigned 64-bit"):
        hdr.HeaderEntry(-1, 0)
    with pytest.raises(TacoFormatError, match="unsigned 64-bit"):
        hdr.HeaderEntry(0, 2**64)


def test_format_errors_are_value_errors_and_taco_errors():
    with pytest.raises(ValueError):
        hdr.parse_header(b"")
    with pytest.raises(TacoError):
        hdr.parse_header(b"")


def test_padding_bytes_not_enforced_on_read():
    raw = bytearray(_valid())
    raw[42] = 0xFF  # reserved, "not enforced during read"
    assert hdr.parse_header(bytes(raw)).count == 2
