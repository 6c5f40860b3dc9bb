"""Hypothesis round trips for the CAF and TARIDX byte layouts (no I/O)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from taco_caf.layout import (
    FOOTER_SIZE,
    CafFormatError,
    CafIndex,
    CafMember,
    index_start,
    pack_footer,
    pack_index,
    parse_footer,
    parse_index,
)
from taco_taridx.layout import (
    FLAG_CONTIGUOUS,
    HEADER_SIZE,
    ROW_DTYPE,
    ROW_SIZE,
    TaridxFormatError,
    TaridxHeader,
    TaridxIndex,
    is_contiguous,
)
from taco_taridx.layout import pack_index as pack_taridx
from taco_taridx.layout import parse_header as parse_taridx_header
from taco_taridx.layout import parse_index as parse_taridx

U16, U32, U64 = 2**16 - 1, 2**32 - 1, 2**64 - 1


# --- CAF ---------------------------------------------------------------------------------------
@st.composite
def caf_archives(draw: st.DrawFn) -> tuple[dict[str, bytes], bytes]:
    """Members (name -> bytes) and the archive bytes assembled from the layout functions."""
    names = draw(st.lists(st.text(min_size=1, max_size=12), max_size=6, unique=True))
    contents = [draw(st.binary(max_size=40)) for _ in names]
    members, position = [], 0
    for name, content in zip(names, contents, strict=True):
        members.append(CafMember(name, position, position + len(content)))
        position += len(content)
    index = pack_index(CafIndex(tuple(members)))
    return dict(zip(names, contents, strict=True)), b"".join(contents) + index + pack_footer(
        len(index)
    )


@given(caf_archives())
def test_caf_archive_round_trip(case: tuple[dict[str, bytes], bytes]) -> None:
    members, raw = case
    index_size = parse_footer(raw[-FOOTER_SIZE:], len(raw), "x.caf")
    start = index_start(len(raw), index_size)
    index = parse_index(raw[start : start + index_size], start, "x.caf")
    assert index.names == tuple(members)
    assert {m.name: raw[m.start : m.end] for m in index.members} == members
    assert index.data_size == start == sum(len(c) for c in members.values())
    assert pack_index(index) == raw[start : start + index_size]


@given(st.integers(0, U32), st.integers(0, 2**40))
def test_caf_footer_round_trip(index_size: int, extra: int) -> None:
    file_size = index_size + FOOTER_SIZE + extra
    assert parse_footer(pack_footer(index_size), file_size, "x.caf") == index_size


@given(st.integers(1, U32), st.integers(FOOTER_SIZE, 2**32))
def test_caf_footer_beyond_the_file_is_refused(index_size: int, file_size: int) -> None:
    if index_size <= file_size - FOOTER_SIZE:
        file_size = index_size + FOOTER_SIZE - 1
    with pytest.raises(CafFormatError, match=r"x\.caf"):
        parse_footer(pack_footer(index_size), file_size, "x.caf")


@given(st.integers(U32 + 1, 2**64) | st.integers(-(2**64), -1))
def test_caf_footer_holds_only_a_uint32(index_size: int) -> None:
    with pytest.raises(CafFormatError, match="uint32"):
        pack_footer(index_size)


# --- TARIDX ------------------------------------------------------------------------------------
_line = st.text(st.characters(exclude_characters="\n", exclude_categories=["Cs"]), max_size=10)


@st.composite
def taridx_indexes(draw: st.DrawFn) -> TaridxIndex:
    extensions = tuple(draw(st.lists(_line, min_size=1, max_size=5, unique=True)))
    crash = tuple(draw(st.lists(_line, max_size=4, unique=True)))
    n = draw(st.integers(0, 12))
    rows = np.zeros(n, ROW_DTYPE)
    rows["fid"] = draw(st.lists(st.integers(0, U16), min_size=n, max_size=n))
    rows["offset"] = draw(st.lists(st.integers(0, U64), min_size=n, max_size=n))
    rows["size"] = draw(st.lists(st.integers(0, U64), min_size=n, max_size=n))
    rows["extid"] = draw(st.lists(st.integers(0, len(extensions) - 1), min_size=n, max_size=n))
    rows["crashid"] = draw(st.lists(st.integers(0, len(crash)), min_size=n, max_size=n))
    rows["keyhash"] = draw(st.lists(st.sampled_from([0, 1, U64]), min_size=n, max_size=n))
    return TaridxIndex(
        extensions,
        crash,
        rows,
        n_stems=draw(st.integers(0, U64)),
        minor=draw(st.integers(0, U16)),
        reserved=draw(st.binary(min_size=7, max_size=7)),
    )


@given(taridx_indexes())
def test_taridx_round_trip(index: TaridxIndex) -> None:
    raw = pack_taridx(index)
    parsed = parse_taridx(raw, "x.taridx")
    assert parsed == index
    assert pack_taridx(parsed) == raw
    header = parse_taridx_header(raw[:HEADER_SIZE], "x.taridx")
    assert (
        header.n_rows == len(index.rows) and len(raw) == header.off_arr + header.n_rows * ROW_SIZE
    )
    assert header.contiguous == is_contiguous(index.rows)


@pytest.mark.parametrize("bad", ["a\nb", "\udcff"])
def test_taridx_text_blocks_hold_utf8_lines_only(bad: str) -> None:
    index = TaridxIndex(("tif",), (bad,), np.zeros(0, ROW_DTYPE), 0)
    with pytest.raises(TaridxFormatError, match="crash-stem block"):
        pack_taridx(index)


@given(taridx_indexes(), st.data())
def test_taridx_every_strict_prefix_is_refused(index: TaridxIndex, data: st.DataObject) -> None:
    raw = pack_taridx(index)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(TaridxFormatError, match=r"x\.taridx"):
        parse_taridx(raw[:cut], "x.taridx")


@given(
    st.tuples(
        st.integers(0, U16),
        st.integers(0, U64),
        st.integers(0, U64),
        st.integers(0, U32),
        st.integers(0, U32),
        st.integers(0, U64),
        st.integers(0, U64),
        st.integers(0, 255),
        st.binary(min_size=7, max_size=7),
    )
)
def test_taridx_header_round_trip(
    values: tuple[int, int, int, int, int, int, int, int, bytes],
) -> None:
    minor, n_stems, n_rows, n_ext, n_crash, off_crash, off_arr, flags, reserved = values
    header = TaridxHeader(
        1, minor, ROW_SIZE, HEADER_SIZE, n_stems, n_rows, n_ext, n_crash, off_crash, off_arr,
        flags, reserved,
    )  # fmt: skip
    raw = header.pack()
    assert len(raw) == HEADER_SIZE
    assert parse_taridx_header(raw, "x.taridx") == header
    assert header.contiguous == bool(flags & FLAG_CONTIGUOUS)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=10))
def test_contiguity_flag_matches_grouping(keys: list[tuple[int, int]]) -> None:
    rows = np.zeros(len(keys), ROW_DTYPE)
    rows["keyhash"] = [k for k, _ in keys]
    rows["crashid"] = [c for _, c in keys]
    runs = [key for i, key in enumerate(keys) if i == 0 or keys[i - 1] != key]
    assert is_contiguous(rows) == (len(runs) == len(set(keys)))
