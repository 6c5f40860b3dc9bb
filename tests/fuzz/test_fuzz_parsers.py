"""Hypothesis fuzzing of the byte parsers themselves: arbitrary or mutated bytes in,
a parsed value or a TacoFormatError out, nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taco_caf.layout import parse_footer
from taco_caf.layout import parse_index as parse_caf_index
from taco_cozip.container import parse_json as parse_cozip_json
from taco_gdal.errors import TacoFormatError
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.header import HeaderEntry, TacoHeader, parse_header, serialize_header
from taco_gdal.format.tacocat import TacoCatHeader
from taco_gdal.read.opening.containers._parse import parse_collection
from taco_taridx.layout import parse_header as parse_taridx_header
from taco_taridx.layout import parse_index as parse_taridx_index
from taco_v1.container import _json as parse_v1_json
from tests.fuzz._documents import mutate_json
from tests.fuzz._harness import check_no_escape
from tests.fuzz.conftest import EXAMPLES

FAST = settings(max_examples=EXAMPLES * 5, deadline=None, derandomize=True)
MUTATIONS = st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 255)), max_size=8)


def _mutated(data: bytes, mutation: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for position, value in mutation:
        if out:
            out[position % len(out)] = value
    return bytes(out)


def _refused_or_parsed(call: Callable[[], object]) -> None:
    """The parser returns or refuses with TacoFormatError; any other exception fails the test."""
    outcome = check_no_escape(call)
    assert outcome in ("parsed", "refused")


HEADER = serialize_header(TacoHeader((HeaderEntry(200, 30), HeaderEntry(230, 40))))


@FAST
@given(mutation=MUTATIONS, cut=st.integers(0, 160))
def test_taco_header(mutation: list[tuple[int, int]], cut: int) -> None:
    _refused_or_parsed(lambda: parse_header(_mutated(HEADER, mutation)[:cut], "fuzz"))


def _archive() -> bytes:
    """Two STORE members, a central directory with ZIP64 extra fields, ZIP64 end records."""
    body = b""
    records = []
    for name, data in ((b"TACO_HEADER", b"x" * 116), (b"COLLECTION.json", b"{}")):
        offset = len(body)
        lfh = zipfmt.LocalFileHeader(name, 0, len(data), len(data))
        body += lfh.pack() + data
        records.append(zipfmt.CentralDirectoryEntry(name, 0, len(data), offset))
    cd = b"".join(r.pack() for r in records)
    z64 = zipfmt.Zip64EndOfCentralDirectory(len(records), len(cd), len(body)).pack()
    locator = zipfmt.Zip64Locator(len(body) + len(cd)).pack()
    eocd = zipfmt.EndOfCentralDirectory(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF).pack()
    return body + cd + z64 + locator + eocd


ARCHIVE = _archive()


@FAST
@given(mutation=MUTATIONS, cut=st.integers(0, len(ARCHIVE)))
def test_eocd_zip64_central_directory(mutation: list[tuple[int, int]], cut: int) -> None:
    data = _mutated(ARCHIVE, [(len(ARCHIVE) - 1 - p % 200, v) for p, v in mutation])[cut:]

    def read_at(offset: int, size: int) -> bytes:
        return data[offset : offset + size] if offset >= 0 else b""

    _refused_or_parsed(lambda: zipfmt.read_central_directory(read_at, len(data), "fuzz"))


@FAST
@given(data=st.binary(min_size=0, max_size=200))
def test_tacocat_header(data: bytes) -> None:
    _refused_or_parsed(lambda: TacoCatHeader.unpack(b"TACOCAT\0" + data, "fuzz"))


@FAST
@given(footer=st.binary(min_size=0, max_size=6), size=st.integers(0, 2**40))
def test_caf_footer(footer: bytes, size: int) -> None:
    _refused_or_parsed(lambda: parse_footer(footer, size, "fuzz"))


CAF_INDEX = json.dumps(
    {"format_version": "1.0", "members": {"a": {"start_byte": 0, "end_byte": 3}}}
).encode()


@FAST
@given(mutation=MUTATIONS, size=st.integers(0, 100))
def test_caf_index(mutation: list[tuple[int, int]], size: int) -> None:
    _refused_or_parsed(lambda: parse_caf_index(_mutated(CAF_INDEX, mutation), size, "fuzz"))


@FAST
@given(data=st.binary(min_size=0, max_size=300))
def test_taridx_header_and_rows(data: bytes) -> None:
    _refused_or_parsed(lambda: parse_taridx_header(b"TARIDX" + data, "fuzz"))
    _refused_or_parsed(lambda: parse_taridx_index(b"TARIDX" + data, "fuzz"))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = ["id", "providers", "extent", "licenses", "tasks", "taco:pit_schema", "taco:field_schema"]


@FAST
@given(key=st.sampled_from(KEYS), value=JSON)
def test_collection_values(key: str, value: object) -> None:
    text = json.dumps({"id": "x", key: value})
    _refused_or_parsed(lambda: parse_collection(text.encode(), "fuzz"))


@pytest.mark.parametrize("text", ["[" * 10_000, '{"a": ' + "1" * 10_000 + "}", "\ud800"])
def test_collection_pathological(text: str) -> None:
    with pytest.raises(TacoFormatError):
        parse_collection(text.encode("utf-8", "surrogatepass"), "fuzz")


COLLECTION = json.dumps(
    {
        "id": "x",
        "extent": {"spatial": [0, 0, 1, 1], "temporal": None},
        "providers": [{"name": "p"}],
        "taco:pit_schema": {"root": {"n": 1, "type": "FILE"}, "hierarchy": {}},
        "taco:field_schema": {"level0": [["id", "string", ""]]},
    }
)
JSON_PARSERS: dict[str, tuple[str, Callable[[bytes], object]]] = {
    "collection": (COLLECTION, lambda data: parse_collection(data, "fuzz")),
    "caf index": (CAF_INDEX.decode(), lambda data: parse_caf_index(data, 10, "fuzz")),
    "cozip collection": (COLLECTION, lambda data: parse_cozip_json(data, "fuzz")),
    "v1 collection": (COLLECTION, lambda data: parse_v1_json(data, "fuzz")),
}


@pytest.mark.parametrize("parser", list(JSON_PARSERS))
@FAST
@given(mutation=st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), max_size=3))
def test_every_json_parser_is_bounded(parser: str, mutation: list[tuple[int, int]]) -> None:
    """Huge numbers, deep nesting, special floats, surrogates and other types in every node."""
    document, parse = JSON_PARSERS[parser]
    _refused_or_parsed(lambda: parse(mutate_json(document, mutation)))
