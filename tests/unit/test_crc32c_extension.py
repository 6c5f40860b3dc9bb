"""taco_gdal/_crc32c.c: the project's CRC-32C, against google-crc32c on every path.

The extension is built by the install (``pip install -e .``, a C compiler is part
of the set-up); a machine where it was not built fails here rather than quietly
digesting with another library.  Its folding code splits inputs into blocks of
7,936 and 63,488 bytes (three stripes and a folded part each), so sizes at and
around every boundary are checked, at every alignment, continuing any CRC.
"""

from __future__ import annotations

import ctypes
import random

import google_crc32c
import pytest

from taco_gdal import _crc32c
from taco_gdal.format import checksum
from tests.cpu import FOLDING_FLAGS, cpu_flags

SMALL_BLOCK, BIG_BLOCK = 248 * 32, 248 * 256
SIZES = sorted(
    set(range(0, 1100))
    | {
        k * block + d
        for block in (SMALL_BLOCK, BIG_BLOCK)
        for k in (1, 2, 3)
        for d in (-1, 0, 1, 511, 512, 513)
    }
    | {262_144, 1 << 20, 3_000_001}
)
DATA = random.Random(11).randbytes(max(SIZES) + 8)


def test_the_folding_code_runs_where_the_cpu_has_its_instructions() -> None:
    assert _crc32c.accelerated == (cpu_flags() >= FOLDING_FLAGS)
    assert _crc32c.value(b"123456789") == 0xE3069283  # the RFC 3720 check value


def test_every_size_gives_google_crc32cs_value() -> None:
    for size in SIZES:
        data = DATA[:size]
        assert _crc32c.value(data) == google_crc32c.value(data), size


@pytest.mark.parametrize("call", [_crc32c.extend_hold, _crc32c.extend_release])
def test_extend_continues_a_crc_from_bytes_and_from_an_address(call: object) -> None:
    extend = call  # type: ignore[assignment]
    rng = random.Random(5)
    buffer = bytearray(DATA[: BIG_BLOCK * 2 + 64])
    anchor = (ctypes.c_char * len(buffer)).from_buffer(buffer)
    base = ctypes.addressof(anchor)
    for _ in range(300):
        start = rng.randrange(0, 64)  # every alignment
        size = rng.choice([rng.randrange(0, 2048), rng.randrange(0, BIG_BLOCK * 2)])
        crc = rng.getrandbits(32)
        expected = google_crc32c.extend(crc, bytes(buffer[start : start + size]))
        assert extend(crc, base + start, size) == expected  # type: ignore[operator]
        assert extend(crc, bytes(buffer[start : start + size]), size) == expected  # type: ignore[operator]
    del anchor


def test_a_crc_split_anywhere_is_the_crc_of_the_whole() -> None:
    data = DATA[: BIG_BLOCK + SMALL_BLOCK + 1000]
    for cut in (0, 1, 511, SMALL_BLOCK, BIG_BLOCK - 3, len(data)):
        head = _crc32c.extend_hold(0, data[:cut], cut)
        assert _crc32c.extend_hold(head, data[cut:], len(data) - cut) == _crc32c.value(data)


def test_bad_arguments_are_refused_not_read_past() -> None:
    with pytest.raises(ValueError, match="expected at most 3 bytes, found a length of 4"):
        _crc32c.extend_hold(0, b"abc", 4)
    with pytest.raises(ValueError, match="expected a length >= 0, found -1"):
        _crc32c.extend_hold(0, b"abc", -1)
    with pytest.raises(TypeError, match="expected an address or bytes, found str"):
        _crc32c.extend_hold(0, "abc", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected an address, found 0"):
        _crc32c.extend_release(0, 0, 3)
    with pytest.raises(TypeError, match=r"expected \(crc, pointer, n\), found 2 arguments"):
        _crc32c.extend_hold(0, b"abc")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _crc32c.value("abc")  # type: ignore[arg-type]


def test_the_writer_takes_the_extension_where_it_runs() -> None:
    if not _crc32c.accelerated:
        assert checksum.NATIVE_CRC32C not in checksum._crc32c_libraries()
        return
    assert checksum.NATIVE_CRC32C in checksum._crc32c_libraries()
    assert checksum._crc32c_value_call() is _crc32c.value  # small files, one C call each
    batch = checksum.batch_digest("crc32c")
    assert batch is not None and batch.of([DATA[:16_384]]) == [google_crc32c.value(DATA[:16_384])]
