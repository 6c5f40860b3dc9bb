"""format/checksum.py: every digest equals its library's one-shot value, whatever buffer type
and however the bytes are split (the writer feeds bytes, bytearrays and memoryview slices)."""

from __future__ import annotations

import hashlib
import itertools
import mmap
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format import checksum
from taco_gdal.format.checksum import StreamingDigest, digest_bytes, digest_value
from taco_gdal.format.names import CHECKSUM_ALGORITHMS
from tests.cpu import FOLDING_FLAGS, cpu_flags
from tests.digests import independent_digest

DATA = os.urandom(300_001)


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
    assert digest.value() == independent_digest(algorithm, DATA)


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_empty_input(algorithm: str) -> None:
    digest = StreamingDigest(algorithm)
    digest.update(memoryview(bytearray()))
    assert digest.value() == independent_digest(algorithm, b"") == str(digest_bytes(algorithm, b""))


BUFFERS = [bytes, bytearray, lambda b: memoryview(bytearray(b)), lambda b: memoryview(b)]


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("size", [0, 1, 16_384, 262_144, 262_145, 1_000_003])
def test_digest_value_is_the_streaming_value(algorithm: str, size: int) -> None:
    data = DATA[:size] if size <= len(DATA) else os.urandom(size)
    for as_buffer in BUFFERS:
        assert digest_value(algorithm, as_buffer(data)) == independent_digest(algorithm, data)  # type: ignore[operator]


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_the_writers_bound_call_is_digest_value(algorithm: str) -> None:
    call = checksum.value_call(algorithm)
    assert checksum.value_call(algorithm) is call  # chosen once, not per sample
    for size in (0, 16_384, 262_144, 262_145):  # both sides of the GIL-holding limit
        data = DATA[:size]
        for as_buffer in BUFFERS:
            assert call(as_buffer(data)) == independent_digest(algorithm, data)  # type: ignore[operator]


@pytest.mark.parametrize("size", [0, 1, 240, 16_384, 32_768, 32_769, 262_144, 262_145])
def test_every_xxh3_call_the_writer_may_choose_gives_the_wheels_value(size: int) -> None:
    # value_call takes the fastest of these on the CPU it runs on: each must be right
    data = (DATA * 4)[:size]
    calls = checksum._xxh3_calls(checksum._ONE_SHOT["xxh3"])
    assert {"libxxhash", "xxhash wheel"} <= set(calls)
    # clearing the vector state is a candidate only where ISA-L runs AVX-512 code
    assert ("xxhash wheel, clean state" in calls) == ("avx512f" in cpu_flags())
    for name, call in calls.items():
        for as_buffer in BUFFERS:
            checksum.crc32(data)  # the writer's order: ZIP CRC-32 (ISA-L), then the digest
            assert call(as_buffer(data)) == independent_digest("xxh3", data), name  # type: ignore[operator]


def test_the_clean_state_xxh3_call_offered_on_avx512_cpus_is_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # this machine may lack AVX-512: the candidate is built as such a CPU would build it
    monkeypatch.setattr(checksum, "_cpu_flags", lambda: frozenset({"avx", "avx512f"}))
    call = checksum._xxh3_calls(checksum._ONE_SHOT["xxh3"])["xxhash wheel, clean state"]
    for size in (0, 1, 16_384, 65_537, 262_145):
        data = DATA[:size]
        checksum.crc32(data)
        assert call(data) == call(bytearray(data)) == independent_digest("xxh3", data)


def test_the_fastest_call_is_chosen_and_never_a_wrong_one() -> None:
    def once(data: bytes) -> str:
        return digest_value("sha256", data)

    def many(data: bytes) -> str:
        values = {digest_value("sha256", data) for _ in range(50)}
        return values.pop()

    def wrong(data: bytes) -> str:
        return "sha256:" + "0" * 64

    assert checksum._fastest({"many": many, "once": once})[0] == "once"
    assert checksum._fastest({"many": many, "wrong": wrong})[0] == "many"


BATCHES = {
    "small": [0, 1, 240, 16_384, 32_768],  # every buffer within the wheel's limit: one map
    "mixed": [16_384, 32_769, 0, 262_144, 1],  # some past it: buffer by buffer
}


@pytest.mark.parametrize("sizes", BATCHES.values(), ids=BATCHES.keys())
def test_every_xxh3_batch_the_writer_may_choose_gives_the_wheels_values(sizes: list[int]) -> None:
    datas = [os.urandom(size) for size in sizes]
    expected = [independent_digest("xxh3", data) for data in datas]
    calls = checksum._xxh3_batches()
    assert {"libxxhash", "xxhash wheel"} <= set(calls)
    assert ("xxhash wheel, clean state" in calls) == ("avx512f" in cpu_flags())
    for name, call in calls.items():
        checksum.crc32(datas[-1])  # the writer's order: the last chunk's CRC-32s came before
        found = checksum.stored_ascii("xxh3", np.array(call(datas), np.uint64))
        assert [row.tobytes().decode() for row in found] == expected, name
    chosen = checksum.batch_digest("xxh3")
    assert chosen is not None and chosen is checksum.batch_digest("xxh3")  # chosen once
    assert chosen.of in calls.values() or chosen.of(datas) == calls["xxhash wheel"](datas)


def test_the_clean_state_xxh3_batch_offered_on_avx512_cpus_is_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(checksum, "_cpu_flags", lambda: frozenset({"avx", "avx512f"}))
    call = checksum._xxh3_batches()["xxhash wheel, clean state"]
    for sizes in BATCHES.values():
        datas = [DATA[:size] for size in sizes]
        checksum.crc32(DATA)
        assert [f"xxh3:{v:016x}" for v in call(datas)] == [
            independent_digest("xxh3", data) for data in datas
        ]


@pytest.fixture
def fresh_choices() -> Iterator[None]:
    """``batch_digest`` and ``libxxhash`` chosen again in the test, and again after it."""
    for cached in (checksum.batch_digest, checksum._xxh3_library):
        cached.cache_clear()
    yield
    for cached in (checksum.batch_digest, checksum._xxh3_library):
        cached.cache_clear()


def test_without_avx512_the_xxh3_batch_times_nothing_and_loads_libxxhash_for_large_buffers(
    monkeypatch: pytest.MonkeyPatch, fresh_choices: None
) -> None:
    monkeypatch.setattr(checksum, "_cpu_flags", lambda: frozenset({"avx", "avx2"}))

    def no_trial(*args: object, **kwargs: object) -> None:
        raise AssertionError("timed a choice that needs no timing")

    monkeypatch.setattr(checksum, "_fastest", no_trial)
    batch = checksum.batch_digest("xxh3")
    assert batch is not None
    small = [DATA[:size] for size in BATCHES["small"]]
    assert [f"xxh3:{v:016x}" for v in batch.of(small)] == [
        independent_digest("xxh3", data) for data in small
    ]
    assert checksum._xxh3_library.cache_info().currsize == 0  # not loaded for small ones
    mixed = [DATA[:size] for size in BATCHES["mixed"]]
    assert [f"xxh3:{v:016x}" for v in batch.of(mixed)] == [
        independent_digest("xxh3", data) for data in mixed
    ]
    assert checksum._xxh3_library() is not None  # loaded for the 256 KiB one


def test_with_avx512_the_xxh3_batch_is_timed(
    monkeypatch: pytest.MonkeyPatch, fresh_choices: None
) -> None:
    monkeypatch.setattr(checksum, "_cpu_flags", lambda: frozenset({"avx", "avx512f"}))
    timed: list[list[str]] = []
    fastest = checksum._fastest

    def watched(calls: Any, *args: Any, **kwargs: Any) -> Any:
        timed.append(list(calls))
        return fastest(calls, *args, **kwargs)

    monkeypatch.setattr(checksum, "_fastest", watched)
    batch = checksum.batch_digest("xxh3")
    assert batch is not None
    assert timed == [
        ["xxhash wheel", "libxxhash, one call", "libxxhash", "xxhash wheel, clean state"]
    ]
    assert batch.of([DATA]) == [int(independent_digest("xxh3", DATA)[5:], 16)]


def test_the_crc32c_batch_gives_independent_values() -> None:
    batch = checksum.batch_digest("crc32c")
    assert batch is not None and batch.algorithm == "crc32c"
    datas = [DATA[:size] for size in (0, 1, 9, 16_384, 262_144)]
    found = checksum.stored_ascii("crc32c", np.array(batch.of(datas), np.uint64))
    assert [row.tobytes().decode() for row in found] == [
        independent_digest("crc32c", data) for data in datas
    ]


def test_sha256_has_no_batch_and_an_unknown_algorithm_is_refused() -> None:
    assert checksum.batch_digest("sha256") is None  # the writer digests it sample by sample
    with pytest.raises(TacoFormatError, match=r"expected an algorithm among .* found 'md5'"):
        checksum.batch_digest("md5")


@pytest.mark.parametrize(("algorithm", "bits"), [("crc32c", 32), ("xxh3", 64)])
def test_stored_ascii_is_the_stored_form_of_every_value(algorithm: str, bits: int) -> None:
    rng = np.random.default_rng(7)
    values = [0, 1, 15, 16, 2**bits - 1, 2 ** (bits - 1)] + [
        int(v) for v in rng.integers(0, 2**bits - 1, 200, dtype=np.uint64, endpoint=True)
    ]
    rows = checksum.stored_ascii(algorithm, np.array(values, np.uint64))
    digits = bits // 4
    assert [row.tobytes().decode() for row in rows] == [
        f"{algorithm}:{v:0{digits}x}" for v in values
    ]
    assert checksum.stored_ascii(algorithm, np.array([], np.uint64)).shape[0] == 0


def test_the_fastest_batch_is_timed_on_a_batch() -> None:
    seen: list[object] = []

    def cheap(datas: list[bytes]) -> list[int]:
        seen.append(datas)
        return [len(d) for d in datas]

    def dear(datas: list[bytes]) -> list[int]:
        return [max(len(d) for _ in range(200)) for d in datas]

    def wrong(datas: list[bytes]) -> list[int]:
        return [0 for _ in datas]

    chosen = checksum._fastest(
        {"dear": dear, "cheap": cheap}, data=checksum._TRIALS, before=checksum._crc32_each
    )
    assert chosen[0] == "cheap" and seen[0] is checksum._TRIALS
    assert (
        checksum._fastest(
            {"dear": dear, "wrong": wrong}, data=checksum._TRIALS, before=checksum._crc32_each
        )[0]
        == "dear"
    )


@pytest.mark.parametrize("size", [0, 1, 9, 600, 7_936, 16_384, 63_489, 262_144, 262_145])
def test_every_crc32c_library_the_writer_may_choose_gives_the_same_value(size: int) -> None:
    # _crc32c_calls takes the faster of these on the CPU it runs on: each must be right
    data = DATA[:size]
    libraries = checksum._crc32c_libraries()
    native = {checksum.NATIVE_CRC32C} if cpu_flags() >= FOLDING_FLAGS else set()
    assert set(libraries) == {"ISA-L", "google-crc32c"} | native
    for name, calls in libraries.items():
        for raw in calls:
            found = f"crc32c:{raw(0, data, len(data)):08x}" if size else "crc32c:00000000"
            assert found == independent_digest("crc32c", data), name
    assert checksum._crc32c_calls() in libraries.values()


def test_the_bound_call_refuses_an_unknown_algorithm() -> None:
    with pytest.raises(TacoFormatError, match=r"expected an algorithm among .* found 'md5'"):
        checksum.value_call("md5")


def test_digest_value_refuses_an_unknown_algorithm() -> None:
    with pytest.raises(TacoFormatError, match=r"expected an algorithm among .* found 'md5'"):
        digest_value("md5", b"x")


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_update_from_feeds_the_buffer_prefix(algorithm: str) -> None:
    block = bytearray(262_144)
    digest = StreamingDigest(algorithm)
    feed = digest.update_from(block)
    fed = b""
    for start, end in itertools.pairwise([0, 100_000, 262_144, 262_145, len(DATA)]):
        n = end - start
        memoryview(block)[:n] = DATA[start:end]  # in place: the buffer is never resized
        feed(n)
        fed += DATA[start:end]
    feed(0)
    assert fed == DATA
    assert digest.value() == independent_digest(algorithm, DATA)


def test_crc32c_in_chunks_past_the_library_length_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # ISA-L takes a C int length: longer buffers go in chunks (shrunk here to test them)
    monkeypatch.setattr(checksum, "_ISAL_CHUNK", 4096)
    data = DATA[:300_000]
    assert digest_value("crc32c", data) == independent_digest("crc32c", data)
    assert digest_value("crc32c", bytearray(data)) == independent_digest("crc32c", data)


def test_crc32c_library_gives_the_check_value() -> None:
    calls = checksum._crc32c_calls()
    assert calls is not None
    for raw in calls:
        assert raw(0, b"123456789", 9) == 0xE3069283


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_a_feed_keeps_its_buffer_from_moving_until_it_is_dropped(algorithm: str) -> None:
    # the feeds read the buffer by address: a resize (which may move it) must be refused
    block = bytearray(64)
    feed = StreamingDigest(algorithm).update_from(block)
    with pytest.raises(BufferError):
        block.extend(b"x")
    feed(64)
    del feed
    block.extend(b"x")
    assert len(block) == 65


def test_the_fused_feed_keeps_its_buffer_from_moving_until_it_is_dropped() -> None:
    block = bytearray(64)
    feed = StreamingDigest("crc32c").with_zip_crc(block)
    assert feed is not None
    with pytest.raises(BufferError):
        block.extend(b"x")
    assert feed(64, 0) == zlib.crc32(bytes(64))
    del feed
    block.extend(b"x")
    assert len(block) == 65


def test_update_from_refuses_more_than_the_buffer() -> None:
    feed = StreamingDigest("crc32c").update_from(bytearray(16))
    with pytest.raises(TacoValidationError, match="expected 0 to 16 bytes of the buffer, found 17"):
        feed(17)


@pytest.mark.parametrize("algorithm", ["xxh3", "sha256"])
def test_legacy_sse_digests_run_after_isal_with_clean_vector_state(algorithm: str) -> None:
    # ISA-L's AVX-512 CRCs leave the upper vector state dirty (no vzeroupper); XXH3 and
    # SHA-256 clear it before each update, and their values are unchanged
    clean = checksum._clean_vectors()
    if os.uname().machine == "x86_64" and "avx" in cpu_flags():
        assert clean is not checksum._nothing  # the vzeroupper page is in use here
    digest = StreamingDigest(algorithm)
    for start in range(0, len(DATA), 65_536):
        checksum.crc32(DATA[start : start + 65_536])  # the writer's order: ZIP CRC, then digest
        digest.update(DATA[start : start + 65_536])
    clean()
    assert digest.value() == independent_digest(algorithm, DATA)
    if algorithm == "sha256" or checksum._xxh3_library() is None:
        assert isinstance(checksum.new_hasher(algorithm), checksum._Clean)


def test_xxh3_uses_the_system_library_when_it_dispatches() -> None:
    # Debian's libxxhash0 exports the AVX2/AVX-512 dispatching XXH3: used when present
    import ctypes.util

    library = checksum._xxh3_library()
    if ctypes.util.find_library("xxhash") == checksum._LIBXXHASH:
        assert library is not None
    if library is not None:
        assert isinstance(checksum.new_hasher("xxh3"), checksum._Xxh3)
        assert not library.matches(lambda data: 0)  # a library that disagrees is not used


@pytest.mark.parametrize("size", [0, 1, 240, 241, 262_144, 262_145, 1_000_003])
def test_xxh3_after_isal_equals_the_wheel(size: int) -> None:
    import xxhash

    data = (DATA * 4)[:size]
    digest = StreamingDigest("xxh3")
    for start in range(0, size, 65_536):
        checksum.crc32(data[start : start + 65_536])  # dirties the upper vector state
        digest.update(memoryview(bytearray(data[start : start + 65_536])))
    assert digest.value() == f"xxh3:{xxhash.xxh3_64_hexdigest(data)}"
    assert digest_value("xxh3", data) == digest.value()
    assert digest_value("xxh3", memoryview(data)) == digest.value()


@pytest.mark.parametrize("algorithm", ["crc32c", "xxh3"])
def test_a_read_only_mapping_is_digested_in_place(algorithm: str, tmp_path: Path) -> None:
    # the late digests read members back through a read-only mapping of the output: the
    # library gets the mapping's own address (no copy made while holding the GIL)
    (tmp_path / "member").write_bytes(DATA)
    with (
        open(tmp_path / "member", "rb") as f,
        mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
        memoryview(mapped) as view,
    ):
        pointer, n, anchor = checksum._pointer(view[4096:])
        assert isinstance(pointer, int) and n == len(DATA) - 4096 and anchor is not None
        assert pointer == np.frombuffer(mapped, dtype=np.uint8).ctypes.data + 4096
        digest = StreamingDigest(algorithm)
        digest.update(view[:4096])
        digest.update(view[4096:])
        assert digest.value() == independent_digest(algorithm, DATA)
        del anchor


def test_stored_ascii_of_raw_digest_rows_and_a_wrong_width_refused() -> None:
    datas = [DATA[:size] for size in (0, 1, 16_384)]
    raw = np.frombuffer(b"".join(hashlib.sha256(d).digest() for d in datas), np.uint8)
    rows = checksum.stored_ascii("sha256", raw.reshape(-1, 32))
    assert [row.tobytes().decode() for row in rows] == [
        independent_digest("sha256", d) for d in datas
    ]
    with pytest.raises(TacoValidationError, match=r"expected rows of 4 bytes, found .*\(3, 32\)"):
        checksum.stored_ascii("crc32c", raw.reshape(-1, 32))
