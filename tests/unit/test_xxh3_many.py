"""taco_gdal/_xxh3.c: XXH3 of a batch of small samples by libxxhash, against the xxhash wheel.

The ZIP writer digests small samples 16 at a time; with ``checksum="xxh3"`` the
batch goes to ``_xxh3.many``, which calls the system libxxhash's dispatching
XXH3 from C.  Every size class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, the
long loop, its stripes and blocks) is checked at and around its edges, at odd
offsets, against the wheel, which the reference readers' digests come from.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import xxhash

from taco_gdal import _xxh3
from taco_gdal.format import checksum
from taco_gdal.format.checksum import batch_digest

EDGES = {k * edge + d for edge in (64, 240, 1024) for k in (1, 2, 3, 16) for d in (-1, 0, 1)}
SIZES = sorted(set(range(0, 300)) | EDGES | {4095, 4096, 16_384, 32_769, 262_144})
DATA = random.Random(31).randbytes(max(SIZES) + 16)


def _wheel(datas: list[bytes]) -> list[int]:
    return [xxhash.xxh3_64_intdigest(data) for data in datas]


def test_the_library_is_found_here() -> None:
    # setup.sh installs libxxhash0: without it the batch would silently take the wheel
    assert _xxh3.available
    assert checksum._xxh3_many() is _xxh3.many


def test_every_size_class_gives_the_wheels_value() -> None:
    for offset in (0, 1, 7):
        datas = [DATA[offset : offset + n] for n in SIZES]
        assert _xxh3.many(datas) == _wheel(datas)


def test_any_buffer_in_a_batch() -> None:
    data = DATA[:20_000]
    assert _xxh3.many([data, bytearray(data), memoryview(data)[3:]]) == _wheel(
        [data, data, data[3:]]
    )
    assert _xxh3.many([]) == []


def test_bad_arguments_raise_type_errors() -> None:
    with pytest.raises(TypeError, match="expected a list of buffers, found tuple"):
        _xxh3.many((b"abc",))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _xxh3.many([b"abc", 3])  # type: ignore[list-item]


def test_the_writers_batch_uses_it(tmp_path: Path) -> None:
    # on a CPU without AVX-512 the batch is the extension's; with AVX-512 it is whichever
    # call was timed fastest, and the extension is among the candidates
    if "avx512f" in checksum._cpu_flags():
        assert "libxxhash, one call" in checksum._xxh3_batches()
    else:
        assert batch_digest("xxh3") is not None
        assert batch_digest("xxh3").of is _xxh3.many  # type: ignore[union-attr]
    datas = [DATA[:n] for n in (0, 5, 16_384, 200_000)]
    assert batch_digest("xxh3").of(datas) == _wheel(datas)  # type: ignore[union-attr]
