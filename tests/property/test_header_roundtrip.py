"""Property tests: TACO_HEADER, TACOCAT header, ZIP records and VSI paths round-trip."""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from taco_gdal.format import header as hdr
from taco_gdal.format import vsi
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.tacocat import TacoCatHeader

u64 = st.integers(min_value=0, max_value=2**64 - 1)
entry = st.builds(hdr.HeaderEntry, u64, u64)


@given(st.lists(entry, min_size=0, max_size=7), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
def test_header_serialize_parse_round_trip(entries, dos_time, dos_date):
    header = hdr.TacoHeader(tuple(entries), dos_time, dos_date)
    raw = hdr.serialize_header(header)
    assert len(raw) == hdr.HEADER_SIZE == 157
    assert hdr.parse_header(raw) == header
    payload = raw[hdr.PAYLOAD_OFFSET :]
    assert payload[0] == len(entries)
    assert payload[1:4] == b"\0\0\0"
    assert int.from_bytes(raw[14:18], "little") == zlib.crc32(payload)
    # unused slots are zero-filled
    assert payload[4 + 16 * len(entries) :] == b"\0" * (16 * (7 - len(entries)))


@given(st.integers(0, 7))
def test_every_count_round_trips(count):
    entries = tuple(hdr.HeaderEntry(i * 1000, 2**63 + i) for i in range(count))
    assert hdr.parse_header(hdr.serialize_header(hdr.TacoHeader(entries))).entries == entries


@given(st.lists(entry, min_size=1, max_size=6), entry)
def test_tacocat_header_round_trip(levels, collection):
    if collection.length == 0:
        collection = hdr.HeaderEntry(collection.offset, 1)
    h = TacoCatHeader(tuple(levels), collection)
    raw = h.pack()
    assert len(raw) == 128
    assert TacoCatHeader.unpack(raw) == h


offsets = st.integers(min_value=0, max_value=2**63)
path_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1
)


@given(offsets, offsets, path_text)
def test_subfile_build_parse_round_trip(offset, size, container):
    built = vsi.build_subfile(offset, size, "/vsicurl/" + container)
    parsed = vsi.parse_subfile(built)
    assert (parsed.offset, parsed.size, parsed.container) == (offset, size, "/vsicurl/" + container)
    assert str(parsed) == built


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./,", min_size=1, max_size=40))
def test_to_vsi_schemes_round_trip_through_subfile(key):
    for scheme, prefix in (("s3://", "/vsis3/"), ("gs://", "/vsigs/"), ("az://", "/vsiaz/")):
        out = vsi.to_vsi(scheme + "bucket/" + key)
        assert out == prefix + "bucket/" + key
        assert vsi.to_vsi(out) == out  # already-VSI paths are kept
        assert vsi.parse_subfile(vsi.build_subfile(2**40, 7, out)).container == out
    url = "https://host/" + key
    assert vsi.to_vsi(url) == "/vsicurl/" + url


names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
    min_size=1,
    max_size=60,
)
sizes = st.one_of(st.integers(0, 2**32 - 2), st.integers(2**32 - 1, 2**62))


@given(names, sizes, st.integers(0, 2**32 - 1), st.integers(0, 2**62))
def test_zip_records_round_trip(name, size, crc, offset):
    lfh = zipfmt.LocalFileHeader.for_member(name, size, crc, 0x6000, 0x5821)
    raw = lfh.pack()
    assert len(raw) == lfh.packed_size
    back = zipfmt.LocalFileHeader.unpack(raw)
    assert back == lfh
    assert back.size == size
    assert (len(back.extra) == 20) == (size >= zipfmt.ZIP64_LIMIT)
    cd = zipfmt.CentralDirectoryEntry.for_member(lfh, size, offset)
    packed = cd.pack()
    parsed, end = zipfmt.CentralDirectoryEntry.unpack_from(packed, 0)
    assert end == len(packed) == cd.packed_size
    assert (parsed.size, parsed.lfh_offset, parsed.crc32) == (size, offset, crc)
    assert parsed.text_name == name


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40))
def test_end_records_round_trip(count, cd_size, cd_offset):
    tail = zipfmt.pack_end_records(count, cd_size, cd_offset)
    eocd = zipfmt.EndOfCentralDirectory.unpack(tail[-22:])
    needs = count >= 0xFFFF or cd_size >= zipfmt.ZIP64_LIMIT or cd_offset >= zipfmt.ZIP64_LIMIT
    assert len(tail) == (22 + 56 + 20 if needs else 22)
    if needs:
        z64 = zipfmt.Zip64EndOfCentralDirectory.unpack(tail[:56])
        assert (z64.entries, z64.cd_size, z64.cd_offset) == (count, cd_size, cd_offset)
        assert zipfmt.Zip64Locator.unpack(tail[56:76]).zip64_eocd_offset == cd_offset + cd_size
    else:
        assert (eocd.entries, eocd.cd_size, eocd.cd_offset) == (count, cd_size, cd_offset)
