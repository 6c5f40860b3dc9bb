"""taco_gdal/_crc32c.c: the ZIP CRC-32, alone and fused with CRC-32C, against zlib.

The ZIP CRC-32 folds 128-byte turns with carry-less multiplies from 512
bytes up and finishes the 128 bytes held, and anything shorter, by table;
``both`` folds it over blocks of 32 KiB while the crc32 instruction takes the
CRC-32C along four stripes of 8 KiB (with AVX-512, three stripes, the fourth
folded too).  Sizes at and around every one of those edges are checked, at every
alignment, continuing any CRC, against zlib and google-crc32c, for both kinds of
blocks (``both_256`` forces the 256-bit ones on any CPU); then the copy loop that
uses ``both`` is checked end to end.
"""

from __future__ import annotations

import ctypes
import os
import random
import zlib
from collections.abc import Callable
from pathlib import Path

import google_crc32c
import pytest

from taco_gdal import _crc32c
from taco_gdal.errors import TacoValidationError
from taco_gdal.format import checksum
from taco_gdal.format.checksum import StreamingDigest
from taco_gdal.write._copy import copy_fd

STRIPE, BLOCK = 8192, 32768
EDGES = {
    k * edge + d
    for edge in (128, 512, STRIPE, BLOCK)
    for k in (1, 2, 3, 8, 9)
    for d in (-129, -128, -1, 0, 1, 127, 128, 511, 512)
}
SIZES = sorted(set(range(0, 1100)) | {n for n in EDGES if n >= 0} | {262_144, 786_437, 1 << 20})
DATA = random.Random(12).randbytes(max(SIZES) + 64)
ANCHOR = bytearray(DATA)
ADDRESS = ctypes.addressof(ctypes.c_char.from_buffer(ANCHOR))


def test_every_size_gives_zlibs_crc32() -> None:
    rng = random.Random(1)
    for size in SIZES:
        offset, start = rng.randrange(64), rng.getrandbits(32)
        data = DATA[offset : offset + size]
        assert _crc32c.crc32(data) == zlib.crc32(data), size
        assert _crc32c.crc32(data, start) == zlib.crc32(data, start), (size, offset)
    assert _crc32c.crc32(b"123456789") == 0xCBF43926  # the CRC-32 check value


Both = Callable[[int, int, int, int], tuple[int, int]]
BOTHS = [
    pytest.param(_crc32c.both, id="both"),
    pytest.param(_crc32c.both_256, id="both_256"),
]


def test_both_runs_the_512_bit_blocks_where_the_cpu_has_them() -> None:
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    assert _crc32c.wide == (_crc32c.accelerated and "avx512f" in flags)


@pytest.mark.parametrize("both", BOTHS)
def test_both_give_zlibs_and_google_crc32cs_values_at_every_edge(both: Both) -> None:
    rng = random.Random(2)
    for size in SIZES:
        offset, zip_start, crc32c_start = (
            rng.randrange(64),
            rng.getrandbits(32),
            rng.getrandbits(32),
        )
        data = DATA[offset : offset + size]
        found = both(zip_start, crc32c_start, ADDRESS + offset, size)
        expected = (zlib.crc32(data, zip_start), google_crc32c.extend(crc32c_start, data))
        assert found == expected, (size, offset)


@pytest.mark.parametrize("both", BOTHS)
def test_both_split_anywhere_continue_to_the_crcs_of_the_whole(both: Both) -> None:
    rng = random.Random(3)
    size = 3 * BLOCK + 1234
    for cut in [0, 1, 127, 4096, BLOCK - 1, BLOCK, BLOCK + 129, 2 * BLOCK, size]:
        cut += rng.randrange(0, 2)
        cut = min(cut, size)
        first = both(0, 0, ADDRESS, cut)
        found = both(*first, ADDRESS + cut, size - cut)
        assert found == (zlib.crc32(DATA[:size]), google_crc32c.value(DATA[:size])), cut


def test_bad_arguments_are_refused_not_read_past() -> None:
    with pytest.raises(ValueError, match="expected a length >= 0, found -1"):
        _crc32c.both(0, 0, ADDRESS, -1)
    with pytest.raises(ValueError, match="expected an address, found 0"):
        _crc32c.both(0, 0, 0, 10)
    with pytest.raises(ValueError, match="expected CRCs of 32 bits"):
        _crc32c.both(1 << 32, 0, ADDRESS, 1)
    with pytest.raises(TypeError, match="expected \\(zip_crc, crc32c, pointer, n\\)"):
        _crc32c.both(0, 0, ADDRESS)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="expected \\(data, value=0\\)"):
        _crc32c.crc32()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _crc32c.crc32("text")  # type: ignore[arg-type]
    assert _crc32c.both(5, 7, 0, 0) == (5, 7)  # nothing to read: the CRCs given back


def test_the_writers_crc32_is_one_of_the_two_and_agrees() -> None:
    data = DATA[:300_000]
    assert checksum.crc32(data) == zlib.crc32(data)
    chosen = checksum._crc32
    assert chosen in (_crc32c.crc32, checksum._library_crc32), chosen
    assert checksum.crc32(data[1:], 99) == zlib.crc32(data[1:], 99)


def test_a_copy_with_crc32c_computes_both_in_one_pass(tmp_path: Path) -> None:
    source = tmp_path / "source.bin"
    payload = DATA[: 3 * 262_144 + 777]
    source.write_bytes(payload)
    digest = StreamingDigest("crc32c")
    assert digest.with_zip_crc(bytearray(16)) is not None  # the fused path is taken here
    src = os.open(source, os.O_RDONLY)
    dst = os.open(tmp_path / "copy.bin", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        crc = copy_fd(src, 5, len(payload) - 5, dst, 3, digest)
    finally:
        os.close(src)
        os.close(dst)
    assert crc == zlib.crc32(payload[5:])
    assert digest.value() == f"crc32c:{google_crc32c.value(payload[5:]):08x}"
    assert (tmp_path / "copy.bin").read_bytes()[3:] == payload[5:]


def test_the_fused_feed_refuses_more_than_its_buffer() -> None:
    feed = StreamingDigest("crc32c").with_zip_crc(bytearray(10))
    assert feed is not None
    with pytest.raises(TacoValidationError, match="expected 0 to 10 bytes of the buffer, found 11"):
        feed(11, 0)
    assert StreamingDigest("xxh3").with_zip_crc(bytearray(10)) is None
